//! How an answer is read, shared by the wire's transports: the lane's answer
//! and its error, the in-order handling of a call's notifications, and
//! [`typed_answer`], which reads a tool call's answer in one pass and a custom
//! request's answer as the server's own JSON.
//!
//! **rmcp seam (lossless custom-request answers).** rmcp reads every answer
//! through its generic parse, which reads a custom request's answer as the
//! first of its result types that fits (a `tools/list` answer as its
//! `ListToolsResult`, dropping the fields its types lack). [`Reads::Raw`] is
//! the one place that reads it whole instead; it goes when rmcp keeps a custom
//! answer as it came.

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, CustomResult, JsonRpcMessage, JsonRpcVersion2_0, RequestId,
    ServerNotification, ServerResult,
};
use rmcp::service::{InboundStreamOrigin, ServiceError};
use serde::Deserialize;

/// An answer to a lane request, as rmcp's service loop would give it.
pub(crate) type Answer = Result<ServerResult, LaneError>;

/// How the answer to a lane request is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reads {
    /// As rmcp reads any message.
    Rmcp,
    /// As a `CallToolResult`, in one pass: the calls that matter for speed,
    /// and whose results can be large.
    ToolCall,
    /// As the server's own JSON ([`CustomResult`]): a custom request's answer,
    /// with every field the server sent.
    Raw,
}

impl Reads {
    /// How the answer to `message` is read.
    pub(crate) fn of(message: &ClientJsonRpcMessage) -> Self {
        match message {
            JsonRpcMessage::Request(request) => match request.request {
                ClientRequest::CallToolRequest(_) => Reads::ToolCall,
                ClientRequest::CustomRequest(_) => Reads::Raw,
                _ => Reads::Rmcp,
            },
            _ => Reads::Rmcp,
        }
    }
}

/// `data` as a response read as `reads` says: far cheaper than rmcp's reading
/// of any message for a tool call (rmcp buffers it and tries each kind of
/// result in turn), and lossless for a custom request. `None` when it is not
/// such a response (or `reads` is [`Reads::Rmcp`]); the caller checks that the
/// id is one that reads so, and otherwise reads `data` as rmcp does.
pub(crate) fn typed_answer(data: &[u8], reads: Reads) -> Option<(RequestId, ServerResult)> {
    #[derive(Deserialize)]
    struct Response<R> {
        #[serde(rename = "jsonrpc")]
        _jsonrpc: JsonRpcVersion2_0,
        id: RequestId,
        result: R,
    }
    match reads {
        Reads::Rmcp => None,
        Reads::ToolCall => {
            let response: Response<CallToolResult> = serde_json::from_slice(data).ok()?;
            Some((response.id, ServerResult::CallToolResult(response.result)))
        }
        Reads::Raw => {
            let response: Response<serde_json::Value> = serde_json::from_slice(data).ok()?;
            Some((response.id, ServerResult::CustomResult(CustomResult::new(response.result))))
        }
    }
}

/// Why a lane request got no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LaneError {
    /// As rmcp's service loop would report it: the connection closed, the
    /// server answered with an error, a POST failed.
    #[error(transparent)]
    Service(#[from] ServiceError),
    /// The server's response to a POST could not be read as the answer.
    #[error("{0}")]
    Unreadable(String),
}

/// Handles a call's notifications (progress, logs) where they are read, in
/// the order the server sent them: rmcp hands each notification to a task of
/// its own, and the newest task often runs first.
pub(crate) trait InOrder: Send + Sync + 'static {
    /// Whether `notification` was handled (else rmcp gets it). `origin`: the
    /// request whose HTTP response carried it.
    fn handle(&self, notification: &ServerNotification, origin: Option<&InboundStreamOrigin>) -> bool;
}
