// The raw JSON-RPC of one tool call, and a form to re-run it with edited arguments.
import { useCallback, useEffect, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type IpcError, type KeptPage, type ToolResult, type ToolTrace, type TraceRecord } from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { Dialog } from "../common/Dialog";
import { pretty, ToolResultView } from "./ToolResultView";

export interface TraceInspectorProps {
  trace: ToolTrace;
  getTrace: (callId: string) => Promise<TraceRecord>;
  callTool: (server: string, tool: string, args: unknown) => Promise<ToolResult>;
  /** Reads the conversation's kept result number `result` (for a result the model got only the start of). */
  readKept?: (result: number, offset: number, length: number) => Promise<KeptPage>;
  onClose: () => void;
}

/** Characters of a kept result read at a time. */
export const KEPT_PAGE = 256 * 1024;

/** The whole of a result the model was sent only the start of, read a page at a time. */
function WholeResult({ result, chars, read }: { result: number; chars: number; read: NonNullable<TraceInspectorProps["readKept"]> }) {
  const { t } = useI18n();
  // The text read so far and its length in characters (code points, as the backend counts;
  // a string's `length` counts UTF-16 units). Busy until the first page is in.
  const [sofar, setRead] = useState({ text: "", shown: 0 });
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(true);
  const { text, shown } = sofar;

  // Reads the page at `offset`; it lands only where the text read so far ends.
  const fetchPage = useCallback(
    (offset: number) =>
      read(result, offset, KEPT_PAGE).then((page) =>
        setRead((before) => (before.shown === offset ? { text: before.text + page.text, shown: offset + [...page.text].length } : before)),
      ),
    [read, result],
  );
  useEffect(() => {
    let live = true;
    fetchPage(0)
      .catch((e: unknown) => live && setError(toIpcError(e)))
      .finally(() => live && setBusy(false));
    return () => {
      live = false;
    };
  }, [fetchPage]);
  const more = () => {
    setBusy(true);
    fetchPage(shown)
      .catch((e: unknown) => setError(toIpcError(e)))
      .finally(() => setBusy(false));
  };

  return (
    <section data-testid="inspector-kept">
      <h3>{t("inspector.whole", { chars: chars.toLocaleString() })}</h3>
      {error && <ErrorBanner error={error} />}
      <pre className="json" data-testid="inspector-kept-text">
        {text}
      </pre>
      {shown < chars && (
        <button type="button" disabled={busy} onClick={more} data-testid="inspector-kept-more">
          {busy ? t("common.loading") : t("inspector.wholeMore", { shown: shown.toLocaleString(), chars: chars.toLocaleString() })}
        </button>
      )}
    </section>
  );
}

export function TraceInspector({ trace, getTrace, callTool, readKept, onClose }: TraceInspectorProps) {
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
      {trace.result?.kept && readKept && (
        <WholeResult key={`${trace.call_id}/${trace.result.kept.result}`} result={trace.result.kept.result} chars={trace.result.kept.chars} read={readKept} />
      )}
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
