//! The configuration types: provider profiles and MCP server entries.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::policy::Policy;

/// The server name of Patchbay's built-in tools (served in process, see
/// `crate::builtin`); reserved, no configured server may take it.
pub const BUILTIN_SERVER: &str = "builtin";

/// A configured value: plain text, the name of a secret, or text that reads
/// Patchbay's environment.
///
/// Serialised as `{"plain": "text"}`, `{"secret": "mcp/github/GITHUB_TOKEN"}` or
/// `{"env": "Bearer ${GITHUB_TOKEN}"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ValueSource {
    /// Stored as is (not a secret).
    Plain(String),
    /// The name of an entry in the secret store.
    Secret(String),
    /// Text whose `${env:NAME}` and `${NAME}` are read from the environment Patchbay
    /// runs in, when the server starts ([`super::env_refs`]). Only an import makes one,
    /// and its preview lists the variables: plain text is never expanded.
    Env(String),
}

/// How an OpenAI-compatible server is asked to think or not: servers spell it
/// differently, and a field a server does not know can be refused.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingParam {
    /// Chosen from the base URL: `ThinkingType` for DeepSeek, Doubao/Ark and
    /// GLM, `EnableThinking` for DashScope and SiliconFlow, otherwise
    /// `ReasoningEffort`.
    #[default]
    Auto,
    /// `reasoning_effort` (OpenAI, Ollama, Groq, OpenRouter, …); off is `"none"`.
    ReasoningEffort,
    /// `thinking: {"type": "enabled" | "disabled"}` (DeepSeek, Doubao/Ark,
    /// GLM), with `reasoning_effort` for the step.
    ThinkingType,
    /// `enable_thinking`, with a `thinking_budget` of 2,048 tokens for low and
    /// 8,192 for medium (Qwen on DashScope, SiliconFlow).
    EnableThinking,
    /// `chat_template_kwargs.enable_thinking`, read by the chat template of
    /// Qwen3-style models on vLLM, SGLang and llama.cpp server, with
    /// `reasoning_effort` for the step.
    ChatTemplate,
}

/// How a model without native tools is taught to call them (the parser reads both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum PromptToolFormat {
    /// `<function_call>{"name": …, "arguments": {…}}</function_call>`, the tools
    /// listed by their model-facing names.
    #[default]
    FunctionCall,
    /// A fenced JSON block `{"type": "use_mcp_tool", "server_name": …,
    /// "tool_name": …, "arguments": {…}}`, the tools listed grouped by server.
    UseMcpTool,
}

impl ThinkingParam {
    /// `Auto` resolved for a server at `base_url`.
    pub fn resolve(self, base_url: &str) -> Self {
        if self != Self::Auto {
            return self;
        }
        let host = url::Url::parse(base_url).ok().and_then(|u| u.host_str().map(str::to_ascii_lowercase));
        let on = |domain: &str| host.as_deref().is_some_and(|h| h == domain || h.ends_with(&format!(".{domain}")));
        if ["deepseek.com", "volces.com", "bigmodel.cn", "z.ai"].iter().any(|d| on(d)) {
            Self::ThinkingType
        } else if ["aliyuncs.com", "siliconflow.cn", "siliconflow.com"].iter().any(|d| on(d)) {
            Self::EnableThinking
        } else {
            Self::ReasoningEffort
        }
    }
}

/// Which API a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// Any OpenAI-compatible API: OpenAI, DeepSeek, Doubao/Ark, Ollama, vLLM, llama.cpp server.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages API.
    Anthropic,
    /// Google Gemini API.
    Gemini,
}

/// A model provider the user has configured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct ProviderProfile {
    /// Unique name, e.g. `openai` or `local-ollama`.
    pub name: String,
    /// The API it speaks.
    pub kind: ProviderKind,
    /// Base URL, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Model used when none is chosen.
    pub default_model: String,
    /// Models the user picks from.
    #[serde(default)]
    pub models: Vec<String>,
    /// Extra HTTP headers sent with every request.
    #[serde(default)]
    pub headers: BTreeMap<String, ValueSource>,
    /// Name of the secret holding the API key, if the provider needs one.
    #[serde(default)]
    pub api_key: Option<String>,
    /// Whether the model calls tools natively; otherwise prompt-based tool calling is used.
    #[serde(default = "yes")]
    pub native_tools: bool,
    /// The call format taught when tools are not native.
    #[serde(default)]
    pub prompt_tool_format: PromptToolFormat,
    /// Context window in tokens, the user's setting for every model of the profile.
    #[serde(default)]
    pub context_window: Option<u32>,
    /// The windows the provider's model list states, by model (kept when the provider is tested).
    #[serde(default)]
    pub listed_windows: BTreeMap<String, u32>,
    /// How an OpenAI-compatible server is asked to think, or not.
    #[serde(default)]
    pub thinking: ThinkingParam,
}

impl ProviderProfile {
    /// An OpenAI-compatible provider at `base_url` with native tool calling and
    /// nothing else set (no key, headers or model list).
    pub fn openai_compatible(name: &str, base_url: String, default_model: &str) -> Self {
        Self {
            name: name.to_owned(),
            kind: ProviderKind::OpenAi,
            base_url,
            default_model: default_model.to_owned(),
            models: Vec::new(),
            headers: BTreeMap::new(),
            api_key: None,
            native_tools: true,
            prompt_tool_format: PromptToolFormat::FunctionCall,
            context_window: None,
            listed_windows: BTreeMap::new(),
            thinking: ThinkingParam::Auto,
        }
    }
}

fn yes() -> bool {
    true
}

/// Approval mode for tool calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Ask the user before each call.
    #[default]
    Ask,
    /// Run without asking.
    Allow,
    /// Never run.
    Deny,
}

/// Time limits for one server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Timeouts {
    /// Seconds to start and initialise.
    #[serde(default = "default_startup")]
    pub startup_secs: u64,
    /// Seconds a tool call may go without a response or progress.
    #[serde(default = "default_call")]
    pub call_secs: u64,
}

fn default_startup() -> u64 {
    30
}

fn default_call() -> u64 {
    60
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { startup_secs: default_startup(), call_secs: default_call() }
    }
}

/// How to reach an MCP server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TransportConfig {
    /// A child process speaking JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        /// Added to the user's login environment (never replacing it).
        #[serde(default)]
        env: BTreeMap<String, ValueSource>,
        #[serde(default)]
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP (MCP 2025-03-26 and later).
    StreamableHttp {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, ValueSource>,
    },
    /// Legacy HTTP+SSE (MCP 2024-11-05).
    Sse {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, ValueSource>,
    },
    /// Only a URL was given: try streamable HTTP, fall back to SSE.
    Auto {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, ValueSource>,
    },
    /// Served inside Patchbay (its built-in tools, attached with
    /// `McpRegistry::attach_in_process`); never read from or written to a
    /// configuration file.
    #[serde(skip)]
    InProcess,
}

/// The algorithm that signs a `private_key_jwt` client assertion (RFC 7523).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub enum JwtAlgorithm {
    /// ECDSA with P-256 and SHA-256.
    #[default]
    ES256,
    /// ECDSA with P-384 and SHA-384.
    ES384,
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    RS256,
    /// RSASSA-PKCS1-v1_5 with SHA-384.
    RS384,
    /// RSASSA-PKCS1-v1_5 with SHA-512.
    RS512,
}

/// How an OAuth client proves itself at the token endpoint. The material is
/// always a secret-store reference once saved (never plain text in SQLite).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "method", rename_all = "snake_case")]
pub enum ClientKey {
    /// A client secret, sent as HTTP Basic (`client_secret_basic`) or in the
    /// form (`client_secret_post`), whichever the authorization server offers.
    Secret { secret: ValueSource },
    /// A private key in PEM (PKCS#8 EC, or RSA) signing a JWT assertion (`private_key_jwt`).
    PrivateKey {
        pem: ValueSource,
        #[serde(default)]
        algorithm: JwtAlgorithm,
    },
}

impl ClientKey {
    /// The field that holds the key material (`secret` or `pem`) and its value.
    pub fn material(&self) -> (&'static str, &ValueSource) {
        match self {
            Self::Secret { secret } => ("secret", secret),
            Self::PrivateKey { pem, .. } => ("pem", pem),
        }
    }

    /// [`Self::material`], to change it.
    pub fn material_mut(&mut self) -> (&'static str, &mut ValueSource) {
        match self {
            Self::Secret { secret } => ("secret", secret),
            Self::PrivateKey { pem, .. } => ("pem", pem),
        }
    }

    /// The key of its secret-store entry under the server (`mcp/<server>/<key>`).
    pub fn secret_key(&self) -> &'static str {
        match self {
            Self::Secret { .. } => "oauth_client_secret",
            Self::PrivateKey { .. } => "oauth_private_key",
        }
    }
}

/// OAuth client credentials for a remote server (the `client_credentials`
/// grant of MCP's SEP-1046): Patchbay gets its tokens from the server's
/// authorization server without a browser, at every start and again when the
/// server refuses a token, for a client registered there beforehand.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ClientCredentials {
    /// The client id the authorization server issued.
    pub client_id: String,
    /// How the client authenticates.
    pub key: ClientKey,
    /// Scopes to ask for; empty asks for none (the server's default).
    #[serde(default)]
    pub scopes: Vec<String>,
}

/// One configured MCP server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct McpServerConfig {
    /// Unique name; also the prefix of its tools' model-facing names.
    pub name: String,
    /// The name shown for it where it differs from `name` (RAGFlow's `name`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// How to reach it.
    pub transport: TransportConfig,
    /// Whether it starts with the app.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Start and call time limits.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// Approval mode for tools without an override.
    #[serde(default)]
    pub approval: ApprovalMode,
    /// Per-tool approval overrides, by the server's own tool name.
    #[serde(default)]
    pub tool_approval: BTreeMap<String, ApprovalMode>,
    /// Tools hidden from the model.
    #[serde(default)]
    pub disabled_tools: BTreeSet<String>,
    /// Tools always sent to the model with their definitions, also when the
    /// turn finds the others through tool search (see `agent::tool_search`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub pinned_tools: BTreeSet<String>,
    /// Whether the server sees the shared roots (`roots/list`); off (the
    /// default), it gets an empty list. Off by default because some servers
    /// (server-filesystem) work in the roots *instead of* the folders their
    /// arguments name: an imported config keeps working as it did elsewhere.
    #[serde(default)]
    pub share_roots: bool,
    /// Whether its tools that claim to only read (`readOnlyHint`) run without
    /// asking when its approval is "ask". Off by default, for every server:
    /// annotations are the server's claims, and only the user can trust them.
    #[serde(default)]
    pub read_only_auto_allow: bool,
    /// Authorization without a browser, for a remote server: the OAuth
    /// client-credentials grant. `None`: the server's own sign-in, when it asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_credentials: Option<ClientCredentials>,
    /// What it may read, write and reach, and how often it may be called
    /// (see [`super::policy`]); empty: the global default, derived from its arguments.
    #[serde(default, skip_serializing_if = "Policy::is_default")]
    pub policy: Policy,
    /// Fields from an imported config that Patchbay does not interpret, kept for export.
    #[serde(default)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

impl TransportConfig {
    /// The configured values that may name secrets, with their group: a stdio
    /// server's `env`, a remote server's `headers`; none for in-process servers.
    pub fn values(&self) -> Option<(&'static str, &BTreeMap<String, ValueSource>)> {
        match self {
            Self::Stdio { env, .. } => Some(("env", env)),
            Self::StreamableHttp { headers, .. } | Self::Sse { headers, .. } | Self::Auto { headers, .. } => {
                Some(("headers", headers))
            }
            Self::InProcess => None,
        }
    }

    /// [`Self::values`], to change them.
    pub fn values_mut(&mut self) -> Option<(&'static str, &mut BTreeMap<String, ValueSource>)> {
        match self {
            Self::Stdio { env, .. } => Some(("env", env)),
            Self::StreamableHttp { headers, .. } | Self::Sse { headers, .. } | Self::Auto { headers, .. } => {
                Some(("headers", headers))
            }
            Self::InProcess => None,
        }
    }
}

impl McpServerConfig {
    /// Keeps what the user set in Patchbay for `stored` (time limits, approvals, switched-off
    /// tools, shared roots) when a new shape of the same server (an import, a bundle's update)
    /// cannot hold it. Whether it is enabled and its security policy are the caller's to keep.
    pub fn keep_user_settings(&mut self, stored: &McpServerConfig) {
        self.timeouts = stored.timeouts;
        self.approval = stored.approval;
        self.tool_approval = stored.tool_approval.clone();
        self.disabled_tools = stored.disabled_tools.clone();
        self.pinned_tools = stored.pinned_tools.clone();
        self.share_roots = stored.share_roots;
        self.read_only_auto_allow = stored.read_only_auto_allow;
    }

    /// Every configured value that may name a secret, with its field
    /// (`env.TOKEN`, `headers.Authorization`, `client_credentials.secret`).
    pub fn secret_fields(&self) -> Vec<(String, &ValueSource)> {
        let mut fields: Vec<(String, &ValueSource)> = match self.transport.values() {
            Some((group, values)) => values.iter().map(|(k, v)| (format!("{group}.{k}"), v)).collect(),
            None => Vec::new(),
        };
        if let Some(credentials) = &self.client_credentials {
            let (field, value) = credentials.key.material();
            fields.push((format!("client_credentials.{field}"), value));
        }
        fields
    }

    /// [`Self::secret_fields`], to change them.
    pub fn secret_fields_mut(&mut self) -> Vec<(String, &mut ValueSource)> {
        let mut fields: Vec<(String, &mut ValueSource)> = match self.transport.values_mut() {
            Some((group, values)) => values.iter_mut().map(|(k, v)| (format!("{group}.{k}"), v)).collect(),
            None => Vec::new(),
        };
        if let Some(credentials) = &mut self.client_credentials {
            let (field, value) = credentials.key.material_mut();
            fields.push((format!("client_credentials.{field}"), value));
        }
        fields
    }

    /// What is wrong with its client credentials, as (field, reason): they
    /// belong to a remote server and need a client id and key material.
    pub fn client_credential_problems(&self) -> Vec<(String, &'static str)> {
        let Some(credentials) = &self.client_credentials else { return Vec::new() };
        let mut problems = Vec::new();
        if matches!(self.transport, TransportConfig::Stdio { .. }) {
            problems.push((
                "client_credentials".to_owned(),
                "client credentials are for remote servers; a stdio server has no sign-in",
            ));
        }
        if credentials.client_id.trim().is_empty() {
            problems.push(("client_credentials.client_id".to_owned(), "the client id is empty"));
        }
        match credentials.key.material() {
            (field, ValueSource::Plain(text)) if text.is_empty() => {
                problems.push((format!("client_credentials.key.{field}"), "empty"))
            }
            (field, ValueSource::Env(_)) => problems.push((
                format!("client_credentials.key.{field}"),
                "key material is kept in the keyring, never read from the environment",
            )),
            _ => {}
        }
        problems
    }

    /// The environment variables its values read when it starts, each with its
    /// field (`headers.Authorization`), for the import's preview.
    pub fn environment_reads(&self) -> Vec<(String, String)> {
        self.secret_fields()
            .into_iter()
            .filter_map(|(field, value)| match value {
                ValueSource::Env(text) => Some((field, text)),
                _ => None,
            })
            .flat_map(|(field, text)| {
                super::env_refs::variables(text).into_iter().map(move |v| (field.clone(), v.to_owned()))
            })
            .collect()
    }

    /// A stdio server with defaults for everything else.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: &[&str]) -> Self {
        Self::with_transport(
            name,
            TransportConfig::Stdio {
                command: command.into(),
                args: args.iter().map(|a| (*a).to_owned()).collect(),
                env: BTreeMap::new(),
                cwd: None,
            },
        )
    }

    /// A server reached over `transport`, with defaults for everything else.
    pub fn with_transport(name: impl Into<String>, transport: TransportConfig) -> Self {
        Self {
            name: name.into(),
            title: None,
            transport,
            enabled: true,
            timeouts: Timeouts::default(),
            approval: ApprovalMode::default(),
            tool_approval: BTreeMap::new(),
            disabled_tools: BTreeSet::new(),
            pinned_tools: BTreeSet::new(),
            share_roots: false,
            read_only_auto_allow: false,
            client_credentials: None,
            policy: Policy::default(),
            extra: serde_json::Map::new(),
        }
    }
}
