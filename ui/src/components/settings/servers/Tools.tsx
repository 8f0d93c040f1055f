// A server's page, "Tools": each tool with its switch, its pin (sent with every
// request even when the others are found through tool search), approval,
// statistics, schema cost and what the server says of it, and "test a tool" (`TestTool`).
import { useCallback, useState } from "react";
import { useI18n } from "../../../lib/i18n";
import type { ApprovalMode, Ipc, ToolInfo } from "../../../lib/ipc";
import { ErrorBanner } from "../../ErrorBanner";
import { formatDuration } from "../../chat/ToolTraceCard";
import { McpIcons } from "../../common/McpIcons";
import { ToolHints } from "../../common/ToolHints";
import { useLoad } from "../useLoad";
import { TestTool, type TestToolIpc } from "./TestTool";

export type ToolsIpc = TestToolIpc & Pick<Ipc, "listTools" | "setToolEnabled" | "setToolPinned" | "setToolApproval">;

export function Tools({ ipc, server }: { ipc: ToolsIpc; server: string }) {
  const { t } = useI18n();
  const load = useCallback(() => ipc.listTools(server), [ipc, server]);
  const { data, error, act, reload } = useLoad<ToolInfo[]>(load);
  const [testing, setTesting] = useState<string | null>(null);
  return (
    <div>
      {error && <ErrorBanner error={error} />}
      <table className="tools-table" data-testid="tools-table">
        <thead>
          <tr>
            <th>{t("tools.enabled")}</th>
            <th title={t("tools.pinnedTitle")}>{t("tools.pinned")}</th>
            <th>{t("tools.name")}</th>
            <th>{t("tools.approval")}</th>
            <th>{t("tools.stats")}</th>
            <th>{t("tools.tokens")}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(data ?? []).map((tool) => (
            <tr key={tool.name} data-tool={tool.name}>
              <td>
                <input
                  type="checkbox"
                  aria-label={t("tools.enableTool", { tool: tool.name })}
                  checked={tool.enabled}
                  onChange={(e) => void act(() => ipc.setToolEnabled(server, tool.name, e.target.checked))}
                />
              </td>
              <td>
                <input
                  type="checkbox"
                  aria-label={t("tools.pinTool", { tool: tool.name })}
                  title={t("tools.pinnedTitle")}
                  checked={tool.pinned}
                  // Patchbay's own tools are always sent.
                  disabled={server === "builtin"}
                  onChange={(e) => void act(() => ipc.setToolPinned(server, tool.name, e.target.checked))}
                />
              </td>
              <td>
                <McpIcons icons={tool.icons} /> <strong>{tool.title ?? tool.name}</strong> {tool.title && <code className="small">{tool.name}</code>}{" "}
                <ToolHints hints={tool.hints} />
                {tool.view.resource_uri && (
                  <span className="badge hint" title={t("servers.hasViewTitle")} data-testid="tool-has-view">
                    {t("servers.hasView")}
                  </span>
                )}
                {!tool.view.for_model && (
                  <span className="badge hint" title={t("servers.viewOnlyTitle")} data-testid="tool-view-only">
                    {t("servers.viewOnly")}
                  </span>
                )}
                <div className="muted small">{tool.description}</div>
              </td>
              <td>
                <select
                  aria-label={t("tools.approvalFor", { tool: tool.name })}
                  value={tool.approval}
                  onChange={(e) => void act(() => ipc.setToolApproval(server, tool.name, e.target.value as ApprovalMode))}
                >
                  <option value="ask">{t("tools.ask")}</option>
                  <option value="allow">{t("tools.allow")}</option>
                  <option value="deny">{t("tools.deny")}</option>
                </select>
              </td>
              <td className="tool-stats" data-testid="tool-stats">
                {tool.stats
                  ? t("tools.statsValue", {
                      count: tool.stats.calls,
                      rate: Math.round(tool.stats.success_rate * 100),
                      median: formatDuration(tool.stats.median_ms),
                    })
                  : t("tools.noCalls")}
              </td>
              <td>{tool.schema_tokens}</td>
              <td>
                <button type="button" aria-expanded={testing === tool.name} onClick={() => setTesting(testing === tool.name ? null : tool.name)}>
                  {t("tools.test")}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {testing && data?.find((x) => x.name === testing) && <TestTool ipc={ipc} tool={data.find((x) => x.name === testing) as ToolInfo} tools={data} onDone={reload} />}
    </div>
  );
}
