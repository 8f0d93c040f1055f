//! Requests a server sends to the host, answered by the app: **sampling**
//! (`sampling/createMessage`, a model completion the user reviews first),
//! **elicitation** (`elicitation/create`, a form or a URL the user opens) and
//! **roots** (`roots/list`, the folders the host shares).
//!
//! Sampling and elicitation go through one [`ServerRequests`] hook: the desktop
//! shows a review dialog, the CLI asks on the terminal. A registry advertises
//! the capabilities its hook [`supports`](ServerRequests::supports); the default
//! [`DenyAll`] advertises none. Roots are a list the registry holds
//! ([`McpRoot`]), advertised always (an empty list is a valid answer), and a
//! change is announced with `notifications/roots/list_changed`.
//!
//! The types here are Patchbay's own, serialisable for the UI; [`sample_with`]
//! runs an approved sampling request on a chat [`Provider`].

use std::path::Path;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::llm::{ChatMessage, ChatRequest, ContentPart, FinishReason, LlmError, Provider, Sampling, StreamEvent};

/// Who wrote a sampling message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SamplingRole {
    User,
    Assistant,
}

/// One message of a sampling request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    pub role: SamplingRole,
    /// Text, images and audio; other blocks (tool use, tool results) as JSON text.
    pub parts: Vec<ContentPart>,
}

impl SamplingMessage {
    /// The message as text for a person to review: text as is, media and
    /// links as `[mime type]` / `[uri]`, one part per line.
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .map(|p| match p {
                ContentPart::Text { text } => text.clone(),
                ContentPart::Image { mime_type, .. } | ContentPart::Audio { mime_type, .. } => format!("[{mime_type}]"),
                ContentPart::ResourceLink { uri, .. } => format!("[{uri}]"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A server asks for a model completion (`sampling/createMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingRequest {
    /// The server that asks.
    pub server: String,
    pub messages: Vec<SamplingMessage>,
    pub system_prompt: Option<String>,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub stop_sequences: Vec<String>,
    /// Model names the server prefers, best first (hints only).
    pub model_hints: Vec<String>,
}

/// The completion sent back to the server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SamplingReply {
    /// The model that answered.
    pub model: String,
    pub text: String,
    /// `endTurn`, `maxTokens`, `stopSequence`, or what the provider said.
    pub stop_reason: Option<String>,
}

/// Why a sampling request was not answered; the server gets it as an error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{reason}")]
pub struct Refusal {
    pub reason: String,
}

impl Refusal {
    pub fn new(reason: impl Into<String>) -> Self {
        Self { reason: reason.into() }
    }
}

/// What a server asks the user for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ElicitationKind {
    /// Fill in a form: `schema` is a flat JSON Schema object of primitive fields.
    Form { schema: serde_json::Value },
    /// Open `url` in a browser (sign-in, payment) and say when done.
    Url { url: String, elicitation_id: String },
}

/// A server asks the user for input (`elicitation/create`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitationRequest {
    pub server: String,
    /// What the server wants and why.
    pub message: String,
    pub kind: ElicitationKind,
}

/// The user's answer to an elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ElicitationAnswer {
    /// Submitted: the form's values (an object), none for URL mode.
    Accept { content: Option<serde_json::Map<String, serde_json::Value>> },
    /// Said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// Which requests a hook can answer; only these are advertised to servers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HookSupport {
    pub sampling: bool,
    pub elicitation_form: bool,
    pub elicitation_url: bool,
    /// The host shows tools' views (MCP Apps): a window, not a terminal.
    pub views: bool,
}

impl HookSupport {
    /// Every request kind.
    pub const ALL: Self = Self { sampling: true, elicitation_form: true, elicitation_url: true, views: true };
}

/// Answers the requests servers send to the host. Calls may overlap (several
/// servers, several conversations); `ct` fires when the server cancels the
/// request or its connection closes. The registry bounds each call with
/// [`RegistryOptions::hook_timeout`](super::RegistryOptions::hook_timeout).
#[async_trait::async_trait]
pub trait ServerRequests: Send + Sync {
    /// The request kinds this hook answers (fixed for a connection's life:
    /// servers learn them at initialisation).
    fn supports(&self) -> HookSupport;

    /// Review a sampling request and run it, or refuse.
    async fn sample(&self, request: SamplingRequest, ct: CancellationToken) -> Result<SamplingReply, Refusal>;

    /// Ask the user.
    async fn elicit(&self, request: ElicitationRequest, ct: CancellationToken) -> ElicitationAnswer;
}

/// The default hook: advertises nothing, refuses sampling, declines elicitation.
#[derive(Debug, Clone, Copy, Default)]
pub struct DenyAll;

#[async_trait::async_trait]
impl ServerRequests for DenyAll {
    fn supports(&self) -> HookSupport {
        HookSupport::default()
    }

    async fn sample(&self, _request: SamplingRequest, _ct: CancellationToken) -> Result<SamplingReply, Refusal> {
        Err(Refusal::new("this host does not answer sampling requests"))
    }

    async fn elicit(&self, _request: ElicitationRequest, _ct: CancellationToken) -> ElicitationAnswer {
        ElicitationAnswer::Decline
    }
}

/// A folder (or other URI) the host shares with servers through `roots/list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpRoot {
    /// A `file://` URI.
    pub uri: String,
    pub name: Option<String>,
}

impl McpRoot {
    /// The root for a local folder, named after it. `path` should be absolute.
    pub fn from_path(path: &Path) -> Self {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let uri = reqwest::Url::from_file_path(path)
            .map(String::from)
            .unwrap_or_else(|()| format!("file://{}", path.display()));
        Self { uri, name }
    }
}

/// Runs an approved sampling request on `provider` with `model`, collecting the
/// streamed answer. Images and audio are passed on; the system prompt leads.
pub async fn sample_with(
    provider: &dyn Provider,
    model: &str,
    request: &SamplingRequest,
    ct: CancellationToken,
) -> Result<SamplingReply, LlmError> {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if let Some(system) = request.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        messages.push(ChatMessage::System { text: system.clone() });
    }
    for message in &request.messages {
        messages.push(match message.role {
            SamplingRole::User => ChatMessage::User { parts: message.parts.clone() },
            SamplingRole::Assistant => ChatMessage::Assistant {
                text: message
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        ContentPart::Text { text } => Some(text.as_str()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                reasoning: None,
                reasoning_signature: None,
                tool_calls: Vec::new(),
            },
        });
    }
    let chat = ChatRequest {
        model: model.to_owned(),
        messages,
        tools: Vec::new(),
        sampling: Sampling {
            temperature: request.temperature,
            max_tokens: Some(request.max_tokens),
            ..Sampling::default()
        },
    };
    let mut stream = provider.stream(chat, ct.clone()).await?;
    let mut text = String::new();
    let mut stop_reason = None;
    loop {
        let event = tokio::select! {
            () = ct.cancelled() => return Err(LlmError::Cancelled),
            event = stream.next() => event,
        };
        match event {
            None => break,
            Some(Err(e)) => return Err(e),
            Some(Ok(StreamEvent::TextDelta { text: delta })) => text.push_str(&delta),
            Some(Ok(StreamEvent::Finish { reason })) => {
                stop_reason = Some(match reason {
                    FinishReason::Stop => "endTurn".to_owned(),
                    FinishReason::Length => "maxTokens".to_owned(),
                    FinishReason::ToolCalls => "toolUse".to_owned(),
                    FinishReason::ContentFilter => "contentFilter".to_owned(),
                    FinishReason::Other(other) => other,
                });
            }
            Some(Ok(_)) => {}
        }
    }
    Ok(SamplingReply { model: model.to_owned(), text, stop_reason })
}

#[cfg(test)]
mod tests {
    use futures::stream::{self, BoxStream};
    use std::sync::Mutex;

    use super::*;

    /// Answers every request with fixed deltas and keeps the request.
    struct Canned {
        seen: Mutex<Option<ChatRequest>>,
    }

    #[async_trait::async_trait]
    impl Provider for Canned {
        fn name(&self) -> &str {
            "canned"
        }

        async fn stream(
            &self,
            request: ChatRequest,
            _cancel: CancellationToken,
        ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError> {
            *self.seen.lock().unwrap() = Some(request);
            let events = vec![
                Ok(StreamEvent::TextDelta { text: "Hello, ".into() }),
                Ok(StreamEvent::TextDelta { text: "server.".into() }),
                Ok(StreamEvent::Finish { reason: FinishReason::Length }),
            ];
            Ok(Box::pin(stream::iter(events)))
        }
    }

    #[tokio::test]
    async fn sampling_runs_on_the_provider_with_the_system_prompt_first() {
        let provider = Canned { seen: Mutex::new(None) };
        let request = SamplingRequest {
            server: "s".into(),
            messages: vec![
                SamplingMessage { role: SamplingRole::User, parts: vec![ContentPart::text("hi")] },
                SamplingMessage { role: SamplingRole::Assistant, parts: vec![ContentPart::text("yes?")] },
            ],
            system_prompt: Some("Be brief.".into()),
            max_tokens: 42,
            temperature: Some(0.5),
            stop_sequences: Vec::new(),
            model_hints: Vec::new(),
        };
        let reply = sample_with(&provider, "m1", &request, CancellationToken::new()).await.unwrap();
        assert_eq!(
            reply,
            SamplingReply { model: "m1".into(), text: "Hello, server.".into(), stop_reason: Some("maxTokens".into()) }
        );
        let seen = provider.seen.lock().unwrap().clone().unwrap();
        assert_eq!(seen.sampling.max_tokens, Some(42));
        assert_eq!(seen.sampling.temperature, Some(0.5));
        assert_eq!(seen.messages[0], ChatMessage::System { text: "Be brief.".into() });
        assert!(matches!(&seen.messages[2], ChatMessage::Assistant { text, .. } if text == "yes?"));
    }

    #[test]
    fn a_folder_becomes_a_file_uri_named_after_it() {
        let root = McpRoot::from_path(Path::new("/home/ada/My Notes"));
        assert_eq!(root.uri, "file:///home/ada/My%20Notes");
        assert_eq!(root.name.as_deref(), Some("My Notes"));
    }
}
