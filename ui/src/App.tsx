import { lazy, Suspense, useCallback, useContext, useEffect, useRef, useState } from "react";
import { ChatStores } from "./lib/chatStore";
import { useI18n, type MessageKey } from "./lib/i18n";
import { ipc, toIpcError, type IpcError, type UpdateView } from "./lib/ipc";
import { openLinksWith } from "./lib/links";
import { LiveViewsContext } from "./lib/mcpApps";
import { ServerRequests } from "./components/ServerRequests";
import { InstallLink } from "./components/settings/InstallLink";
import { UpdateCard } from "./components/Update";
import { Shortcuts } from "./components/Shortcuts";
import { TooltipProvider } from "./components/common/IconButton";
import { ErrorToast, type Problem } from "./components/ErrorToast";
import { ChatPage, type ChatRequest } from "./pages/ChatPage";
import type { SettingsSection } from "./pages/SettingsPage";

// Settings are loaded when first opened: the window starts on the chat page, with less code
// parsed and held in memory.
const SettingsPage = lazy(() => import("./pages/SettingsPage").then((m) => ({ default: m.SettingsPage })));

type Page = "chat" | "settings";

const PAGES: { id: Page; label: MessageKey }[] = [
  { id: "chat", label: "nav.chat" },
  { id: "settings", label: "nav.settings" },
];

export function App() {
  const { t, lang } = useI18n();
  // What speaks while the window is closed (the tray, a scheduled run's notification) speaks its language.
  useEffect(() => void ipc.setLanguage(lang).catch(() => undefined), [lang]);
  const [page, showPage] = useState<Page>("chat");
  // Tools' views on the chat page are told they go before the page goes; the latest choice wins.
  const views = useContext(LiveViewsContext);
  const chosen = useRef({ n: 0, page: "chat" as Page });
  const setPage = useCallback(
    (next: Page) => {
      const n = ++chosen.current.n;
      if (next === chosen.current.page) return;
      views.before(() => {
        if (n !== chosen.current.n) return;
        chosen.current.page = next;
        showPage(next);
      });
    },
    [views],
  );
  // The settings section to open on, when the chat page sends the user to one.
  const [section, setSection] = useState<SettingsSection>("general");
  // The server whose page it opens on, when the chat page sends the user to one.
  const [server, setServer] = useState<string | null>(null);
  // Conversation stores live as long as the app, not the chat page.
  const [stores] = useState(() => new ChatStores());
  // A bundle file Patchbay was opened with goes to its installer on the servers page;
  // an install link opens its confirmation over the page.
  const [bundle, setBundle] = useState<string | null>(null);
  // Links that come while one is shown wait their turn: a new one never replaces the one being read.
  const [links, setLinks] = useState<string[]>([]);
  // Links open in the user's browser; why one did not (or why an answer to a server's
  // request did not arrive), until dismissed.
  const [problem, setProblem] = useState<Problem | null>(null);
  // Never reset: each error is a toast of its own, even one shown as the last one closes.
  const problems = useRef(0);
  const showProblem = useCallback((error: IpcError) => setProblem({ n: ++problems.current, error }), []);
  useEffect(() => openLinksWith(window, ipc.openLink, (e) => showProblem(toIpcError(e))), [showProblem]);
  // Closing the window tears its tools' views down first, as any other change that takes them away.
  useEffect(() => {
    const un = ipc.onWindowClosing(() => views.before(() => void ipc.closeWindow().catch(() => undefined)));
    return () => {
      void un.then((f) => f());
    };
  }, [views]);
  useEffect(() => {
    const take = () =>
      void ipc.takeOpened().then(
        (opened) => {
          if (opened?.kind === "bundle") {
            setBundle(opened.path);
            setPage("settings");
          } else if (opened?.kind === "link") {
            const link = opened.link;
            setLinks((waiting) => (waiting.includes(link) ? waiting : [...waiting, link]));
          }
        },
        () => undefined,
      );
    take();
    const un = ipc.onOpened(take);
    return () => {
      void un.then((f) => f());
    };
  }, [setPage]);
  // A newer version the start-up or daily look found, until installed or put off.
  const [update, setUpdate] = useState<UpdateView | null>(null);
  useEffect(() => {
    void ipc.foundUpdate().then((found) => found && setUpdate(found), () => undefined);
    const un = ipc.onUpdateAvailable(setUpdate);
    return () => {
      void un.then((f) => f());
    };
  }, []);
  const openSettings = useCallback(() => {
    setSection("general");
    setServer(null);
    setPage("settings");
  }, [setPage]);
  // The tray's New chat and quick ask's "Open in Patchbay": the chat page does them.
  const [request, setRequest] = useState<ChatRequest | null>(null);
  const clearRequest = useCallback(() => setRequest(null), []);
  useEffect(() => {
    let n = 0;
    const open = (id: string) => {
      setPage("chat");
      setRequest({ n: ++n, open: id });
    };
    const unOpen = ipc.onOpenConversation(open);
    const unNew = ipc.onNewChat(() => {
      setPage("chat");
      setRequest({ n: ++n, open: null });
    });
    return () => {
      void unOpen.then((f) => f());
      void unNew.then((f) => f());
    };
  }, [setPage]);
  return (
    // One provider for every tooltip in the window (a long conversation has thousands).
    <TooltipProvider>
      <div className="app">
        <nav className="app-nav" aria-label={t("nav.label")}>
          <div className="app-brand">{t("app.name")}</div>
          {PAGES.map((p) => (
            <button
              key={p.id}
              id={`nav-${p.id}`}
              className={page === p.id ? "nav-item active" : "nav-item"}
              aria-current={page === p.id ? "page" : undefined}
              onClick={() => {
                setSection("general");
                setServer(null);
                setPage(p.id);
              }}
            >
              {t(p.label)}
            </button>
          ))}
          <div className="spacer" />
          <Shortcuts onSettings={openSettings} />
        </nav>
        <main className="app-main">
          {page === "chat" ? (
            <ChatPage
              stores={stores}
              request={request}
              onRequestDone={clearRequest}
              onOpenSettings={(to, name) => {
                setSection(to);
                setServer(name ?? null);
                setPage("settings");
              }}
            />
          ) : (
            <Suspense fallback={<p className="muted">{t("common.loading")}</p>}>
              <SettingsPage openedBundle={bundle} onBundleShown={() => setBundle(null)} initialSection={section} initialServer={server} />
            </Suspense>
          )}
        </main>
        {update && (
          <div className="update-banner">
            <UpdateCard update={update} ipc={ipc} onLater={() => setUpdate(null)} />
          </div>
        )}
        <ServerRequests onError={showProblem} />
        {links[0] !== undefined && <InstallLink key={links[0]} link={links[0]} ipc={ipc} onClose={() => setLinks((waiting) => waiting.slice(1))} />}
        {/* Over the page, not above it: the page keeps its place and its composer. */}
        <ErrorToast problem={problem} onClose={() => setProblem(null)} />
      </div>
    </TooltipProvider>
  );
}
