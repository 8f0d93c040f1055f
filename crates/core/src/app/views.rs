//! What the front end receives: serialisable views of core records.
//!
//! Field names and shapes follow `ui/IPC.md`: ids are strings (JavaScript
//! numbers are not 64-bit), timestamps milliseconds since the epoch, and
//! every enum snake_case. Conversions from core types live next to the views.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::config::{ApprovalMode, McpServerConfig, ProviderProfile, SecretNote};
use crate::conversations::{Conversation, KeptResult};
pub(crate) use crate::host::turn::document_title;
pub use crate::host::turn::{
    Citation, DoneReason, ErrorKind, ErrorView, LogView, MessageView, ProgressView, ToolResultView, ToolTrace,
    TraceStatus, TurnEvent,
};
use crate::mcp::LogLevel;
use crate::mcp::protocol::about::ServerAbout;
use crate::mcp::traces::CallStats;
use crate::mcp::{LogMessage, ServerStatus};

/// The model named a conversation (`AppEvent::ConversationRenamed`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ConversationRenamed {
    pub id: String,
    pub title: String,
}

/// A stretch of a tool result kept whole with its conversation, for the inspector.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KeptPage {
    /// The result's number and sizes.
    pub kept: KeptResult,
    /// Where `text` starts, in characters from the result's start.
    pub offset: u64,
    pub text: String,
}

/// One conversation in the sidebar.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ConversationSummary {
    pub id: String,
    pub title: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// The matching passage when the list was searched.
    pub snippet: Option<String>,
    /// Kept at the top of the list.
    pub pinned: bool,
}

impl From<&Conversation> for ConversationSummary {
    fn from(c: &Conversation) -> Self {
        Self {
            id: c.id.to_string(),
            title: c.title.clone(),
            created_at: c.created_at,
            updated_at: c.updated_at,
            snippet: None,
            pinned: c.pinned,
        }
    }
}

/// Per-conversation choices: model, servers, tools and instructions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(default)]
pub struct ConversationSettings {
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Servers the model may use; `None` means every enabled server.
    pub servers: Option<Vec<String>>,
    /// `server/tool` names hidden in this conversation.
    pub disabled_tools: Vec<String>,
    pub assistant_id: Option<String>,
    /// This conversation's own instructions, in place of its assistant's system prompt.
    pub system_prompt: Option<String>,
    /// This conversation's reasoning effort, in place of its assistant's.
    pub reasoning: Option<crate::llm::ReasoningEffort>,
}

/// A conversation opened in the chat view.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ConversationDetail {
    pub conversation: ConversationSummary,
    /// The active branch (its last messages when a tail was asked for), root first.
    pub messages: Vec<MessageView>,
    /// How many branch messages come before `messages`.
    pub earlier: usize,
    pub settings: ConversationSettings,
}

/// A stretch of the active branch, root first, and how many branch messages precede it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct MessagePage {
    pub messages: Vec<MessageView>,
    pub earlier: usize,
}

/// A server's status for the settings page and the `server_status` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ServerStatusView {
    pub server: String,
    /// `stopped`, `starting`, `ready`, `failed` or `restarting`.
    pub state: &'static str,
    pub tool_count: usize,
    pub error: Option<String>,
}

impl ServerStatusView {
    /// The view of a registry status.
    pub fn new(server: &str, status: &ServerStatus, tool_count: usize) -> Self {
        let (state, error) = match status {
            ServerStatus::Stopped => ("stopped", None),
            ServerStatus::Starting => ("starting", None),
            ServerStatus::Ready => ("ready", None),
            ServerStatus::Failed { reason } => ("failed", Some(reason.clone())),
            ServerStatus::Restarting { attempt } => ("restarting", Some(format!("restart attempt {attempt}"))),
        };
        Self { server: server.to_owned(), state, tool_count, error }
    }
}

/// A configured server with its live status.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ServerView {
    pub config: McpServerConfig,
    pub status: ServerStatusView,
    /// Who the server says it is and how it is reached, while it is ready.
    pub about: Option<ServerAbout>,
    /// Installed from an MCP bundle: its settings form can be opened again.
    pub bundle: bool,
    /// What the server said about using it when it started (MCP `instructions`,
    /// added to the system prompt of turns that offer its tools).
    pub instructions: Option<String>,
    /// The level it sends log messages at, for a ready server that logs.
    pub log_level: Option<LogLevel>,
    /// The icon the server gives itself, per theme (see [`IconView`]).
    pub icons: Vec<IconView>,
    /// The security policy it runs under, in the parts of its one-line summary
    /// (see [`McpRegistry::policy_outline`](crate::mcp::McpRegistry::policy_outline)).
    pub policy: crate::config::PolicyOutline,
    /// Hosts its filtering proxy refused since Patchbay started, each to allow in one click.
    pub blocked: Vec<String>,
    /// When its health was last checked (pinged), and how it went.
    pub health: Option<crate::mcp::HealthCheck>,
}

/// A host a sandboxed server's filtering proxy refused (`connection_blocked` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ConnectionBlocked {
    pub server: String,
    pub host: String,
}

/// The global part of the security policy, and the levels this system can enforce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct PolicySettings {
    pub defaults: crate::config::PolicyDefaults,
    pub offered: Vec<crate::config::SecurityLevel>,
}

/// A server's policy as the editor shows it while it is edited: the line the
/// server's page will show (in parts, for the window to word), and what saving would refuse.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct PolicyPreview {
    pub summary: crate::config::PolicyOutline,
    pub problems: Vec<FieldProblem>,
}

/// A field of a form and what is wrong with it (`policy.network.domains[1]`, …).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct FieldProblem {
    pub field: String,
    pub reason: String,
}

/// An icon a server gives itself or a tool (MCP `icons`), as the window shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct IconView {
    /// A `data:` URL of the picture.
    pub src: String,
    /// `"light"` or `"dark"`: the theme it is drawn for; `None` for either.
    pub theme: Option<String>,
}

/// A server's log line (`server_log` event).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ServerLogLine {
    pub server: String,
    pub line: String,
}

/// `[level] text` of a server's log message.
pub(crate) fn log_line(m: &LogMessage) -> String {
    let text = match &m.data {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    match &m.logger {
        Some(logger) => format!("[{}] {logger}: {text}", m.level),
        None => format!("[{}] {text}", m.level),
    }
}

/// One tool of a server for the settings page and the composer.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ToolInfo {
    pub server: String,
    pub name: String,
    /// The name to show (the tool's `title`, else its annotations' `title`).
    pub title: Option<String>,
    pub description: String,
    pub input_schema: serde_json::Value,
    pub enabled: bool,
    /// Sent with every request, also when tool search finds the others.
    pub pinned: bool,
    pub approval: ApprovalMode,
    /// Estimated tokens the name, description and schema cost per request.
    pub schema_tokens: u32,
    pub stats: Option<CallStats>,
    /// The tool's icon, per theme.
    pub icons: Vec<IconView>,
    /// What the server says the tool does (its annotations), only where it
    /// says so: `read_only`, `destructive` or `additive`, `idempotent`,
    /// `open_world`; and `task` for a tool that runs as a task (MCP
    /// 2025-11-25: it may take a while and stop to ask). Hints from the
    /// server, not guarantees.
    pub hints: Vec<&'static str>,
    /// Its view (MCP Apps), and whether the model and views may call it.
    pub view: crate::mcp::protocol::apps::ToolView,
}

/// The hints a tool's annotations give, and whether it runs as a task, as
/// [`ToolInfo::hints`] lists them.
pub(crate) fn tool_hints(annotations: Option<&rmcp::model::ToolAnnotations>, task: bool) -> Vec<&'static str> {
    let mut hints = Vec::new();
    if let Some(a) = annotations {
        annotation_hints(a, &mut hints);
    }
    if task {
        hints.push("task");
    }
    hints
}

fn annotation_hints(a: &rmcp::model::ToolAnnotations, hints: &mut Vec<&'static str>) {
    if a.read_only_hint == Some(true) {
        hints.push("read_only");
    } else {
        match a.destructive_hint {
            Some(true) => hints.push("destructive"),
            Some(false) => hints.push("additive"),
            None => {}
        }
        if a.idempotent_hint == Some(true) {
            hints.push("idempotent");
        }
    }
    if a.open_world_hint == Some(true) {
        hints.push("open_world");
    }
}

/// One check of the launch doctor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct DoctorCheck {
    pub name: String,
    pub ok: bool,
    pub detail: String,
    pub hint: Option<String>,
}

/// The launch doctor's report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct DoctorReport {
    pub server: String,
    pub checks: Vec<DoctorCheck>,
    /// The policy the server was started under, for the front end to word.
    pub policy: Option<crate::config::PolicyOutline>,
}

/// A prompt argument.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct PromptArgument {
    pub name: String,
    /// The name to show, when the server gives one.
    pub title: Option<String>,
    pub description: Option<String>,
    pub required: bool,
}

/// A prompt a server offers, shown as a `/` command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct PromptInfo {
    pub server: String,
    pub name: String,
    /// The name to show, when the server gives one.
    pub title: Option<String>,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgument>,
    /// The prompt's icon, per theme.
    pub icons: Vec<IconView>,
}

/// A resource a server offers, for attaching to a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ResourceInfo {
    pub server: String,
    pub uri: String,
    pub name: String,
    /// The name to show, when the server gives one.
    pub title: Option<String>,
    pub mime_type: Option<String>,
    /// The server sends word when it changes, to those who watch it.
    pub watchable: bool,
    /// Watched: its changes are reported ([`ResourceUpdated`]).
    pub watched: bool,
    /// The resource's icon, per theme.
    pub icons: Vec<IconView>,
}

/// A watched resource changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ResourceUpdated {
    pub server: String,
    pub uri: String,
}

/// A resource template a server offers: a form of its variables makes the
/// URI of a resource to attach.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ResourceTemplateInfo {
    pub server: String,
    pub uri_template: String,
    /// The template's title, else its name.
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// The URI template's variables, each once, in order.
    pub variables: Vec<String>,
    /// The template's icon, per theme.
    pub icons: Vec<IconView>,
}

/// What an argument to complete belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum CompletionTarget {
    Prompt { name: String },
    ResourceTemplate { uri_template: String },
}

/// A server's suggestions for an argument (at most 100).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct CompletionView {
    pub values: Vec<String>,
    /// How many match in all, when the server says.
    pub total: Option<u32>,
    /// More match than were sent.
    pub has_more: bool,
}

/// A registry entry filled in: the server entry for the editor, and the
/// secrets (by keyring name) to save with it. `Debug` shows their names only.
#[derive(Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct RegistryFill {
    pub config: McpServerConfig,
    pub secrets: SecretValues,
}

impl std::fmt::Debug for RegistryFill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&String> = self.secrets.keys().collect();
        f.debug_struct("RegistryFill").field("config", &self.config).field("secrets", &names).finish()
    }
}

/// A provider profile without its key.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ProviderView {
    pub profile: ProviderProfile,
    pub api_key_set: bool,
    /// The context window, in tokens, of each of its models that has a known
    /// one (the profile's own setting, else what the provider's model list
    /// stated when it was tested, else a well-known hosted model's).
    pub windows: BTreeMap<String, u32>,
    /// The most tools one request may carry, when the API has a limit.
    pub max_tools: Option<u32>,
}

/// One line of a diff between the stored and the imported server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct DiffLine {
    /// `same`, `add` or `remove`.
    pub op: &'static str,
    pub text: String,
}

/// One server of an import preview.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ImportEntry {
    pub name: String,
    /// `new`, `changed`, `unchanged` or `conflict`.
    pub status: &'static str,
    pub incoming: McpServerConfig,
    pub diff: Vec<DiffLine>,
    pub detail: Option<String>,
    /// Every env variable and header whose value is a secret, and where it comes from.
    pub secrets: Vec<SecretNote>,
    /// The environment variables its values read when it starts (a remote server's
    /// headers too: the value is sent to it).
    pub environment: Vec<crate::config::import::EnvironmentRead>,
    /// Its environment variables that change which program runs, what it
    /// loads or where its packages come from (`NODE_OPTIONS`, `LD_PRELOAD`, …).
    pub steering: Vec<String>,
    /// The security policy it would run under.
    pub policy: crate::config::PolicyOutline,
}

/// What an import would do.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ImportPreviewView {
    pub format: String,
    pub entries: Vec<ImportEntry>,
    /// Problems, each saying where and why.
    pub warnings: Vec<String>,
    /// VS Code `${input:…}` prompts the user may answer before applying.
    pub inputs: Vec<ImportInput>,
    /// Stored servers that "replace all" would delete.
    pub removed_on_replace: Vec<String>,
    /// Provider profiles (Patchbay's form) that applying creates or replaces, by name.
    pub providers: Vec<String>,
}

/// A VS Code `${input:…}` prompt of an import: a secret the user types in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ImportInput {
    pub id: String,
    pub description: Option<String>,
    /// The servers that use it.
    pub servers: Vec<String>,
    /// Whether the secret store already holds a value for it.
    pub set: bool,
}

/// What an applied import did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ImportReport {
    pub added: Vec<String>,
    pub updated: Vec<String>,
    pub skipped: Vec<String>,
    /// Servers deleted by "replace all".
    pub removed: Vec<String>,
    /// Secrets the imported servers need that are still not set.
    pub secrets_not_set: Vec<String>,
}

/// Indexing progress of a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KbProgress {
    pub folder: String,
    pub done: usize,
    pub total: usize,
}

/// The folders shared with MCP servers as roots (`roots/list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct RootsView {
    /// Folders the user chose to share, in the order added.
    pub shared: Vec<String>,
    /// Knowledge-base folders, shared as well.
    pub knowledge: Vec<String>,
}

/// A knowledge-base folder with its counts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KbFolder {
    pub path: String,
    pub documents: u64,
    pub chunks: u64,
    /// `idle`, `indexing` or `error`.
    pub state: &'static str,
    pub progress: Option<KbProgressCount>,
    pub error: Option<String>,
}

/// Files done of files to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KbProgressCount {
    pub done: usize,
    pub total: usize,
}

/// A document of a folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KbDocument {
    pub path: String,
    pub title: String,
    pub chunks: u64,
}

/// A search hit.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct KbHit {
    pub document: String,
    pub path: String,
    pub score: f64,
    /// How well it answers the search, 0 to 1 (`rag::Excerpt::relevance`).
    pub relevance: f64,
    pub text: String,
    /// Where the query's words are in `text`, to mark: `[start, end)` in UTF-16 code units.
    pub marks: Vec<[usize; 2]>,
}

/// A tool of a running server that could be a knowledge source.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct KbSourceCandidate {
    pub server: String,
    pub tool: String,
    pub description: Option<String>,
    /// How Patchbay reads it, when it knows the tool (RAGFlow's, Patchbay's); else it needs a mapping.
    pub shape: Option<crate::rag::sources::SourceShape>,
    /// Its text arguments, the required ones first: where a mapping may put the question.
    pub text_args: Vec<String>,
}

/// A tool's real answer, for confirming a mapping.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct KbSourcePreview {
    /// The first result's text and number fields, as dotted paths.
    pub fields: Vec<String>,
    /// The answer, as pretty JSON (its first 4,000 characters).
    pub answer: String,
}

/// The local embedding models the knowledge-base page offers, and where they come from.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct KbModels {
    /// The hub (or mirror) downloads come from.
    pub hub: String,
    /// The saved hub setting, when there is one (else `HF_ENDPOINT` or huggingface.co is used).
    pub hub_setting: Option<String>,
    pub models: Vec<KbModelView>,
}

/// A model of the catalogue (`rag::models::CATALOGUE`).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct KbModelView {
    pub name: String,
    pub languages: String,
    /// It understands Chinese and other languages besides English.
    pub multilingual: bool,
    /// About how much is downloaded.
    pub megabytes: u32,
    /// `absent`, `partial` (a download stopped; getting it resumes) or `ready`.
    pub state: crate::rag::models::ModelState,
    /// The knowledge base embeds with it now.
    pub in_use: bool,
    /// The one to pick: multilingual when the window speaks Chinese or the documents hold Han text.
    pub suggested: bool,
    /// Where it is kept once downloaded.
    pub folder: String,
    /// Its download, while one runs or after it failed.
    pub download: Option<KbModelProgress>,
}

/// A model download's progress, also sent as the `kb_model_progress` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KbModelProgress {
    pub model: String,
    /// The file being fetched.
    pub file: String,
    #[ts(type = "number")]
    pub done_bytes: u64,
    #[ts(type = "number")]
    pub total_bytes: u64,
    /// The download ended (see `error`).
    pub finished: bool,
    /// Why it failed, when it did.
    pub error: Option<String>,
}

/// Where the knowledge base's embeddings come from, as the settings page chooses it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum KbEmbeddingsChoice {
    /// No embeddings: search uses BM25 only.
    Off,
    /// The OpenAI-compatible `/embeddings` endpoint of a configured provider
    /// (its base URL and API key), with an embeddings model such as `bge-m3`.
    Provider { provider: String, model: String },
    /// A local BERT-family model folder (config.json, tokenizer.json, model.safetensors).
    Local { model_dir: String },
}

/// The knowledge base's embeddings as the settings page shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct KbEmbeddings {
    /// `off`, `endpoint` or `local`.
    pub kind: &'static str,
    /// The provider whose endpoint is used, when one matches the stored base URL.
    pub provider: Option<String>,
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub model_dir: Option<String>,
    /// The model understands English only (all-MiniLM): the page says so.
    pub english_only: bool,
}

/// How the knowledge base is shared with other apps (Settings → Knowledge base → Share).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct KbShareSettings {
    pub enabled: bool,
    /// A port (on 127.0.0.1) or HOST:PORT.
    pub address: String,
    /// Other computers may connect (an address other than this computer's own).
    pub allow_remote: bool,
}

/// The share page: its settings, where it serves or why not, and the requests it answered.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct KbShare {
    pub settings: KbShareSettings,
    /// The Streamable HTTP endpoint while serving.
    pub url: Option<String>,
    /// The legacy SSE endpoint while serving.
    pub sse_url: Option<String>,
    /// Why it is not serving although it should.
    pub error: Option<String>,
    /// Requests answered or refused, newest first (the last 200).
    pub log: Vec<crate::rag::serve::Served>,
}

/// The app a copied share configuration is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum KbShareClient {
    ClaudeDesktop,
    Cursor,
    Patchbay,
}

/// How an assistant uses the knowledge base, as the UI names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum KbMode {
    /// Not at all.
    Off,
    /// The model searches when it wants to (a tool).
    Auto,
    /// Passages are retrieved for every message.
    Always,
    /// Both: cited passages and the tool.
    Both,
}

/// An assistant preset as the UI edits it. `id` is the preset's name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct AssistantView {
    pub id: String,
    pub name: String,
    pub system_prompt: String,
    pub provider: Option<String>,
    pub model: Option<String>,
    /// Temperature, top-p, the output limit and the reasoning effort, as fields of their own.
    #[serde(flatten)]
    pub sampling: crate::llm::Sampling,
    pub servers: Option<Vec<String>>,
    pub disabled_tools: Vec<String>,
    pub kb_mode: KbMode,
    /// How much knowledge-base context it adds: passages, relevance floor, token budget.
    pub knowledge: crate::assistants::KnowledgeLimits,
}

/// App-wide preferences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct GeneralSettings {
    /// `light`, `dark` or `system`.
    pub theme: String,
    /// `en` or `zh`.
    pub language: String,
    /// The data folder; a change applies after a restart.
    pub data_dir: String,
    /// Whether the model names a conversation after its first answer.
    #[serde(default = "yes")]
    pub auto_title: bool,
    /// A backup waits to be restored at the next start (read only).
    #[serde(default)]
    pub restore_pending: bool,
    /// The proxy outgoing requests (providers, remote MCP servers) use.
    #[serde(default)]
    pub proxy: crate::net::ProxyChoice,
    /// The share of a model's context window, in percent (1–100), the tools'
    /// definitions may take; past it a turn finds its tools through search.
    #[serde(default = "tool_share")]
    pub tool_share_percent: u8,
    /// The https URL of a client ID metadata document describing Patchbay, which remote
    /// servers' sign-ins use as the client id where the authorization server supports it
    /// (empty: dynamic registration).
    #[serde(default)]
    pub client_metadata_url: String,
    /// Whether closing the window keeps Patchbay running in the tray.
    #[serde(default)]
    pub keep_in_tray: bool,
    /// The global shortcut that opens the quick-ask window (`Ctrl+Alt+Space`);
    /// empty for none.
    #[serde(default = "quick_ask_shortcut")]
    pub quick_ask_shortcut: String,
    /// Whether the app looks for a newer version at start and daily.
    #[serde(default = "yes")]
    pub check_updates: bool,
}

/// The quick-ask shortcut until the user picks another.
pub const DEFAULT_QUICK_ASK_SHORTCUT: &str = "Ctrl+Alt+Space";

fn quick_ask_shortcut() -> String {
    DEFAULT_QUICK_ASK_SHORTCUT.to_owned()
}

fn tool_share() -> u8 {
    crate::agent::ToolBudget::default().share_percent
}

fn yes() -> bool {
    true
}

/// Raw JSON-RPC of one tool call, for the trace inspector.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct TraceRecord {
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub request: serde_json::Value,
    pub response: Option<serde_json::Value>,
}

/// A map of secret names to values the UI sends with a server or provider.
pub type SecretValues = BTreeMap<String, String>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_fill_shows_its_secrets_names_only() {
        let fill = RegistryFill {
            config: McpServerConfig::stdio("s", "npx", &[]),
            secrets: SecretValues::from([("server/s/env/TOKEN".to_owned(), "ghp-live-token".to_owned())]),
        };
        let shown = format!("{fill:?}");
        assert!(shown.contains("server/s/env/TOKEN") && !shown.contains("ghp-live-token"), "{shown}");
    }
}

/// A schedule as the window lists it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ScheduleView {
    pub name: String,
    pub assistant: String,
    pub prompt: String,
    pub when: crate::schedules::When,
    /// Tools (`server/tool`) that run although they ask for approval.
    pub allowed_tools: Vec<String>,
    /// When it runs next (Unix seconds), if ever.
    pub next_due: Option<i64>,
    pub last_run: Option<crate::schedules::RunRecord>,
}

/// A schedule as the window adds it.
#[derive(Debug, Clone, Deserialize, ts_rs::TS)]
pub struct ScheduleInput {
    pub name: String,
    pub assistant: String,
    pub prompt: String,
    pub when: crate::schedules::When,
    #[serde(default)]
    pub allowed_tools: Vec<String>,
}

/// A schedule added, and how it runs while Patchbay is closed.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ScheduleAdded {
    pub schedule: ScheduleView,
    pub while_closed: WhileClosed,
}

/// How schedules run while Patchbay is closed.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WhileClosed {
    /// The system timer `unit` runs them.
    Timer { unit: String },
    /// Nothing does (they run while Patchbay runs), for this reason.
    NoTimer { why: crate::schedules::timer::TimerError },
}
