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

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::service::ServiceError;
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use serde_json::Value;
use sse_stream::Sse;

use super::frame::{MAX_MESSAGE_BYTES, too_large_answer};
use super::lane::{HttpPost, PostFailure};

/// The start of rmcp's message for an SSE event over its limit. Its error type
/// is private, so the message is what can be matched; `tests/mcp_oversized_http.rs`
/// fails if rmcp rewords it.
const EVENT_TOO_LARGE: &str = "SSE event exceeded the maximum size";

/// A [`StreamableHttpClient`] whose oversized answers become errors for the
/// requests they answered; everything else passes through unchanged. It also
/// notes how rmcp posts in its session, so that the [`Lane`](super::lane::Lane)
/// can post the same way ([`HttpPost`]).
#[derive(Clone)]
pub(crate) struct BoundedHttp<C> {
    client: C,
    posted: Arc<Mutex<Option<Posted>>>,
}

/// What rmcp's last POST in the session carried besides its message.
#[derive(Clone)]
struct Posted {
    uri: Arc<str>,
    session_id: Option<Arc<str>>,
    auth_header: Option<String>,
    headers: HashMap<HeaderName, HeaderValue>,
}

impl<C> BoundedHttp<C> {
    pub(crate) fn new(client: C) -> Self {
        Self { client, posted: Arc::default() }
    }
}

/// Whether `message` is `initialize`, which is posted before the session exists.
fn is_initialize(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(request) if matches!(request.request, ClientRequest::InitializeRequest(_)))
}

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

impl<C: StreamableHttpClient + Sync> BoundedHttp<C> {
    /// Posts `message`, an oversized answer to it replaced by the too-large error.
    async fn bounded_post(
        &self,
        posted: Posted,
        message: ClientJsonRpcMessage,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<C::Error>> {
        let id = request_id(&message);
        let Posted { uri, session_id, auth_header, headers } = posted;
        let response = self
            .client
            .post_message_with_max_sse_event_size(uri, message, session_id, auth_header, headers, max_sse_event_size)
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
}

impl<C: StreamableHttpClient + Sync> HttpPost for BoundedHttp<C> {
    fn post(
        &self,
        message: ClientJsonRpcMessage,
    ) -> BoxFuture<'static, Result<StreamableHttpPostResponse, PostFailure>> {
        let this = self.clone();
        async move {
            let posted = this.posted.lock().unwrap_or_else(PoisonError::into_inner).clone();
            // Lanes are opened after the handshake, whose posts are noted.
            let posted = posted.ok_or(PostFailure::Failed(ServiceError::TransportClosed))?;
            this.bounded_post(posted, message, MAX_MESSAGE_BYTES).await.map_err(|error| match error {
                StreamableHttpError::SessionExpired => PostFailure::SessionExpired,
                error => PostFailure::Failed(ServiceError::TransportSend(DynamicTransportError::from_parts(
                    "streamable HTTP",
                    TypeId::of::<Self>(),
                    Box::new(error),
                ))),
            })
        }
        .boxed()
    }
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
        let posted = Posted { uri, session_id, auth_header, headers: custom_headers };
        if !is_initialize(&message) {
            *self.posted.lock().unwrap_or_else(PoisonError::into_inner) = Some(posted.clone());
        }
        self.bounded_post(posted, message, max_sse_event_size).await
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.client.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.client.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
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
        self.client
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
