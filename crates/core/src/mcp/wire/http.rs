//! Streamable HTTP answers over the size limit fail their own call, as over stdio ([`super::frame`]).
//!
//! rmcp's reqwest client refuses an answer over 16 MiB ([`MAX_MESSAGE_BYTES`]) but reports it as the
//! response stream failing, so the call ends with a generic error. [`BoundedHttp`] wraps any
//! [`StreamableHttpClient`] and answers the request with
//! [`TOO_LARGE_CODE`](super::frame::TOO_LARGE_CODE) instead, which becomes
//! [`McpError::MessageTooLarge`](super::McpError::MessageTooLarge); the session is untouched.
//!
//! Under it posts [`Lossless`]: rmcp's client, except that a custom request's answer is read as the
//! server's own JSON ([`Reads::Raw`]), since rmcp's types drop what a 2025-11-25 server puts in
//! `tools/list` and task answers. It also posts the `initialize` that advertises the client's tasks
//! ([`super::client_tasks`]) and renames the server's requests that ask to run as tasks.

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use futures::future::BoxFuture;
use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ServerJsonRpcMessage};
use rmcp::service::ServiceError;
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse,
};
use rmcp::transport::{DynamicTransportError, WWWAuthenticateParams};
use serde_json::Value;
use sse_stream::Sse;
use tokio_util::sync::CancellationToken;

use super::answer::{Reads, typed_answer};
use super::event_stream::{self, EventStream};
use super::frame::{MAX_MESSAGE_BYTES, too_large_answer};
use super::task_shapes;

/// The start of rmcp's message for an SSE event over its limit. Its error type
/// is private, so the message is what can be matched; `tests/mcp_oversized_http.rs`
/// fails if rmcp rewords it.
const EVENT_TOO_LARGE: &str = "SSE event exceeded the maximum size";

/// The custom headers rmcp posts with.
pub(crate) type Headers = HashMap<HeaderName, HeaderValue>;

/// `post_message` of a [`StreamableHttpClient`] that posts as
/// `post_message_with_max_sse_event_size` does, within `$limit` bytes.
macro_rules! post_within {
    ($limit:expr) => {
        async fn post_message(
            &self,
            uri: ::std::sync::Arc<str>,
            message: ::rmcp::model::ClientJsonRpcMessage,
            session_id: Option<::std::sync::Arc<str>>,
            auth_header: Option<String>,
            custom_headers: $crate::mcp::wire::http::Headers,
        ) -> Result<
            ::rmcp::transport::streamable_http_client::StreamableHttpPostResponse,
            ::rmcp::transport::streamable_http_client::StreamableHttpError<Self::Error>,
        > {
            self.post_message_with_max_sse_event_size(uri, message, session_id, auth_header, custom_headers, $limit)
                .await
        }
    };
}

/// The methods of a [`StreamableHttpClient`] that wraps the one in field
/// `$inner` and changes only how it posts: deleting the session and the GET
/// streams pass through.
macro_rules! pass_streams_through {
    ($inner:tt) => {
        async fn delete_session(
            &self,
            uri: ::std::sync::Arc<str>,
            session_id: ::std::sync::Arc<str>,
            auth_header: Option<String>,
            custom_headers: $crate::mcp::wire::http::Headers,
        ) -> Result<(), ::rmcp::transport::streamable_http_client::StreamableHttpError<Self::Error>> {
            self.$inner.delete_session(uri, session_id, auth_header, custom_headers).await
        }

        async fn get_stream(
            &self,
            uri: ::std::sync::Arc<str>,
            session_id: Option<::std::sync::Arc<str>>,
            last_event_id: Option<String>,
            auth_header: Option<String>,
            custom_headers: $crate::mcp::wire::http::Headers,
        ) -> Result<
            $crate::mcp::wire::event_stream::EventStream,
            ::rmcp::transport::streamable_http_client::StreamableHttpError<Self::Error>,
        > {
            self.$inner.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await
        }

        async fn get_stream_with_max_sse_event_size(
            &self,
            uri: ::std::sync::Arc<str>,
            session_id: Option<::std::sync::Arc<str>>,
            last_event_id: Option<String>,
            auth_header: Option<String>,
            custom_headers: $crate::mcp::wire::http::Headers,
            max_sse_event_size: usize,
        ) -> Result<
            $crate::mcp::wire::event_stream::EventStream,
            ::rmcp::transport::streamable_http_client::StreamableHttpError<Self::Error>,
        > {
            self.$inner
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
    };
}
pub(crate) use pass_streams_through;

/// How the HTTP lane ([`super::lane`]) posts: a message sent in the session rmcp holds, as rmcp
/// would post it ([`BoundedHttp`] implements it).
pub(crate) trait HttpPost: Send + Sync + 'static {
    fn post(
        &self,
        message: ClientJsonRpcMessage,
    ) -> BoxFuture<'static, Result<StreamableHttpPostResponse, PostFailure>>;
}

/// Why a lane POST got no response to read.
pub(crate) enum PostFailure {
    /// The server no longer knows the session (it restarted): rmcp renews it.
    SessionExpired,
    /// Anything else, as rmcp would report it.
    Failed(ServiceError),
}

/// A [`StreamableHttpClient`] whose oversized answers become errors for the
/// requests they answered; everything else passes through unchanged. It also
/// notes how rmcp posts in its session, so that the [`Lane`](super::lane::Lane)
/// can post the same way ([`HttpPost`]). Its POSTs are given up when `ends` is cancelled (a
/// failed start's token, or the connection's): rmcp's worker waits for its first POST
/// without watching its own, so a server that never answers would hold it.
#[derive(Clone)]
pub(crate) struct BoundedHttp<C> {
    client: C,
    posted: Arc<Mutex<Option<Posted>>>,
    ends: CancellationToken,
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
    pub(crate) fn new(client: C, ends: CancellationToken) -> Self {
        Self { client, posted: Arc::default(), ends }
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

/// Whether `error` refused an event over the limit: rmcp's stream's or [`Lossless`]'s.
fn is_event_too_large(error: &SseError) -> bool {
    matches!(error, SseError::Body(body) if body.to_string().starts_with(EVENT_TOO_LARGE))
        || event_stream::is_too_large(error)
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
        let post = self.client.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_header,
            headers,
            max_sse_event_size,
        );
        let response = tokio::select! {
            biased;
            () = self.ends.cancelled() => return Err(StreamableHttpError::TransportChannelClosed),
            response = post => response,
        };
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

    post_within!(MAX_MESSAGE_BYTES);

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

    pass_streams_through!(client);
}

/// The header that carries a streamable HTTP session's id.
const SESSION_HEADER: &str = "mcp-session-id";

/// Longest piece of a refusal's body read, to quote it or to find a JSON-RPC
/// error in it.
const REFUSAL_BODY: usize = 64 << 10;

/// rmcp's reqwest client, except for custom requests and an `initialize` that
/// advertises tasks, which it posts itself: a custom request's answer is read
/// as the server's own JSON, whether it comes as a JSON body or in an event
/// stream, and the same refusals are reported as rmcp reports them (a
/// challenge, an expired session, a JSON-RPC error, an oversized body). In
/// every event stream, a server's request that asks to run as a task is
/// renamed ([`task_shapes::as_custom`]).
#[derive(Clone)]
pub(crate) struct Lossless(reqwest::Client);

impl Lossless {
    pub(crate) fn new(client: reqwest::Client) -> Self {
        Self(client)
    }

    /// Posts `body` (a custom request, or an `initialize` with the task
    /// capability) as rmcp would have posted its message (`posted`), and reads
    /// its response, an answer in a JSON body as `reads` says.
    async fn post_own(
        &self,
        posted: Posted,
        body: &impl serde::Serialize,
        reads: Reads,
        limit: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        let Posted { uri, session_id, auth_header: auth_token, headers } = posted;
        let mut request = self
            .0
            .post(uri.as_ref())
            .header(ACCEPT, "text/event-stream, application/json")
            .headers(headers.into_iter().collect());
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = &session_id {
            request = request.header(SESSION_HEADER, session.as_ref());
        }
        let response = request.json(body).send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        let challenge = response.headers().get(WWW_AUTHENTICATE).and_then(|v| v.to_str().ok()).map(str::to_owned);
        match (status, challenge) {
            (StatusCode::UNAUTHORIZED, Some(challenge)) => {
                return Err(StreamableHttpError::AuthRequired(AuthRequiredError::new(challenge)));
            }
            (StatusCode::FORBIDDEN, Some(challenge)) => {
                let scope = reqwest::Url::parse(&uri)
                    .ok()
                    .and_then(|base| WWWAuthenticateParams::parse(&challenge, &base).scope);
                return Err(StreamableHttpError::InsufficientScope(InsufficientScopeError::new(challenge, scope)));
            }
            _ => {}
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let session = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
        let content_type = response.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        if !status.is_success() {
            let body = read_body(response, REFUSAL_BODY).await.unwrap_or_else(|body| body);
            return match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                Ok(error @ ServerJsonRpcMessage::Error(_)) => Ok(StreamableHttpPostResponse::Json(error, session)),
                _ => Err(StreamableHttpError::UnexpectedServerResponse(
                    format!("HTTP {status}: {}", excerpt(&body)).into(),
                )),
            };
        }
        if content_type.starts_with("text/event-stream") {
            let events = event_stream::events(response.bytes_stream(), limit);
            return Ok(StreamableHttpPostResponse::Sse(events, session));
        }
        if !content_type.starts_with("application/json") {
            return Err(StreamableHttpError::UnexpectedContentType(Some(content_type)));
        }
        let body = read_body(response, limit)
            .await
            .map_err(|_| StreamableHttpError::ResponseBodyTooLarge { max_size: limit })?;
        let message = match typed_answer(&body, reads) {
            Some((id, result)) => ServerJsonRpcMessage::response(result, id),
            None => serde_json::from_slice(&body).map_err(|e| {
                StreamableHttpError::UnexpectedServerResponse(
                    format!("the answer is not JSON-RPC ({e}): {}", excerpt(&body)).into(),
                )
            })?,
        };
        Ok(StreamableHttpPostResponse::Json(message, session))
    }
}

/// Longest piece of a body quoted in an error.
const EXCERPT: usize = 512;

/// The start of `body` as text, to quote in an error.
fn excerpt(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(&body[..body.len().min(EXCERPT)]);
    let more = if body.len() > EXCERPT { "…" } else { "" };
    format!("{}{more}", text.trim())
}

/// The body of `response`, at most `limit` bytes: `Err` with the first
/// `limit` bytes when it is longer (or with what was read when reading failed).
async fn read_body(response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Vec<u8>> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let Ok(chunk) = chunk else { return Err(body) };
        if body.len() + chunk.len() > limit {
            body.extend_from_slice(&chunk[..limit - body.len()]);
            return Err(body);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

impl StreamableHttpClient for Lossless {
    type Error = reqwest::Error;

    post_within!(MAX_MESSAGE_BYTES);

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let posted = || Posted {
            uri: uri.clone(),
            session_id: session_id.clone(),
            auth_header: auth_header.clone(),
            headers: custom_headers.clone(),
        };
        let response = if let Some(initialize) = task_shapes::advertised(&message) {
            self.post_own(posted(), &initialize, Reads::Rmcp, max_sse_event_size).await
        } else if Reads::of(&message) == Reads::Raw {
            self.post_own(posted(), &message, Reads::Raw, max_sse_event_size).await
        } else {
            self.0
                .post_message_with_max_sse_event_size(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    max_sse_event_size,
                )
                .await
        };
        response.map(|response| match response {
            StreamableHttpPostResponse::Sse(events, session) => {
                StreamableHttpPostResponse::Sse(task_shapes::renamed_events(events), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.0.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<EventStream, StreamableHttpError<Self::Error>> {
        let events = self.0.get_stream(uri, session_id, last_event_id, auth_header, custom_headers).await?;
        Ok(task_shapes::renamed_events(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
        max_sse_event_size: usize,
    ) -> Result<EventStream, StreamableHttpError<Self::Error>> {
        let events = self
            .0
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(task_shapes::renamed_events(events))
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
    async fn an_event_too_large_for_patchbays_own_reader_is_refused_the_same_way() {
        let body = futures::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(format!(
            "data: {}\n\n",
            "x".repeat(64)
        )))]);
        let items: Vec<_> = answer_refusal(event_stream::events(body, 16), Value::from(9), 16).collect().await;
        let answer: Value = serde_json::from_str(items[0].as_ref().unwrap().data.as_deref().unwrap()).unwrap();
        assert_eq!(
            (answer["id"].clone(), answer["error"]["code"].clone()),
            (Value::from(9), Value::from(super::super::frame::TOO_LARGE_CODE))
        );
    }

    #[tokio::test]
    async fn other_stream_errors_pass_through() {
        let source = futures::stream::iter([Err(SseError::Body("connection reset".into()))]).boxed();
        let items: Vec<_> = answer_refusal(source, Value::from(1), 16).collect().await;
        assert!(matches!(&items[..], [Err(SseError::Body(_))]));
    }

    /// A server whose answer to every POST is the one its path names.
    async fn refusing_server() -> String {
        use axum::http::{StatusCode, header};
        use axum::response::IntoResponse;
        let tools = r#"{"jsonrpc":"2.0","id":"pb-1","result":{"tools":[{"name":"t","inputSchema":{},"execution":{"taskSupport":"required"}}]}}"#;
        fn json(status: StatusCode, body: String) -> impl IntoResponse {
            (status, [(header::CONTENT_TYPE, "application/json")], body)
        }
        let app = axum::Router::new()
            .route(
                "/tools",
                axum::routing::post(
                    move || async move { ([("mcp-session-id", "s2")], json(StatusCode::OK, tools.into())) },
                ),
            )
            .route(
                "/events",
                axum::routing::post(move || async move {
                    ([(header::CONTENT_TYPE, "text/event-stream")], format!("id: 1\ndata: {tools}\n\n"))
                }),
            )
            .route(
                "/big",
                axum::routing::post(|| async move { json(StatusCode::OK, format!("[{}]", "1,".repeat(160) + "1")) }),
            )
            .route(
                "/sign-in",
                axum::routing::post(|| async {
                    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer resource_metadata=\"x\"")])
                        .into_response()
                }),
            )
            .route(
                "/scope",
                axum::routing::post(|| async {
                    (
                        StatusCode::FORBIDDEN,
                        [(header::WWW_AUTHENTICATE, r#"Bearer error="insufficient_scope", scope="a b""#)],
                    )
                        .into_response()
                }),
            )
            .route("/gone", axum::routing::post(|| async { StatusCode::NOT_FOUND }))
            .route(
                "/error",
                axum::routing::post(move || async move {
                    json(
                        StatusCode::BAD_REQUEST,
                        r#"{"jsonrpc":"2.0","id":"pb-1","error":{"code":-32602,"message":"bad task"}}"#.into(),
                    )
                }),
            )
            .route("/broken", axum::routing::post(|| async { (StatusCode::BAD_GATEWAY, "upstream down") }))
            .route("/text", axum::routing::post(|| async { "hello" }))
            .route("/down", axum::routing::post(|| async { (StatusCode::SERVICE_UNAVAILABLE, "y".repeat(2000)) }))
            .route(
                "/garbage",
                axum::routing::post(|| async {
                    json(StatusCode::OK, format!("{{\"nonsense\": \"{}\"}}", "x".repeat(150)))
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        base
    }

    async fn post_custom(
        base: &str,
        path: &str,
        session: Option<&str>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<reqwest::Error>> {
        use rmcp::model::{CustomRequest, NumberOrString};
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", None));
        let message = ClientJsonRpcMessage::request(request, NumberOrString::String("pb-1".into()));
        Lossless::new(reqwest::Client::new())
            .post_message_with_max_sse_event_size(
                format!("{base}{path}").into(),
                message,
                session.map(Into::into),
                None,
                HashMap::new(),
                200,
            )
            .await
    }

    /// The raw `tools/list` answer in `message`: its first tool's execution.
    fn execution(message: ServerJsonRpcMessage) -> Value {
        use rmcp::model::ServerResult;
        match message {
            ServerJsonRpcMessage::Response(response) => match response.result {
                ServerResult::CustomResult(raw) => raw.0["tools"][0]["execution"].clone(),
                other => panic!("read as rmcp's type: {other:?}"),
            },
            other => panic!("{other:?}"),
        }
    }

    #[tokio::test]
    async fn a_custom_requests_answer_is_read_as_the_servers_json_from_a_body_or_a_stream() {
        let base = refusing_server().await;
        match post_custom(&base, "/tools", None).await.unwrap() {
            StreamableHttpPostResponse::Json(message, session) => {
                assert_eq!(session.as_deref(), Some("s2"));
                assert_eq!(execution(message)["taskSupport"], "required");
            }
            other => panic!("{other:?}"),
        }
        let StreamableHttpPostResponse::Sse(events, _) = post_custom(&base, "/events", None).await.unwrap() else {
            panic!("not a stream")
        };
        let events: Vec<_> = events.collect().await;
        let event = events[0].as_ref().unwrap();
        assert_eq!(event.id.as_deref(), Some("1"));
        let (_, result) = typed_answer(event.data.as_deref().unwrap().as_bytes(), Reads::Raw).unwrap();
        assert_eq!(
            execution(ServerJsonRpcMessage::response(result, rmcp::model::NumberOrString::String("pb-1".into())))["taskSupport"],
            "required"
        );
    }

    #[tokio::test]
    async fn a_custom_requests_refusals_are_reported_as_rmcp_reports_them() {
        let base = refusing_server().await;
        let refusal = |path: &'static str, session: Option<&'static str>| {
            let base = base.clone();
            async move { post_custom(&base, path, session).await.unwrap_err() }
        };
        let StreamableHttpError::AuthRequired(challenge) = refusal("/sign-in", None).await else { panic!() };
        assert_eq!(challenge.www_authenticate_header, "Bearer resource_metadata=\"x\"");
        let StreamableHttpError::InsufficientScope(scope) = refusal("/scope", None).await else { panic!() };
        assert_eq!(scope.required_scope.as_deref(), Some("a b"));
        assert!(matches!(refusal("/gone", Some("s1")).await, StreamableHttpError::SessionExpired));
        let broken = refusal("/broken", None).await.to_string();
        assert!(broken.contains("HTTP 502 Bad Gateway: upstream down"), "{broken}");
        assert!(
            matches!(refusal("/text", None).await, StreamableHttpError::UnexpectedContentType(Some(t)) if t.starts_with("text/plain"))
        );
        // An answer that is no answer is quoted, cut short.
        let garbage = refusal("/garbage", None).await.to_string();
        assert!(
            garbage.contains("the answer is not JSON-RPC (") && garbage.contains(r#"{"nonsense": "xxx"#),
            "{garbage}"
        );
        let down = refusal("/down", None).await.to_string();
        assert!(
            down.contains("HTTP 503 Service Unavailable: yyy") && down.ends_with("y…") && down.len() < 600,
            "{down}"
        );
        // The limit is 200 bytes here.
        assert!(matches!(refusal("/big", None).await, StreamableHttpError::ResponseBodyTooLarge { max_size: 200 }));
        // A JSON-RPC error is the request's answer, whatever the status.
        match post_custom(&base, "/error", None).await.unwrap() {
            StreamableHttpPostResponse::Json(ServerJsonRpcMessage::Error(error), _) => {
                assert_eq!(error.error.message, "bad task")
            }
            other => panic!("{other:?}"),
        }
    }
}
