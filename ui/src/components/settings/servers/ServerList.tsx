// The servers list: each server with its live status dot, icon, who it says it
// is, its tool count and its enable switch; a failed one with its error, and a
// failed remote one with OAuth sign-in in the browser (which only the user calls off).
import { useState } from "react";
import { policyLine } from "../../../lib/policyLine";
import { useI18n } from "../../../lib/i18n";
import { toIpcError, type Ipc, type ServerView } from "../../../lib/ipc";
import { useAborts } from "../../../lib/aborts";
import { McpIcons } from "../../common/McpIcons";
import { StatusDot } from "./StatusDot";

export type ServerListIpc = Pick<Ipc, "setServerEnabled" | "authorizeServer">;

export function ServerList({
  ipc,
  servers,
  selected,
  onSelect,
  act,
}: {
  ipc: ServerListIpc;
  servers: ServerView[];
  /** The server whose page is open. */
  selected: string | null;
  onSelect: (name: string | null) => void;
  act: (f: () => Promise<unknown>) => Promise<boolean>;
}) {
  const { t } = useI18n();
  // A sign-in goes on in the browser while the user is elsewhere in the app: only the user calls it off.
  const signIns = useAborts({ onUnmount: false });
  const [signingIn, setSigningIn] = useState<string | null>(null);
  const signIn = (name: string) => {
    const signal = signIns.start(name);
    setSigningIn(name);
    const run = () =>
      ipc.authorizeServer(name, signal).catch((e: unknown) => {
        if (toIpcError(e).kind !== "cancelled") throw e;
      });
    void act(run).finally(() => {
      signIns.end(name, signal);
      setSigningIn((now) => (now === name ? null : now));
    });
  };
  return (
    <ul className="list server-list">
      {servers.map((v) => (
        <li key={v.config.name} className={v.config.name === selected ? "card active" : "card"} data-testid="server-row" data-server={v.config.name}>
          <div className="row">
            <StatusDot state={v.status.state} />
            <McpIcons icons={v.icons} />
            <button type="button" className="link" onClick={() => onSelect(v.config.name === selected ? null : v.config.name)} aria-expanded={v.config.name === selected}>
              <strong>{v.config.title ?? v.config.name}</strong>
            </button>
            {v.config.title && (
              <span className="muted small" data-testid="server-name" title={t("servers.storedName")}>
                {v.config.name}
              </span>
            )}
            {v.about && (v.about.title ?? v.about.name) && (
              <span className="muted small" data-testid="server-identity">
                {[v.about.title ?? v.about.name, v.about.version].filter(Boolean).join(" ")}
              </span>
            )}
            <span className="muted" data-testid="tool-count">
              {t("servers.toolCount", { count: v.status.tool_count })}
            </span>
            {v.policy && v.policy.kind !== "in_process" && (
              <span className={`badge level ${v.policy.kind === "local" ? v.policy.level : "remote"}`} data-testid="server-level" title={policyLine(t, v.policy)}>
                {v.policy.kind === "local" ? t(`policyLine.level.${v.policy.level}`) : t("servers.remote")}
              </span>
            )}
            <span className="spacer" />
            <label className="switch">
              <input
                type="checkbox"
                role="switch"
                aria-label={t("servers.enable", { name: v.config.name })}
                checked={v.config.enabled}
                onChange={(e) => void act(() => ipc.setServerEnabled(v.config.name, e.target.checked))}
              />
            </label>
          </div>
          {v.status.state === "failed" && v.status.error && (
            <p className="error-text clamp-2" data-testid="server-error" title={v.status.error}>
              {v.status.error}
            </p>
          )}
          {v.status.state === "failed" && v.config.transport.type !== "stdio" && !v.config.client_credentials && (
            signingIn === v.config.name ? (
              <p className="row" role="status">
                <span className="muted">{t("servers.signingIn")}</span>
                <button type="button" data-testid="server-sign-in-cancel" onClick={() => signIns.cancel(v.config.name)}>
                  {t("servers.cancelSignIn")}
                </button>
              </p>
            ) : (
              <button type="button" data-testid="server-sign-in" onClick={() => signIn(v.config.name)}>
                {t("servers.signIn")}
              </button>
            )
          )}
        </li>
      ))}
    </ul>
  );
}
