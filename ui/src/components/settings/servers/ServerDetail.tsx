// One server's page: who it is (its `initialize` answer), the policy it runs
// under with the hosts its proxy refused, its instructions, restart, copy as
// JSON, delete, an installed bundle's settings, and the tabs: tools, prompts and
// resources (`ServerContent`), logs, the doctor and the edit form.
import { useEffect, useState } from "react";
import { copyText } from "../../../lib/clipboard";
import { isMessageKey, useI18n, type MessageKey } from "../../../lib/i18n";
import { policyLine } from "../../../lib/policyLine";
import {
  toIpcError,
  type BundleInfo,
  type DoctorReport,
  type HealthCheck,
  type Ipc,
  type IpcError,
  type ServerAbout,
  type ServerView,
} from "../../../lib/ipc";
import { ErrorBanner } from "../../ErrorBanner";
import { McpIcons } from "../../common/McpIcons";
import { Tabs } from "../../common/Tabs";
import { BundleInstall, type BundleIpc } from "./BundleInstall";
import { Doctor } from "./Doctor";
import { Logs, type LogsIpc } from "./Logs";
import { ServerContent, type ContentIpc } from "./ServerContent";
import { ServerEditor, type PolicyIpc } from "./ServerEditor";
import { StatusDot } from "./StatusDot";
import { Tools, type ToolsIpc } from "./Tools";

export type ServerDetailIpc = ToolsIpc &
  LogsIpc &
  ContentIpc &
  BundleIpc &
  PolicyIpc &
  Pick<Ipc, "saveServer" | "deleteServer" | "restartServer" | "setServerLogLevel" | "exportServer" | "serverDoctor" | "allowDomain" | "checkServerHealth">;

/** When the server's health was last checked (a ping every 30 s while it runs), and "Check now". */
function Health({ ipc, view }: { ipc: ServerDetailIpc; view: ServerView }) {
  const { t } = useI18n();
  const [checked, setChecked] = useState<HealthCheck | null>(null);
  const [failed, setFailed] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);
  // The newer of the one checked here and the supervisor's last.
  const health = checked && (!view.health || checked.at_ms >= view.health.at_ms) ? checked : view.health;
  const check = () => {
    setBusy(true);
    setFailed(null);
    ipc
      .checkServerHealth(view.config.name)
      .then(setChecked)
      .catch((e: unknown) => setFailed(toIpcError(e)))
      .finally(() => setBusy(false));
  };
  const at = health && new Date(health.at_ms).toLocaleTimeString();
  return (
    <p className="muted small row" data-testid="server-health">
      <span>
        {failed
          ? t("servers.healthFailedNow", { error: failed.message })
          : !health
            ? t("servers.healthNever")
            : health.error
              ? t("servers.healthFailed", { at: at ?? "", error: health.error })
              : t("servers.healthOk", { at: at ?? "", ms: health.round_trip_ms })}
      </span>
      <button type="button" className="link" data-testid="server-check-health" disabled={busy || view.status.state !== "ready"} onClick={check}>
        {busy ? t("servers.healthChecking") : t("servers.healthCheck")}
      </button>
    </p>
  );
}

/** The policy the server runs under in one line, and the hosts its proxy refused, each to allow in one click. */
function ServerPolicy({ view, onAllow }: { view: ServerView; onAllow: (host: string) => void }) {
  const { t } = useI18n();
  return (
    <>
      <p className="muted small" data-testid="server-policy">
        {policyLine(t, view.policy)}
      </p>
      {view.blocked.length > 0 && (
        <ul className="blocked-connections" data-testid="blocked-connections">
          {view.blocked.map((host) => (
            <li key={host} className="row small" data-testid="blocked-connection" data-host={host}>
              <code>{t("policy.blocked", { host })}</code>
              <button type="button" data-testid="allow-domain" onClick={() => onAllow(host)}>
                {t("policy.allowDomain")}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** Who a ready server says it is, how it is reached and what it offers. */
function About({ about }: { about: ServerAbout }) {
  const { t } = useI18n();
  const capability = (c: string) => {
    const key = `servers.cap.${c}`;
    return isMessageKey(key) ? t(key) : c;
  };
  return (
    <div className="server-about small" data-testid="server-about">
      <p>
        <strong>{about.title ?? about.name ?? t("servers.unnamed")}</strong> {about.title && about.name && <code>{about.name}</code>}{" "}
        {about.version && <span className="muted">{t("servers.version", { version: about.version })}</span>}{" "}
        {about.website && (
          <a href={about.website} target="_blank" rel="noreferrer noopener" data-testid="server-website">
            {t("servers.website")}
          </a>
        )}
      </p>
      {about.description && <p className="muted">{about.description}</p>}
      <p className="muted" data-testid="server-reached">
        {t("servers.reached", { protocol: about.protocol_version, transport: t(`servers.via.${about.transport}`) })}
        {about.pid !== null && ` · ${t("servers.pid", { pid: about.pid })}`}
        {about.command && (
          <>
            {" · "}
            <code>{about.command}</code>
          </>
        )}
      </p>
      <p data-testid="server-offers">
        {t("servers.offers")}{" "}
        {about.capabilities.length === 0
          ? t("servers.offersNothing")
          : about.capabilities.map((c) => (
              <span key={c} className="badge" data-capability={c}>
                {capability(c)}
              </span>
            ))}
      </p>
    </div>
  );
}

type Tab = "tools" | "content" | "logs" | "doctor" | "edit";

export function ServerDetail({ ipc, view, onSaved, act }: { ipc: ServerDetailIpc; view: ServerView; onSaved: () => void; act: (f: () => Promise<unknown>) => Promise<boolean> }) {
  const { t, lang } = useI18n();
  // The settings form of the bundle the server was installed from, while open.
  const [bundleSettings, setBundleSettings] = useState<BundleInfo | null>(null);
  const openBundleSettings = () =>
    void act(async () => setBundleSettings(await ipc.bundleSettings(view.config.name, lang === "zh" ? "zh-CN" : "en-US")));
  const [tab, setTab] = useState<Tab>(view.status.state === "failed" ? "doctor" : "tools");
  const [doctor, setDoctor] = useState<DoctorReport | null>(null);
  // The entry in the Claude Desktop shape goes to the clipboard, to share the server.
  const [copied, setCopied] = useState(false);
  const copy = () =>
    void act(async () => {
      await copyText(await ipc.exportServer(view.config.name));
      setCopied(true);
    });
  const [doctorError, setDoctorError] = useState<IpcError | null>(null);
  useEffect(() => {
    if (tab !== "doctor") return;
    let live = true;
    ipc
      .serverDoctor(view.config.name)
      .then((r) => live && setDoctor(r))
      .catch((e: unknown) => live && setDoctorError(toIpcError(e)));
    return () => {
      live = false;
    };
  }, [tab, ipc, view.config.name]);
  const tabs: [Tab, MessageKey][] = [
    ["tools", "servers.tools"],
    ["content", "servers.content"],
    ["logs", "servers.logs"],
    ["doctor", "servers.doctor"],
    ["edit", "common.edit"],
  ];
  return (
    <div className="server-detail card" data-testid="server-detail">
      <div className="row">
        <McpIcons icons={view.icons} />
        <h3>{view.config.title ?? view.config.name}</h3>
        <StatusDot state={view.status.state} />
        <span className="spacer" />
        {view.bundle && (
          <button type="button" data-testid="server-bundle-settings" onClick={openBundleSettings}>
            {t("servers.bundleSettings")}
          </button>
        )}
        <button type="button" data-testid="server-copy" onClick={copy}>
          {copied ? t("chat.copied") : t("servers.copyJson")}
        </button>
        <button type="button" data-testid="server-restart" onClick={() => void act(() => ipc.restartServer(view.config.name))}>
          {t("servers.restart")}
        </button>
        <button type="button" className="danger" onClick={() => void act(() => ipc.deleteServer(view.config.name))}>
          {t("common.delete")}
        </button>
      </div>
      {view.status.error && <p className="error-text">{view.status.error}</p>}
      {view.policy.kind !== "in_process" && <Health ipc={ipc} view={view} />}
      <ServerPolicy view={view} onAllow={(host) => void act(() => ipc.allowDomain(view.config.name, host))} />
      {view.about && <About about={view.about} />}
      {view.instructions && (
        <details data-testid="server-instructions">
          <summary>{t("servers.instructions")}</summary>
          <pre className="server-instructions">{view.instructions}</pre>
        </details>
      )}
      <Tabs tabs={tabs.map(([id, label]) => ({ id, label: t(label) }))} selected={tab} onSelect={setTab} label={view.config.name}>
        {tab === "tools" && (
          // Listed again when the server becomes ready or its tools change (a server
          // selected while it starts has none yet).
          <Tools key={`${view.status.state}-${view.status.tool_count}`} ipc={ipc} server={view.config.name} />
        )}
        {tab === "content" && <ServerContent key={`${view.status.state}`} ipc={ipc} server={view.config.name} />}
        {tab === "logs" && (
          <Logs ipc={ipc} server={view.config.name} level={view.log_level} onLevel={(l) => void act(() => ipc.setServerLogLevel(view.config.name, l))} />
        )}
        {tab === "doctor" && (doctorError ? <ErrorBanner error={doctorError} /> : doctor ? <Doctor report={doctor} /> : <p>{t("common.loading")}</p>)}
        {tab === "edit" && (
          <ServerEditor
            ipc={ipc}
            initial={view.config}
            isNew={false}
            onCancel={() => setTab("tools")}
            onSave={(c, s) => void act(() => ipc.saveServer(c, s)).then((ok) => ok && onSaved())}
          />
        )}
      </Tabs>
      {bundleSettings && (
        <BundleInstall
          ipc={ipc}
          target={{ kind: "configure", server: view.config.name }}
          info={bundleSettings}
          onClose={() => setBundleSettings(null)}
          onInstalled={() => {
            setBundleSettings(null);
            onSaved();
          }}
        />
      )}
    </div>
  );
}
