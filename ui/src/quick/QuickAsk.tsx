// The quick-ask window: one question to the default assistant, from anywhere (a global
// shortcut, the tray, `patchbay-desktop --quick-ask`). The answer streams here with its
// tool calls and their approvals; "Open in Patchbay" carries the conversation on in the
// main window. A server's form or sampling request shows here too (and in the main window,
// going from both once answered). Escape hides the window; the conversation stays until
// "New question".
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { Markdown } from "../components/chat/LazyMarkdown";
import { STATUS } from "../components/chat/ToolTraceCard";
import { ConversationStore, useConversation } from "../lib/chatStore";
import { useI18n } from "../lib/i18n";
import { openLinksWith } from "../lib/links";
import { ServerRequests, type ServerRequestsIpc } from "../components/ServerRequests";
import { toIpcError, type ApprovalDecision, type Ipc, type IpcError } from "../lib/ipc";

export type QuickAskIpc = Pick<
  Ipc,
  "createConversation" | "sendMessage" | "cancelTurn" | "respondApproval" | "hideQuickAsk" | "quickAskReady" | "openInMain" | "onQuickAskShown" | "openLink"
> &
  ServerRequestsIpc;

export function QuickAsk({ ipc }: { ipc: QuickAskIpc }) {
  const { t } = useI18n();
  const [store, setStore] = useState(() => new ConversationStore());
  const { messages, streamingId, error: turnError } = useConversation(store);
  const [conversation, setConversation] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [error, setError] = useState<IpcError | null>(null);
  const [sending, setSending] = useState(false);
  const field = useRef<HTMLTextAreaElement>(null);
  const busy = sending || streamingId !== null;

  // Links in an answer open in the browser, as in the main window.
  useEffect(() => openLinksWith(window, ipc.openLink, (e) => setError(toIpcError(e))), [ipc]);
  useEffect(() => {
    field.current?.focus();
    const un = ipc.onQuickAskShown(() => field.current?.focus());
    // The window shows only now, with the field ready for the first key.
    void ipc.quickAskReady().catch((e: unknown) => setError(toIpcError(e)));
    return () => {
      void un.then((f) => f());
    };
  }, [ipc]);

  const send = useCallback(async () => {
    const question = text.trim();
    if (question === "" || busy) return;
    setSending(true);
    setError(null);
    try {
      // The first question makes the conversation, with the default assistant.
      const id = conversation ?? (await ipc.createConversation(null)).id;
      setConversation(id);
      setText("");
      await ipc.sendMessage(id, question, [], (event) => store.apply(event));
    } catch (e) {
      const failure = toIpcError(e);
      store.fail(failure);
      setError(failure);
      setText((now) => (now === "" ? question : now));
    } finally {
      setSending(false);
    }
  }, [text, busy, conversation, ipc, store]);

  const fail = (e: unknown) => setError(toIpcError(e));
  const answer = (callId: string, decision: ApprovalDecision) => void ipc.respondApproval(callId, decision).catch(fail);
  const hide = () => void ipc.hideQuickAsk().catch(fail);
  // Not while it answers: the answer streams to this window only.
  const openInMain = () => {
    if (conversation && !busy) void ipc.openInMain(conversation).catch(fail);
  };
  const startOver = () => {
    setStore(new ConversationStore());
    setConversation(null);
    setError(null);
    field.current?.focus();
  };
  const last = messages[messages.length - 1];
  // The window's keys, wherever the focus is (a pressed approval button is gone, and the focus with it).
  // Updated as the render commits (not after, as a passive effect would be), so that a key
  // pressed just after the answer ends already finds it ended.
  const keys = useRef({ hide, openInMain });
  useLayoutEffect(() => {
    keys.current = { hide, openInMain };
  });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      // An Escape a dialog took (closing a server's form) is not the window's.
      if (e.key === "Escape" && !e.defaultPrevented) {
        e.preventDefault();
        keys.current.hide();
      } else if (e.key.toLowerCase() === "o" && (e.ctrlKey || e.metaKey)) {
        e.preventDefault();
        keys.current.openInMain();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);

  return (
    <main className="quick-ask" aria-label={t("quickAsk.title")}>
      <h1 className="sr-only">{t("quickAsk.title")}</h1>
      <textarea
        ref={field}
        id="quick-ask-input"
        aria-label={t("quickAsk.title")}
        placeholder={t("quickAsk.placeholder")}
        rows={2}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            void send();
          }
        }}
      />
      <div className="quick-ask-answer" data-testid="quick-ask-answer">
        {messages.map((m) =>
          m.role === "user" ? (
            <p key={m.id} className="quick-ask-question">
              {m.text}
            </p>
          ) : (
            <div key={m.id} className="quick-ask-reply">
              {m.tool_calls.map((call) => (
                <div key={call.call_id} className="quick-ask-call" data-status={call.status}>
                  <span>
                    {call.server} · {call.tool}: {t(STATUS[call.status])}
                  </span>
                  {call.status === "pending_approval" && (
                    <div className="quick-ask-approval" role="group" aria-label={t("quickAsk.approval", { server: call.server, tool: call.tool })}>
                      <p>{t("approval.question", { server: call.server, tool: call.tool })}</p>
                      <pre className="code-line" data-testid="quick-ask-arguments">
                        {JSON.stringify(call.arguments, null, 2)}
                      </pre>
                      {call.strict && <p className="muted small">{t("approval.strict", { server: call.server })}</p>}
                      <span className="row">
                        <button type="button" onClick={() => answer(call.call_id, "allow_once")}>
                          {t("quickAsk.allow")}
                        </button>
                        <button type="button" onClick={() => answer(call.call_id, "deny")}>
                          {t("quickAsk.deny")}
                        </button>
                      </span>
                    </div>
                  )}
                </div>
              ))}
              {m.text !== "" && <Markdown text={m.text} streaming={m.id === streamingId} />}
            </div>
          ),
        )}
      </div>
      {(error ?? turnError) && (
        <p className="error-text" role="alert">
          {(error ?? turnError)?.message}
        </p>
      )}
      <p className="sr-only" aria-live="polite">
        {busy ? t("quickAsk.answering") : last?.role === "assistant" ? t("quickAsk.answered") : ""}
      </p>
      <div className="row quick-ask-actions">
        {busy && streamingId === null && <span className="muted">{t("quickAsk.answering")}</span>}
        {streamingId !== null && conversation ? (
          <button type="button" onClick={() => void ipc.cancelTurn(conversation).catch(fail)}>
            {t("quickAsk.stop")}
          </button>
        ) : (
          <button type="button" id="quick-ask-send" disabled={busy || text.trim() === ""} onClick={() => void send()}>
            {t("quickAsk.send")}
          </button>
        )}
        <button type="button" id="quick-ask-open" disabled={!conversation || busy} onClick={openInMain} title="Ctrl+O">
          {t("quickAsk.open")}
        </button>
        <button type="button" disabled={busy || !conversation} onClick={startOver}>
          {t("quickAsk.new")}
        </button>
      </div>
      <ServerRequests ipc={ipc} onError={setError} />
    </main>
  );
}
