// A tool call's view (MCP Apps): the tool's `ui://` page in a sandboxed frame
// of its own origin, told the call's arguments (never before the user allowed
// the call) and result, answering what it asks through the ViewBridge. A call it
// makes to a tool whose approval is ask, a message it sends as the user, a link
// it opens and files it offers wait for the user here, one question at a time,
// each question's buttons live only after ARM_MS on screen; deny, and tools made
// for the model only, are refused by the core. It goes full screen only right
// after a click inside it, under a bar of Patchbay's it cannot draw over.
// Whatever removes the card (LiveViews) first asks the view to tear down; a view
// may ask to be closed, and the user can open it again.
import { useCallback, useContext, useEffect, useLayoutEffect, useRef, useState } from "react";
import pkg from "../../../package.json";
import { isMessageKey, useI18n } from "../../lib/i18n";
import { toIpcError, type AppViewInfo, type SavedFile, type ToolInfo, type ToolTrace } from "../../lib/ipc";
import {
  callToolResult,
  currentTheme,
  downloadItems,
  FrameClicks,
  hostContext,
  LiveViewsContext,
  MAX_VIEW_HEIGHT,
  mayTellInput,
  ViewBridge,
  ViewChat,
  ViewCommands,
  webLinks,
  type DisplayMode,
  type DownloadItem,
  type ViewHost,
} from "../../lib/mcpApps";
import { partialObject } from "../../lib/partialJson";
import { ToolCatalogue, toolOf } from "../../lib/toolCatalogue";
import { FileSaver, SavedFiles } from "../common/SaveFile";
import { pretty } from "./ToolResultView";

/** How often a view hears a call's arguments while the model writes them. */
const PARTIAL_EVERY_MS = 100;

/** How long a question is on screen before its buttons answer. */
export const ARM_MS = 1000;

/** Where the user saves what a view offers; null: not at all. */
type SaveChoice = "downloads" | "choose" | null;

/** What a view does as the user, once confirmed: `once`, or for the rest of the view's life. */
type Consent = "once" | "view" | null;

/** What the view asks of the user, one at a time in the order asked. */
type Question =
  | { kind: "call"; tool: string; args: Record<string, unknown>; answer: (allowed: boolean) => void }
  | { kind: "message"; text: string; answer: (consent: Consent) => void }
  | { kind: "link"; url: string; answer: (consent: Consent) => void }
  | { kind: "download"; items: (DownloadItem & { name: string })[]; answer: (choice: SaveChoice) => void }
  | { kind: "fullscreen"; answer: (allowed: boolean) => void };

/** The no each question gets when its view goes unanswered. */
function refuse(q: Question) {
  if (q.kind === "call" || q.kind === "fullscreen") q.answer(false);
  else q.answer(null);
}

/** What the user let this view do without asking again. */
type Trusted = { message: boolean; link: boolean };

/** Whether `key` has been on screen for ARM_MS. */
function useArmed(key: object | undefined): boolean {
  const [armed, setArmed] = useState<object | null>(null);
  useEffect(() => {
    if (!key) return;
    const timer = setTimeout(() => setArmed(key), ARM_MS);
    return () => clearTimeout(timer);
  }, [key]);
  return key !== undefined && armed === key;
}

function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

export function AppView({ trace, tool, uri }: { trace: ToolTrace; tool: ToolInfo; uri: string }) {
  const { t, lang } = useI18n();
  const catalogue = useContext(ToolCatalogue);
  const chat = useContext(ViewChat);
  const ipc = useContext(ViewCommands);
  const views = useContext(LiveViewsContext);
  const [page, setPage] = useState<AppViewInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [height, setHeight] = useState(160);
  const [questions, setQuestions] = useState<Question[]>([]);
  const [trusted, setTrusted] = useState<Trusted>({ message: false, link: false });
  const [mode, setMode] = useState<DisplayMode>("inline");
  const [saved, setSaved] = useState<SavedFile[] | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  // The view asked to be closed (and was torn down): its frame is gone until opened again.
  const [closed, setClosed] = useState(false);
  const frame = useRef<HTMLIFrameElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const bridge = useRef<ViewBridge | null>(null);
  const told = useRef({ input: false, result: false });
  const server = trace.server;

  useEffect(() => {
    const gone = new AbortController();
    ipc.openAppView(server, uri, gone.signal).then(
      (p) => !gone.signal.aborted && setPage(p),
      (e: unknown) => !gone.signal.aborted && setError(toIpcError(e).message),
    );
    return () => gone.abort();
  }, [ipc, server, uri]);

  // The call's arguments while the model writes them; a call the user is to allow
  // tells its view nothing before that (mayTellInput).
  const partialText = trace.status === "writing" && mayTellInput("writing", tool, false) ? (trace.arguments_text ?? "") : null;
  // `told`: the text the view last heard (the page's first message or a timer's), not sent twice.
  const partial = useRef<{ text: string | null; told: string | null; timer: ReturnType<typeof setTimeout> | null }>({
    text: null,
    told: null,
    timer: null,
  });

  // Everything the view asks goes through here; the latest catalogue and chat are read at call time.
  // Kept from the commit on (a layout effect: the view's next message, a task of its own, never
  // reads the state before it), and a trust given or taken back is written at once.
  const latest = useRef({ catalogue, chat, lang, trusted, mode });
  useLayoutEffect(() => {
    latest.current = { catalogue, chat, lang, trusted, mode };
  });
  const trust = useCallback((kind: keyof Trusted, on: boolean) => {
    latest.current.trusted = { ...latest.current.trusted, [kind]: on };
    setTrusted((now) => ({ ...now, [kind]: on }));
  }, []);

  useEffect(() => {
    const el = frame.current;
    if (!page || !el || closed) return;
    // The page loads only now, in the same task that listens for its first message
    // (`ui/initialize`), which it cannot send before that listener is there.
    el.src = page.url;
    const win = el.contentWindow;
    if (!win) return;
    // What the view asked of its server and still runs is called off when the view goes.
    const gone = new AbortController();
    // Questions wait in line; the view's are answered no when it goes.
    const mine = new Set<Question>();
    const ask = (q: Question) => {
      mine.add(q);
      setQuestions((before) => [...before, q]);
    };
    const consent = async (kind: keyof Trusted, what: string): Promise<boolean> => {
      if (latest.current.trusted[kind]) return true;
      const given = await new Promise<Consent>((answer) =>
        ask(kind === "message" ? { kind, text: what, answer } : { kind, url: what, answer }),
      );
      if (given === "view") trust(kind, true);
      return given !== null;
    };
    const clicks = new FrameClicks(el);
    const unwatch = clicks.watch();
    const host: ViewHost = {
      callTool: async (name, args) => {
        const info = toolOf(latest.current.catalogue, server, name);
        if (!info) throw new Error(t("view.no_tool", { server, tool: name }));
        // The user is asked only about a call the core would run once allowed;
        // the core refuses the others and says why.
        const runnable = info.view.for_app && info.enabled && info.approval !== "deny";
        const asks = runnable && info.approval === "ask";
        if (asks && !(await new Promise<boolean>((answer) => ask({ kind: "call", tool: name, args, answer })))) {
          throw new Error(t("view.refused", { tool: name }));
        }
        return ipc.callToolForView(server, name, args, asks, gone.signal);
      },
      readResource: (resource) => ipc.readResourceForView(server, resource, gone.signal),
      listResources: () => ipc.listResourcesForView(server),
      openLink: async (url) => {
        if (!(await consent("link", url))) throw new Error(t("view.linkRefused"));
        await ipc.openLink(url);
      },
      sendMessage: async (text) => {
        if (!latest.current.chat) throw new Error(t("view.no_chat"));
        if (!(await consent("message", text))) throw new Error(t("view.messageRefused"));
        const target = latest.current.chat;
        if (!target) throw new Error(t("view.no_chat"));
        await target.sendMessage(text);
      },
      resize: (h) => setHeight(Math.max(40, Math.min(MAX_VIEW_HEIGHT, Math.ceil(h)))),
      setDisplayMode: async (next) => {
        // Full screen could pass for Patchbay itself: right after the user clicked in the
        // view, else only once the user allows it here (where the window cannot tell a
        // click in the view, as in WebKitGTK, that is always).
        if (next === "fullscreen" && latest.current.mode !== "fullscreen" && !clicks.take(box.current)) {
          const allowed = await new Promise<boolean>((answer) => ask({ kind: "fullscreen", answer }));
          if (!allowed) return latest.current.mode;
        }
        latest.current.mode = next;
        setMode(next);
        return next;
      },
      sample: (params) => ipc.sampleForView(server, params, gone.signal),
      downloadFile: async (contents) => {
        // The names shown are the ones the core saves under.
        const names = await ipc.downloadNames(contents);
        const items = downloadItems(contents).map((item, i) => ({ ...item, name: names[i] ?? "" }));
        const choice = await new Promise<SaveChoice>((answer) => ask({ kind: "download", items, answer }));
        if (!choice) return false;
        setSaveError(null);
        try {
          // A web address downloads in the browser; the rest is saved here.
          for (const url of webLinks(contents)) await ipc.openLink(url);
          const local = contents.filter((block) => webLinks([block]).length === 0);
          const files = local.length ? await ipc.saveFiles(server, local, choice === "choose", gone.signal) : [];
          if (files === null) return false;
          if (files.length) setSaved(files);
          return true;
        } catch (e) {
          setSaveError(toIpcError(e).message);
          return false;
        }
      },
      updateContext: (text) => {
        const title = t("view.context", { tool: tool.title ?? tool.name });
        latest.current.chat?.setContext(trace.call_id, text === null ? null : { title, text });
      },
      close: () => {
        void b.teardown().then(() => {
          if (gone.signal.aborted) return;
          setMode("inline");
          setClosed(true);
        });
      },
    };
    const b = new ViewBridge(
      (m) => win.postMessage(m, "*"),
      host,
      () => hostContext(tool, latest.current.lang === "zh" ? "zh-CN" : "en-US"),
      pkg.version,
    );
    bridge.current = b;
    told.current = { input: false, result: false };
    // Arguments written before the page was there are its first to hear.
    const written = partial.current.text === null ? null : partialObject(partial.current.text);
    if (written) {
      partial.current.told = partial.current.text;
      b.notify("ui/notifications/tool-input-partial", { arguments: written });
    }
    const leave = views.add(trace.call_id, () => b.teardown());
    const onMessage = (e: MessageEvent) => {
      if (e.source === win) void b.receive(e.data);
    };
    window.addEventListener("message", onMessage);
    // The window's theme changes: so does the view's.
    const themes = new MutationObserver(() => b.notify("ui/notifications/host-context-changed", { theme: currentTheme() }));
    themes.observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    return () => {
      gone.abort();
      unwatch();
      mine.forEach(refuse);
      setQuestions((now) => now.filter((q) => !mine.has(q)));
      leave();
      window.removeEventListener("message", onMessage);
      themes.disconnect();
      bridge.current = null;
    };
    // The bridge lives as long as the page; the tool and t are read when the view asks.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [page, closed, server, ipc, views]);

  // A change of display mode is told to the view.
  const shownMode = useRef<DisplayMode>("inline");
  useEffect(() => {
    if (shownMode.current === mode) return;
    shownMode.current = mode;
    bridge.current?.notify("ui/notifications/host-context-changed", { displayMode: mode });
  }, [mode]);
  // Esc leaves full screen from the moment it shows: the key is heard from the same commit
  // (a passive effect could run after the user's first Esc).
  useLayoutEffect(() => {
    if (mode !== "fullscreen") return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setMode("inline");
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [mode]);

  // While the model writes the call, the view hears its arguments so far, at most every
  // PARTIAL_EVERY_MS (each time the latest text, made whole).
  useEffect(() => {
    const p = partial.current;
    p.text = partialText;
    if (partialText === null || p.timer !== null) return;
    p.timer = setTimeout(() => {
      p.timer = null;
      const args = p.text === null || p.text === p.told ? null : partialObject(p.text);
      if (args && bridge.current) {
        p.told = p.text;
        bridge.current.notify("ui/notifications/tool-input-partial", { arguments: args });
      }
    }, PARTIAL_EVERY_MS);
  }, [partialText]);
  useEffect(() => {
    const p = partial.current;
    return () => {
      if (p.timer !== null) clearTimeout(p.timer);
    };
  }, []);

  // The call's arguments once the user allowed it, then its result or its end.
  const ran = useRef(false);
  useEffect(() => {
    if (trace.status === "running") ran.current = true;
    const b = bridge.current;
    if (!b) return;
    if (!told.current.input && trace.status !== "writing" && mayTellInput(trace.status, tool, ran.current)) {
      told.current.input = true;
      const args = typeof trace.arguments === "object" && trace.arguments !== null ? trace.arguments : {};
      b.notify("ui/notifications/tool-input", { arguments: args as Record<string, unknown> });
    }
    if (told.current.result) return;
    if (trace.result) {
      told.current.result = true;
      b.notify("ui/notifications/tool-result", callToolResult(trace.result));
    } else if (trace.status === "cancelled" || trace.status === "denied" || trace.status === "error") {
      told.current.result = true;
      b.notify("ui/notifications/tool-cancelled", { reason: trace.error ?? trace.status });
    }
  }, [page, closed, tool, trace.status, trace.arguments, trace.result, trace.error]);

  if (error) {
    return (
      <p className="trace-error small" role="alert" data-testid="app-view-error">
        {t("view.failed", { error })}
      </p>
    );
  }
  const question = questions[0];
  const answered = (q: Question) => setQuestions((now) => now.filter((x) => x !== q));
  const shown = (
    <>
      {question && <QuestionCard question={question} server={server} answered={answered} />}
      {(["message", "link"] as const)
        .filter((kind) => trusted[kind])
        .map((kind) => (
          <p key={kind} className="muted small" data-testid={`app-view-trusted-${kind}`}>
            {t(kind === "message" ? "view.trustedMessage" : "view.trustedLink")}{" "}
            <button type="button" className="link" onClick={() => trust(kind, false)}>
              {t("view.askAgain")}
            </button>
          </p>
        ))}
    </>
  );
  return (
    <div className="app-view" data-testid="app-view">
      {page && closed && (
        <p className="muted small" data-testid="app-view-closed">
          {t("view.closed")}{" "}
          <button type="button" className="link" data-testid="app-view-reopen" onClick={() => setClosed(false)}>
            {t("view.reopen")}
          </button>
        </p>
      )}
      {page && !closed && (
        <div
          ref={box}
          tabIndex={-1}
          className={`app-view-box${page.prefers_border === false ? "" : " bordered"}${mode === "inline" ? "" : ` ${mode}`}`}
          data-mode={mode}
        >
          {mode === "fullscreen" && (
            // Patchbay's own bar, outside the frame's box: the view cannot draw over it.
            <div className="app-view-bar" data-testid="app-view-bar">
              <span className="small">{t("view.frameBar", { server, tool: tool.title ?? tool.name })}</span>
              <button type="button" data-testid="app-view-exit" onClick={() => setMode("inline")}>
                {t("view.exitFullscreen")}
              </button>
            </div>
          )}
          {mode === "pip" && (
            <div className="app-view-pip-bar">
              <span className="muted small">{tool.title ?? tool.name}</span>
              <button type="button" className="link" data-testid="app-view-exit" onClick={() => setMode("inline")}>
                {t("view.backInline")}
              </button>
            </div>
          )}
          <iframe
            ref={frame}
            title={t("view.title", { tool: tool.title ?? tool.name })}
            sandbox="allow-scripts"
            allow={page.clipboard_write ? "clipboard-write" : ""}
            referrerPolicy="no-referrer"
            style={mode === "inline" ? { height } : undefined}
            data-testid="app-view-frame"
          />
          {mode !== "inline" && shown}
        </div>
      )}
      {page && !closed && page.withheld.length > 0 && (
        <p className="muted small" data-testid="app-view-withheld">
          {t("view.withheld", {
            what: page.withheld
              .map((p) => {
                const key = `view.permission.${p}`;
                return isMessageKey(key) ? t(key) : p;
              })
              .join(", "),
          })}
        </p>
      )}
      {mode === "pip" && <p className="muted small" data-testid="app-view-in-corner">{t("view.inCorner")}</p>}
      {(mode === "inline" || !page || closed) && shown}
      {saved && (
        <FileSaver.Provider value={ipc}>
          <p data-testid="app-view-saved">
            <SavedFiles files={saved} onError={setSaveError} />
          </p>
        </FileSaver.Provider>
      )}
      {saveError && (
        <p className="trace-error small" role="alert" data-testid="app-view-save-error">
          {t("files.saveFailed", { error: saveError })}
        </p>
      )}
    </div>
  );
}

/** The question on screen, its buttons live once it has been there ARM_MS. */
function QuestionCard({ question: q, server, answered }: { question: Question; server: string; answered: (q: Question) => void }) {
  const { t } = useI18n();
  const armed = useArmed(q);
  const button = (label: string, testId: string, answer: () => void, className?: string) => (
    <button
      type="button"
      className={className}
      data-testid={testId}
      disabled={!armed}
      onClick={() => {
        answer();
        answered(q);
      }}
    >
      {label}
    </button>
  );
  switch (q.kind) {
    case "call":
      return (
        <div className="approval-card" role="group" data-testid="app-view-ask">
          <p>{t("view.ask", { server, tool: q.tool })}</p>
          <pre className="json">{pretty(q.args)}</pre>
          <div className="row">
            {button(t("view.allow"), "app-view-allow", () => q.answer(true), "primary")}
            {button(t("approval.deny"), "app-view-deny", () => q.answer(false), "danger")}
          </div>
        </div>
      );
    case "message":
    case "link":
      return (
        <div className="approval-card" role="group" data-testid={`app-view-ask-${q.kind}`}>
          <p>{t(q.kind === "message" ? "view.askMessage" : "view.askLink", { server })}</p>
          <pre className="json">{q.kind === "message" ? q.text : q.url}</pre>
          <div className="row">
            {button(t(q.kind === "message" ? "view.send" : "view.open"), "app-view-consent-once", () => q.answer("once"), "primary")}
            {button(t("view.forThisView"), "app-view-consent-view", () => q.answer("view"))}
            {button(t("approval.deny"), "app-view-consent-deny", () => q.answer(null), "danger")}
          </div>
        </div>
      );
    case "fullscreen":
      return (
        <div className="approval-card" role="group" data-testid="app-view-ask-fullscreen">
          <p>{t("view.askFullscreen", { server })}</p>
          <div className="row">
            {button(t("view.showFullscreen"), "app-view-fullscreen-allow", () => q.answer(true), "primary")}
            {button(t("approval.deny"), "app-view-fullscreen-deny", () => q.answer(false), "danger")}
          </div>
        </div>
      );
    case "download":
      return (
        <div className="approval-card" role="group" data-testid="app-view-download">
          <p>{t("view.downloadAsk", { server })}</p>
          <ul className="download-items">
            {q.items.map((item, i) => (
              <li key={i}>
                <strong>{item.name}</strong>{" "}
                <span className="muted small">{item.web ? t("view.downloadInBrowser") : item.size !== null ? formatSize(item.size) : ""}</span>
              </li>
            ))}
          </ul>
          <div className="row">
            {button(t("view.saveToDownloads"), "app-view-save", () => q.answer("downloads"), "primary")}
            {button(t("view.saveToFolder"), "app-view-save-choose", () => q.answer("choose"))}
            {button(t("view.dontSave"), "app-view-save-cancel", () => q.answer(null))}
          </div>
        </div>
      );
  }
}
