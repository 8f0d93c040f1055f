// "Test a tool" on a server's tools tab: the tool's generated form, its
// progress while it runs (Cancel calls it off), then its result and, for a tool
// with a view (MCP Apps), the view as a chat shows it.
import { useState } from "react";
import { useI18n } from "../../../lib/i18n";
import { ResourceReader } from "../../../lib/resources";
import { ViewCommands, type ViewIpc } from "../../../lib/mcpApps";
import { ToolCatalogue, toolMap } from "../../../lib/toolCatalogue";
import { useAborts } from "../../../lib/aborts";
import {
  toIpcError,
  type CallEvent,
  type Ipc,
  type IpcError,
  type JsonSchema,
  type JsonValue,
  type ToolInfo,
  type ToolProgress,
  type ToolResult,
  type ToolTrace,
} from "../../../lib/ipc";
import { ErrorBanner } from "../../ErrorBanner";
import { AppView } from "../../chat/AppView";
import { CallProgress } from "../../chat/ToolTraceCard";
import { ToolResultView } from "../../chat/ToolResultView";
import { SchemaForm } from "../../common/SchemaForm";

export type TestToolIpc = ViewIpc & Pick<Ipc, "callTool" | "readResource">;

/**
 * "Test a tool": its form, then its result (and its view, for a tool that has one, as a chat
 * shows it). `onDone` once a test ended (its call is counted in the tool's statistics).
 */
export function TestTool({ ipc, tool, tools, onDone }: { ipc: TestToolIpc; tool: ToolInfo; tools: ToolInfo[]; onDone: () => void }) {
  const { t } = useI18n();
  const [result, setResult] = useState<ToolResult | null>(null);
  const [run, setRun] = useState<{ n: number; args: Record<string, unknown> }>({ n: 0, args: {} });
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);
  // The running test's last progress (a task's stage, too).
  const [progress, setProgress] = useState<ToolProgress | null>(null);
  // Leaving the tool (or the page) calls a running test off.
  const aborts = useAborts({ onUnmount: true });
  const view = result && tool.view.resource_uri;
  return (
    <div className="test-tool" data-testid="test-tool">
      <SchemaForm
        schema={tool.input_schema as JsonSchema}
        submitLabel={busy ? t("common.running") : t("tools.run")}
        busy={busy}
        onCancel={busy ? () => aborts.cancel("run") : undefined}
        onSubmit={(args) => {
          setBusy(true);
          setError(null);
          setProgress(null);
          const signal = aborts.start("run");
          const onEvent = (e: CallEvent) => {
            if (e.kind === "progress" && !signal.aborted) setProgress({ progress: e.progress, total: e.total, message: e.message });
          };
          ipc
            .callTool(tool.server, tool.name, args, signal, onEvent)
            .then((r) => {
              setRun((now) => ({ n: now.n + 1, args }));
              setResult(r);
            })
            .catch((e: unknown) => setError(toIpcError(e)))
            .finally(() => {
              aborts.end("run", signal);
              setBusy(false);
              setProgress(null);
              onDone();
            });
        }}
      />
      {busy && progress && <CallProgress progress={progress} />}
      {error?.kind === "cancelled" ? (
        <p className="muted" role="status" data-testid="test-tool-cancelled">
          {t("tools.cancelled")}
        </p>
      ) : (
        error && <ErrorBanner error={error} />
      )}
      {view && (
        <ViewCommands.Provider value={ipc}>
          <ToolCatalogue.Provider value={toolMap(tools)}>
            <AppView key={run.n} trace={testTrace(tool, run.n, run.args, result)} tool={tool} uri={view} />
          </ToolCatalogue.Provider>
        </ViewCommands.Provider>
      )}
      {result && (
        <ResourceReader.Provider value={ipc.readResource}>
          <ToolResultView result={result} server={tool.server} />
        </ResourceReader.Provider>
      )}
    </div>
  );
}

/** A finished test call as its view reads it. */
function testTrace(tool: ToolInfo, n: number, args: Record<string, unknown>, result: ToolResult): ToolTrace {
  return {
    call_id: `test-${tool.server}-${tool.name}-${n}`,
    server: tool.server,
    tool: tool.name,
    arguments: args as JsonValue,
    status: "done",
    duration_ms: null,
    progress: null,
    result,
    error: null,
    stderr_tail: null,
    logs: [],
  };
}
