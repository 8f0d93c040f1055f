// The raw JSON-RPC of one tool call, and a form to re-run it with edited arguments.
import { useEffect, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type IpcError, type ToolResult, type ToolTrace, type TraceRecord } from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { Dialog } from "../common/Dialog";
import { pretty, ToolResultView } from "./ToolResultView";

export interface TraceInspectorProps {
  trace: ToolTrace;
  getTrace: (callId: string) => Promise<TraceRecord>;
  callTool: (server: string, tool: string, args: unknown) => Promise<ToolResult>;
  onClose: () => void;
}

export function TraceInspector({ trace, getTrace, callTool, onClose }: TraceInspectorProps) {
  const { t } = useI18n();
  const [record, setRecord] = useState<TraceRecord | null>(null);
  const [args, setArgs] = useState(() => pretty(trace.arguments));
  const [result, setResult] = useState<ToolResult | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let live = true;
    getTrace(trace.call_id)
      .then((r) => live && setRecord(r))
      .catch((e: unknown) => live && setError(toIpcError(e)));
    return () => {
      live = false;
    };
  }, [getTrace, trace.call_id]);

  const rerun = async () => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch (e) {
      setError({ kind: "invalid_input", message: t("inspector.badJson", { detail: String(e) }) });
      return;
    }
    setBusy(true);
    setError(null);
    try {
      setResult(await callTool(trace.server, trace.tool, parsed));
    } catch (e) {
      setError(toIpcError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={t("inspector.title", { tool: `${trace.server} · ${trace.tool}` })} onClose={onClose} testId="trace-inspector">
      {error && <ErrorBanner error={error} />}
      <h3>{t("inspector.request")}</h3>
      <pre className="json" data-testid="inspector-request">
        {record ? pretty(record.request) : t("common.loading")}
      </pre>
      <h3>{t("inspector.response")}</h3>
      <pre className="json" data-testid="inspector-response">
        {record ? pretty(record.response) : t("common.loading")}
      </pre>
      <h3>{t("inspector.rerun")}</h3>
      <label className="field">
        <span>{t("trace.arguments")}</span>
        <textarea rows={6} value={args} onChange={(e) => setArgs(e.target.value)} data-testid="inspector-args" />
      </label>
      <button type="button" className="primary" disabled={busy} onClick={() => void rerun()} data-testid="inspector-run">
        {busy ? t("common.running") : t("inspector.run")}
      </button>
      {result && <ToolResultView result={result} server={trace.server} />}
    </Dialog>
  );
}
