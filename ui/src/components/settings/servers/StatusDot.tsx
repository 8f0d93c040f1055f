// A server's state as a coloured dot, its name for screen readers and in text
// where the dot is not drawn: on the servers list and on a server's page.
import { useI18n, type MessageKey } from "../../../lib/i18n";
import type { ServerState } from "../../../lib/ipc";

const STATE: Record<ServerState, MessageKey> = {
  stopped: "servers.stopped",
  starting: "servers.starting",
  ready: "servers.ready",
  failed: "servers.failed",
  restarting: "servers.restarting",
};

export function StatusDot({ state }: { state: string }) {
  const { t } = useI18n();
  const key = STATE[state as ServerState];
  return (
    <span className={`status-dot ${state}`} data-testid="status-dot" data-state={state} role="img" aria-label={t(key)}>
      <span className="status-text">{t(key)}</span>
    </span>
  );
}
