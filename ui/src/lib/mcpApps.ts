// MCP Apps (the `io.modelcontextprotocol/ui` extension, 2026-01-26): the host's
// side of the JSON-RPC a tool's view speaks over postMessage from its sandboxed
// frame. The view asks (`ui/initialize`, `tools/call`, `resources/read`,
// `ui/open-link`, `ui/message`, …) and the bridge answers through a ViewHost;
// the host tells the view the call's arguments and result once it has
// initialised, and asks it to tear down (`ui/resource-teardown`) before the
// window removes it. Nothing a view sends reaches anything but these handlers.
import { createContext } from "react";
import { ipc, toIpcError, type ContentPart, type Ipc, type ToolInfo, type ToolResult, type ToolStatus } from "./ipc";

export const APPS_PROTOCOL = "2026-01-26";

/** What a view may ask of the window, for one tool call's view. */
export interface ViewHost {
  /** A tool of the view's own server: MCP `CallToolResult` JSON. */
  callTool(name: string, args: Record<string, unknown>): Promise<unknown>;
  /** A resource of the view's own server: MCP `ReadResourceResult` JSON. */
  readResource(uri: string): Promise<unknown>;
  /** The resources of the view's own server: MCP `ListResourcesResult` JSON. */
  listResources(): Promise<unknown>;
  openLink(url: string): Promise<void>;
  /** Sends the text as the user's next message in the conversation. */
  sendMessage(text: string): Promise<void>;
  /** The view's content is this tall (pixels). */
  resize(height: number): void;
  /** What the model should know with the user's next message (null: nothing); replaces the view's last. */
  updateContext(text: string | null): void;
  /** Shows the view inline or over the window; says which it got. */
  setDisplayMode(mode: DisplayMode): DisplayMode | Promise<DisplayMode>;
  /** Offers the user the files (MCP `resource` and `resource_link` blocks); false: nothing was saved. */
  downloadFile(contents: Json[]): Promise<boolean>;
  /** Asks the model, once the user reviewed it (MCP `sampling/createMessage`): `CreateMessageResult` JSON. */
  sample(params: Json): Promise<unknown>;
  /** The view asks to be closed (`ui/notifications/request-teardown`). */
  close(): void;
}

/** How a view is shown: in its card, over the whole window, or in a corner of it (picture-in-picture). */
export type DisplayMode = "inline" | "fullscreen" | "pip";

const DISPLAY_MODES: readonly DisplayMode[] = ["inline", "fullscreen", "pip"];

/** Context a view gives the model, sent with the user's next message. */
export interface ViewContext {
  title: string;
  text: string;
}

/** What the chat page lets views do beyond their own server; null where there is no chat. */
export interface ChatActions {
  sendMessage(text: string): Promise<void>;
  /** Sets (or, with null, drops) the context of the view `key` for the next message. */
  setContext(key: string, context: ViewContext | null): void;
}

/** The most context one view may give the model, in characters. */
export const MAX_CONTEXT_CHARS = 20_000;

export const ViewChat = createContext<ChatActions | null>(null);

/** The commands a view's card uses: the app's own, or a page's (its tests give fakes). */
export type ViewIpc = Pick<
  Ipc,
  | "openAppView"
  | "callToolForView"
  | "readResourceForView"
  | "listResourcesForView"
  | "openLink"
  | "downloadNames"
  | "saveFiles"
  | "showInFolder"
  | "sampleForView"
>;

export const ViewCommands = createContext<ViewIpc>(ipc);

/** How long a view has to answer `ui/resource-teardown` before it goes anyway. */
export const TEARDOWN_WAIT_MS = 1000;
/** The id of the host's one request to a view, `ui/resource-teardown`. */
const TEARDOWN_ID = "patchbay-teardown";

/**
 * The views on screen, each by its tool call, so that whatever removes one
 * (another conversation, another page, a message deleted or answered again)
 * first lets it save what it must.
 */
export class LiveViews {
  private views = new Set<{ callId: string; teardown: () => Promise<void> }>();

  /** Adds a view; the function returned takes it out again. */
  add(callId: string, teardown: () => Promise<void>): () => void {
    const view = { callId, teardown };
    this.views.add(view);
    return () => this.views.delete(view);
  }

  /**
   * Runs `go` once the views of these calls (without: every view) tore down,
   * all at once, each answering or giving up; at once when none is on screen.
   */
  before(go: () => void, callIds?: Iterable<string>): void {
    const only = callIds === undefined ? null : new Set(callIds);
    const going = [...this.views].filter((v) => only === null || only.has(v.callId));
    if (going.length === 0) return go();
    void Promise.all(going.map((v) => v.teardown())).then(go);
  }
}

/** The app's views on screen (a page's tests give their own). */
export const LiveViewsContext = createContext(new LiveViews());

type Json = Record<string, unknown>;
type Post = (message: Json) => void;

/** A JSON-RPC error a handler throws to answer with its code. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;
const INTERNAL = -32603;

/** The window's theme, as a view's host context says it. */
export function currentTheme(): "light" | "dark" {
  return typeof document !== "undefined" && document.documentElement.dataset.theme === "dark" ? "dark" : "light";
}

/** The host context a view gets at `ui/initialize`. */
export function hostContext(tool: ToolInfo, locale: string): Json {
  return {
    toolInfo: { tool: { name: tool.name, title: tool.title ?? undefined, description: tool.description, inputSchema: tool.input_schema } },
    theme: currentTheme(),
    displayMode: "inline",
    availableDisplayModes: DISPLAY_MODES,
    locale,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: "desktop",
    userAgent: "Patchbay",
    containerDimensions: { maxHeight: MAX_VIEW_HEIGHT },
  };
}

/** The tallest a view is drawn inline; it scrolls beyond. */
export const MAX_VIEW_HEIGHT = 720;

/**
 * Whether a view may know its call's arguments. While the model writes them,
 * only when its tool runs without asking; then only once the call ran (so the
 * user allowed it, `ran`: the card saw it running). A call waiting for the
 * user, denied, or stopped or refused before it ran tells its view nothing.
 */
export function mayTellInput(status: ToolStatus, tool: ToolInfo, ran: boolean): boolean {
  const unasked = tool.enabled && tool.approval === "allow";
  switch (status) {
    case "running":
    case "done":
      return true;
    case "pending_approval":
    case "denied":
      return false;
    case "writing":
      return unasked;
    case "error":
    case "cancelled":
      return ran || unasked;
  }
}

/** How recent a click inside a view must be for it to go full screen. */
export const GESTURE_MS = 5000;

/**
 * The user's clicks inside a view's frame, as the window sees them: the focus
 * moves into the frame (the window's `blur`, with the frame its active
 * element). A view cannot make that happen from a script without a click, so
 * `take` (true once per click, within GESTURE_MS, while the frame still has the
 * focus) is what a view needs to go full screen. A view refused gives the focus
 * back to the window (`host`), so that the user's next click counts again.
 */
export class FrameClicks {
  private at = -Infinity;

  constructor(
    private readonly frame: HTMLIFrameElement,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Starts watching; the function returned stops. */
  watch(): () => void {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const seen = () => {
      if (document.activeElement === this.frame) this.at = this.now();
    };
    const onBlur = () => {
      // The active element is the frame once the focus has moved into it: now, or right after.
      seen();
      timer = setTimeout(seen, 0);
    };
    window.addEventListener("blur", onBlur);
    return () => {
      clearTimeout(timer);
      window.removeEventListener("blur", onBlur);
    };
  }

  /** Whether the user clicked inside the frame just now; the click counts once. */
  take(host: HTMLElement | null): boolean {
    const recent = document.activeElement === this.frame && this.now() - this.at <= GESTURE_MS;
    this.at = -Infinity;
    if (!recent && document.activeElement === this.frame) host?.focus();
    return recent;
  }
}

/** A stored tool result as the MCP `CallToolResult` a view reads. */
export function callToolResult(result: ToolResult): Json {
  const block = (p: ContentPart): Json => {
    switch (p.type) {
      case "text":
        return { type: "text", text: p.text };
      case "image":
      case "audio":
        return { type: p.type, data: p.data, mimeType: p.mime_type };
      case "resource_link":
        return { type: "resource_link", uri: p.uri, name: p.name ?? p.uri, ...(p.mime_type ? { mimeType: p.mime_type } : {}) };
    }
  };
  const out: Json = { content: result.content.map(block), isError: result.is_error };
  if (result.structured_content !== null && result.structured_content !== undefined) out.structuredContent = result.structured_content;
  return out;
}

/** One file of a `ui/download-file`, as the user is asked about it (its name comes from the core). */
export interface DownloadItem {
  /** Bytes, when known before it is read. */
  size: number | null;
  /** A web address: it opens in the browser, which downloads it. */
  web: boolean;
}

const isWeb = (uri: string) => /^https?:\/\//i.test(uri);

/** How many bytes a base64 text holds. */
function base64Bytes(blob: string): number {
  const text = blob.replace(/\s/g, "");
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0;
  return Math.floor((text.length * 3) / 4) - padding;
}

/** What a `ui/download-file` offers, block by block; anything but resources and links is refused. */
export function downloadItems(contents: Json[]): DownloadItem[] {
  return contents.map((block, i) => {
    if (block.type === "resource_link" && typeof block.uri === "string") {
      return { size: typeof block.size === "number" ? block.size : null, web: isWeb(block.uri) };
    }
    const resource = block.type === "resource" && typeof block.resource === "object" && block.resource !== null ? (block.resource as Json) : null;
    if (resource && typeof resource.uri === "string") {
      const size = typeof resource.text === "string" ? new TextEncoder().encode(resource.text).length : typeof resource.blob === "string" ? base64Bytes(resource.blob) : null;
      return { size, web: false };
    }
    throw new RpcError(INVALID_PARAMS, `item ${i} of ui/download-file is neither a resource nor a resource link`);
  });
}

/** The web addresses among a download's links (opened in the browser, not saved). */
export function webLinks(contents: Json[]): string[] {
  return contents.filter((b) => b.type === "resource_link" && typeof b.uri === "string" && isWeb(b.uri)).map((b) => b.uri as string);
}

/** The text of a `ui/message`'s content blocks (the only kind a view may send to the chat). */
function messageText(params: Json): string {
  if (params.role !== "user" || !Array.isArray(params.content)) throw new RpcError(INVALID_PARAMS, "ui/message takes role \"user\" and content blocks");
  const texts = params.content.filter((b): b is { type: "text"; text: string } => (b as Json)?.type === "text" && typeof (b as Json).text === "string");
  const text = texts.map((b) => b.text).join("\n\n").trim();
  if (!text) throw new RpcError(INVALID_PARAMS, "Patchbay takes text content in a ui/message");
  return text;
}

/** The text of a `ui/update-model-context`: its text blocks, then its structured content as JSON. */
function contextText(params: Json): string {
  const blocks = Array.isArray(params.content) ? params.content : [];
  const texts = blocks.filter((b): b is { type: "text"; text: string } => (b as Json)?.type === "text" && typeof (b as Json).text === "string");
  const parts = texts.map((b) => b.text);
  if (params.structuredContent !== undefined && params.structuredContent !== null) parts.push(JSON.stringify(params.structuredContent, null, 2));
  const text = parts.join("\n\n").trim();
  if (text.length > MAX_CONTEXT_CHARS) throw new RpcError(INVALID_PARAMS, `the context is ${text.length} characters; Patchbay takes at most ${MAX_CONTEXT_CHARS}`);
  return text;
}

/**
 * One view's end of the conversation. `receive` takes what the frame posted;
 * `notify` queues host notifications until the view says it is initialised.
 */
export class ViewBridge {
  private initialized = false;
  private queued: Json[] = [];
  private torn: Promise<void> | null = null;
  /** Ends the teardown when the view answers it. */
  private answered: (() => void) | null = null;

  constructor(
    private readonly post: Post,
    private readonly host: ViewHost,
    private readonly context: () => Json,
    private readonly version: string,
  ) {}

  /** Sends a notification now, or once the view has initialised (a partial input replaces the one queued). */
  notify(method: string, params: Json) {
    const message = { jsonrpc: "2.0", method, params };
    if (this.initialized) return this.post(message);
    if (method === "ui/notifications/tool-input-partial") this.queued = this.queued.filter((m) => m.method !== method);
    this.queued.push(message);
  }

  /**
   * Asks an initialised view to tear down (`ui/resource-teardown`), once;
   * resolves when it answered, or after TEARDOWN_WAIT_MS whatever it does. A
   * view that never initialised has nothing to save and is not asked.
   */
  teardown(): Promise<void> {
    if (!this.initialized) return Promise.resolve();
    this.torn ??= new Promise<void>((done) => {
      const timer = setTimeout(done, TEARDOWN_WAIT_MS);
      this.answered = () => {
        clearTimeout(timer);
        done();
      };
      this.post({ jsonrpc: "2.0", id: TEARDOWN_ID, method: "ui/resource-teardown", params: {} });
    });
    return this.torn;
  }

  /** Handles one message from the view; anything that is not JSON-RPC is ignored. */
  async receive(data: unknown): Promise<void> {
    if (typeof data !== "object" || data === null || (data as Json).jsonrpc !== "2.0") return;
    const msg = data as Json;
    const method = typeof msg.method === "string" ? msg.method : null;
    if (!method) {
      // An answer (a result or an error): the host asks only for the teardown.
      if (msg.id === TEARDOWN_ID) this.answered?.();
      return;
    }
    const params = (typeof msg.params === "object" && msg.params !== null ? msg.params : {}) as Json;
    if (!("id" in msg)) {
      this.onNotification(method, params);
      return;
    }
    try {
      const result = await this.onRequest(method, params);
      this.post({ jsonrpc: "2.0", id: msg.id, result });
    } catch (e) {
      const code = e instanceof RpcError ? e.code : INTERNAL;
      const message = toIpcError(e).message;
      this.post({ jsonrpc: "2.0", id: msg.id, error: { code, message } });
    }
  }

  private onNotification(method: string, params: Json) {
    switch (method) {
      case "ui/notifications/initialized":
        this.initialized = true;
        for (const m of this.queued.splice(0)) this.post(m);
        break;
      case "ui/notifications/size-changed":
        if (typeof params.height === "number" && Number.isFinite(params.height)) this.host.resize(params.height);
        break;
      case "ui/notifications/request-teardown":
        this.host.close();
        break;
      // Log messages need nothing from Patchbay.
    }
  }

  private async onRequest(method: string, params: Json): Promise<unknown> {
    switch (method) {
      case "ui/initialize":
        return {
          protocolVersion: APPS_PROTOCOL,
          hostInfo: { name: "Patchbay", version: this.version },
          hostCapabilities: {
            openLinks: {},
            downloadFile: {},
            serverTools: {},
            serverResources: {},
            logging: {},
            message: { text: {} },
            updateModelContext: { text: {}, structuredContent: {} },
            sampling: {},
          },
          hostContext: this.context(),
        };
      case "ping":
        return {};
      case "tools/call": {
        if (typeof params.name !== "string") throw new RpcError(INVALID_PARAMS, "tools/call needs a tool name");
        const args = typeof params.arguments === "object" && params.arguments !== null ? (params.arguments as Json) : {};
        return await this.host.callTool(params.name, args);
      }
      case "resources/list":
        return await this.host.listResources();
      case "resources/read":
        if (typeof params.uri !== "string") throw new RpcError(INVALID_PARAMS, "resources/read needs a uri");
        return await this.host.readResource(params.uri);
      case "ui/open-link":
        if (typeof params.url !== "string") throw new RpcError(INVALID_PARAMS, "ui/open-link needs a url");
        try {
          await this.host.openLink(params.url);
          return {};
        } catch {
          return { isError: true };
        }
      case "ui/message":
        await this.host.sendMessage(messageText(params));
        return {};
      case "ui/update-model-context": {
        const text = contextText(params);
        this.host.updateContext(text || null);
        return {};
      }
      case "sampling/createMessage":
        if (!Array.isArray(params.messages)) throw new RpcError(INVALID_PARAMS, "sampling/createMessage needs messages");
        return await this.host.sample(params);
      case "ui/download-file": {
        const contents = Array.isArray(params.contents) ? params.contents.filter((b): b is Json => typeof b === "object" && b !== null) : [];
        if (contents.length === 0) throw new RpcError(INVALID_PARAMS, "ui/download-file needs contents");
        downloadItems(contents); // refuses what is not a file before the user is asked
        return (await this.host.downloadFile(contents)) ? {} : { isError: true };
      }
      case "ui/request-display-mode": {
        const mode = DISPLAY_MODES.find((m) => m === params.mode) ?? "inline";
        return { mode: await this.host.setDisplayMode(mode) };
      }
      default:
        throw new RpcError(METHOD_NOT_FOUND, `Patchbay does not answer ${method}`);
    }
  }
}
