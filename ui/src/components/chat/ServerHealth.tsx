// The chat page's word on the MCP servers the model cannot use yet or at all:
// those still starting (their tools come when they are ready) and those that
// failed, each a link to its settings, where its log and the launch doctor say why.
import type { ServerStatus } from "../../lib/ipc";
import { useI18n } from "../../lib/i18n";

/** Failed servers named one by one; the rest are counted. */
const NAMED = 3;

export function ServerHealth({ servers, onOpen }: { servers: ServerStatus[]; onOpen?: (server: string) => void }) {
  const { t } = useI18n();
  const starting = servers.filter((s) => s.state === "starting" || s.state === "restarting");
  const failed = servers.filter((s) => s.state === "failed");
  if (starting.length === 0 && failed.length === 0) return null;
  return (
    <div className="server-health small" role="status" data-testid="server-health">
      {starting.length > 0 && (
        <span className="muted" data-testid="servers-starting">
          {t("health.starting", { count: starting.length, servers: starting.map((s) => s.server).join(", ") })}
        </span>
      )}
      {failed.slice(0, NAMED).map((s) => {
        const why = s.error ?? undefined;
        return onOpen ? (
          <button
            key={s.server}
            type="button"
            className="link error-text"
            title={why}
            data-testid="server-failed"
            data-server={s.server}
            onClick={() => onOpen(s.server)}
          >
            {t("health.failed", { server: s.server })}
          </button>
        ) : (
          <span key={s.server} className="error-text" title={why} data-testid="server-failed" data-server={s.server}>
            {t("health.failedPlain", { server: s.server })}
          </span>
        );
      })}
      {failed.length > NAMED && <span className="error-text">{t("health.moreFailed", { count: failed.length - NAMED })}</span>}
    </div>
  );
}

/** `statuses` with `status` in its server's place (added when it is new). */
export function withStatus(statuses: ServerStatus[], status: ServerStatus): ServerStatus[] {
  return statuses.some((s) => s.server === status.server)
    ? statuses.map((s) => (s.server === status.server ? status : s))
    : [...statuses, status];
}
