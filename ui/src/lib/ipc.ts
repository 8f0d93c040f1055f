// The one typed client for the Tauri backend. Every command the UI calls is
// declared here with its argument and result types; components never call
// `invoke` with a string of their own. The contract is documented for the
// backend in ui/IPC.md: field names are snake_case, as serde emits them.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";

// ---------------------------------------------------------------- foundation

/** Mirrors `patchbay_core::secrets::KeyringStatus`. */
export interface KeyringStatus {
  available: boolean;
  detail: string;
}

/** Mirrors `patchbay_core::AppInfo`. */
export interface AppInfo {
  version: string;
  data_dir: string;
  database: string;
  schema_version: number;
  keyring: KeyringStatus;
  /** The desktop app's log file. */
  log_file: string;
}

/** Mirrors `patchbay_desktop::IpcError`: every backend failure keeps its kind. */
export interface IpcError {
  kind: IpcErrorKind;
  message: string;
}

export type IpcErrorKind =
  | "data_dir"
  | "database"
  | "keyring"
  | "invalid_input"
  | "not_found"
  | "internal"
  | "provider"
  | "mcp"
  | "cancelled"
  | "timeout";

const KINDS: readonly IpcErrorKind[] = [
  "data_dir",
  "database",
  "keyring",
  "invalid_input",
  "not_found",
  "internal",
  "provider",
  "mcp",
  "cancelled",
  "timeout",
];

export function isIpcError(value: unknown): value is IpcError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as IpcError).kind === "string" &&
    typeof (value as IpcError).message === "string"
  );
}

/** Turns anything a command rejected with into an IpcError of a known kind. */
export function toIpcError(value: unknown): IpcError {
  if (isIpcError(value)) {
    return KINDS.includes(value.kind) ? value : { kind: "internal", message: value.message };
  }
  return { kind: "internal", message: value instanceof Error ? value.message : String(value) };
}

// ---------------------------------------------------------------- core mirrors

/** Mirrors `patchbay_core::llm::ContentPart` (tag `type`). */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; mime_type: string; data: string }
  | { type: "audio"; mime_type: string; data: string }
  | { type: "resource_link"; uri: string; name: string | null; mime_type: string | null; server?: string };

/**
 * Mirrors `patchbay_core::app::AttachmentInput`: a part, with the name of the file it came
 * from; or a document's bytes (base64) for the core to read to text (PDF, Word, HTML, text).
 */
export type AttachmentInput = (ContentPart & { title?: string }) | { type: "file"; title: string; data: string };

/** Mirrors `patchbay_core::llm::Usage`. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/** Mirrors `patchbay_core::config::ValueSource`: `{"plain": "..."}` or `{"secret": "name"}`. */
export type ValueSource = { plain: string } | { secret: string };

/** Mirrors `patchbay_core::config::ProviderKind`. */
export type ProviderKind = "openai" | "anthropic" | "gemini";

/** Mirrors `patchbay_core::config::ProviderProfile`. */
export interface ProviderProfile {
  name: string;
  kind: ProviderKind;
  base_url: string;
  default_model: string;
  models: string[];
  headers: Record<string, ValueSource>;
  /** Name of the secret holding the key, never the key. */
  api_key: string | null;
  native_tools: boolean;
  context_window: number | null;
  thinking: ThinkingParam;
}

/** Mirrors `patchbay_core::config::ApprovalMode`. */
export type ApprovalMode = "ask" | "allow" | "deny";

/** Mirrors `patchbay_core::config::Timeouts`. */
export interface Timeouts {
  startup_secs: number;
  call_secs: number;
}

/** Mirrors `patchbay_core::config::TransportConfig` (tag `type`). */
export type TransportConfig =
  | {
      type: "stdio";
      command: string;
      args: string[];
      env: Record<string, ValueSource>;
      cwd: string | null;
    }
  | { type: "streamable_http" | "sse" | "auto"; url: string; headers: Record<string, ValueSource> };

export type TransportType = TransportConfig["type"];

/** Mirrors `patchbay_core::config::JwtAlgorithm`. */
export type JwtAlgorithm = "ES256" | "ES384" | "RS256" | "RS384" | "RS512";

/** Mirrors `patchbay_core::config::ClientKey` (tag `method`); the material is a keyring reference. */
export type ClientKey =
  | { method: "secret"; secret: ValueSource }
  | { method: "private_key"; pem: ValueSource; algorithm: JwtAlgorithm };

/** Mirrors `patchbay_core::config::ClientCredentials`: the OAuth client-credentials grant of a remote server. */
export interface ClientCredentials {
  client_id: string;
  key: ClientKey;
  scopes: string[];
}

/** Mirrors `patchbay_core::config::McpServerConfig`. */
export interface McpServerConfig {
  name: string;
  transport: TransportConfig;
  enabled: boolean;
  timeouts: Timeouts;
  approval: ApprovalMode;
  tool_approval: Record<string, ApprovalMode>;
  disabled_tools: string[];
  /** Whether the server sees the shared roots (knowledge-base and shared folders). */
  share_roots: boolean;
  /** Whether tools that say they only read (`readOnlyHint`) run without asking; off by default. */
  read_only_auto_allow: boolean;
  /** Sign-in without a browser (remote servers); absent: the server's own OAuth sign-in when it asks. */
  client_credentials?: ClientCredentials | null;
  /** Its security policy (absent: the global default, derived from its arguments). */
  policy?: Policy;
  extra: Record<string, unknown>;
}

/** Mirrors `patchbay_core::config::SecurityLevel`. */
export type SecurityLevel = "strict" | "normal" | "permissive";

/** Mirrors `patchbay_core::config::Network`. */
export type Network = "off" | "any" | { domains: string[] };

/** Mirrors `patchbay_core::config::RateLimits`: calls per minute, absent for no limit. */
export interface RateLimits {
  per_tool_per_min?: number;
  per_server_per_min?: number;
}

/** Mirrors `patchbay_core::config::Policy`. */
export interface Policy {
  /** Absent: the global default level. */
  level?: SecurityLevel;
  read?: string[];
  write?: string[];
  /** Absent: the level's (off at strict, any otherwise). */
  network?: Network;
  env?: string[];
  rate?: RateLimits;
}

/** Mirrors `patchbay_core::config::PolicyDefaults`. */
export interface PolicyDefaults {
  level: SecurityLevel;
  turn_tool_calls: number;
}

/** Mirrors `patchbay_core::app::views::PolicySettings`: the defaults and the levels this system can enforce. */
export interface PolicySettings {
  defaults: PolicyDefaults;
  offered: SecurityLevel[];
}

/** A form field and what is wrong with it (`policy.network.domains[1]`, …). */
export interface FieldProblem {
  field: string;
  reason: string;
}

/**
 * Mirrors `patchbay_core::config::PolicyOutline`: a server's policy in the parts of its one-line
 * summary, which the window words in its language (`policyLine`). Paths are as the user writes them (`~/Projects`).
 */
export type PolicyOutline =
  | { kind: "local"; level: SecurityLevel; read: string[]; write: string[]; network: Network; rate: RateLimits }
  | { kind: "in_process" }
  | { kind: "remote"; rate: RateLimits };

/** Mirrors `patchbay_core::app::views::PolicyPreview`: the line the server's page will show, and what saving refuses. */
export interface PolicyPreview {
  summary: PolicyOutline;
  problems: FieldProblem[];
}

/** A sandboxed server's filtering proxy refused a host (`connection_blocked` event). */
export interface ConnectionBlocked {
  server: string;
  host: string;
}

// ---------------------------------------------------------------- chat

export interface ConversationSummary {
  id: string;
  title: string;
  /** Milliseconds since the epoch. */
  created_at: number;
  updated_at: number;
  /** A matching passage when the list was searched. */
  snippet: string | null;
  /** Kept at the top of the list. */
  pinned: boolean;
}

/** `writing` is the window's own: the model is still writing the call (its `arguments_text` so far). */
export type ToolStatus = "writing" | "pending_approval" | "running" | "done" | "error" | "cancelled" | "denied";

export interface ToolProgress {
  progress: number;
  total: number | null;
  message: string | null;
}

/** What a tested tool's server reports while the call runs (`call_tool`'s `on_event`). */
export type CallEvent =
  | ({ kind: "progress" } & ToolProgress)
  | { kind: "log"; level: string; logger: string | null; data: unknown };

export interface ToolLog {
  level: string;
  message: string;
}

/** The result of an MCP `tools/call`. */
export interface ToolResult {
  content: ContentPart[];
  structured_content: unknown;
  is_error: boolean;
}

/** One tool call of an assistant message, as stored and as streamed. */
export interface ToolTrace {
  call_id: string;
  server: string;
  tool: string;
  arguments: unknown;
  status: ToolStatus;
  duration_ms: number | null;
  progress: ToolProgress | null;
  result: ToolResult | null;
  error: string | null;
  stderr_tail: string | null;
  logs: ToolLog[];
  /** While `writing`: the arguments' JSON text so far. */
  arguments_text?: string;
  /** While `pending_approval`: its server runs at strict, so no answer is remembered (`approval_needed`). */
  strict?: boolean;
}

/** A knowledge-base passage the answer cites as `[n]`. */
export interface Citation {
  index: number;
  document: string;
  path: string;
  score: number;
  text: string;
  /** Where the question's words are in `text`: [start, end) in UTF-16 code units. */
  marks: [number, number][];
  /** The headings the passage sits under, outermost first, joined with " > ". */
  heading: string | null;
  /** Its first and last line in the document. */
  lines: [number, number] | null;
}

export interface Message {
  id: string;
  parent_id: string | null;
  role: "user" | "assistant";
  created_at: number;
  text: string;
  reasoning: string | null;
  /** Attachments of a user message (resource links, images). */
  parts: ContentPart[];
  tool_calls: ToolTrace[];
  citations: Citation[];
  model: string | null;
  /** Ids of this message and its siblings (branches), in creation order. */
  siblings: string[];
  error: IpcError | null;
}

/** Per-conversation choices: model, servers and tools. */
export interface ConversationSettings {
  provider: string | null;
  model: string | null;
  /** Servers the model may use; `null` means every enabled server. */
  servers: string[] | null;
  /** `server/tool` names hidden in this conversation. */
  disabled_tools: string[];
  assistant_id: string | null;
  /** This conversation's own instructions, in place of its assistant's system prompt. */
  system_prompt: string | null;
  /** This conversation's reasoning effort, in place of its assistant's. */
  reasoning: ReasoningEffort | null;
}

export interface ConversationDetail {
  conversation: ConversationSummary;
  /** The active branch (its last `tail` messages when asked), root first. */
  messages: Message[];
  /** How many branch messages come before `messages`. */
  earlier: number;
  settings: ConversationSettings;
}

/** A stretch of the active branch, and how many branch messages come before it. */
export interface MessagePage {
  messages: Message[];
  earlier: number;
}

/** One event of a turn, streamed through the `on_event` channel of send/regenerate/edit. */
export type AgentEvent =
  | { type: "turn_started"; user_message: Message | null; assistant_message_id: string; model: string }
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_call_writing"; call_id: string; server: string; tool: string }
  | { type: "tool_arguments_delta"; call_id: string; delta: string }
  | { type: "tool_call_started"; call_id: string; server: string; tool: string; arguments: unknown; status: "pending_approval" | "running" }
  /** `strict`: the server runs at strict, where every call is asked: only "allow once" and "deny" are offered. */
  | { type: "approval_needed"; call_id: string; strict: boolean }
  | { type: "tool_running"; call_id: string }
  | { type: "tool_progress"; call_id: string; progress: ToolProgress }
  | { type: "tool_log"; call_id: string; log: ToolLog }
  | { type: "tool_result"; call_id: string; result: ToolResult; duration_ms: number }
  | { type: "tool_failed"; call_id: string; error: string; stderr_tail: string | null; duration_ms: number }
  | { type: "tool_cancelled"; call_id: string }
  | { type: "tool_denied"; call_id: string }
  | { type: "citations"; citations: Citation[] }
  | { type: "usage"; usage: Usage }
  | { type: "error"; error: IpcError }
  | { type: "done"; reason: "stop" | "cancelled" | "error" | "length" };

export type ApprovalDecision = "allow_once" | "allow_conversation" | "allow_always" | "deny";

/** Raw JSON-RPC of one stored tool call. */
export interface TraceRecord {
  call_id: string;
  server: string;
  tool: string;
  request: unknown;
  response: unknown;
}

export interface PromptArgument {
  name: string;
  /** The name to show, when the server gives one. */
  title: string | null;
  description: string | null;
  required: boolean;
}

export interface PromptInfo {
  server: string;
  name: string;
  /** The name to show, when the server gives one. */
  title: string | null;
  description: string | null;
  arguments: PromptArgument[];
  icons: IconView[];
}

export interface ResourceInfo {
  server: string;
  uri: string;
  name: string;
  /** The name to show, when the server gives one. */
  title: string | null;
  mime_type: string | null;
  /** The server reports changes to those who watch it. */
  watchable: boolean;
  watched: boolean;
  icons: IconView[];
}

/** A watched resource changed. */
export interface ResourceUpdated {
  server: string;
  uri: string;
}

/** A resource template: its variables fill in `uri_template` to name a resource. */
export interface ResourceTemplateInfo {
  server: string;
  uri_template: string;
  name: string;
  description: string | null;
  mime_type: string | null;
  variables: string[];
  icons: IconView[];
}

/** What an argument to complete belongs to. */
export type CompletionTarget = { type: "prompt"; name: string } | { type: "resource_template"; uri_template: string };

/** One part of a resource as the server's page shows it (bounded like a tool result's UI copy). */
export interface ResourcePreview {
  uri: string;
  mime_type: string | null;
  text: string | null;
  /** An image or audio part, base64, when it fits. */
  blob: string | null;
  size: number;
  truncated: boolean;
}

/** A server's suggestions for one argument. */
export interface CompletionView {
  values: string[];
  total: number | null;
  has_more: boolean;
}

// ---------------------------------------------------------------- servers

/** An MCP log level, lowest first. */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";
export const LOG_LEVELS: LogLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

export type ServerState = "stopped" | "starting" | "ready" | "failed" | "restarting";

export interface ServerStatus {
  server: string;
  state: ServerState;
  tool_count: number;
  error: string | null;
}

export interface ServerView {
  config: McpServerConfig;
  status: ServerStatus;
  /** Who a ready server says it is and how it is reached; null unless ready. */
  about: ServerAbout | null;
  /** Installed from an MCP bundle: its settings form can be opened again. */
  bundle: boolean;
  /** What the server said about using it (MCP `instructions`); the model reads it with the server's tools. */
  instructions: string | null;
  /** The level a ready server that logs sends messages at; null otherwise. */
  log_level: LogLevel | null;
  /** The icon the server gives itself (MCP `icons`), per theme. */
  icons: IconView[];
  /** The security policy it runs under, in the parts of its one-line summary. */
  policy: PolicyOutline;
  /** Hosts its filtering proxy refused and nobody allowed yet. */
  blocked: string[];
}

/** Who a ready server says it is (its `initialize` answer) and how Patchbay reaches it. */
export interface ServerAbout {
  name: string | null;
  title: string | null;
  version: string | null;
  description: string | null;
  /** Its website: an http(s) URL, opened in the browser. */
  website: string | null;
  /** The protocol version agreed on. */
  protocol_version: string;
  /** The transport in use (for a URL-only server, the one detection chose). */
  transport: "stdio" | "streamable_http" | "sse" | "in_process";
  pid: number | null;
  /** Where a stdio server's command was found. */
  command: string | null;
  /** What it declared: `tools`, `tools.list_changed`, `prompts`, `prompts.list_changed`, `resources`,
   * `resources.subscribe`, `resources.list_changed`, `logging`, `completions`, then extension ids. */
  capabilities: string[];
}

/** An icon a server gives itself or a tool: a checked `data:` URL, for one theme or (null) both. */
export interface IconView {
  src: string;
  theme: "light" | "dark" | null;
}

export interface ToolStats {
  calls: number;
  /** 0..1 */
  success_rate: number;
  median_ms: number;
}

export interface ToolInfo {
  server: string;
  name: string;
  /** The name to show (MCP `title`), when the server gives one; the model knows the tool by `name`. */
  title: string | null;
  description: string;
  input_schema: JsonSchema;
  enabled: boolean;
  approval: ApprovalMode;
  /** Estimated tokens the tool's name, description and schema cost per request. */
  schema_tokens: number;
  stats: ToolStats | null;
  /** The tool's icon, per theme. */
  icons: IconView[];
  /** What the server says the tool does (its annotations), only where it says so: hints, not guarantees. */
  hints: ToolHint[];
  /** Its view (MCP Apps), and whether the model and views may call it. */
  view: ToolView;
}

/** Mirrors `patchbay_core::mcp::apps::ToolView`. */
export interface ToolView {
  /** The `ui://` page shown with the tool's calls, when it has one. */
  resource_uri: string | null;
  /** The model sees the tool (false: the server made it for its views only). */
  for_model: boolean;
  /** Views of the same server may call it. */
  for_app: boolean;
}

/** A tool's view, read and kept for its frame (`open_app_view`). */
export interface AppViewInfo {
  /** Where the sandboxed frame loads the page (the `mcp-app` scheme). */
  url: string;
  uri: string;
  /** The origins the page declared it reaches (its Content-Security-Policy). */
  csp: { connect: string[]; resources: string[]; frames: string[]; base_uris: string[] };
  prefers_border: boolean | null;
  /** It asked to write to the clipboard, the one permission a view is given. */
  clipboard_write: boolean;
  /** The other permissions it asked for (`camera`, `microphone`, `geolocation`, …): never given. */
  withheld: string[];
}

export type ToolHint = "read_only" | "destructive" | "additive" | "idempotent" | "open_world" | "task";

export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  hint: string | null;
}

export interface DoctorReport {
  server: string;
  checks: DoctorCheck[];
}

export interface ServerLogLine {
  server: string;
  line: string;
}

/** A JSON Schema, as much of it as the generated forms understand. */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  /** Labels of `enum`'s values, in order (the older way to title choices). */
  enumNames?: string[];
  /** Titled choices: `{const, title}` each (single choice as `oneOf`, an array's items as `anyOf`). */
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  const?: unknown;
}

/** Requests a server makes of the client. Answer with `respond_server_request`. */
export type ServerRequest =
  | {
      kind: "sampling";
      id: string;
      server: string;
      messages: { role: "user" | "assistant"; text: string }[];
      system_prompt: string | null;
      max_tokens: number;
      /** The model that answers once approved: "provider / model". */
      model: string;
      /** The models the server would prefer (hints only). */
      model_hints: string[];
    }
  | { kind: "elicitation"; id: string; server: string; message: string; requested_schema: JsonSchema };

export type ServerRequestResponse =
  | { action: "approve_sampling"; messages: { role: "user" | "assistant"; text: string }[]; system_prompt: string | null }
  | { action: "accept"; content: Record<string, unknown> }
  | { action: "decline" }
  | { action: "cancel" };

// ---------------------------------------------------------------- import/export

export type ImportStatus = "new" | "changed" | "unchanged" | "conflict";

export interface DiffLine {
  op: "same" | "add" | "remove";
  text: string;
}

export interface ImportEntry {
  name: string;
  status: ImportStatus;
  incoming: McpServerConfig;
  /** Pretty JSON diff of current → incoming, for `changed` and `conflict`. */
  diff: DiffLine[];
  /** Why it conflicts, e.g. a different transport under the same name. */
  detail: string | null;
  /** Every env variable and header whose value is a secret (`patchbay_core::config::SecretNote`). */
  secrets: ImportSecret[];
}

/** A secret an imported server uses: `field` (`env.TOKEN`, `headers.Authorization`) names the keyring entry `secret`. */
export type ImportSecret = { field: string; secret: string } & (
  | { state: "from_import" }
  | { state: "reference"; set: boolean }
  | { state: "prompt"; input: string; description: string | null; set: boolean }
);

export interface ImportPreview {
  /** Which format was recognised, e.g. `claude_desktop`, `vscode`. */
  format: string;
  entries: ImportEntry[];
  warnings: string[];
  /** VS Code `${input:…}` prompts: secrets the user can type in before applying. */
  inputs: ImportInput[];
  /** Stored servers that "replace all" would delete. */
  removed_on_replace: string[];
  /** Provider profiles (Patchbay's form) that applying creates or replaces. */
  providers: string[];
}

export interface ImportInput {
  id: string;
  description: string | null;
  /** The servers that use it. */
  servers: string[];
  /** Whether the keyring already holds a value. */
  set: boolean;
}

export interface ImportReport {
  added: string[];
  updated: string[];
  skipped: string[];
  /** Deleted by "replace all". */
  removed: string[];
  /** Secrets the imported servers need that are still not set. */
  secrets_not_set: string[];
}

export type ExportFormat = "claude_desktop" | "vscode" | "cursor" | "zed" | "opencode" | "patchbay";

// ---------------------------------------------------------------- knowledge base

/** The folders shared with MCP servers as roots. */
export interface RootsView {
  /** Chosen by the user, in the order added. */
  shared: string[];
  /** Knowledge-base folders, shared as well. */
  knowledge: string[];
}

export interface KbFolder {
  path: string;
  documents: number;
  chunks: number;
  state: "idle" | "indexing" | "error";
  progress: { done: number; total: number } | null;
  error: string | null;
}

export interface KbDocument {
  path: string;
  title: string;
  chunks: number;
}

export interface KbHit {
  document: string;
  path: string;
  score: number;
  text: string;
  /** Where the query's words are in `text`: [start, end) in UTF-16 code units. */
  marks: [number, number][];
}

export interface KbProgress {
  folder: string;
  done: number;
  total: number;
}

/** Where the knowledge base's embeddings come from now (`kb_embeddings`). */
export interface KbEmbeddings {
  kind: "off" | "endpoint" | "local";
  /** The provider whose endpoint is used, when one matches the stored base URL. */
  provider: string | null;
  base_url: string | null;
  model: string | null;
  model_dir: string | null;
  /** The model understands English only (all-MiniLM). */
  english_only: boolean;
}

/** What `kb_set_embeddings` accepts. */
export type KbEmbeddingsChoice =
  | { kind: "off" }
  | { kind: "provider"; provider: string; model: string }
  | { kind: "local"; model_dir: string };

// ---------------------------------------------------------------- assistants & general

export type KbMode = "off" | "auto" | "always" | "both";

export interface Assistant {
  id: string;
  name: string;
  system_prompt: string;
  provider: string | null;
  model: string | null;
  temperature: number | null;
  top_p: number | null;
  max_tokens: number | null;
  /** How hard a reasoning model thinks; `null`: the model's default. */
  reasoning: ReasoningEffort | null;
  servers: string[] | null;
  disabled_tools: string[];
  kb_mode: KbMode;
}

/** How hard a reasoning model thinks; `off` asks it not to, where it can answer without. */
export type ReasoningEffort = "off" | "low" | "medium" | "high";

/** The field an OpenAI-compatible server reads to think or not; `auto` is chosen from the base URL. */
export type ThinkingParam = "auto" | "reasoning_effort" | "thinking_type" | "enable_thinking" | "chat_template";

export type Theme = "light" | "dark" | "system";

export interface GeneralSettings {
  theme: Theme;
  language: "en" | "zh";
  data_dir: string;
  /** The model names a new conversation after its first answer. */
  auto_title: boolean;
  /** A backup waits to be restored at the next start (read only). */
  restore_pending: boolean;
  /** The proxy for providers and remote MCP servers. */
  proxy: ProxyChoice;
}

/** Which proxy outgoing requests use: the environment's (`HTTPS_PROXY`, …), none, or this URL. */
export type ProxyChoice = { mode: "environment" } | { mode: "off" } | { mode: "custom"; url: string };

/** The model named a conversation. */
export interface ConversationRenamed {
  id: string;
  title: string;
}

export interface ProviderView {
  profile: ProviderProfile;
  api_key_set: boolean;
}

/** An MCP server as its README sets it up; a secret it needs is `{secret: ""}`, to be typed. */
export interface ServerPreset {
  id: string;
  label: string;
  needs: "npx" | "uvx" | null;
  config: McpServerConfig;
}

/** One way of running a server the MCP Registry lists, as the server editor starts from it. */
/** Something a registry entry asks the user for. */
export interface RegistrySetting {
  name: string;
  description: string;
  required: boolean;
  secret: boolean;
  /** `{name}` in its arguments, variables, headers or URL (or the argument `<name>`), filled in by `registryFill`; else the variable or header of this name. */
  placeholder: boolean;
  default: string | null;
  choices: string[];
}

/** A registry entry filled in: the entry for the editor and the secrets to save with it. */
export interface RegistryFill {
  config: McpServerConfig;
  secrets: Record<string, string>;
}

export interface RegistryEntry {
  /** The suggested server name. */
  id: string;
  label: string;
  /** The registry name, e.g. `io.github.acme/weather`. */
  name: string;
  description: string;
  version: string;
  website: string | null;
  via: "npm" | "pypi" | "oci" | "mcpb" | "streamable-http" | "sse";
  needs: "npx" | "uvx" | "docker" | null;
  /** Secrets to type are `{"secret": ""}`; a placeholder for a bundle, whose manifest says how it runs. */
  config: McpServerConfig;
  /** For an `mcpb` entry: the bundle to download (`registryBundle`) and install. */
  bundle: BundleSource | null;
  /** What the entry asks for: each environment variable or header it sets, and each placeholder in its values. */
  settings: RegistrySetting[];
}

export interface BundleSource {
  url: string;
  /** Lowercase hex. */
  sha256: string;
}

export interface RegistryPage {
  entries: RegistryEntry[];
  next_cursor: string | null;
}

/** A setting an MCP bundle's manifest declares (`user_config`). */
export interface BundleSetting {
  key: string;
  kind: "string" | "number" | "boolean" | "directory" | "file";
  title: string;
  description: string;
  required: boolean;
  /** Typed masked; kept in the keyring. */
  sensitive: boolean;
  /** Several folders or files. */
  multiple: boolean;
  min: number | null;
  max: number | null;
  /** The default, its variables (`${HOME}`, …) substituted. */
  default: string | number | boolean | string[] | null;
  /** A secret the installed version keeps; left empty, it is kept. */
  kept: boolean;
  /** The value the installed version was given (never a sensitive one). */
  value: string | number | boolean | string[] | null;
}

/** What the install form shows about an MCP bundle (`.mcpb`). */
export interface BundleInfo {
  name: string;
  server_name: string;
  title: string;
  version: string;
  description: string;
  long_description: string | null;
  author: string;
  homepage: string | null;
  /** The bundle's PNG icon as a `data:` URL. */
  icon: string | null;
  kind: "node" | "python" | "binary" | "uv";
  runtime: string | null;
  tools: { name: string; description: string | null }[];
  tools_generated: boolean;
  prompts: { name: string; description: string | null }[];
  settings: BundleSetting[];
  /** The version installed now, when this replaces it. */
  installed_version: string | null;
  /** Who signed it (`mcpb sign`), and whether this computer trusts them. */
  signature: BundleSignature;
  /** Who signed the version installed now (null when none is, or it was installed before Patchbay kept this). */
  installed_signature: BundleSignature | null;
  /** The installed version was signed, and this one is not signed with the same certificate. */
  signer_changed: boolean;
  /** The opened bundle this preview shows, for `installBundle` (null for an installed bundle's settings). */
  preview_id: string | null;
}

/** A bundle's signing certificate; dates are `YYYY-MM-DD`, the fingerprint its SHA-256 in hex. */
export interface BundleSigner {
  publisher: string;
  issuer: string;
  valid_from: string;
  valid_to: string;
  fingerprint: string;
}

/** Why a bundle's signing certificate is not trusted. */
export type BundleDistrust = "unknown_issuer" | "expired" | "not_yet_valid" | "not_for_code" | "revoked" | "bad_chain";

export type BundleSignature =
  | { status: "unsigned" }
  | { status: "signed"; signer: BundleSigner }
  | { status: "self_signed"; signer: BundleSigner }
  | { status: "untrusted"; signer: BundleSigner; reason: BundleDistrust };

/** A bundle setting's value: text, a number, a boolean or a list of paths. */
export type BundleValue = string | number | boolean | string[];

/** A provider as it is usually set up; `default_model` is empty where the user must name one. */
export interface ProviderPreset {
  id: string;
  label: string;
  kind: ProviderKind;
  base_url: string;
  default_model: string;
  models: string[];
  needs_key: boolean;
  native_tools: boolean;
  thinking: ThinkingParam;
}

// ---------------------------------------------------------------- client

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw toIpcError(e);
  }
}

/**
 * A command the caller can call off with `signal`: it runs under a request id
 * that `cancel_request` cancels; the command then fails with kind "cancelled".
 */
async function cancellable<T>(command: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
  if (!(signal instanceof AbortSignal)) return call<T>(command, args);
  if (signal.aborted) throw { kind: "cancelled", message: "Cancelled." } satisfies IpcError;
  const request = crypto.randomUUID();
  const abort = () => void invoke("cancel_request", { request }).catch(() => undefined);
  signal.addEventListener("abort", abort, { once: true });
  try {
    return await call<T>(command, { ...args, request });
  } finally {
    signal.removeEventListener("abort", abort);
  }
}

function channel<T = AgentEvent>(onEvent: (e: T) => void): Channel<T> {
  return new Channel<T>(onEvent);
}

async function on<T>(event: string, handler: (payload: T) => void): Promise<UnlistenFn> {
  return listen<T>(event, (e) => handler(e.payload));
}

/** A file saved from a view's download. */
export interface SavedFile {
  name: string;
  path: string;
  bytes: number;
}

export interface TurnOutcome {
  assistant_message_id: string;
}

export const ipc = {
  ping: () => call<string>("ping"),
  appInfo: () => call<AppInfo>("app_info"),
  /** Opens the log file's folder in the file manager. */
  openLogFolder: () => call<void>("open_log_folder"),
  /** Closes the window (and the app): after `onWindowClosing`, once the views are torn down. */
  closeWindow: () => call<void>("close_window"),
  setZoom: (zoom: number) => call<void>("set_zoom", { zoom }),
  backupData: () => call<string | null>("backup_data"),
  restoreData: () => call<string | null>("restore_data"),

  // conversations
  listConversations: (query: string | null) => call<ConversationSummary[]>("list_conversations", { query }),
  createConversation: (assistantId: string | null) =>
    call<ConversationSummary>("create_conversation", { assistant_id: assistantId }),
  renameConversation: (id: string, title: string) => call<void>("rename_conversation", { id, title }),
  pinConversation: (id: string, pinned: boolean) => call<void>("pin_conversation", { id, pinned }),
  deleteConversation: (id: string) => call<void>("delete_conversation", { id }),
  getConversation: (id: string, tail: number | null = null) => call<ConversationDetail>("get_conversation", { id, tail }),
  earlierMessages: (conversationId: string, before: string, limit: number) =>
    call<MessagePage>("earlier_messages", { conversation_id: conversationId, before, limit }),
  updateConversationSettings: (id: string, settings: ConversationSettings) =>
    call<void>("update_conversation_settings", { id, settings }),
  exportConversation: (id: string, format: "markdown" | "json") =>
    call<string | null>("export_conversation", { id, format }),

  // turns
  sendMessage: (conversationId: string, text: string, attachments: AttachmentInput[], onEvent: (e: AgentEvent) => void) =>
    call<TurnOutcome>("send_message", {
      conversation_id: conversationId,
      text,
      attachments,
      on_event: channel(onEvent),
    }),
  regenerate: (conversationId: string, messageId: string, onEvent: (e: AgentEvent) => void) =>
    call<TurnOutcome>("regenerate", { conversation_id: conversationId, message_id: messageId, on_event: channel(onEvent) }),
  editMessage: (conversationId: string, messageId: string, text: string, onEvent: (e: AgentEvent) => void) =>
    call<TurnOutcome>("edit_message", {
      conversation_id: conversationId,
      message_id: messageId,
      text,
      on_event: channel(onEvent),
    }),
  cancelTurn: (conversationId: string) => call<void>("cancel_turn", { conversation_id: conversationId }),
  switchBranch: (conversationId: string, messageId: string) =>
    call<Message[]>("switch_branch", { conversation_id: conversationId, message_id: messageId }),
  /** A new conversation carrying on from a message (the branch up to it, the settings). */
  forkConversation: (conversationId: string, messageId: string) =>
    call<ConversationSummary>("fork_conversation", { conversation_id: conversationId, message_id: messageId }),
  /** Deletes a message with the replies after it; the branch shown now. */
  deleteMessage: (conversationId: string, messageId: string) =>
    call<Message[]>("delete_message", { conversation_id: conversationId, message_id: messageId }),
  respondApproval: (callId: string, decision: ApprovalDecision) =>
    call<void>("respond_approval", { call_id: callId, decision }),
  getTrace: (callId: string) => call<TraceRecord>("get_trace", { call_id: callId }),
  listPrompts: () => call<PromptInfo[]>("list_prompts"),
  getPrompt: (server: string, name: string, args: Record<string, string>, signal?: AbortSignal) =>
    cancellable<string>("get_prompt", { server, name, arguments: args }, signal),
  listResources: () => call<ResourceInfo[]>("list_resources"),
  listResourceTemplates: () => call<ResourceTemplateInfo[]>("list_resource_templates"),
  readResource: (server: string, uri: string, signal?: AbortSignal) =>
    cancellable<ResourcePreview[]>("read_resource", { server, uri }, signal),
  /** Watches a resource (its changes arrive through `onResourceUpdated`) or stops watching it. */
  watchResource: (server: string, uri: string, watch: boolean) => call<void>("watch_resource", { server, uri, watch }),
  expandResourceTemplate: (uriTemplate: string, values: Record<string, string>) =>
    call<string>("expand_resource_template", { uri_template: uriTemplate, values }),
  completeArgument: (
    server: string,
    target: CompletionTarget,
    argument: string,
    value: string,
    context: Record<string, string>,
    signal?: AbortSignal,
  ) => cancellable<CompletionView>("complete_argument", { server, target, argument, value, context }, signal),
  respondServerRequest: (id: string, response: ServerRequestResponse) =>
    call<void>("respond_server_request", { id, response }),

  // providers
  listProviders: () => call<ProviderView[]>("list_providers"),
  saveProvider: (profile: ProviderProfile, apiKey: string | null) =>
    call<void>("save_provider", { profile, api_key: apiKey }),
  deleteProvider: (name: string) => call<void>("delete_provider", { name }),
  testProvider: (name: string, signal?: AbortSignal) => cancellable<string[]>("test_provider", { name }, signal),
  providerPresets: () => call<ProviderPreset[]>("provider_presets"),

  // servers
  listServers: () => call<ServerView[]>("list_servers"),
  serverPresets: () => call<ServerPreset[]>("server_presets"),
  registrySearch: (query: string, cursor: string | null, signal?: AbortSignal) =>
    cancellable<RegistryPage>("registry_search", { query, cursor }, signal),
  /** Downloads a registry entry's bundle, checking its SHA-256; its path, for `bundlePreview`. */
  registryBundle: (source: BundleSource, signal?: AbortSignal) => cancellable<string>("registry_bundle", { source }, signal),
  /** Fills in a registry entry's placeholders (by setting name); refused with the setting named when one is missing or wrong. */
  registryFill: (entry: RegistryEntry, values: Record<string, string>) => call<RegistryFill>("registry_fill", { entry, values }),
  pickBundle: () => call<string | null>("pick_bundle"),
  pickSettingFile: () => call<string | null>("pick_setting_file"),
  /** What the install form shows, in `locale`'s words (a BCP 47 tag) where the bundle has them. */
  bundlePreview: (path: string, locale: string) => call<BundleInfo>("bundle_preview", { path, locale }),
  /** Installs the bundle previewed as `preview_id`, with the signer (certificate fingerprint) its preview showed. */
  installBundle: (preview_id: string, signer: string | null, values: Record<string, BundleValue>) =>
    call<string>("install_bundle", { preview_id, signer, values }),
  /** The settings form of the bundle a server was installed from, with its values now. */
  bundleSettings: (name: string, locale: string) => call<BundleInfo>("bundle_settings", { name, locale }),
  /** Changes an installed bundle's settings; its server restarts. */
  configureBundle: (name: string, values: Record<string, BundleValue>) => call<void>("configure_bundle", { name, values }),
  /** The bundle file Patchbay was launched with (or a later launch handed over), once. */
  takeOpenedBundle: () => call<string | null>("take_opened_bundle"),
  saveServer: (config: McpServerConfig, secrets: Record<string, string>) =>
    call<void>("save_server", { config, secrets }),
  deleteServer: (name: string) => call<void>("delete_server", { name }),
  setServerEnabled: (name: string, enabled: boolean) => call<void>("set_server_enabled", { name, enabled }),
  restartServer: (name: string) => call<void>("restart_server", { name }),
  /** The policy line of a server as edited, and what saving it would refuse. */
  policyPreview: (config: McpServerConfig) => call<PolicyPreview>("policy_preview", { config }),
  /** Lets a server reach a host its proxy refused (added to its allowed domains); the server restarts. */
  allowDomain: (server: string, host: string) => call<void>("allow_domain", { server, host }),
  authorizeServer: (name: string, signal?: AbortSignal) => cancellable<void>("authorize_server", { name }, signal),
  serverLogs: (name: string) => call<string[]>("server_logs", { name }),
  setServerLogLevel: (name: string, level: LogLevel) => call<void>("set_server_log_level", { name, level }),
  /** Puts text on the system clipboard (WebKitGTK gives pages none; use `copyText`). */
  writeClipboard: (text: string) => call<void>("write_clipboard", { text }),
  /** Opens an `http(s)` or `mailto` link in the user's browser or mail program (the window never navigates). */
  openLink: (url: string) => call<void>("open_link", { url }),
  /** One server's entry in the Claude Desktop shape, secrets as placeholders. */
  exportServer: (name: string) => call<string>("export_server", { name }),
  serverDoctor: (name: string) => call<DoctorReport>("server_doctor", { name }),
  listTools: (server: string | null) => call<ToolInfo[]>("list_tools", { server }),
  setToolEnabled: (server: string, tool: string, enabled: boolean) =>
    call<void>("set_tool_enabled", { server, tool, enabled }),
  setToolApproval: (server: string, tool: string, approval: ApprovalMode) =>
    call<void>("set_tool_approval", { server, tool, approval }),
  /** "Test a tool": the server's progress and log messages reach `onEvent` as they come. */
  callTool: (server: string, tool: string, args: unknown, signal?: AbortSignal, onEvent: (e: CallEvent) => void = () => undefined) =>
    cancellable<ToolResult>("call_tool", { server, tool, arguments: args, on_event: channel(onEvent) }, signal),
  /** Reads a tool's view (MCP Apps) for its sandboxed frame. */
  openAppView: (server: string, uri: string, signal?: AbortSignal) =>
    cancellable<AppViewInfo>("open_app_view", { server, uri }, signal),
  /** A view's call to a tool of its own server: MCP `CallToolResult` JSON. */
  callToolForView: (server: string, tool: string, args: Record<string, unknown>, approved: boolean, signal?: AbortSignal) =>
    cancellable<unknown>("call_tool_for_view", { server, tool, arguments: args, approved }, signal),
  /** The names the files of `contents` are saved under (made safe by the core), to show before saving. */
  downloadNames: (contents: unknown[]) => call<string[]>("download_names", { contents }),
  /**
   * Saves MCP content (embedded resources; links read from `server`) as files in the downloads
   * folder, or one the user picks (`choose`; null: the dialog was cancelled).
   */
  saveFiles: (server: string | null, contents: unknown[], choose: boolean, signal?: AbortSignal) =>
    cancellable<SavedFile[] | null>("save_files", { server, contents, choose }, signal),
  /** A view's list of its own server's resources: MCP `ListResourcesResult` JSON. */
  listResourcesForView: (server: string) => call<unknown>("list_resources_for_view", { server }),
  /** A view asks the model (MCP `CreateMessageRequestParams`), reviewed by the user first: MCP `CreateMessageResult` JSON. */
  sampleForView: (server: string, params: Record<string, unknown>, signal?: AbortSignal) =>
    cancellable<unknown>("sample_for_view", { server, params }, signal),
  /** Shows a saved file in the file manager. */
  showInFolder: (path: string) => call<void>("show_in_folder", { path }),
  /** A view's read of a resource of its own server: MCP `ReadResourceResult` JSON. */
  readResourceForView: (server: string, uri: string, signal?: AbortSignal) =>
    cancellable<unknown>("read_resource_for_view", { server, uri }, signal),

  // import / export
  importPreview: (text: string) => call<ImportPreview>("import_preview", { text }),
  importApply: (
    text: string,
    accept: string[],
    replace: boolean,
    answers: Record<string, string>,
    secretFields: Record<string, string[]>,
  ) => call<ImportReport>("import_apply", { text, accept, replace, answers, secret_fields: secretFields }),
  exportConfig: (format: ExportFormat, includeSecrets: boolean) =>
    call<string | null>("export_config", { format, include_secrets: includeSecrets }),

  // knowledge base
  kbStatus: () => call<KbFolder[]>("kb_status"),
  kbPickFolder: () => call<string | null>("kb_pick_folder"),
  kbAddFolder: (path: string) => call<void>("kb_add_folder", { path }),
  kbRemoveFolder: (path: string) => call<void>("kb_remove_folder", { path }),
  kbReindex: (path: string | null) => call<void>("kb_reindex", { path }),
  kbDocuments: (folder: string) => call<KbDocument[]>("kb_documents", { folder }),
  kbSearch: (query: string, limit: number) => call<KbHit[]>("kb_search", { query, limit }),
  kbEmbeddings: () => call<KbEmbeddings>("kb_embeddings"),
  kbSetEmbeddings: (choice: KbEmbeddingsChoice) => call<KbEmbeddings>("kb_set_embeddings", { choice }),

  // shared folders (roots)
  listRoots: () => call<RootsView>("list_roots"),
  addSharedFolder: (path: string) => call<RootsView>("add_shared_folder", { path }),
  removeSharedFolder: (path: string) => call<RootsView>("remove_shared_folder", { path }),

  // assistants & general
  listAssistants: () => call<Assistant[]>("list_assistants"),
  saveAssistant: (assistant: Assistant) => call<Assistant>("save_assistant", { assistant }),
  deleteAssistant: (id: string) => call<void>("delete_assistant", { id }),
  getSettings: () => call<GeneralSettings>("get_settings"),
  saveSettings: (settings: GeneralSettings) => call<void>("save_settings", { settings }),
  pickDataDir: () => call<string | null>("pick_data_dir"),
  policySettings: () => call<PolicySettings>("policy_settings"),
  setPolicyDefaults: (defaults: PolicyDefaults) => call<void>("set_policy_defaults", { defaults }),

  // events
  onServerStatus: (h: (s: ServerStatus) => void) => on<ServerStatus>("server_status", h),
  onServerLog: (h: (l: ServerLogLine) => void) => on<ServerLogLine>("server_log", h),
  onConnectionBlocked: (h: (b: ConnectionBlocked) => void) => on<ConnectionBlocked>("connection_blocked", h),
  onServerRequest: (h: (r: ServerRequest) => void) => on<ServerRequest>("server_request", h),
  onKbProgress: (h: (p: KbProgress) => void) => on<KbProgress>("kb_progress", h),
  onConversationRenamed: (h: (r: ConversationRenamed) => void) => on<ConversationRenamed>("conversation_renamed", h),
  onResourceUpdated: (h: (r: ResourceUpdated) => void) => on<ResourceUpdated>("resource_updated", h),
  /** A launch handed over a bundle file: take it with `takeOpenedBundle`. */
  onBundleOpened: (h: () => void) => on<null>("bundle_opened", () => h()),
  /** The user asked to close the window: tear the views down, then `closeWindow`. */
  onWindowClosing: (h: () => void) => on<null>("window_closing", () => h()),
};

export type Ipc = typeof ipc;

/** What the composer and a server's page read of servers' prompts and resources. */
export type McpContentIpc = Pick<
  Ipc,
  "listPrompts" | "getPrompt" | "listResources" | "listResourceTemplates" | "expandResourceTemplate" | "completeArgument"
>;
