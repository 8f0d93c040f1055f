// A tool call's view (MCP Apps): the tool's `ui://` page in a sandboxed frame
// of its own origin, told the call's arguments and result, answering what it
// asks through the ViewBridge. A call it makes to a tool whose approval is ask
// waits for the user here; deny, and tools made for the model only, are refused
// by the core. Whatever removes the card (LiveViews) first asks the view to tear
// down; a view may ask to be closed, and the user can open it again.
import { useContext, useEffect, useRef, useState } from "react";
import pkg from "../../../package.json";
import { isMessageKey, useI18n } from "../../lib/i18n";
import { toIpcError, type AppViewInfo, type SavedFile, type ToolInfo, type ToolTrace } from "../../lib/ipc";
import {
  callToolResult,
  currentTheme,
  downloadItems,
  hostContext,
  LiveViewsContext,
  MAX_VIEW_HEIGHT,
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

/** A call the view wants to make, waiting for the user. */
interface Asked {
  tool: string;
  args: Record<string, unknown>;
  answer: (allowed: boolean) => void;
}

/** How often a view hears a call's arguments while the model writes them. */
const PARTIAL_EVERY_MS = 100;

/** Where the user saves what a view offers; null: not at all. */
type SaveChoice = "downloads" | "choose" | null;

/** Files the view offers, waiting for the user. */
interface Offer {
  /** Each file with the name it is saved under. */
  items: (DownloadItem & { name: string })[];
  answer: (choice: SaveChoice) => void;
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
  const [asked, setAsked] = useState<Asked | null>(null);
  const [mode, setMode] = useState<DisplayMode>("inline");
  const [offer, setOffer] = useState<Offer | null>(null);
  const [saved, setSaved] = useState<SavedFile[] | null>(null);
  const [saveError, setSaveError] = useState<string | null>(null);
  // The view asked to be closed (and was torn down): its frame is gone until opened again.
  const [closed, setClosed] = useState(false);
  const frame = useRef<HTMLIFrameElement>(null);
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

  // Everything the view asks goes through here; the latest catalogue and chat are read at call time.
  const latest = useRef({ catalogue, chat, lang });
  useEffect(() => {
    latest.current = { catalogue, chat, lang };
  });

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
    const host: ViewHost = {
      callTool: async (name, args) => {
        const info = toolOf(latest.current.catalogue, server, name);
        if (!info) throw new Error(t("view.no_tool", { server, tool: name }));
        // The user is asked only about a call the core would run once allowed;
        // the core refuses the others and says why.
        const runnable = info.view.for_app && info.enabled && info.approval !== "deny";
        const ask = runnable && info.approval === "ask";
        // A new question answers the one still shown with no.
        const allowed = () =>
          new Promise<boolean>((answer) =>
            setAsked((before) => {
              before?.answer(false);
              return { tool: name, args, answer };
            }),
          );
        if (ask && !(await allowed())) {
          throw new Error(t("view.refused", { tool: name }));
        }
        return ipc.callToolForView(server, name, args, ask, gone.signal);
      },
      readResource: (resource) => ipc.readResourceForView(server, resource, gone.signal),
      listResources: () => ipc.listResourcesForView(server),
      openLink: (url) => ipc.openLink(url),
      sendMessage: async (text) => {
        const target = latest.current.chat;
        if (!target) throw new Error(t("view.no_chat"));
        await target.sendMessage(text);
      },
      resize: (h) => setHeight(Math.max(40, Math.min(MAX_VIEW_HEIGHT, Math.ceil(h)))),
      setDisplayMode: (next) => {
        setMode(next);
        return next;
      },
      sample: (params) => ipc.sampleForView(server, params, gone.signal),
      downloadFile: async (contents) => {
        // The names shown are the ones the core saves under.
        const names = await ipc.downloadNames(contents);
        const items = downloadItems(contents).map((item, i) => ({ ...item, name: names[i] ?? "" }));
        // A new offer answers the one still shown with "not saved".
        const choice = await new Promise<SaveChoice>((answer) =>
          setOffer((before) => {
            before?.answer(null);
            return { items, answer };
          }),
        );
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
      leave();
      window.removeEventListener("message", onMessage);
      themes.disconnect();
      bridge.current = null;
    };
    // The bridge lives as long as the page; the tool and t are read when the view asks.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [page, closed, server, ipc, views]);

  // A change of display mode is told to the view; Esc leaves full screen.
  const shownMode = useRef<DisplayMode>("inline");
  useEffect(() => {
    if (shownMode.current === mode) return;
    shownMode.current = mode;
    bridge.current?.notify("ui/notifications/host-context-changed", { displayMode: mode });
    if (mode !== "fullscreen") return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") setMode("inline");
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [mode]);

  // While the model writes the call, the view hears its arguments so far, at most every
  // PARTIAL_EVERY_MS (each time the latest text, made whole).
  const partialText = trace.status === "writing" ? (trace.arguments_text ?? "") : null;
  const partial = useRef<{ text: string | null; timer: ReturnType<typeof setTimeout> | null }>({ text: null, timer: null });
  useEffect(() => {
    const p = partial.current;
    p.text = partialText;
    if (partialText === null || p.timer !== null) return;
    p.timer = setTimeout(() => {
      p.timer = null;
      const args = p.text === null ? null : partialObject(p.text);
      if (args) bridge.current?.notify("ui/notifications/tool-input-partial", { arguments: args });
    }, PARTIAL_EVERY_MS);
  }, [partialText]);
  useEffect(() => {
    const p = partial.current;
    return () => {
      if (p.timer !== null) clearTimeout(p.timer);
    };
  }, []);

  // The call's arguments once known, then its result or its end.
  useEffect(() => {
    const b = bridge.current;
    if (!b) return;
    if (!told.current.input && trace.status !== "pending_approval" && trace.status !== "writing") {
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
  }, [page, closed, trace.status, trace.arguments, trace.result, trace.error]);

  if (error) {
    return (
      <p className="trace-error small" role="alert" data-testid="app-view-error">
        {t("view.failed", { error })}
      </p>
    );
  }
  const answer = (allowed: boolean) => {
    asked?.answer(allowed);
    setAsked(null);
  };
  const save = (choice: SaveChoice) => {
    offer?.answer(choice);
    setOffer(null);
  };
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
        <div className={`app-view-box${page.prefers_border === false ? "" : " bordered"}${mode === "inline" ? "" : ` ${mode}`}`} data-mode={mode}>
          {mode === "fullscreen" && (
            <button type="button" className="app-view-exit" data-testid="app-view-exit" onClick={() => setMode("inline")}>
              {t("view.exitFullscreen")}
            </button>
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
      {asked && (
        <div className="approval-card" role="group" data-testid="app-view-ask">
          <p>{t("view.ask", { server, tool: asked.tool })}</p>
          <pre className="json">{pretty(asked.args)}</pre>
          <div className="row">
            <button type="button" className="primary" data-testid="app-view-allow" onClick={() => answer(true)}>
              {t("view.allow")}
            </button>
            <button type="button" className="danger" data-testid="app-view-deny" onClick={() => answer(false)}>
              {t("approval.deny")}
            </button>
          </div>
        </div>
      )}
      {offer && (
        <div className="approval-card" role="group" data-testid="app-view-download">
          <p>{t("view.downloadAsk", { server })}</p>
          <ul className="download-items">
            {offer.items.map((item, i) => (
              <li key={i}>
                <strong>{item.name}</strong>{" "}
                <span className="muted small">{item.web ? t("view.downloadInBrowser") : item.size !== null ? formatSize(item.size) : ""}</span>
              </li>
            ))}
          </ul>
          <div className="row">
            <button type="button" className="primary" data-testid="app-view-save" onClick={() => save("downloads")}>
              {t("view.saveToDownloads")}
            </button>
            <button type="button" data-testid="app-view-save-choose" onClick={() => save("choose")}>
              {t("view.saveToFolder")}
            </button>
            <button type="button" data-testid="app-view-save-cancel" onClick={() => save(null)}>
              {t("view.dontSave")}
            </button>
          </div>
        </div>
      )}
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
