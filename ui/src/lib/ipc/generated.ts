// Generated from the Rust types by src-tauri/src/ipc_types.rs (ts-rs): do not edit.
// Regenerate with `UPDATE_IPC_TYPES=1 cargo test --workspace --lib ipc_types`.

/**
 * The origins a view may reach (`_meta.ui.csp`), each checked to be a bare
 * origin (scheme `https`, `http`, `wss` or `ws`, a host that may start with
 * `*.`, an optional port). Anything else is dropped, so that a server cannot
 * write its own directives into the policy.
 */
export type AppCsp = { 
/**
 * `fetch`, XHR and WebSocket (`connect-src`).
 */
connect: Array<string>, 
/**
 * Scripts, styles, pictures, fonts and media.
 */
resources: Array<string>, 
/**
 * Frames inside the view.
 */
frames: Array<string>, 
/**
 * `<base href>`.
 */
base_uris: Array<string>, };

/**
 * Version, data location, schema and keyring status.
 */
export type AppInfo = { 
/**
 * Patchbay's version.
 */
version: string, 
/**
 * The data directory in use.
 */
data_dir: string, 
/**
 * The SQLite database file.
 */
database: string, 
/**
 * The database's schema version.
 */
schema_version: number, 
/**
 * Whether secrets can be stored.
 */
keyring: KeyringStatus, 
/**
 * The desktop app's log file (it exists once the app has run).
 */
log_file: string, };

/**
 * What the window needs to show a view.
 */
export type AppViewInfo = { 
/**
 * Where the frame loads the page.
 */
url: string, uri: string, csp: AppCsp, 
/**
 * The view asked to be drawn with (`true`) or without (`false`) a border.
 */
prefers_border: boolean | null, 
/**
 * It asked to write to the clipboard (`permissions.clipboardWrite`): the
 * only permission Patchbay grants a view.
 */
clipboard_write: boolean, 
/**
 * The other permissions it asked for (`camera`, `microphone`,
 * `geolocation`, …), by name: never granted, and said so on its card.
 */
withheld: Array<string>, };

/**
 * The user's answer to an approval card.
 */
export type ApprovalAnswer = "allow_once" | "allow_conversation" | "allow_always" | "deny";

/**
 * Approval mode for tool calls.
 */
export type ApprovalMode = "ask" | "allow" | "deny";

/**
 * An assistant preset as the UI edits it. `id` is the preset's name.
 */
export type AssistantView = { id: string, name: string, system_prompt: string, provider: string | null, model: string | null, servers: Array<string> | null, disabled_tools: Array<string>, kb_mode: KbMode, 
/**
 * How much knowledge-base context it adds: passages, relevance floor, token budget.
 */
knowledge: KnowledgeLimits, 
/**
 * Sampling temperature.
 */
temperature: number | null, 
/**
 * Nucleus sampling.
 */
top_p: number | null, 
/**
 * Output token limit.
 */
max_tokens: number | null, 
/**
 * How hard a reasoning model thinks before answering (`None`: the model's default).
 */
reasoning: ReasoningEffort | null, };

/**
 * Something the user attaches to a message: the JSON of a `ContentPart`
 * (with the name of the file it came from, when it came from one), or a
 * document to read to text.
 */
export type AttachmentInput = { "type": "text", text: string, title: string | null, } | { "type": "image", mime_type: string, data: string, title: string | null, } | { "type": "audio", mime_type: string, data: string, title: string | null, } | { "type": "resource_link", uri: string, name: string | null, server: string | null, } | { "type": "file", title: string, data: string, };

/**
 * What the install form shows about a bundle.
 */
export type BundleInfo = { 
/**
 * The name in the manifest.
 */
name: string, 
/**
 * The server it installs as.
 */
server_name: string, 
/**
 * What the user reads (the display name, or the name).
 */
title: string, version: string, description: string, long_description: string | null, author: string, homepage: string | null, 
/**
 * The bundle's PNG icon as a `data:` URL, when it has one of at most 512 KiB.
 */
icon: string | null, kind: ServerKind, 
/**
 * What must be installed to run it, e.g. `node >=18`.
 */
runtime: string | null, tools: Array<Declared>, 
/**
 * Whether the server offers more tools than it declares.
 */
tools_generated: boolean, prompts: Array<Declared>, 
/**
 * The settings to fill in, in the manifest's order.
 */
settings: Array<BundleSetting>, 
/**
 * The version installed now, when this replaces it.
 */
installed_version: string | null, 
/**
 * Who signed it.
 */
signature: Signature, 
/**
 * Who signed the version installed now, when this replaces it (none for
 * a version installed before Patchbay kept it).
 */
installed_signature: Signature | null, 
/**
 * Whether the installed version was signed and this one is not signed
 * by the same certificate: a warning sign for an update.
 */
signer_changed: boolean, 
/**
 * The id of the opened bundle this preview shows, to install exactly it
 * (none for an installed bundle's settings).
 */
preview_id: string | null, };

/**
 * One setting on the install form.
 */
export type BundleSetting = { key: string, kind: OptionKind, title: string, description: string, required: boolean, 
/**
 * Typed masked and kept in the keyring.
 */
sensitive: boolean, 
/**
 * Several folders or files.
 */
multiple: boolean, min: number | null, max: number | null, 
/**
 * The default, its variables substituted.
 */
default: JsonValue | null, 
/**
 * A sensitive value the installed version already keeps in the keyring;
 * left empty, it is kept.
 */
kept: boolean, 
/**
 * The value the installed version was given (never a sensitive one).
 */
value: JsonValue | null, };

/**
 * A `.mcpb` file the registry lists: its URL and the SHA-256 it must have.
 */
export type BundleSource = { url: string, 
/**
 * Lowercase hex.
 */
sha256: string, };

/**
 * Something a server reported while a tool call ran.
 */
export type CallEvent = { "kind": "progress", progress: number, total: number | null, message: string | null, } | { "kind": "log" } & LogMessage;

/**
 * Statistics of one tool's recorded calls.
 */
export type CallStats = { calls: number, 
/**
 * Share of calls that returned without `isError` or a failure, 0 to 1.
 */
success_rate: number, median_ms: number, };

/**
 * A knowledge-base passage the answer cites as `[index]`.
 */
export type Citation = { index: number, 
/**
 * The knowledge source it came from, when not the local knowledge base.
 */
origin: string | null, document: string, path: string, 
/**
 * How relevant the passage is, 0 to 1; `None` when an older Patchbay cited it.
 */
relevance: number | null, text: string, 
/**
 * Where the question's words are in `text`: `[start, end)` in UTF-16 code units.
 */
marks: Array<[number, number]>, 
/**
 * The headings the passage sits under, outermost first, joined with " > ".
 */
heading: string | null, 
/**
 * Its first and last line in the document, 1-based.
 */
lines: [number, number] | null, };

/**
 * OAuth client credentials for a remote server (the `client_credentials`
 * grant of MCP's SEP-1046): Patchbay gets its tokens from the server's
 * authorization server without a browser, at every start and again when the
 * server refuses a token, for a client registered there beforehand.
 */
export type ClientCredentials = { 
/**
 * The client id the authorization server issued.
 */
client_id: string, 
/**
 * How the client authenticates.
 */
key: ClientKey, 
/**
 * Scopes to ask for; empty asks for none (the server's default).
 */
scopes: Array<string>, };

/**
 * How an OAuth client proves itself at the token endpoint. The material is
 * always a secret-store reference once saved (never plain text in SQLite).
 */
export type ClientKey = { "method": "secret", secret: ValueSource, } | { "method": "private_key", pem: ValueSource, algorithm: JwtAlgorithm, };

/**
 * What an argument to complete belongs to.
 */
export type CompletionTarget = { "type": "prompt", name: string, } | { "type": "resource_template", uri_template: string, };

/**
 * A server's suggestions for an argument (at most 100).
 */
export type CompletionView = { values: Array<string>, 
/**
 * How many match in all, when the server says.
 */
total: number | null, 
/**
 * More match than were sent.
 */
has_more: boolean, };

/**
 * A host a sandboxed server's filtering proxy refused (`connection_blocked` event).
 */
export type ConnectionBlocked = { server: string, host: string, };

/**
 * A piece of message content.
 */
export type ContentPart = { "type": "text", text: string, } | { "type": "image", mime_type: string, data: string, } | { "type": "audio", mime_type: string, data: string, } | { "type": "resource_link", uri: string, name: string | null, mime_type: string | null, };

/**
 * A conversation opened in the chat view.
 */
export type ConversationDetail = { conversation: ConversationSummary, 
/**
 * The active branch (its last messages when a tail was asked for), root first.
 */
messages: Array<MessageView>, 
/**
 * How many branch messages come before `messages`.
 */
earlier: number, settings: ConversationSettings, };

/**
 * The model named a conversation (`AppEvent::ConversationRenamed`).
 */
export type ConversationRenamed = { id: string, title: string, };

/**
 * Per-conversation choices: model, servers, tools and instructions.
 */
export type ConversationSettings = { provider: string | null, model: string | null, 
/**
 * Servers the model may use; `None` means every enabled server.
 */
servers: Array<string> | null, 
/**
 * `server/tool` names hidden in this conversation.
 */
disabled_tools: Array<string>, assistant_id: string | null, 
/**
 * This conversation's own instructions, in place of its assistant's system prompt.
 */
system_prompt: string | null, 
/**
 * This conversation's reasoning effort, in place of its assistant's.
 */
reasoning: ReasoningEffort | null, };

/**
 * One conversation in the sidebar.
 */
export type ConversationSummary = { id: string, title: string, created_at: number, updated_at: number, 
/**
 * The matching passage when the list was searched.
 */
snippet: string | null, 
/**
 * Kept at the top of the list.
 */
pinned: boolean, };

/**
 * A tool or prompt the manifest declares.
 */
export type Declared = { name: string, description: string | null, };

/**
 * One line of a diff between the stored and the imported server.
 */
export type DiffLine = { 
/**
 * `same`, `add` or `remove`.
 */
op: string, text: string, };

/**
 * Why a signing certificate is not trusted.
 */
export type Distrust = "unknown_issuer" | "expired" | "not_yet_valid" | "not_for_code" | "revoked" | "bad_chain";

/**
 * One check of the launch doctor.
 */
export type DoctorCheck = { name: string, ok: boolean, detail: string, hint: string | null, };

/**
 * The launch doctor's report.
 */
export type DoctorReport = { server: string, checks: Array<DoctorCheck>, 
/**
 * The policy the server was started under, for the front end to word.
 */
policy: PolicyOutline | null, };

/**
 * Why a turn ended.
 */
export type DoneReason = "stop" | "cancelled" | "error" | "length";

/**
 * An environment variable an imported server reads when it starts (`${env:NAME}`):
 * its value goes where `field` says, a remote server's header too.
 */
export type EnvironmentRead = { 
/**
 * The field, e.g. `headers.Authorization`.
 */
field: string, variable: string, 
/**
 * Whether the environment Patchbay runs in has it now.
 */
set: boolean, };

/**
 * What kind of failure an error is, for the UI to choose its action.
 */
export type ErrorKind = "data_dir" | "database" | "keyring" | "invalid_input" | "not_found" | "internal" | "provider" | "mcp" | "cancelled" | "timeout" | "limit" | "knowledge";

/**
 * An error as the UI shows it: `{kind, message}`.
 */
export type ErrorView = { kind: ErrorKind, 
/**
 * A sentence that says where and why.
 */
message: string, };

/**
 * A field of a form and what is wrong with it (`policy.network.domains[1]`, …).
 */
export type FieldProblem = { field: string, reason: string, };

/**
 * App-wide preferences.
 */
export type GeneralSettings = { 
/**
 * `light`, `dark` or `system`.
 */
theme: string, 
/**
 * `en` or `zh`.
 */
language: string, 
/**
 * The data folder; a change applies after a restart.
 */
data_dir: string, 
/**
 * Whether the model names a conversation after its first answer.
 */
auto_title: boolean, 
/**
 * A backup waits to be restored at the next start (read only).
 */
restore_pending: boolean, 
/**
 * The proxy outgoing requests (providers, remote MCP servers) use.
 */
proxy: ProxyChoice, 
/**
 * The share of a model's context window, in percent (1–100), the tools'
 * definitions may take; past it a turn finds its tools through search.
 */
tool_share_percent: number, 
/**
 * The https URL of a client ID metadata document describing Patchbay, which remote
 * servers' sign-ins use as the client id where the authorization server supports it
 * (empty: dynamic registration).
 */
client_metadata_url: string, 
/**
 * Whether closing the window keeps Patchbay running in the tray.
 */
keep_in_tray: boolean, 
/**
 * The global shortcut that opens the quick-ask window (`Ctrl+Alt+Space`);
 * empty for none.
 */
quick_ask_shortcut: string, 
/**
 * Whether the app looks for a newer version at start and daily.
 */
check_updates: boolean, };

/**
 * The last time a server's health was checked (a ping), and how it went.
 */
export type HealthCheck = { 
/**
 * When, in milliseconds since the Unix epoch.
 */
at_ms: number, 
/**
 * How long the answer took, or until the ping was given up.
 */
round_trip_ms: number, 
/**
 * Why it failed; `None` when the server answered.
 */
error: string | null, };

/**
 * An icon a server gives itself or a tool (MCP `icons`), as the window shows it.
 */
export type IconView = { 
/**
 * A `data:` URL of the picture.
 */
src: string, 
/**
 * `"light"` or `"dark"`: the theme it is drawn for; `None` for either.
 */
theme: string | null, };

/**
 * One server of an import preview.
 */
export type ImportEntry = { name: string, 
/**
 * `new`, `changed`, `unchanged` or `conflict`.
 */
status: string, incoming: McpServerConfig, diff: Array<DiffLine>, detail: string | null, 
/**
 * Every env variable and header whose value is a secret, and where it comes from.
 */
secrets: Array<SecretNote>, 
/**
 * The environment variables its values read when it starts (a remote server's
 * headers too: the value is sent to it).
 */
environment: Array<EnvironmentRead>, 
/**
 * Its environment variables that change which program runs, what it
 * loads or where its packages come from (`NODE_OPTIONS`, `LD_PRELOAD`, …).
 */
steering: Array<string>, 
/**
 * The security policy it would run under.
 */
policy: PolicyOutline, };

/**
 * A VS Code `${input:…}` prompt of an import: a secret the user types in.
 */
export type ImportInput = { id: string, description: string | null, 
/**
 * The servers that use it.
 */
servers: Array<string>, 
/**
 * Whether the secret store already holds a value for it.
 */
set: boolean, };

/**
 * What an import would do.
 */
export type ImportPreviewView = { format: string, entries: Array<ImportEntry>, 
/**
 * Problems, each saying where and why.
 */
warnings: Array<string>, 
/**
 * VS Code `${input:…}` prompts the user may answer before applying.
 */
inputs: Array<ImportInput>, 
/**
 * Stored servers that "replace all" would delete.
 */
removed_on_replace: Array<string>, 
/**
 * Provider profiles (Patchbay's form) that applying creates or replaces, by name.
 */
providers: Array<string>, };

/**
 * What an applied import did.
 */
export type ImportReport = { added: Array<string>, updated: Array<string>, skipped: Array<string>, 
/**
 * Servers deleted by "replace all".
 */
removed: Array<string>, 
/**
 * Secrets the imported servers need that are still not set.
 */
secrets_not_set: Array<string>, };

/**
 * Whether Patchbay can install an update here.
 */
export type Installable = { "kind": "here" } | { "kind": "elsewhere", why: string, release_url: string, };

/**
 * A serialisable error: `{ "kind": "...", "message": "..." }`.
 */
export type IpcError = { 
/**
 * The error's kind.
 */
kind: ErrorKind, 
/**
 * A readable sentence that says where and why.
 */
message: string, };

export type JsonValue = number | string | boolean | Array<JsonValue> | { [key in string]: JsonValue } | null;

/**
 * The algorithm that signs a `private_key_jwt` client assertion (RFC 7523).
 */
export type JwtAlgorithm = "ES256" | "ES384" | "RS256" | "RS384" | "RS512";

/**
 * A document of a folder.
 */
export type KbDocument = { path: string, title: string, chunks: number, };

/**
 * The knowledge base's embeddings as the settings page shows them.
 */
export type KbEmbeddings = { 
/**
 * `off`, `endpoint` or `local`.
 */
kind: string, 
/**
 * The provider whose endpoint is used, when one matches the stored base URL.
 */
provider: string | null, base_url: string | null, model: string | null, model_dir: string | null, 
/**
 * The model understands English only (all-MiniLM): the page says so.
 */
english_only: boolean, };

/**
 * Where the knowledge base's embeddings come from, as the settings page chooses it.
 */
export type KbEmbeddingsChoice = { "kind": "off" } | { "kind": "provider", provider: string, model: string, } | { "kind": "local", model_dir: string, };

/**
 * A knowledge-base folder with its counts.
 */
export type KbFolder = { path: string, documents: number, chunks: number, 
/**
 * `idle`, `indexing` or `error`.
 */
state: string, progress: KbProgressCount | null, error: string | null, };

/**
 * A search hit.
 */
export type KbHit = { document: string, path: string, score: number, 
/**
 * How well it answers the search, 0 to 1 (`rag::Excerpt::relevance`).
 */
relevance: number, text: string, 
/**
 * Where the query's words are in `text`, to mark: `[start, end)` in UTF-16 code units.
 */
marks: Array<[number, number]>, };

/**
 * How an assistant uses the knowledge base, as the UI names it.
 */
export type KbMode = "off" | "auto" | "always" | "both";

/**
 * A model download's progress, also sent as the `kb_model_progress` event.
 */
export type KbModelProgress = { model: string, 
/**
 * The file being fetched.
 */
file: string, done_bytes: number, total_bytes: number, 
/**
 * The download ended (see `error`).
 */
finished: boolean, 
/**
 * Why it failed, when it did.
 */
error: string | null, };

/**
 * A model of the catalogue (`rag::models::CATALOGUE`).
 */
export type KbModelView = { name: string, languages: string, 
/**
 * It understands Chinese and other languages besides English.
 */
multilingual: boolean, 
/**
 * About how much is downloaded.
 */
megabytes: number, 
/**
 * `absent`, `partial` (a download stopped; getting it resumes) or `ready`.
 */
state: ModelState, 
/**
 * The knowledge base embeds with it now.
 */
in_use: boolean, 
/**
 * The one to pick: multilingual when the window speaks Chinese or the documents hold Han text.
 */
suggested: boolean, 
/**
 * Where it is kept once downloaded.
 */
folder: string, 
/**
 * Its download, while one runs or after it failed.
 */
download: KbModelProgress | null, };

/**
 * The local embedding models the knowledge-base page offers, and where they come from.
 */
export type KbModels = { 
/**
 * The hub (or mirror) downloads come from.
 */
hub: string, 
/**
 * The saved hub setting, when there is one (else `HF_ENDPOINT` or huggingface.co is used).
 */
hub_setting: string | null, models: Array<KbModelView>, };

/**
 * Indexing progress of a folder.
 */
export type KbProgress = { folder: string, done: number, total: number, };

/**
 * Files done of files to do.
 */
export type KbProgressCount = { done: number, total: number, };

/**
 * The share page: its settings, where it serves or why not, and the requests it answered.
 */
export type KbShare = { settings: KbShareSettings, 
/**
 * The Streamable HTTP endpoint while serving.
 */
url: string | null, 
/**
 * The legacy SSE endpoint while serving.
 */
sse_url: string | null, 
/**
 * Why it is not serving although it should.
 */
error: string | null, 
/**
 * Requests answered or refused, newest first (the last 200).
 */
log: Array<Served>, };

/**
 * The app a copied share configuration is for.
 */
export type KbShareClient = "claude_desktop" | "cursor" | "patchbay";

/**
 * How the knowledge base is shared with other apps (Settings → Knowledge base → Share).
 */
export type KbShareSettings = { enabled: boolean, 
/**
 * A port (on 127.0.0.1) or HOST:PORT.
 */
address: string, 
/**
 * Other computers may connect (an address other than this computer's own).
 */
allow_remote: boolean, };

/**
 * A tool of a running server that could be a knowledge source.
 */
export type KbSourceCandidate = { server: string, tool: string, description: string | null, 
/**
 * How Patchbay reads it, when it knows the tool (RAGFlow's, Patchbay's); else it needs a mapping.
 */
shape: SourceShape | null, 
/**
 * Its text arguments, the required ones first: where a mapping may put the question.
 */
text_args: Array<string>, };

/**
 * A tool's real answer, for confirming a mapping.
 */
export type KbSourcePreview = { 
/**
 * The first result's text and number fields, as dotted paths.
 */
fields: Array<string>, 
/**
 * The answer, as pretty JSON (its first 4,000 characters).
 */
answer: string, };

/**
 * A stretch of a tool result kept whole with its conversation, for the inspector.
 */
export type KeptPage = { 
/**
 * The result's number and sizes.
 */
kept: KeptResult, 
/**
 * Where `text` starts, in characters from the result's start.
 */
offset: number, text: string, };

/**
 * A result whose whole text is kept: its handle and sizes.
 */
export type KeptResult = { 
/**
 * Its number within the conversation, the model's handle for `read_result`.
 */
result: number, 
/**
 * Characters of the whole text.
 */
chars: number, 
/**
 * Lines of the whole text.
 */
lines: number, 
/**
 * Characters of it the model was sent.
 */
sent_chars: number, };

/**
 * Whether the OS keyring can be used, as shown by `patchbay info` and the app.
 */
export type KeyringStatus = { 
/**
 * True when secrets can be read and written.
 */
available: boolean, 
/**
 * The backend's name, or why it is unavailable.
 */
detail: string, };

/**
 * How much knowledge-base context an assistant adds to a message (see `rag::chat`).
 */
export type KnowledgeLimits = { 
/**
 * Passages at most.
 */
top_k: number, 
/**
 * The least relevance (0 to 1) a passage needs to be added and cited: the share of what
 * was asked its words cover, or its embedding's similarity (`rag::relevance`).
 */
min_relevance: number, 
/**
 * Estimated tokens of passage text at most.
 */
max_tokens: number, };

/**
 * A remote retrieval tool the chat searches beside the local knowledge base.
 */
export type KnowledgeSource = { 
/**
 * What citations call it.
 */
name: string, server: string, tool: string, shape: SourceShape, 
/**
 * The identity of the server it was added for (`ConfigStore::server_ids`), filled in when
 * it is saved: a server added later under the same name is not sent the user's questions.
 */
server_id?: string, 
/**
 * The tool's definition when it was added ([`pin`]): a tool that changed since is not
 * called until the source is added again.
 */
tool_fingerprint?: string, };

/**
 * A `logging/setLevel` level: the server sends messages at this level and above.
 */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";

/**
 * A `notifications/message` from a server.
 */
export type LogMessage = { 
/**
 * `debug` … `emergency`.
 */
level: string, logger: string | null, data: JsonValue, };

/**
 * A log message a call produced.
 */
export type LogView = { level: string, message: string, };

/**
 * One configured MCP server.
 */
export type McpServerConfig = { 
/**
 * Unique name; also the prefix of its tools' model-facing names.
 */
name: string, 
/**
 * The name shown for it where it differs from `name` (RAGFlow's `name`).
 */
title?: string | null, 
/**
 * How to reach it.
 */
transport: TransportConfig, 
/**
 * Whether it starts with the app.
 */
enabled: boolean, 
/**
 * Start and call time limits.
 */
timeouts: Timeouts, 
/**
 * Approval mode for tools without an override.
 */
approval: ApprovalMode, 
/**
 * Per-tool approval overrides, by the server's own tool name.
 */
tool_approval: { [key in string]: ApprovalMode }, 
/**
 * Tools hidden from the model.
 */
disabled_tools: Array<string>, 
/**
 * Tools always sent to the model with their definitions, also when the
 * turn finds the others through tool search (see `agent::tool_search`).
 */
pinned_tools?: Array<string>, 
/**
 * Whether the server sees the shared roots (`roots/list`); off (the
 * default), it gets an empty list. Off by default because some servers
 * (server-filesystem) work in the roots *instead of* the folders their
 * arguments name: an imported config keeps working as it did elsewhere.
 */
share_roots: boolean, 
/**
 * Whether its tools that claim to only read (`readOnlyHint`) run without
 * asking when its approval is "ask". Off by default, for every server:
 * annotations are the server's claims, and only the user can trust them.
 */
read_only_auto_allow: boolean, 
/**
 * Authorization without a browser, for a remote server: the OAuth
 * client-credentials grant. `None`: the server's own sign-in, when it asks.
 */
client_credentials?: ClientCredentials | null, 
/**
 * What it may read, write and reach, and how often it may be called
 * (see [`super::policy`]); empty: the global default, derived from its arguments.
 */
policy?: Policy, 
/**
 * Fields from an imported config that Patchbay does not interpret, kept for export.
 */
extra: { [key in string]: JsonValue }, };

/**
 * A stretch of the active branch, root first, and how many branch messages precede it.
 */
export type MessagePage = { messages: Array<MessageView>, earlier: number, };

/**
 * A message on the active branch.
 */
export type MessageView = { id: string, parent_id: string | null, role: Role, created_at: number, text: string, reasoning: string | null, 
/**
 * Attachments of a user message.
 */
parts: Array<ContentPart>, tool_calls: Array<ToolTrace>, citations: Array<Citation>, 
/**
 * Knowledge sources that gave this answer no passages, and why.
 */
unavailable: Array<Unavailable>, model: string | null, 
/**
 * Ids of this message and its siblings, oldest first.
 */
siblings: Array<string>, error: ErrorView | null, };

/**
 * Whether a catalogue model is here.
 */
export type ModelState = "absent" | "partial" | "ready";

/**
 * What a server may reach on the network. Serialised as `"off"`, `"any"` or
 * `{"domains": ["api.github.com", "*.example.org"]}`.
 */
export type Network = "off" | { "domains": Array<string> } | "any";

/**
 * A thing to install, as the window receives it.
 */
export type Opened = { "kind": "bundle", path: string, } | { "kind": "link", link: string, };

/**
 * What kind of value a setting takes.
 */
export type OptionKind = "string" | "number" | "boolean" | "directory" | "file";

/**
 * A server's policy as the user set it; what is left out comes from the
 * global default and the server's configuration ([`Policy::resolve`]).
 */
export type Policy = { 
/**
 * `None`: the global default ([`PolicyDefaults::level`]).
 */
level?: SecurityLevel | null, 
/**
 * Folders it may read, besides those the level gives.
 */
read?: Array<string>, 
/**
 * Folders (or files) it may write, besides those its arguments name.
 */
write?: Array<string>, 
/**
 * `None`: the level's default (off at strict, any otherwise).
 */
network?: Network | null, 
/**
 * Names of further variables of Patchbay's environment passed through.
 */
env?: Array<string>, rate?: RateLimits, };

/**
 * The global part of the policy: the level of servers that set none, and the
 * tool calls one turn may make. Kept in the `policy.defaults` setting.
 */
export type PolicyDefaults = { level: SecurityLevel, 
/**
 * Tool calls per turn; the calls past it are refused and the model must answer.
 */
turn_tool_calls: number, };

/**
 * A server's policy as its one-line summary shows it, in parts, so that a
 * front end words it in its own language (the window does, in English and
 * Chinese); its `Display` is the English line the CLI prints.
 */
export type PolicyOutline = { "kind": "local", level: SecurityLevel, read: Array<string>, write: Array<string>, network: Network, rate: RateLimits, } | { "kind": "in_process" } | { "kind": "remote", rate: RateLimits, };

/**
 * A server's policy as the editor shows it while it is edited: the line the
 * server's page will show (in parts, for the window to word), and what saving would refuse.
 */
export type PolicyPreview = { summary: PolicyOutline, problems: Array<FieldProblem>, };

/**
 * The global part of the security policy, and the levels this system can enforce.
 */
export type PolicySettings = { defaults: PolicyDefaults, offered: Array<SecurityLevel>, };

/**
 * Progress of a running tool call.
 */
export type ProgressView = { progress: number, total: number | null, message: string | null, };

/**
 * A prompt argument.
 */
export type PromptArgument = { name: string, 
/**
 * The name to show, when the server gives one.
 */
title: string | null, description: string | null, required: boolean, };

/**
 * A prompt a server offers, shown as a `/` command.
 */
export type PromptInfo = { server: string, name: string, 
/**
 * The name to show, when the server gives one.
 */
title: string | null, description: string | null, arguments: Array<PromptArgument>, 
/**
 * The prompt's icon, per theme.
 */
icons: Array<IconView>, };

/**
 * How a model without native tools is taught to call them (the parser reads both).
 */
export type PromptToolFormat = "function_call" | "use_mcp_tool";

/**
 * Which API a provider speaks.
 */
export type ProviderKind = "openai" | "anthropic" | "gemini";

/**
 * A provider as it is usually set up.
 */
export type ProviderPreset = { 
/**
 * Stable identifier (`deepseek`), also the suggested profile name.
 */
id: string, 
/**
 * What the user reads (`DeepSeek`).
 */
label: string, 
/**
 * The API it speaks.
 */
kind: ProviderKind, 
/**
 * Its API's base URL.
 */
base_url: string, 
/**
 * A model to start with; empty where the user must name one (a local
 * server runs whatever model was loaded, Ark wants an endpoint's model ID).
 */
default_model: string, 
/**
 * Further models offered in the model picker.
 */
models: Array<string>, 
/**
 * Whether requests need an API key (local servers do not).
 */
needs_key: boolean, 
/**
 * Whether tool calls go through the API's native tool calling; `false`
 * uses the prompt-based fallback, which works with any model.
 */
native_tools: boolean, 
/**
 * How its server is asked to think, or not.
 */
thinking: ThinkingParam, };

/**
 * A model provider the user has configured.
 */
export type ProviderProfile = { 
/**
 * Unique name, e.g. `openai` or `local-ollama`.
 */
name: string, 
/**
 * The API it speaks.
 */
kind: ProviderKind, 
/**
 * Base URL, e.g. `https://api.openai.com/v1`.
 */
base_url: string, 
/**
 * Model used when none is chosen.
 */
default_model: string, 
/**
 * Models the user picks from.
 */
models: Array<string>, 
/**
 * Extra HTTP headers sent with every request.
 */
headers: { [key in string]: ValueSource }, 
/**
 * Name of the secret holding the API key, if the provider needs one.
 */
api_key: string | null, 
/**
 * Whether the model calls tools natively; otherwise prompt-based tool calling is used.
 */
native_tools: boolean, 
/**
 * The call format taught when tools are not native.
 */
prompt_tool_format: PromptToolFormat, 
/**
 * Context window in tokens, the user's setting for every model of the profile.
 */
context_window: number | null, 
/**
 * The windows the provider's model list states, by model (kept when the provider is tested).
 */
listed_windows: { [key in string]: number }, 
/**
 * How an OpenAI-compatible server is asked to think, or not.
 */
thinking: ThinkingParam, };

/**
 * A provider profile without its key.
 */
export type ProviderView = { profile: ProviderProfile, api_key_set: boolean, 
/**
 * The context window, in tokens, of each of its models that has a known
 * one (the profile's own setting, else what the provider's model list
 * stated when it was tested, else a well-known hosted model's).
 */
windows: { [key in string]: number }, 
/**
 * The most tools one request may carry, when the API has a limit.
 */
max_tools: number | null, };

/**
 * Which proxy outgoing requests use. Its `Debug` hides a custom proxy's login.
 */
export type ProxyChoice = { "mode": "environment" } | { "mode": "off" } | { "mode": "custom", url: string, };

/**
 * Calls per minute a server accepts; `None` is no limit.
 */
export type RateLimits = { 
/**
 * Calls of one tool per minute.
 */
per_tool_per_min?: number | null, 
/**
 * Calls of all its tools together per minute.
 */
per_server_per_min?: number | null, };

/**
 * How much a reasoning model thinks: each API's own setting (OpenAI's
 * `reasoning_effort`, Anthropic's adaptive thinking with `output_config.effort`,
 * Gemini's `thinkingLevel`) at the same three steps, or `Off`: asked not to
 * think, where the model can answer without (Anthropic's disabled thinking,
 * a Gemini thinking budget of 0, the OpenAI-compatible field of
 * [`ThinkingParam`](crate::config::ThinkingParam)).
 */
export type ReasoningEffort = "off" | "low" | "medium" | "high";

/**
 * One way of running a listed server, ready for the server editor.
 */
export type RegistryEntry = { 
/**
 * The suggested server name (the last part of the registry name).
 */
id: string, 
/**
 * What the user reads: the title (or name) and how it runs.
 */
label: string, 
/**
 * The registry name, e.g. `io.github.acme/weather`.
 */
name: string, description: string, version: string, website: string | null, 
/**
 * `npm`, `pypi`, `oci`, `mcpb`, `streamable-http` or `sse`.
 */
via: string, 
/**
 * The program that must be installed for it to start (`npx`, `uvx`, `docker`).
 */
needs: string | null, 
/**
 * The entry the editor starts from; secrets to type are named `""`.
 * For a bundle, a placeholder: the bundle's manifest says how it runs.
 */
config: McpServerConfig, 
/**
 * Where the bundle of an `mcpb` entry is downloaded from.
 */
bundle: BundleSource | null, 
/**
 * What the entry asks the user for: each environment variable or header
 * it sets (shown beside them in the editor), then each placeholder in its
 * values (filled in by [`fill`] first).
 */
settings: Array<RegistrySetting>, };

/**
 * A registry entry filled in: the server entry for the editor, and the
 * secrets (by keyring name) to save with it. `Debug` shows their names only.
 */
export type RegistryFill = { config: McpServerConfig, secrets: { [key in string]: string }, };

/**
 * One page of search results.
 */
export type RegistryPage = { entries: Array<RegistryEntry>, 
/**
 * Passed back to read the next page; none on the last one.
 */
next_cursor: string | null, };

/**
 * Something a listed server asks the user for: an environment variable (or,
 * for a remote, a header) it reads, or a placeholder in its values.
 */
export type RegistrySetting = { name: string, description: string, required: boolean, secret: boolean, 
/**
 * `{name}` in the entry's arguments, variables, headers or URL (or the
 * argument `<name>`), filled in by [`fill`]; otherwise the variable or
 * header of this name, set in the editor.
 */
placeholder: boolean, default: string | null, 
/**
 * The values it may take, when the registry lists them.
 */
choices: Array<string>, };

/**
 * A resource a server offers, for attaching to a message.
 */
export type ResourceInfo = { server: string, uri: string, name: string, 
/**
 * The name to show, when the server gives one.
 */
title: string | null, mime_type: string | null, 
/**
 * The server sends word when it changes, to those who watch it.
 */
watchable: boolean, 
/**
 * Watched: its changes are reported ([`ResourceUpdated`]).
 */
watched: boolean, 
/**
 * The resource's icon, per theme.
 */
icons: Array<IconView>, };

/**
 * One part of a resource as the server's page shows it.
 */
export type ResourcePreview = { uri: string, mime_type: string | null, 
/**
 * Its text: text contents, or a blob of a text MIME type that is UTF-8.
 */
text: string | null, 
/**
 * An image or audio blob, base64, when it fits.
 */
blob: string | null, 
/**
 * Bytes of the part as the server sent it (text, or base64).
 */
size: number, 
/**
 * The text was cut, or the blob left out, to stay within the limit.
 */
truncated: boolean, };

/**
 * A resource template a server offers: a form of its variables makes the
 * URI of a resource to attach.
 */
export type ResourceTemplateInfo = { server: string, uri_template: string, 
/**
 * The template's title, else its name.
 */
name: string, description: string | null, mime_type: string | null, 
/**
 * The URI template's variables, each once, in order.
 */
variables: Array<string>, 
/**
 * The template's icon, per theme.
 */
icons: Array<IconView>, };

/**
 * A watched resource changed.
 */
export type ResourceUpdated = { server: string, uri: string, };

/**
 * Who wrote a message.
 */
export type Role = "user" | "assistant";

/**
 * The folders shared with MCP servers as roots (`roots/list`).
 */
export type RootsView = { 
/**
 * Folders the user chose to share, in the order added.
 */
shared: Array<string>, 
/**
 * Knowledge-base folders, shared as well.
 */
knowledge: Array<string>, };

/**
 * One thing a run could not do, or why it failed: kept as data, so that each reader says it
 * in its own language (the window in the user's, the CLI in English).
 */
export type RunNote = { "kind": "denied", call: string, } | { "kind": "refused_sampling", server: string, } | { "kind": "refused_input", server: string, } | { "kind": "failed", message: string, } | { "kind": "timed_out", limit_secs: number, } | { "kind": "interrupted" } | { "kind": "text", text: string, };

/**
 * A run, as recorded.
 */
export type RunRecord = { id: number, 
/**
 * When it was due (Unix seconds); `None` for "run now".
 */
due_at: number | null, started_at: number, finished_at: number | null, 
/**
 * `running` (while it runs), `done` or `failed` (also a run whose process died, once the next run takes over).
 */
status: string, late: boolean, conversation: number | null, 
/**
 * What the run could not do (tools denied, servers' requests refused) and why it failed.
 */
notes: Array<RunNote>, };

/**
 * A file that was saved.
 */
export type SavedFile = { name: string, path: string, bytes: number, };

/**
 * A schedule added, and how it runs while Patchbay is closed.
 */
export type ScheduleAdded = { schedule: ScheduleView, while_closed: WhileClosed, };

/**
 * A schedule as the window adds it.
 */
export type ScheduleInput = { name: string, assistant: string, prompt: string, when: When, allowed_tools: Array<string>, };

/**
 * A schedule as the window lists it.
 */
export type ScheduleView = { name: string, assistant: string, prompt: string, when: When, 
/**
 * Tools (`server/tool`) that run although they ask for approval.
 */
allowed_tools: Array<string>, 
/**
 * When it runs next (Unix seconds), if ever.
 */
next_due: number | null, last_run: RunRecord | null, };

/**
 * A secret an imported server uses.
 */
export type SecretNote = { 
/**
 * The field, e.g. `env.GITHUB_TOKEN` or `headers.Authorization`.
 */
field: string, 
/**
 * The secret's name in the secret store.
 */
secret: string, } & ({ "state": "from_import" } | { "state": "reference", set: boolean, } | { "state": "prompt", input: string, description: string | null, set: boolean, });

/**
 * How much a server is trusted; the presets of a [`Policy`].
 */
export type SecurityLevel = "strict" | "normal" | "permissive";

/**
 * One request a served knowledge base answered or refused, so the user sees who uses it.
 */
export type Served = { 
/**
 * When, in Unix milliseconds.
 */
at_ms: number, 
/**
 * The client's name from its handshake (`claude-ai`, `cursor-vscode`), or for a refused
 * request the address it came from.
 */
client: string, 
/**
 * The tool called, `read` for a document read, or `refused`.
 */
what: string, 
/**
 * The question, the document's URI, or why the request was refused.
 */
detail: string, };

/**
 * Who a ready server is, as the settings page and `patchbay mcp info` show it.
 */
export type ServerAbout = { 
/**
 * Its `serverInfo` name (`mcp-servers/everything`); `None` when it gave none.
 */
name: string | null, 
/**
 * Its display name (`serverInfo.title`).
 */
title: string | null, version: string | null, description: string | null, 
/**
 * Its `websiteUrl`, when that is an `http(s)` URL.
 */
website: string | null, 
/**
 * The protocol version the handshake agreed on (`2025-06-18`).
 */
protocol_version: string, 
/**
 * The transport in use: for a configuration that gives only a URL, the one detection chose.
 */
transport: TransportKind, 
/**
 * The stdio server's process id.
 */
pid: number | null, 
/**
 * Where its command was found, for a stdio server.
 */
command: string | null, 
/**
 * What it declared it can do (see [`capabilities`]).
 */
capabilities: Array<string>, };

/**
 * The runtime a bundle's server needs.
 */
export type ServerKind = "node" | "python" | "binary" | "uv";

/**
 * A server's log line (`server_log` event).
 */
export type ServerLogLine = { server: string, line: string, };

/**
 * A server as its README sets it up.
 */
export type ServerPreset = { 
/**
 * Stable identifier, also the suggested server name.
 */
id: string, 
/**
 * What the user reads.
 */
label: string, 
/**
 * The program that must be installed for it to start (`npx`, `uvx`), if any.
 */
needs: string | null, 
/**
 * The entry the editor starts from.
 */
config: McpServerConfig, };

/**
 * The user's answer.
 */
export type ServerRequestResponse = { "action": "approve_sampling", messages: Array<TextMessage>, system_prompt: string | null, } | { "action": "accept", content: { [key in string]: JsonValue }, } | { "action": "decline" } | { "action": "cancel" };

/**
 * What the window is asked to show.
 */
export type ServerRequestView = { "kind": "sampling", id: string, server: string, messages: Array<TextMessage>, system_prompt: string | null, max_tokens: number, 
/**
 * The model that answers once approved: `provider / model`.
 */
model: string, 
/**
 * The models the server would prefer (hints only).
 */
model_hints: Array<string>, } | { "kind": "elicitation", id: string, server: string, message: string, requested_schema: JsonValue, };

/**
 * A server's status for the settings page and the `server_status` event.
 */
export type ServerStatusView = { server: string, 
/**
 * `stopped`, `starting`, `ready`, `failed` or `restarting`.
 */
state: string, tool_count: number, error: string | null, };

/**
 * A configured server with its live status.
 */
export type ServerView = { config: McpServerConfig, status: ServerStatusView, 
/**
 * Who the server says it is and how it is reached, while it is ready.
 */
about: ServerAbout | null, 
/**
 * Installed from an MCP bundle: its settings form can be opened again.
 */
bundle: boolean, 
/**
 * What the server said about using it when it started (MCP `instructions`,
 * added to the system prompt of turns that offer its tools).
 */
instructions: string | null, 
/**
 * The level it sends log messages at, for a ready server that logs.
 */
log_level: LogLevel | null, 
/**
 * The icon the server gives itself, per theme (see [`IconView`]).
 */
icons: Array<IconView>, 
/**
 * The security policy it runs under, in the parts of its one-line summary
 * (see [`McpRegistry::policy_outline`](crate::mcp::McpRegistry::policy_outline)).
 */
policy: PolicyOutline, 
/**
 * Hosts its filtering proxy refused since Patchbay started, each to allow in one click.
 */
blocked: Array<string>, 
/**
 * When its health was last checked (pinged), and how it went.
 */
health: HealthCheck | null, };

/**
 * How the quick-ask shortcut is held now.
 */
export type ShortcutStatus = { "state": "none" } | { "state": "held" } | { "state": "waiting" } | { "state": "desktop", trigger: string | null, } | { "state": "unbound", why: string, };

/**
 * Who signed a bundle, and whether they are trusted.
 */
export type Signature = { "status": "unsigned" } | { "status": "signed", signer: Signer, } | { "status": "self_signed", signer: Signer, } | { "status": "untrusted", signer: Signer, reason: Distrust, };

/**
 * The signing certificate, as the install form shows it.
 */
export type Signer = { 
/**
 * The certificate's subject (common name, or organisation).
 */
publisher: string, 
/**
 * Who issued it (common name, or organisation).
 */
issuer: string, 
/**
 * The dates it is valid between, `YYYY-MM-DD`.
 */
valid_from: string, valid_to: string, 
/**
 * The SHA-256 of the certificate, lowercase hex.
 */
fingerprint: string, };

/**
 * How a source's tool is asked and its answer read.
 */
export type SourceShape = { "kind": "ragflow" } | { "kind": "patchbay" } | { "kind": "mapped", query_arg: string, text: string, title: string | null, source: string | null, };

/**
 * A message of a sampling request as the dialog shows (and edits) it.
 */
export type TextMessage = { 
/**
 * `user` or `assistant`.
 */
role: string, text: string, };

/**
 * How an OpenAI-compatible server is asked to think or not: servers spell it
 * differently, and a field a server does not know can be refused.
 */
export type ThinkingParam = "auto" | "reasoning_effort" | "thinking_type" | "enable_thinking" | "chat_template";

/**
 * Time limits for one server.
 */
export type Timeouts = { 
/**
 * Seconds to start and initialise.
 */
startup_secs: number, 
/**
 * Seconds a tool call may go without a response or progress.
 */
call_secs: number, };

/**
 * Why the system timer could not be set up (the window words each kind) or removed.
 */
export type TimerError = { "kind": "unsupported" } | { "kind": "unusable_path", path: string, } | { "kind": "no_home" } | { "kind": "unwritable", path: string, error: string, } | { "kind": "unremovable", path: string, error: string, } | { "kind": "not_enabled", path: string, } | { "kind": "refused", path: string, tool: string, error: string, } | { "kind": "no_tool", path: string, tool: string, error: string, };

/**
 * One tool of a server for the settings page and the composer.
 */
export type ToolInfo = { server: string, name: string, 
/**
 * The name to show (the tool's `title`, else its annotations' `title`).
 */
title: string | null, description: string, input_schema: JsonValue, enabled: boolean, 
/**
 * Sent with every request, also when tool search finds the others.
 */
pinned: boolean, approval: ApprovalMode, 
/**
 * Estimated tokens the name, description and schema cost per request.
 */
schema_tokens: number, stats: CallStats | null, 
/**
 * The tool's icon, per theme.
 */
icons: Array<IconView>, 
/**
 * What the server says the tool does (its annotations), only where it
 * says so: `read_only`, `destructive` or `additive`, `idempotent`,
 * `open_world`; and `task` for a tool that runs as a task (MCP
 * 2025-11-25: it may take a while and stop to ask). Hints from the
 * server, not guarantees.
 */
hints: Array<string>, 
/**
 * Its view (MCP Apps), and whether the model and views may call it.
 */
view: ToolView, };

/**
 * The result of a tool call.
 */
export type ToolResultView = { 
/**
 * What the model was sent.
 */
content: Array<ContentPart>, structured_content: JsonValue | null, is_error: boolean, 
/**
 * The whole result, kept with the conversation, when the model was sent only its start.
 */
kept?: KeptResult, };

/**
 * One tool call of an assistant message.
 */
export type ToolTrace = { call_id: string, server: string, tool: string, arguments: JsonValue, status: TraceStatus, duration_ms: number | null, progress: ProgressView | null, result: ToolResultView | null, error: string | null, stderr_tail: string | null, logs: Array<LogView>, };

/**
 * The view a tool names, and who may call the tool.
 */
export type ToolView = { 
/**
 * The `ui://` resource of the view; `None` for a tool with no view of its own
 * (its visibility may still be set).
 */
resource_uri: string | null, 
/**
 * The model sees the tool.
 */
for_model: boolean, 
/**
 * Views of the same server may call it.
 */
for_app: boolean, };

/**
 * Raw JSON-RPC of one tool call, for the trace inspector.
 */
export type TraceRecord = { call_id: string, server: string, tool: string, request: JsonValue, response: JsonValue | null, };

/**
 * Where a tool call stands.
 */
export type TraceStatus = "pending_approval" | "running" | "done" | "error" | "cancelled" | "denied";

/**
 * How to reach an MCP server.
 */
export type TransportConfig = { "type": "stdio", command: string, args: Array<string>, 
/**
 * Added to the user's login environment (never replacing it).
 */
env: { [key in string]: ValueSource }, cwd: string | null, } | { "type": "streamable_http", url: string, headers: { [key in string]: ValueSource }, } | { "type": "sse", url: string, headers: { [key in string]: ValueSource }, } | { "type": "auto", url: string, headers: { [key in string]: ValueSource }, };

/**
 * Which transport a connection uses.
 */
export type TransportKind = "stdio" | "streamable_http" | "sse" | "in_process";

/**
 * One event of a turn as the chat view receives it.
 */
export type TurnEvent = { "type": "turn_started", user_message: MessageView | null, assistant_message_id: string, model: string, } | { "type": "text_delta", text: string, } | { "type": "reasoning_delta", text: string, } | { "type": "tool_call_writing", call_id: string, server: string, tool: string, } | { "type": "tool_arguments_delta", call_id: string, delta: string, } | { "type": "tool_call_started", call_id: string, server: string, tool: string, arguments: JsonValue, status: TraceStatus, } | { "type": "approval_needed", call_id: string, server: string, tool: string, arguments: JsonValue, 
/**
 * The server runs at strict: only "allow once" and "deny" are offered.
 */
strict: boolean, } | { "type": "tool_running", call_id: string, } | { "type": "tool_progress", call_id: string, progress: ProgressView, } | { "type": "tool_log", call_id: string, log: LogView, } | { "type": "tool_result", call_id: string, result: ToolResultView, duration_ms: number, } | { "type": "tool_failed", call_id: string, error: string, stderr_tail: string | null, duration_ms: number, } | { "type": "tool_cancelled", call_id: string, } | { "type": "tool_denied", call_id: string, } | { "type": "citations", citations: Array<Citation>, 
/**
 * Knowledge sources that gave no passages, and why.
 */
unavailable: Array<Unavailable>, } | { "type": "tool_search", searchable: number, sent: number, } | { "type": "context_trimmed", 
/**
 * Tool results replaced by a short note.
 */
elided_tool_results: number, 
/**
 * Whole older messages left out.
 */
dropped_messages: number, 
/**
 * The context window it had to fit.
 */
context_window: number, } | { "type": "usage", usage: Usage, } | { "type": "error", error: ErrorView, } | { "type": "done", reason: DoneReason, };

/**
 * What `send_message`, `regenerate` and `edit_message` answer.
 */
export type TurnOutcome = { assistant_message_id: string, };

/**
 * A knowledge source that gave no passages for an answer, and why: the citations name it
 * rather than leave it out silently.
 */
export type Unavailable = { 
/**
 * The source's name.
 */
name: string, why: string, };

/**
 * A step of an install, for its progress bar.
 */
export type UpdateProgress = { "kind": "downloading", done: number, total: number | null, } | { "kind": "installing" };

/**
 * A newer version, as the window shows it.
 */
export type UpdateView = { version: string, current_version: string, 
/**
 * What is new (the release's notes).
 */
notes: string | null, 
/**
 * When it was released (RFC 3339).
 */
date: string | null, 
/**
 * Whether this install can replace itself, or where to get it instead.
 */
install: Installable, };

/**
 * Token counts reported by the provider.
 */
export type Usage = { input_tokens: number, output_tokens: number, };

/**
 * A configured value: plain text, the name of a secret, or text that reads
 * Patchbay's environment.
 *
 * Serialised as `{"plain": "text"}`, `{"secret": "mcp/github/GITHUB_TOKEN"}` or
 * `{"env": "Bearer ${GITHUB_TOKEN}"}`.
 */
export type ValueSource = { "plain": string } | { "secret": string } | { "env": string };

/**
 * When a schedule runs, as the user gave it.
 */
export type When = { "kind": "daily", at: string, } | { "kind": "weekdays", at: string, } | { "kind": "every_hours", hours: number, } | { "kind": "cron", line: string, };

/**
 * How schedules run while Patchbay is closed.
 */
export type WhileClosed = { "kind": "timer", unit: string, } | { "kind": "no_timer", why: TimerError, };
