import { useCallback, useContext, useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { Circle, CircleCheck, CircleDot } from "lucide-react";
import { ErrorBanner } from "../components/ErrorBanner";
import { Composer, type ModelChoice } from "../components/chat/Composer";
import { MessageList } from "../components/chat/MessageList";
import { ServerHealth, withStatus } from "../components/chat/ServerHealth";
import type { MessageActions } from "../components/chat/MessageView";
import { Sidebar } from "../components/chat/Sidebar";
import { Announcer } from "../components/chat/Announcer";
import { TraceInspector } from "../components/chat/TraceInspector";
import { Dialog } from "../components/common/Dialog";
import { ChatStores, useConversation, type ConversationStore, type Draft } from "../lib/chatStore";
import { useI18n, type MessageKey } from "../lib/i18n";
import { defaultModel } from "../lib/models";
import { ResourceReader } from "../lib/resources";
import { LiveViewsContext, ViewChat } from "../lib/mcpApps";
import { useViewChat } from "../lib/viewChat";
import { ToolCatalogue, toolMap } from "../lib/toolCatalogue";
import type { SettingsSection } from "./SettingsPage";
import {
  ipc as defaultIpc,
  toIpcError,
  type ConversationSettings,
  type ConversationSummary,
  type Ipc,
  type IpcError,
  type Message,
  type PromptInfo,
  type Assistant,
  type ResourceInfo,
  type ResourceTemplateInfo,
  type McpContentIpc,
  type ServerStatus,
  type ToolInfo,
  type ToolTrace,
  type AttachmentInput,
} from "../lib/ipc";

export type ChatIpc = Pick<
  Ipc,
  | "listConversations"
  | "createConversation"
  | "renameConversation"
  | "pinConversation"
  | "deleteConversation"
  | "discardConversationIfUnused"
  | "getConversation"
  | "earlierMessages"
  | "updateConversationSettings"
  | "exportConversation"
  | "sendMessage"
  | "regenerate"
  | "editMessage"
  | "cancelTurn"
  | "switchBranch"
  | "deleteMessage"
  | "forkConversation"
  | "respondApproval"
  | "getTrace"
  | "readKeptResult"
  | "callTool"
  | "listProviders"
  | "listTools"
  | "listServers"
  | "listAssistants"
  | "getSettings"
  | "onServerStatus"
  | "onConversationRenamed"
  | "readResource"
> &
  McpContentIpc;

/** What the composer's budget needs beyond the model: see `ConversationView`'s `limits`. */
interface Limits {
  toolShare: number;
}

/** The core's default assistant (`assistants::DEFAULT_ASSISTANT`), which a conversation without a choice uses. */
const DEFAULT_ASSISTANT = "Default";

const DEFAULT_SETTINGS: ConversationSettings = {
  provider: null,
  model: null,
  servers: null,
  disabled_tools: [],
  assistant_id: null,
  system_prompt: null,
  reasoning: null,
};

/** Edits the instructions one conversation follows instead of its assistant's prompt. */
function InstructionsDialog({ initial, onSave, onClose }: { initial: string; onSave: (text: string) => void; onClose: () => void }) {
  const { t } = useI18n();
  const [text, setText] = useState(initial);
  return (
    <Dialog title={t("chat.instructions")} onClose={onClose} testId="instructions-dialog">
      <p className="muted small">{t("chat.instructionsHelp")}</p>
      <textarea
        id="conversation-instructions"
        aria-label={t("chat.instructions")}
        rows={8}
        value={text}
        placeholder={t("chat.instructionsPlaceholder")}
        onChange={(e) => setText(e.target.value)}
      />
      <div className="row">
        <button type="button" className="primary" onClick={() => onSave(text)}>
          {t("common.save")}
        </button>
        <button type="button" onClick={onClose}>
          {t("common.cancel")}
        </button>
      </div>
    </Dialog>
  );
}

/** Messages shown when a conversation opens (its end), and fetched per step back. */
const TAIL = 100;
const PAGE = 200;

function ConversationView({
  id,
  title,
  store,
  ipc,
  models,
  assistants,
  tools,
  prompts,
  resources,
  templates,
  onError,
  onTurnEnd,
  onForked,
  health,
  limits,
}: {
  id: string;
  title: string;
  store: ConversationStore;
  ipc: ChatIpc;
  models: ModelChoice[];
  /** To say which model the assistant of the conversation answers with. */
  assistants: Assistant[];
  tools: ToolInfo[];
  prompts: PromptInfo[];
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
  onError: (e: IpcError) => void;
  onTurnEnd: () => void;
  /** A new conversation carries on from one of this one's messages: open it. */
  onForked: (c: ConversationSummary) => void;
  /** Which servers are starting or failed, shown above the composer. */
  health?: ReactNode;
  /** The tools' share of a window past which they are found through search (percent). */
  limits: Limits;
}) {
  const { t } = useI18n();
  const state = useConversation(store);
  const [settings, setSettings] = useState<ConversationSettings>(DEFAULT_SETTINGS);
  // The model that answers, as the core picks it (`App::model_choice`), and what a request to it may hold.
  const assistant = assistants.find((a) => a.id === (settings.assistant_id ?? DEFAULT_ASSISTANT)) ?? null;
  const fallback = defaultModel(models, assistant);
  const provider = settings.provider ?? fallback?.provider;
  const model = settings.model || (settings.provider ? assistant?.model || models.find((m) => m.provider === provider)?.model : fallback?.model);
  const inUse = models.find((m) => m.provider === provider && m.model === model);
  const cites = assistant?.kb_mode === "always" || assistant?.kb_mode === "both";
  const contextWindow = inUse?.window ?? null;
  const budget = {
    window: contextWindow,
    maxTools: inUse?.maxTools ?? null,
    // Room the core keeps for the answer (`agent::turn`): the output limit, else a quarter of the window up to 4,096.
    reserve: contextWindow === null ? 0 : (assistant?.max_tokens ?? Math.min(Math.floor(contextWindow / 4), 4096)),
    toolShare: limits.toolShare,
    knowledgeTokens: cites ? (assistant?.knowledge.max_tokens ?? 0) : 0,
  };
  const [inspected, setInspected] = useState<ToolTrace | null>(null);
  const readKept = useCallback((result: number, offset: number, length: number) => ipc.readKeptResult(id, result, offset, length), [ipc, id]);
  // From the moment a turn is asked for until it settles: no second send meanwhile.
  const [pending, setPending] = useState(false);
  // Where the last export was saved.
  const [exported, setExported] = useState<string | null>(null);
  const saveDraft = useCallback((d: Draft) => store.setDraft(d), [store]);
  const [editingInstructions, setEditingInstructions] = useState(false);

  useEffect(() => {
    let live = true;
    ipc
      .getConversation(id, TAIL)
      .then((d) => {
        if (!live) return;
        // A turn still streaming into the store is newer than what is stored.
        if (!store.getState().streamingId) store.load(d.messages, d.earlier);
        setSettings(d.settings);
      })
      .catch((e: unknown) => live && onError(toIpcError(e)));
    return () => {
      live = false;
    };
  }, [id, ipc, store, onError]);

  // Resolves to whether the turn started: one refused before it began (no
  // provider, an attachment the core will not take) stored nothing.
  const run = useCallback(
    (start: (onEvent: Parameters<ChatIpc["sendMessage"]>[3]) => Promise<unknown>): Promise<boolean> => {
      setPending(true);
      // Sent to: no longer a new chat to discard, even before the turn starts.
      store.markSent();
      let started = false;
      return (
        start((e) => {
          if (e.type === "turn_started") started = true;
          store.apply(e);
        })
          // The stored branch is the truth once the turn is over (ids, siblings for the switcher);
          // as much of it as was shown, and at least a tail.
          .then(() => ipc.getConversation(id, Math.max(TAIL, store.getState().messages.length + 2)))
          .then((d) => store.load(d.messages, d.earlier))
          .then(() => true)
          .catch((e: unknown) => {
            store.fail(toIpcError(e));
            return started;
          })
          .finally(() => {
            setPending(false);
            onTurnEnd();
          })
      );
    },
    [store, onTurnEnd, ipc, id],
  );

  // The views of the messages that go (from the first of the branch shown that `first`
  // picks) are told first; then `then` runs.
  const views = useContext(LiveViewsContext);
  const leaving = useCallback(
    (first: (m: Message) => boolean, then: () => void) => {
      const messages = store.getState().messages;
      const at = messages.findIndex(first);
      const calls = at < 0 ? [] : messages.slice(at).flatMap((m) => m.tool_calls.map((c) => c.call_id));
      views.before(then, calls);
    },
    [store, views],
  );

  const actions = useMemo<MessageActions>(
    () => ({
      onDecide: (callId, d) => {
        ipc.respondApproval(callId, d).catch((e: unknown) => onError(toIpcError(e)));
      },
      onInspect: setInspected,
      onRegenerate: (m) =>
        leaving((x) => x.id === m.id, () => {
          store.truncateAfter(m.parent_id);
          void run((cb) => ipc.regenerate(id, m.id, cb));
        }),
      onEdit: (m, text) =>
        leaving((x) => x.id === m.id, () => {
          store.truncateAfter(m.parent_id);
          void run((cb) => ipc.editMessage(id, m.id, text, cb));
        }),
      onSwitchBranch: (messageId) =>
        leaving(
          (m) => m.siblings.includes(messageId),
          () =>
            void ipc
              .switchBranch(id, messageId)
              .then((ms) => store.load(ms))
              .catch((e: unknown) => onError(toIpcError(e))),
        ),
      onFork: (m) => {
        ipc
          .forkConversation(id, m.id)
          .then(onForked)
          .catch((e: unknown) => onError(toIpcError(e)));
      },
      onDelete: (m) =>
        leaving(
          (x) => x.id === m.id,
          () =>
            void ipc
              .deleteMessage(id, m.id)
              .then((ms) => store.load(ms))
              .catch((e: unknown) => onError(toIpcError(e))),
        ),
    }),
    [id, ipc, store, run, onError, onForked, leaving],
  );

  // What tools' views send and give the model to know (MCP Apps).
  const send = useCallback(
    (text: string, attachments: AttachmentInput[]) => run((cb) => ipc.sendMessage(id, text, attachments, cb)),
    [id, ipc, run],
  );
  const {
    contexts: viewContexts,
    actions: viewChat,
    sendWithContexts,
  } = useViewChat(send, pending || state.streamingId !== null, t("view.busy"));

  // Older messages arrive a page at a time as the user scrolls back.
  const loadEarlier = useCallback(() => {
    const first = store.getState().messages[0];
    if (!first) return Promise.resolve();
    return ipc
      .earlierMessages(id, first.id, PAGE)
      .then((p) => store.prepend(p.messages, p.earlier))
      .catch((e: unknown) => onError(toIpcError(e)));
  }, [id, ipc, store, onError]);

  const updateSettings = (s: ConversationSettings) => {
    setSettings(s);
    ipc.updateConversationSettings(id, s).catch((e: unknown) => onError(toIpcError(e)));
  };

  return (
    <div className="conversation-view">
      <div className="conversation-toolbar">
        <h2 className="conversation-heading" title={title}>
          {title}
        </h2>
        <button
          type="button"
          id="instructions-button"
          className={settings.system_prompt ? "link set" : "link"}
          aria-pressed={settings.system_prompt !== null}
          onClick={() => setEditingInstructions(true)}
        >
          {t("chat.instructions")}
        </button>
        <span className="muted small">{t("chat.export")}</span>
        {(["markdown", "json"] as const).map((format) => (
          <button
            key={format}
            type="button"
            className="link"
            id={`export-conversation-${format}`}
            onClick={() =>
              ipc
                .exportConversation(id, format)
                .then((path) => path && setExported(path))
                .catch((e: unknown) => onError(toIpcError(e)))
            }
          >
            {t(format === "markdown" ? "chat.exportMarkdown" : "chat.exportJson")}
          </button>
        ))}
        {exported && (
          <small className="muted" role="status">
            {t("chat.exported", { path: exported })}
          </small>
        )}
        {state.usage && (
          <small className="muted">{t("chat.usage", { input: state.usage.input_tokens, output: state.usage.output_tokens })}</small>
        )}
        {state.toolSearch && (
          <small className="muted" data-testid="tool-search">
            {t("chat.toolSearch", { searchable: state.toolSearch.searchable, sent: state.toolSearch.sent })}
          </small>
        )}
        {state.trimmed && (
          <small className="muted" data-testid="context-trimmed">
            {t("chat.trimmed", {
              window: state.trimmed.context_window,
              results: state.trimmed.elided_tool_results,
              messages: state.trimmed.dropped_messages,
            })}
          </small>
        )}
      </div>
      <Announcer state={state} />
      {state.messages.length === 0 ? (
        <p className="muted empty-chat">{t("chat.startHint")}</p>
      ) : (
        <ViewChat.Provider value={viewChat}>
          <MessageList
            messages={state.messages}
            earlier={state.earlier}
            onLoadEarlier={loadEarlier}
            streamingId={state.streamingId}
            actions={actions}
          />
        </ViewChat.Provider>
      )}
      {state.error && <ErrorBanner error={state.error} />}
      {health}
      {viewContexts.size > 0 && (
        <div className="view-contexts" data-testid="view-contexts">
          <span className="muted small">{t("view.contextNext")}</span>
          {[...viewContexts].map(([key, c]) => (
            <span key={key} className="badge" title={c.text} data-testid="view-context">
              {c.title}{" "}
              <button type="button" className="link" aria-label={t("view.dropContext", { title: c.title })} onClick={() => viewChat.setContext(key, null)}>
                ×
              </button>
            </span>
          ))}
        </div>
      )}
      <Composer
        streaming={pending || state.streamingId !== null}
        onSend={sendWithContexts}
        onCancel={() => ipc.cancelTurn(id).catch((e: unknown) => onError(toIpcError(e)))}
        models={models}
        fallback={fallback}
        budget={budget}
        settings={settings}
        onSettings={updateSettings}
        tools={tools}
        prompts={prompts}
        resources={resources}
        templates={templates}
        getPrompt={(p, args, signal) => ipc.getPrompt(p.server, p.name, args, signal)}
        complete={(server, target, argument, value, context, signal) =>
          ipc.completeArgument(server, target, argument, value, context, signal).then((c) => c.values)
        }
        expandTemplate={(uriTemplate, values) => ipc.expandResourceTemplate(uriTemplate, values)}
        draft={store.draft}
        onDraft={saveDraft}
      />
      {editingInstructions && (
        <InstructionsDialog
          initial={settings.system_prompt ?? ""}
          onClose={() => setEditingInstructions(false)}
          onSave={(text) => {
            updateSettings({ ...settings, system_prompt: text.trim() === "" ? null : text });
            setEditingInstructions(false);
          }}
        />
      )}
      {inspected && (
        <TraceInspector
          trace={inspected}
          getTrace={ipc.getTrace}
          callTool={ipc.callTool}
          readKept={readKept}
          onClose={() => setInspected(null)}
        />
      )}
    </div>
  );
}

/**
 * `stores` outlives the page (the App owns it), so a turn keeps streaming into
 * its store while the user is in Settings, and the open conversation is kept.
 */
/**
 * What the page shows with no conversation open. A new user (no conversation yet) gets the
 * three steps to a first chat that uses a tool, each marked done as it is: a provider, MCP
 * servers (imported, or from the presets and the registry), a first message. Later it says
 * how to start and what the model can reach.
 */
function Welcome({
  providers,
  tools,
  configured,
  firstRun,
  health,
  onNew,
  onOpenSettings,
}: {
  /** `null` until the providers are read. */
  providers: number | null;
  tools: ToolInfo[];
  /** Some server is on (starting, ready or failed): no need to suggest adding one. */
  configured: boolean;
  /** No conversation exists yet. */
  firstRun: boolean;
  health: ReactNode;
  onNew: () => void;
  onOpenSettings?: (section: SettingsSection, server?: string) => void;
}) {
  const { t } = useI18n();
  // The tools a new chat offers: switched-off ones are not the model's.
  const offered = tools.filter((tool) => tool.enabled);
  const servers = new Set(offered.map((tool) => tool.server)).size;
  const hasProvider = (providers ?? 0) > 0;
  const toolsLine = (
    <p className="muted" data-testid="welcome-tools">
      {offered.length > 0 ? t("welcome.tools", { tools: offered.length, servers }) : t(configured ? "welcome.noToolsYet" : "welcome.noTools")}
    </p>
  );
  const newChat = (primary: boolean) => (
    <button type="button" className={primary ? "primary" : undefined} data-testid="welcome-new" onClick={onNew} disabled={!hasProvider}>
      {t("sidebar.new")}
    </button>
  );
  if (!firstRun && hasProvider) {
    return (
      <div className="welcome" data-testid="welcome">
        <h2>{t("welcome.title")}</h2>
        <p>{t("welcome.start")}</p>
        {newChat(true)}
        {toolsLine}
        {health}
        {onOpenSettings && (
          <button type="button" className="link" data-testid="welcome-servers" onClick={() => onOpenSettings("servers")}>
            {t("welcome.servers")}
          </button>
        )}
      </div>
    );
  }
  const state = (done: boolean, current: boolean) => (done ? "done" : current ? "current" : "todo");
  const steps: { id: string; state: string; title: string; body: ReactNode; actions: ReactNode }[] = [
    {
      id: "provider",
      state: state(hasProvider, providers === 0),
      title: t("welcome.step1"),
      body: t("welcome.noProvider"),
      actions: onOpenSettings && (
        <button type="button" className={hasProvider ? undefined : "primary"} data-testid="welcome-add-provider" onClick={() => onOpenSettings("providers")}>
          {t(hasProvider ? "welcome.providers" : "welcome.addProvider")}
        </button>
      ),
    },
    {
      id: "servers",
      state: state(configured, hasProvider),
      title: t("welcome.step2"),
      body: (
        <>
          {t("welcome.serversHow")} {toolsLine}
        </>
      ),
      actions: onOpenSettings && (
        <>
          <button type="button" className={hasProvider && !configured ? "primary" : undefined} data-testid="welcome-import" onClick={() => onOpenSettings("import")}>
            {t("welcome.import")}
          </button>
          <button type="button" data-testid="welcome-servers" onClick={() => onOpenSettings("servers")}>
            {t("welcome.addServers")}
          </button>
        </>
      ),
    },
    {
      id: "chat",
      state: state(false, hasProvider && configured),
      title: t("welcome.step3"),
      body: t("welcome.firstMessage"),
      actions: newChat(hasProvider && configured),
    },
  ];
  const StepIcon = { done: CircleCheck, current: CircleDot, todo: Circle } as const;
  return (
    <div className="welcome" data-testid="welcome">
      <h2>{t("welcome.title")}</h2>
      <p>{t("welcome.intro")}</p>
      <ol className="steps" aria-label={t("welcome.stepsLabel")}>
        {steps.map((step, i) => {
          const Glyph = StepIcon[step.state as keyof typeof StepIcon];
          return (
            <li key={step.id} className={`step ${step.state}`} data-testid={`step-${step.id}`} data-state={step.state} aria-current={step.state === "current" ? "step" : undefined}>
              <Glyph size={20} aria-hidden="true" className="step-icon" />
              <div className="step-text">
                <h3>
                  <span className="sr-only">{t(`welcome.state.${step.state}` as MessageKey)} </span>
                  {i + 1}. {step.title}
                </h3>
                <div className="step-body muted">{step.body}</div>
                <div className="row">{step.actions}</div>
              </div>
            </li>
          );
        })}
      </ol>
      {health}
    </div>
  );
}

/** Asked from outside the page (numbered, so the same twice is done twice): show a conversation, or start one (`null`). */
export interface ChatRequest {
  n: number;
  open: string | null;
}

export function ChatPage({
  ipc = defaultIpc,
  stores: given,
  request,
  onRequestDone,
  onOpenSettings,
}: {
  ipc?: ChatIpc;
  stores?: ChatStores;
  request?: ChatRequest | null;
  /** The request was done (so a page shown again later does not do it again). */
  onRequestDone?: () => void;
  /** Opens a section of the settings (from the welcome's buttons), or a server's page. */
  onOpenSettings?: (section: SettingsSection, server?: string) => void;
}) {
  const { t } = useI18n();
  const [stores] = useState(() => given ?? new ChatStores());
  const [conversations, setConversations] = useState<ConversationSummary[]>([]);
  // When the list was loaded: the sidebar groups it by day from then.
  const [listedAt, setListedAt] = useState(Date.now);
  const [activeId, setActive] = useState<string | null>(() => stores.activeId());
  // The conversation shown goes once its views were told; the latest choice wins.
  const views = useContext(LiveViewsContext);
  const chosen = useRef(0);
  const setActiveId = useCallback(
    (id: string | null) => {
      const n = ++chosen.current;
      if (id === stores.activeId()) return;
      views.before(() => {
        if (n !== chosen.current) return;
        const left = stores.activeId();
        stores.setActive(id);
        setActive(id);
        // A new chat left before anything was sent in it does not stay behind in the list.
        if (stores.unused(left)) {
          ipc.discardConversationIfUnused(left).then(
            (gone) => {
              if (!gone) return;
              // Gone, even if the user went back to it meanwhile: then nothing is open.
              if (stores.activeId() === left) setActive(null);
              stores.drop(left);
              setConversations((cs) => cs.filter((c) => c.id !== left));
            },
            () => undefined,
          );
        }
      });
    },
    [stores, views, ipc],
  );
  const [query, setQuery] = useState("");
  const [error, setError] = useState<IpcError | null>(null);
  const [models, setModels] = useState<ModelChoice[]>([]);
  const [providerCount, setProviderCount] = useState<number | null>(null);
  const [tools, setTools] = useState<ToolInfo[]>([]);
  // The servers' states: read once, then kept by their status events.
  const [servers, setServers] = useState<ServerStatus[]>([]);
  const [prompts, setPrompts] = useState<PromptInfo[]>([]);
  const [resources, setResources] = useState<ResourceInfo[]>([]);
  const [templates, setTemplates] = useState<ResourceTemplateInfo[]>([]);
  const [assistants, setAssistants] = useState<Assistant[]>([]);
  const [assistantId, setAssistantId] = useState<string | null>(null);
  const [limits, setLimits] = useState<Limits>({ toolShare: 10 });

  // Search as the user types, but not on every keystroke.
  const [search, setSearch] = useState("");
  useEffect(() => {
    const timer = setTimeout(() => setSearch(query.trim()), 200);
    return () => clearTimeout(timer);
  }, [query]);

  const refresh = useCallback(() => {
    ipc
      .listConversations(search === "" ? null : search)
      .then((cs) => {
        setConversations(cs);
        setListedAt(Date.now());
      })
      .catch((e: unknown) => setError(toIpcError(e)));
  }, [ipc, search]);

  useEffect(refresh, [refresh]);

  useEffect(() => {
    const fail = (e: unknown) => setError(toIpcError(e));
    ipc
      .listProviders()
      .then((ps) => {
        setProviderCount(ps.length);
        setModels(
          ps.flatMap((p) =>
            [...new Set([p.profile.default_model, ...p.profile.models])].map((model) => ({ provider: p.profile.name, model, window: p.windows[model] ?? null, maxTools: p.max_tools })),
          ),
        );
      })
      .catch(fail);
    ipc
      .getSettings()
      .then((s) => setLimits({ toolShare: s.tool_share_percent }))
      .catch(fail);
    // Tools, prompts and resources change as servers start, stop and restart.
    const loadCatalogue = () => {
      ipc.listTools(null).then(setTools).catch(fail);
      ipc.listPrompts().then(setPrompts).catch(fail);
      ipc.listResources().then(setResources).catch(fail);
      ipc.listResourceTemplates().then(setTemplates).catch(fail);
    };
    loadCatalogue();
    ipc
      .listServers()
      // A status event that came before the list is newer than the list's.
      .then((views) => {
        const listed = views.map((v) => v.status);
        setServers((now) => [...now, ...listed.filter((s) => !now.some((n) => n.server === s.server))]);
      })
      .catch(fail);
    ipc.listAssistants().then(setAssistants).catch(fail);
    const unStatus = ipc.onServerStatus((status) => {
      setServers((now) => withStatus(now, status));
      loadCatalogue();
    });
    const unRenamed = ipc.onConversationRenamed((r) => setConversations((cs) => cs.map((c) => (c.id === r.id ? { ...c, title: r.title } : c))));
    return () => {
      void unStatus.then((f) => f());
      void unRenamed.then((f) => f());
    };
  }, [ipc]);

  const newConversation = useCallback(() => {
    ipc
      .createConversation(assistantId)
      .then((c) => {
        stores.markFresh(c.id);
        setConversations((cs) => [c, ...cs]);
        setActiveId(c.id);
      })
      .catch((e: unknown) => setError(toIpcError(e)));
  }, [ipc, assistantId, setActiveId, stores]);

  // The tray's New chat, or a conversation quick ask hands over (reloaded: its turn ran in another window).
  const done = useRef(0);
  useEffect(() => {
    if (!request || request.n === done.current) return;
    done.current = request.n;
    onRequestDone?.();
    if (request.open === null) return newConversation();
    stores.drop(request.open);
    refresh();
    setActiveId(request.open);
  }, [request, onRequestDone, newConversation, refresh, stores, setActiveId]);

  const onError = useCallback((e: IpcError) => setError(e), []);
  const catalogue = useMemo(() => toolMap(tools), [tools]);
  const health = <ServerHealth servers={servers} onOpen={onOpenSettings && ((server) => onOpenSettings("servers", server))} />;

  return (
    <ToolCatalogue.Provider value={catalogue}>
      <ResourceReader.Provider value={ipc.readResource}>
      <section className="page chat-page" id="page-chat">
        <h1 className="sr-only">{t("chat.title")}</h1>
        <Sidebar
          conversations={conversations}
          now={listedAt}
          activeId={activeId}
          query={query}
          onQuery={setQuery}
          onSelect={setActiveId}
          onNew={newConversation}
          assistants={assistants}
          assistantId={assistantId}
          onAssistant={setAssistantId}
          onPin={(id, pinned) =>
            ipc
              .pinConversation(id, pinned)
              .then(refresh)
              .catch((e: unknown) => setError(toIpcError(e)))
          }
          onRename={(id, title) =>
            ipc
              .renameConversation(id, title)
              .then(refresh)
              .catch((e: unknown) => setError(toIpcError(e)))
          }
          onDelete={(id) =>
            ipc
              .deleteConversation(id)
              .then(() => {
                // The deleted one's view goes, whether or not its store was the active one.
                if (stores.activeId() === id) setActive(null);
                stores.drop(id);
                refresh();
              })
              .catch((e: unknown) => setError(toIpcError(e)))
          }
        />
        <div className="chat-main">
          {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
          {activeId ? (
            <ConversationView
              key={activeId}
              id={activeId}
              title={conversations.find((c) => c.id === activeId)?.title ?? ""}
              store={stores.get(activeId)}
              ipc={ipc}
              models={models}
              assistants={assistants}
              limits={limits}
              tools={tools}
              prompts={prompts}
              resources={resources}
              templates={templates}
              onError={onError}
              onTurnEnd={refresh}
              onForked={(c) => {
                setConversations((cs) => [c, ...cs]);
                setActiveId(c.id);
              }}
              health={health}
            />
          ) : (
            <Welcome
              providers={providerCount}
              tools={tools}
              // Patchbay's own server ("builtin") is no server the user added.
              configured={servers.some((s) => s.server !== "builtin" && s.state !== "stopped")}
              firstRun={conversations.length === 0 && search === ""}
              health={health}
              onNew={newConversation}
              onOpenSettings={onOpenSettings}
            />
          )}
        </div>
      </section>
      </ResourceReader.Provider>
    </ToolCatalogue.Provider>
  );
}
