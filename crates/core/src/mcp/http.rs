//! Streamable HTTP answers over the size limit fail their own call, as over
//! stdio ([`super::frame`]).
//!
//! rmcp's reqwest client refuses an SSE event or a JSON body larger than
//! 16 MiB (the same as [`MAX_MESSAGE_BYTES`]) as soon as it crosses the limit,
//! without keeping more. But it reports that as the response stream failing,
//! so the call it answered ends with a generic "stream closed before its final
//! response". [`BoundedHttp`] wraps any [`StreamableHttpClient`] and puts a
//! JSON-RPC error for the request in place of the refused answer:
//! [`TOO_LARGE_CODE`](super::frame::TOO_LARGE_CODE) with the limit, which
//! [`McpError::from_service`](super::McpError) turns into
//! [`McpError::MessageTooLarge`](super::McpError::MessageTooLarge). The session
//! and the server's other calls are untouched.

use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use serde_json::Value;
use sse_stream::Sse;

use super::frame::{MAX_MESSAGE_BYTES, too_large_answer};

/// The start of rmcp's message for an SSE event over its limit. Its error type
/// is private, so the message is what can be matched; `tests/mcp_oversized_http.rs`
/// fails if rmcp rewords it.
const EVENT_TOO_LARGE: &str = "SSE event exceeded the maximum size";

/// A [`StreamableHttpClient`] whose oversized answers become errors for the
/// requests they answered; everything else passes through unchanged.
#[derive(Clone)]
pub struct BoundedHttp<C>(pub C);

/// The id of `message` when it is a request (only requests get answers).
fn request_id(message: &ClientJsonRpcMessage) -> Option<Value> {
    match message {
        ClientJsonRpcMessage::Request(request) => serde_json::to_value(&request.id).ok(),
        _ => None,
    }
}

fn is_event_too_large(error: &SseError) -> bool {
    matches!(error, SseError::Body(body) if body.to_string().starts_with(EVENT_TOO_LARGE))
}

/// The answer to `id` replaced by the too-large error.
fn too_large_message(id: Value, limit: usize) -> Option<ServerJsonRpcMessage> {
    serde_json::from_value(too_large_answer(id, limit, None)).ok()
}

/// `stream` with its first refused event replaced by the too-large error for
/// `id`; rmcp ends the stream after a refusal.
fn answer_refusal(
    stream: BoxStream<'static, Result<Sse, SseError>>,
    id: Value,
    limit: usize,
) -> BoxStream<'static, Result<Sse, SseError>> {
    let mut id = Some(id);
    stream
        .map(move |item| match item {
            Err(error) if is_event_too_large(&error) => {
                let Some(id) = id.take() else { return Err(error) };
                tracing::warn!(limit, "dropped an oversized answer from an MCP server over HTTP");
                Ok(Sse::default().event("message").data(too_large_answer(id, limit, None).to_string()))
            }
            other => other,
        })
        .boxed()
}

impl<C: StreamableHttpClient + Sync> StreamableHttpClient for BoundedHttp<C> {
    type Error = C::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            MAX_MESSAGE_BYTES,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let id = request_id(&message);
        let response = self
            .0
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await;
        let Some(id) = id else { return response };
        match response {
            Ok(StreamableHttpPostResponse::Sse(stream, session)) => {
                Ok(StreamableHttpPostResponse::Sse(answer_refusal(stream, id, max_sse_event_size), session))
            }
            Err(StreamableHttpError::ResponseBodyTooLarge { max_size }) => {
                tracing::warn!(limit = max_size, "dropped an oversized JSON answer from an MCP server over HTTP");
                match too_large_message(id, max_size) {
                    Some(answer) => Ok(StreamableHttpPostResponse::Json(answer, None)),
                    None => Err(StreamableHttpError::ResponseBodyTooLarge { max_size }),
                }
            }
            other => other,
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_event_becomes_the_too_large_error_for_its_request() {
        let refusal = SseError::Body(format!("{EVENT_TOO_LARGE} of 16 bytes").into());
        let source = futures::stream::iter([Ok(Sse::default().data("")), Err(refusal)]).boxed();
        let items: Vec<_> = answer_refusal(source, Value::from(7), 16).collect().await;
        assert_eq!(items.len(), 2);
        let answer: Value = serde_json::from_str(items[1].as_ref().unwrap().data.as_deref().unwrap()).unwrap();
        assert_eq!(answer["id"], 7);
        let message: ServerJsonRpcMessage = serde_json::from_value(answer).unwrap();
        let ServerJsonRpcMessage::Error(error) = message else { panic!("{message:?}") };
        assert_eq!(super::super::frame::too_large(&error.error), Some((16, None)));
    }

    #[tokio::test]
    async fn other_stream_errors_pass_through() {
        let source = futures::stream::iter([Err(SseError::Body("connection reset".into()))]).boxed();
        let items: Vec<_> = answer_refusal(source, Value::from(1), 16).collect().await;
        assert!(matches!(&items[..], [Err(SseError::Body(_))]));
    }
}
