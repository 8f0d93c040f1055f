// A server's page, "Logs": its stderr and log messages as they come, and the
// level a server that logs sends them at.
import { useEffect, useState } from "react";
import { useI18n } from "../../../lib/i18n";
import { LOG_LEVELS, type Ipc, type LogLevel } from "../../../lib/ipc";

export type LogsIpc = Pick<Ipc, "serverLogs" | "onServerLog">;

/** The server's stderr and log messages, live; and, for a server that logs, the level it sends. */
export function Logs({ ipc, server, level, onLevel }: { ipc: LogsIpc; server: string; level: LogLevel | null; onLevel: (l: LogLevel) => void }) {
  const { t } = useI18n();
  const [lines, setLines] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    ipc.serverLogs(server).then((l) => live && setLines(l), () => undefined);
    const un = ipc.onServerLog((l) => {
      if (live && l.server === server) setLines((x) => [...x.slice(-499), l.line]);
    });
    return () => {
      live = false;
      void un.then((f) => f());
    };
  }, [ipc, server]);
  return (
    <>
      {level && (
        <label className="row small">
          {t("servers.logLevel")}
          <select aria-label={t("servers.logLevel")} value={level} onChange={(e) => onLevel(e.target.value as LogLevel)}>
            {LOG_LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
      )}
      <pre className="logs" data-testid="server-logs" aria-label={t("servers.logs")} tabIndex={0}>
        {lines.length ? lines.join("\n") : t("servers.noLogs")}
      </pre>
    </>
  );
}
