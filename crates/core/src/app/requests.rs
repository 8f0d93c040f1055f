//! Sampling and elicitation requests from servers, answered by the user.
//!
//! [`WindowRequests`] is the registry's [`ServerRequests`] hook in the app:
//! each request becomes a [`ServerRequestView`] sent through
//! [`AppEvent::ServerRequest`](super::AppEvent::ServerRequest) (the
//! window shows a dialog) and waits, keyed by a fresh id, until
//! [`App::respond_server_request`] answers it or the server cancels it. An
//! approved sampling request (possibly edited by the user) runs on the first
//! configured provider's default model.

use std::sync::{Arc, Weak};

use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::{App, AppError, AppEvent, Inner, lock};
use crate::agent::resolve_provider;
use crate::llm::ContentPart;
use crate::mcp::protocol::client::{sampling_request_json, sampling_result_json};
use crate::mcp::{
    ElicitationAnswer, ElicitationKind, ElicitationRequest, HookSupport, Refusal, SamplingMessage, SamplingReply,
    SamplingRequest, SamplingRole, ServerRequests, sample_with,
};

/// A message of a sampling request as the dialog shows (and edits) it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct TextMessage {
    /// `user` or `assistant`.
    pub role: String,
    pub text: String,
}

/// What the window is asked to show.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerRequestView {
    Sampling {
        id: String,
        server: String,
        messages: Vec<TextMessage>,
        system_prompt: Option<String>,
        max_tokens: u32,
        /// The model that answers once approved: `provider / model`.
        model: String,
        /// The models the server would prefer (hints only).
        model_hints: Vec<String>,
    },
    Elicitation {
        id: String,
        server: String,
        message: String,
        requested_schema: serde_json::Value,
    },
}

impl ServerRequestView {
    pub fn id(&self) -> &str {
        match self {
            Self::Sampling { id, .. } | Self::Elicitation { id, .. } => id,
        }
    }
}

/// A request shown and not yet answered: a window that opens (or reloads)
/// after it was sent lists it with [`App::waiting_server_requests`].
pub(super) struct Waiting {
    view: ServerRequestView,
    answer: oneshot::Sender<ServerRequestResponse>,
}

/// The user's answer.
#[derive(Debug, Clone, PartialEq, Deserialize, ts_rs::TS)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ServerRequestResponse {
    /// Run the sampling request with these (possibly edited) messages.
    ApproveSampling {
        messages: Vec<TextMessage>,
        system_prompt: Option<String>,
    },
    /// Submit the elicitation form (or confirm a URL was visited).
    Accept {
        content: serde_json::Map<String, serde_json::Value>,
    },
    Decline,
    Cancel,
}

/// The registry's hook: asks the window, waits for the answer.
struct WindowRequests {
    inner: Weak<Inner>,
}

impl WindowRequests {
    /// Shows `view` (made with the request's id) and waits for the user or `ct`.
    async fn ask(
        &self,
        view: impl FnOnce(String) -> ServerRequestView,
        ct: &CancellationToken,
    ) -> Option<ServerRequestResponse> {
        let inner = self.inner.upgrade()?;
        let id = uuid::Uuid::new_v4().to_string();
        let (answer, rx) = oneshot::channel();
        let view = view(id.clone());
        lock(&inner.server_requests).push(Waiting { view: view.clone(), answer });
        inner.events.report(AppEvent::ServerRequest(view));
        drop(inner);
        // However this ends (answered, cancelled, or dropped when the client's
        // own time limit gives up), the request waits no more.
        let _forget = Forget { inner: self.inner.clone(), id };
        tokio::select! {
            () = ct.cancelled() => None,
            answer = rx => answer.ok(),
        }
    }
}

/// Takes a request off the waiting list when dropped.
struct Forget {
    inner: Weak<Inner>,
    id: String,
}

impl Drop for Forget {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.upgrade() {
            lock(&inner.server_requests).retain(|w| w.view.id() != self.id);
            inner.events.report(AppEvent::ServerRequestEnded(std::mem::take(&mut self.id)));
        }
    }
}

#[async_trait::async_trait]
impl ServerRequests for WindowRequests {
    fn supports(&self) -> HookSupport {
        HookSupport::ALL
    }

    async fn sample(&self, request: SamplingRequest, ct: CancellationToken) -> Result<SamplingReply, Refusal> {
        let messages = request
            .messages
            .iter()
            .map(|m| TextMessage {
                role: if m.role == SamplingRole::User { "user" } else { "assistant" }.into(),
                text: m.text(),
            })
            .collect();
        let server = request.server.clone();
        let (system_prompt, max_tokens) = (request.system_prompt.clone(), request.max_tokens);
        // Which model would answer, said in the dialog; with none there is nothing to ask.
        let inner = self.inner.upgrade().ok_or_else(|| Refusal::new("Patchbay is closing"))?;
        let env = &inner.env;
        let resolved = resolve_provider(&inner.config, inner.secrets.as_ref(), None, &|k| env(k))
            .map_err(|e| Refusal::new(format!("no model to answer with: {e}")))?;
        drop(inner);
        let model = format!("{} / {}", resolved.profile.name, resolved.profile.default_model);
        let model_hints = request.model_hints.clone();
        let view =
            |id| ServerRequestView::Sampling { id, server, messages, system_prompt, max_tokens, model, model_hints };
        let answer = self.ask(view, &ct).await;
        let Some(ServerRequestResponse::ApproveSampling { messages, system_prompt }) = answer else {
            return Err(Refusal::new("the user declined the sampling request"));
        };
        let edited = SamplingRequest {
            messages: messages
                .into_iter()
                .map(|m| SamplingMessage {
                    role: if m.role == "assistant" { SamplingRole::Assistant } else { SamplingRole::User },
                    parts: vec![ContentPart::text(m.text)],
                })
                .collect(),
            system_prompt,
            ..request
        };
        let inner = self.inner.upgrade().ok_or_else(|| Refusal::new("Patchbay is closing"))?;
        let provider = resolved.build(inner.secrets.as_ref()).map_err(|e| Refusal::new(e.to_string()))?;
        let model = resolved.profile.default_model.clone();
        drop(inner);
        sample_with(provider.as_ref(), &model, &edited, ct).await.map_err(|e| Refusal::new(e.to_string()))
    }

    async fn elicit(&self, request: ElicitationRequest, ct: CancellationToken) -> ElicitationAnswer {
        let (message, schema) = match &request.kind {
            ElicitationKind::Form { schema } => (request.message.clone(), schema.clone()),
            ElicitationKind::Url { url, .. } => {
                (format!("{}\n\nOpen {url} in your browser, then continue.", request.message), serde_json::json!({}))
            }
        };
        let server = request.server.clone();
        let view = |id| ServerRequestView::Elicitation { id, server, message, requested_schema: schema };
        match self.ask(view, &ct).await {
            Some(ServerRequestResponse::Accept { content }) => match request.kind {
                ElicitationKind::Url { .. } => ElicitationAnswer::Accept { content: None },
                _ => ElicitationAnswer::Accept { content: Some(content) },
            },
            Some(ServerRequestResponse::Decline) => ElicitationAnswer::Decline,
            _ => ElicitationAnswer::Cancel,
        }
    }
}

impl App {
    /// A tool's view asks the model (MCP Apps `sampling/createMessage`, MCP
    /// `CreateMessageRequestParams` JSON): reviewed by the user as a server's
    /// sampling request, named after the view's server, then run on the same
    /// model. The answer is MCP `CreateMessageResult` JSON.
    pub async fn sample_for_view(
        &self,
        server: &str,
        params: serde_json::Value,
        cancel: CancellationToken,
    ) -> Result<serde_json::Value, AppError> {
        let request = sampling_request_json(&format!("{server} (its view)"), params).map_err(|e| {
            AppError::Invalid(format!("the view of {server} asked the model with unusable parameters: {e}"))
        })?;
        let reply = hook(&self.inner)
            .sample(request, cancel)
            .await
            .map_err(|refusal| AppError::Invalid(format!("sampling request refused: {}", refusal.reason)))?;
        sampling_result_json(reply)
            .map_err(|e| AppError::Invalid(format!("the model's answer to the view of {server}: {e}")))
    }

    /// The sampling and elicitation requests waiting for the user, oldest
    /// first: what a window shows when it opens after they were sent.
    pub fn waiting_server_requests(&self) -> Vec<ServerRequestView> {
        lock(&self.inner.server_requests).iter().map(|w| w.view.clone()).collect()
    }

    /// Answers a sampling or elicitation dialog.
    pub fn respond_server_request(&self, id: &str, response: ServerRequestResponse) -> Result<(), AppError> {
        let waiting = {
            let mut requests = lock(&self.inner.server_requests);
            let at = requests.iter().position(|w| w.view.id() == id);
            at.map(|at| requests.remove(at))
        };
        let waiting = waiting.ok_or_else(|| AppError::NotWaiting(format!("no server request {id} is waiting")))?;
        // The server may have given up meanwhile; then nobody listens and that is fine.
        let _ = waiting.answer.send(response);
        Ok(())
    }
}

/// The hook the app installs in its registry.
pub(super) fn hook(inner: &Arc<Inner>) -> Arc<dyn ServerRequests> {
    Arc::new(WindowRequests { inner: Arc::downgrade(inner) })
}
