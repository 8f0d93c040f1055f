//! Language-model providers behind one [`Provider`] trait.
//!
//! The turn loop (`crate::agent`) speaks only the neutral types in
//! [`types`]: a [`ChatRequest`] in, a stream of [`StreamEvent`]s out. Each
//! provider module converts to and from its wire format (OpenAI-compatible
//! through async-openai, Anthropic Messages, Gemini, and prompt-based tool
//! calling for models without native tools).

pub mod anthropic;
pub mod gemini;
mod http;
pub mod openai;
pub mod probe;
pub mod prompt_tools;
pub mod types;
mod windows;

pub use anthropic::AnthropicProvider;
pub use gemini::GeminiProvider;
pub use http::{DEFAULT_IDLE_TIMEOUT, HttpSettings};
pub use openai::OpenAiProvider;
pub use prompt_tools::PromptTools;
pub use types::{
    ChatMessage, ChatRequest, ContentPart, FinishReason, Provider, ReasoningEffort, Sampling, StreamEvent, ToolCall,
    ToolOrigin, ToolSpec, Usage,
};
pub use windows::{OPENAI_MAX_TOOLS, context_window, known_context_window, tool_limit};

use std::collections::BTreeMap;
use std::time::Duration;

/// Kept here too: the OpenAI-compatible provider reads it, the provider profile owns it.
pub use crate::config::ThinkingParam;
use crate::config::{ProviderKind, ProviderProfile, ValueSource};
use crate::secrets::{SecretStore, SecretValue};

/// Errors from a provider, by what the caller can do about them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The API key is missing, wrong or lacks permission (HTTP 401/403).
    #[error("{provider} rejected the credentials (HTTP {status}): {message}")]
    Auth { provider: String, status: u16, message: String },
    /// Rate limited (HTTP 429); `retry_after` when the server said.
    #[error("{provider} is rate limiting requests: {message}")]
    RateLimited { provider: String, retry_after: Option<Duration>, message: String },
    /// The model or endpoint does not exist (HTTP 404).
    #[error("{provider}: not found (HTTP 404): {message}")]
    NotFound { provider: String, message: String },
    /// The server failed (HTTP 5xx) or answered with another error status.
    #[error("{provider} answered HTTP {status}: {message}")]
    Http { provider: String, status: u16, message: String },
    /// The server could not be reached (DNS, connection refused, TLS).
    #[error("cannot reach {provider} at {url}: {message}")]
    Connect { provider: String, url: String, message: String },
    /// No data arrived within the time limit.
    #[error("{provider} sent nothing for {after:?}")]
    Timeout { provider: String, after: Duration },
    /// The server answered something that is not what was asked for (a model list
    /// that is not one, a page instead of JSON): `what` was asked, `why` it is not it.
    #[error("{provider}: the answer from {url} is not {what}: {why}")]
    Unreadable { provider: String, url: String, what: &'static str, why: String },
    /// The stream broke or carried something that is not the expected format.
    #[error("{provider} sent an invalid stream: {message}")]
    InvalidStream { provider: String, message: String },
    /// The request could not be built (bad configuration, unsupported content).
    #[error("cannot build the request for {provider}: {message}")]
    Request { provider: String, message: String },
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// Builds the provider a profile describes: resolves its API key and header
/// secrets from `secrets`, picks the wire format by [`ProviderKind`], and
/// wraps it in [`PromptTools`] when the profile's model has no native tools.
pub fn from_profile(profile: &ProviderProfile, secrets: &dyn SecretStore) -> Result<Box<dyn Provider>, LlmError> {
    build(profile, settings_from_profile(profile, secrets)?)
}

/// Builds the provider for `profile` from settings whose secrets are already
/// resolved (for example a key taken from the environment).
pub fn build(profile: &ProviderProfile, settings: HttpSettings) -> Result<Box<dyn Provider>, LlmError> {
    let provider: Box<dyn Provider> = match profile.kind {
        ProviderKind::OpenAi => Box::new(OpenAiProvider::new(settings)?.with_thinking(profile.thinking)),
        ProviderKind::Anthropic => Box::new(AnthropicProvider::new(settings)?),
        ProviderKind::Gemini => Box::new(GeminiProvider::new(settings)?),
    };
    Ok(if profile.native_tools { provider } else { Box::new(PromptTools::new(provider, profile.prompt_tool_format)) })
}

/// A provider's header may not read the environment (only an imported MCP server's value does).
pub(crate) fn env_header(provider: &str, header: &str) -> LlmError {
    LlmError::Request {
        provider: provider.to_owned(),
        message: format!("header {header} reads the environment; a provider's header is plain text or a secret"),
    }
}

/// The connection settings of a profile, secrets resolved.
pub fn settings_from_profile(profile: &ProviderProfile, secrets: &dyn SecretStore) -> Result<HttpSettings, LlmError> {
    let secret = |name: &str, what: &str| -> Result<String, LlmError> {
        let request = |message: String| LlmError::Request { provider: profile.name.clone(), message };
        match secrets.get(name) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(request(format!("{what} is the secret {name:?}, which is not set"))),
            Err(e) => Err(request(format!("{what}: {e}"))),
        }
    };
    let api_key = profile.api_key.as_deref().map(|name| secret(name, "the API key")).transpose()?.map(SecretValue::new);
    let mut headers = BTreeMap::new();
    for (name, value) in &profile.headers {
        let value = match value {
            ValueSource::Plain(v) => v.clone(),
            ValueSource::Secret(s) => secret(s, &format!("header {name}"))?,
            ValueSource::Env(_) => return Err(env_header(&profile.name, name)),
        };
        headers.insert(name.clone(), SecretValue::new(value));
    }
    let mut settings = HttpSettings::new(profile.name.clone(), profile.base_url.clone());
    settings.api_key = api_key;
    settings.headers = headers;
    Ok(settings)
}

/// A text stand-in for content a format cannot carry.
pub(crate) fn describe_part(part: &ContentPart) -> String {
    match part {
        ContentPart::Text { text } => text.clone(),
        ContentPart::Image { mime_type, .. } | ContentPart::Audio { mime_type, .. } => {
            format!("[{mime_type} content omitted: this model cannot receive it here]")
        }
        ContentPart::ResourceLink { uri, name, mime_type } => {
            let name = name.as_deref().unwrap_or(uri);
            match mime_type {
                Some(m) => format!("[resource {name} ({m}): {uri}]"),
                None => format!("[resource {name}: {uri}]"),
            }
        }
    }
}

/// Tool-call arguments as a JSON object, for formats that need structured
/// input: `{}` when empty, the raw text under `_raw` when it is not an object.
pub(crate) fn arguments_object(arguments: &str) -> serde_json::Value {
    if arguments.trim().is_empty() {
        return serde_json::json!({});
    }
    match serde_json::from_str::<serde_json::Value>(arguments) {
        Ok(v @ serde_json::Value::Object(_)) => v,
        _ => serde_json::json!({ "_raw": arguments }),
    }
}

/// Appends `items` to the `field` array of the last message in `out` when that
/// message has `role`, else starts a new message: Anthropic and Gemini both
/// require consecutive turns of one role to be merged.
fn push_merged(out: &mut Vec<serde_json::Value>, field: &str, role: &str, mut items: Vec<serde_json::Value>) {
    if items.is_empty() {
        return;
    }
    if let Some(last) = out.last_mut().filter(|m| m["role"] == role)
        && let Some(existing) = last[field].as_array_mut()
    {
        existing.append(&mut items);
        return;
    }
    out.push(serde_json::json!({ "role": role, field: items }));
}
