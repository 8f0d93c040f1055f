// The raw JSON-RPC of one tool call, and a form to re-run it with edited arguments.
import { useEffect, useState } from "react";
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
  const [text, setText] = useState("");
  const [shown, setShown] = useState(0);
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);

  // Offsets count characters (code points), as the backend does; `length` counts UTF-16 units.
  const charsOf = (s: string) => [...s].length;
  useEffect(() => {
    let live = true;
    read(result, 0, KEPT_PAGE)
      .then((page) => {
        if (!live) return;
        setText(page.text);
        setShown(charsOf(page.text));
      })
      .catch((e: unknown) => live && setError(toIpcError(e)));
    return () => {
      live = false;
    };
  }, [read, result]);

  const more = async () => {
    setBusy(true);
    try {
      const page = await read(result, shown, KEPT_PAGE);
      setText((before) => before + page.text);
      setShown(shown + charsOf(page.text));
    } catch (e) {
      setError(toIpcError(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section data-testid="inspector-kept">
      <h3>{t("inspector.whole", { chars: chars.toLocaleString() })}</h3>
      {error && <ErrorBanner error={error} />}
      <pre className="json" data-testid="inspector-kept-text">
        {text}
      </pre>
      {shown < chars && (
        <button type="button" disabled={busy} onClick={() => void more()} data-testid="inspector-kept-more">
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
      {trace.result?.kept && readKept && <WholeResult result={trace.result.kept.result} chars={trace.result.kept.chars} read={readKept} />}
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
