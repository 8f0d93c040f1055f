//! Scripted model servers: real HTTP + SSE on `127.0.0.1:0` that answer each
//! request with the next [`Reply`] of a script and record what they received.
//!
//! One server type serves the three wire formats; [`openai`], [`anthropic`]
//! and [`gemini`] build the replies. The Anthropic and Gemini servers pipe
//! every request body through `validate.py`, which checks it with the
//! official SDKs' request types (PyPI `anthropic`, `google-genai`, installed
//! in the peers venv); a body they reject is answered with HTTP 400 and
//! recorded with the reason, so a client cannot agree with its own mistakes.

pub mod anthropic;
pub mod gemini;
pub mod openai;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Response;
use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The wire format a server speaks (and validates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// OpenAI chat completions (not validated by an SDK).
    OpenAi,
    /// Anthropic Messages, validated with `anthropic`.
    Anthropic,
    /// Gemini, validated with `google-genai`.
    Gemini,
}

/// How a streamed reply ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Close the body after the last frame.
    Close,
    /// Keep the connection open and send nothing more.
    Hang,
}

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// HTTP 200 with `text/event-stream`: each frame is written as its own
    /// body chunk, `gap` apart.
    Stream { frames: Vec<String>, gap: Duration, end: End },
    /// Any status with a body (for errors).
    Status { status: u16, headers: Vec<(String, String)>, body: String },
    /// A reply made from the request's JSON body when it arrives: a model that reads what it
    /// is sent.
    Respond(Responder),
}

/// What makes a [`Reply::Respond`].
#[derive(Clone)]
pub struct Responder(Arc<dyn Fn(&serde_json::Value) -> Reply + Send + Sync>);

impl std::fmt::Debug for Responder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Responder")
    }
}

impl Reply {
    /// A stream of `frames` that closes at the end.
    pub fn stream(frames: Vec<String>) -> Self {
        Self::Stream { frames, gap: Duration::ZERO, end: End::Close }
    }

    /// A stream of `frames` that then stays open, silent.
    pub fn hanging(frames: Vec<String>) -> Self {
        Self::Stream { frames, gap: Duration::ZERO, end: End::Hang }
    }

    /// A reply `make` builds from the request's body.
    pub fn respond(make: impl Fn(&serde_json::Value) -> Reply + Send + Sync + 'static) -> Self {
        Self::Respond(Responder(Arc::new(make)))
    }

    /// An error status with a JSON body.
    pub fn status(status: u16, body: serde_json::Value) -> Self {
        Self::Status { status, headers: Vec::new(), body: body.to_string() }
    }

    /// Adds a header to a [`Reply::Status`].
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Status { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// Splits every frame of a stream into pieces of at most `size` bytes
    /// (at char boundaries), so the client sees JSON cut mid-way.
    pub fn split_frames(mut self, size: usize) -> Self {
        if let Self::Stream { frames, .. } = &mut self {
            *frames = frames.iter().flat_map(|f| split(f, size)).collect();
        }
        self
    }
}

fn split(text: &str, size: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size.max(1)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(text[start..end].to_owned());
        start = end;
    }
    out
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Path and query, e.g. `/v1/chat/completions`.
    pub path: String,
    /// Headers, names lower-case.
    pub headers: BTreeMap<String, String>,
    /// The JSON body (`Null` when it was not JSON).
    pub body: serde_json::Value,
    /// Why the SDK validator rejected the body, if it did.
    pub invalid: Option<String>,
}

struct Validator {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Validator {
    async fn start(format: Format) -> anyhow::Result<Option<Self>> {
        let which = match format {
            Format::OpenAi => return Ok(None),
            Format::Anthropic => "anthropic",
            Format::Gemini => "gemini",
        };
        // The script travels inside the binary: a path baked in at build time
        // names the checkout that built it, which a shared target dir may outlive.
        let mut child = tokio::process::Command::new(crate::peers::python())
            .arg("-c")
            .arg(include_str!("validate.py"))
            .arg(which)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow::anyhow!("validator stdin"))?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or_else(|| anyhow::anyhow!("validator stdout"))?);
        let mut ready = String::new();
        stdout.read_line(&mut ready).await?;
        anyhow::ensure!(
            ready.trim() == "ready",
            "validator did not start (is google-genai/anthropic installed? run `bash tests/peers/install.sh`)"
        );
        Ok(Some(Self { _child: child, stdin, stdout }))
    }

    async fn check(&mut self, body: &serde_json::Value) -> Option<String> {
        let mut line = body.to_string();
        line.push('\n');
        if let Err(e) = self.stdin.write_all(line.as_bytes()).await {
            return Some(format!("validator died: {e}"));
        }
        let mut answer = String::new();
        if let Err(e) = self.stdout.read_line(&mut answer).await {
            return Some(format!("validator died: {e}"));
        }
        let answer = answer.trim();
        (answer != "ok").then(|| answer.to_owned())
    }
}

struct Shared {
    script: Mutex<VecDeque<Reply>>,
    recorded: Mutex<Vec<Recorded>>,
    validator: tokio::sync::Mutex<Option<Validator>>,
}

/// A running scripted server; it stops when dropped.
pub struct ScriptedServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ScriptedServer {
    /// Starts a server for `format` that plays `script`, one reply per request.
    pub async fn start(format: Format, script: Vec<Reply>) -> anyhow::Result<Self> {
        let shared = Arc::new(Shared {
            script: Mutex::new(script.into()),
            recorded: Mutex::new(Vec::new()),
            validator: tokio::sync::Mutex::new(Validator::start(format).await?),
        });
        let app = Router::new().fallback(handle).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { addr, shared, task })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Everything received so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The number of replies not yet played.
    pub fn remaining(&self) -> usize {
        self.shared.script.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

async fn handle(State(shared): State<Arc<Shared>>, uri: Uri, headers: HeaderMap, body: Bytes) -> Response {
    let body: serde_json::Value = serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null);
    let invalid = match shared.validator.lock().await.as_mut() {
        Some(v) => v.check(&body).await,
        None => None,
    };
    let headers = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let path = uri.path_and_query().map_or_else(|| uri.path().to_owned(), |p| p.as_str().to_owned());
    shared.recorded.lock().unwrap_or_else(|p| p.into_inner()).push(Recorded {
        path,
        headers,
        body: body.clone(),
        invalid: invalid.clone(),
    });
    if let Some(reason) = invalid {
        let body = serde_json::json!({"error": {"message": format!("SDK validation failed: {reason}")}});
        return respond(StatusCode::BAD_REQUEST, &[], body.to_string());
    }
    let next = shared.script.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
    let next = match next {
        Some(Reply::Respond(Responder(make))) => Some(make(&body)),
        other => other,
    };
    match next {
        None => {
            let body = serde_json::json!({"error": {"message": "the script has no more replies"}});
            respond(StatusCode::INTERNAL_SERVER_ERROR, &[], body.to_string())
        }
        Some(Reply::Respond(_)) => {
            let body = serde_json::json!({"error": {"message": "a responder made a responder"}});
            respond(StatusCode::INTERNAL_SERVER_ERROR, &[], body.to_string())
        }
        Some(Reply::Status { status, headers, body }) => {
            respond(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), &headers, body)
        }
        Some(Reply::Stream { frames, gap, end }) => {
            let frames = futures::stream::iter(frames).then(move |frame| async move {
                if !gap.is_zero() {
                    tokio::time::sleep(gap).await;
                }
                Ok::<_, std::io::Error>(Bytes::from(frame))
            });
            let body = match end {
                End::Close => Body::from_stream(frames),
                End::Hang => Body::from_stream(frames.chain(futures::stream::pending())),
            };
            Response::builder()
                .status(StatusCode::OK)
                .header("content-type", "text/event-stream")
                .header("cache-control", "no-cache")
                .body(body)
                .unwrap_or_default()
        }
    }
}

fn respond(status: StatusCode, headers: &[(String, String)], body: String) -> Response {
    let mut builder = Response::builder().status(status).header("content-type", "application/json");
    for (name, value) in headers {
        builder = builder.header(name, value);
    }
    builder.body(Body::from(body)).unwrap_or_default()
}
