//! The legacy HTTP+SSE transport (MCP 2024-11-05), server side, which rmcp 3 lacks and many
//! clients still use (RAGFlow's default transport, older Claude Desktop bridges).
//!
//! `GET /sse` opens a session: its event stream first names the URL to POST to (`endpoint`,
//! `/messages/?session_id=…`), then carries each server message as a `message` event, with a
//! keep-alive comment every 15 s. Each POST carries one client message and is answered 202; the
//! answer travels on the stream. A session ends when its stream closes or the server stops; its
//! POSTs then get 404. At most [`MAX_SESSIONS`] are open at once, and a POST that cannot be handed
//! to its session within [`HAND_OVER`] (a client that stopped reading its stream) gets 503, so
//! nothing grows without bound. Whatever guards the router (token, `Origin`, `Host`) is the
//! caller's layer.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures::StreamExt;
use rmcp::service::RxJsonRpcMessage;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde::Deserialize;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_util::sync::{CancellationToken, PollSender};

/// Where a session's client POSTs its messages.
const MESSAGES_PATH: &str = "/messages/";
/// Messages a session buffers each way before the sender waits.
const BUFFER: usize = 64;
/// Sessions open at once, at most.
const MAX_SESSIONS: usize = 64;
/// How long a POST waits for its session to take the message.
const HAND_OVER: std::time::Duration = std::time::Duration::from_secs(10);

type Sessions = Arc<Mutex<HashMap<String, mpsc::Sender<RxJsonRpcMessage<RoleServer>>>>>;

struct Shared<S> {
    new_server: Box<dyn Fn() -> S + Send + Sync>,
    sessions: Sessions,
    cancel: CancellationToken,
}

/// A router serving `GET /sse` and `POST /messages/`, one `new_server()` per session, every
/// session ending when `cancel` fires.
pub fn router<S>(new_server: impl Fn() -> S + Send + Sync + 'static, cancel: CancellationToken) -> axum::Router
where
    S: ServerHandler,
{
    let shared = Arc::new(Shared { new_server: Box::new(new_server), sessions: Sessions::default(), cancel });
    axum::Router::new().route("/sse", get(open::<S>)).route(MESSAGES_PATH, post(receive::<S>)).with_state(shared)
}

async fn open<S: ServerHandler>(State(shared): State<Arc<Shared<S>>>) -> Response {
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (to_server, from_client) = mpsc::channel(BUFFER);
    let (to_client, from_server) = mpsc::channel(BUFFER);
    {
        let mut sessions = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        if sessions.len() >= MAX_SESSIONS {
            let why = format!("{MAX_SESSIONS} sessions are open already; close one and try again");
            return (StatusCode::SERVICE_UNAVAILABLE, why).into_response();
        }
        sessions.insert(id.clone(), to_server);
    }
    let session = shared.cancel.child_token();
    let (server, sessions, ended, ct) = ((shared.new_server)(), shared.sessions.clone(), id.clone(), session.clone());
    tokio::spawn(async move {
        let transport = (PollSender::new(to_client), ReceiverStream::new(from_client));
        match server.serve_with_ct(transport, ct).await {
            Ok(running) => drop(running.waiting().await),
            Err(e) => tracing::debug!("a legacy SSE session ended before it began: {e}"),
        }
        sessions.lock().unwrap_or_else(PoisonError::into_inner).remove(&ended);
    });
    // The stream holds the guard: a client that goes away ends its session.
    let guard = session.drop_guard();
    let endpoint = Event::default().event("endpoint").data(format!("{MESSAGES_PATH}?session_id={id}"));
    let messages = ReceiverStream::new(from_server).map(move |message| {
        let _held = &guard;
        let json = serde_json::to_string(&message).unwrap_or_default();
        Ok::<_, Infallible>(Event::default().event("message").data(json))
    });
    Sse::new(futures::stream::once(async { Ok(endpoint) }).chain(messages))
        .keep_alive(KeepAlive::default())
        .into_response()
}

#[derive(Deserialize)]
struct SessionQuery {
    session_id: String,
}

async fn receive<S>(State(shared): State<Arc<Shared<S>>>, Query(query): Query<SessionQuery>, body: Bytes) -> Response {
    let sender = shared.sessions.lock().unwrap_or_else(PoisonError::into_inner).get(&query.session_id).cloned();
    let Some(sender) = sender else {
        return (StatusCode::NOT_FOUND, format!("no open session {:?}; open one with GET /sse", query.session_id))
            .into_response();
    };
    let message: RxJsonRpcMessage<RoleServer> = match serde_json::from_slice(&body) {
        Ok(message) => message,
        Err(e) => return (StatusCode::BAD_REQUEST, format!("not a JSON-RPC message: {e}")).into_response(),
    };
    match tokio::time::timeout(HAND_OVER, sender.send(message)).await {
        Ok(Ok(())) => (StatusCode::ACCEPTED, "Accepted").into_response(),
        Ok(Err(_)) => (StatusCode::NOT_FOUND, "the session has ended").into_response(),
        Err(_) => (StatusCode::SERVICE_UNAVAILABLE, "the session is not reading its stream").into_response(),
    }
}
