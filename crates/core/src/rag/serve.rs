//! The knowledge base as an MCP server, for Claude Desktop or any MCP client.
//!
//! It exposes the tool `knowledge_search` (query, top_k, mode), and every
//! indexed document as a `file://` resource (read back as extracted text; only
//! indexed documents can be read). Two transports:
//!
//! - stdio ([`serve_stdio`]), for clients that start `patchbay kb serve --stdio`;
//! - HTTP ([`HttpServer`]): Streamable HTTP at `/mcp` and legacy SSE at `/sse`
//!   (RAGFlow's default transport), bound to 127.0.0.1 unless told otherwise,
//!   requiring `Authorization: Bearer <token>` on every request and rejecting
//!   any request with an `Origin` header, so a web page in the user's browser
//!   cannot read local documents.
//!
//! Beside `knowledge_search`, RAGFlow's `ragflow_retrieval` and
//! `ragflow_list_datasets` ([`ragflow`]) answer from the same index, folders as
//! datasets, so a client set up for RAGFlow can use a Patchbay instead.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, ErrorData, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource, ResourceContents,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::kb::KnowledgeBase;
use super::search::{Excerpt, SearchMode};
use super::{RagError, loader, ragflow};
use crate::clock::now_ms;
use crate::mcp::wire::sse_server;
use crate::secrets::SecretStore;

/// Largest `top_k` a client may ask for.
pub const MAX_TOP_K: usize = 50;

/// Arguments of `knowledge_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// What to look for, in any language.
    pub query: String,
    /// How many passages to return (default 5, at most 50).
    #[serde(default)]
    pub top_k: Option<usize>,
    /// bm25, vector or hybrid; defaults to hybrid when embeddings are configured, else bm25.
    #[serde(default)]
    pub mode: Option<SearchMode>,
}

/// One passage as the tool returns it (also the CLI's `--json` shape).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// The document's path (lossy for paths that are not UTF-8).
    pub path: String,
    pub score: f64,
    /// How well it answers the query, 0 to 1 ([`Excerpt::relevance`]); comparable across
    /// queries and collections, unlike `score`.
    #[serde(default)]
    pub relevance: f64,
    pub text: String,
    pub heading: String,
    /// `[first, last]` line, 1-based.
    pub lines: [usize; 2],
}

impl From<Excerpt> for Hit {
    fn from(p: Excerpt) -> Self {
        Self {
            path: p.path.to_string_lossy().into_owned(),
            score: p.score,
            relevance: p.relevance(),
            text: p.text,
            heading: p.heading,
            lines: [p.line_start, p.line_end],
        }
    }
}

/// The knowledge base a request is answered from, read at each request (the app swaps its
/// knowledge base when the embedding settings change).
pub type CurrentKb = Arc<dyn Fn() -> KnowledgeBase + Send + Sync>;

/// One request a served knowledge base answered or refused, so the user sees who uses it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Served {
    /// When, in Unix milliseconds.
    #[ts(type = "number")]
    pub at_ms: i64,
    /// The client's name from its handshake (`claude-ai`, `cursor-vscode`), or for a refused
    /// request the address it came from.
    pub client: String,
    /// The tool called, `read` for a document read, or `refused`.
    pub what: String,
    /// The question, the document's URI, or why the request was refused.
    pub detail: String,
}

/// Where a served knowledge base records its requests.
pub trait RequestLog: Send + Sync {
    fn served(&self, request: Served);
}

/// The MCP server over one knowledge base.
#[derive(Clone)]
pub struct KbServer {
    current: CurrentKb,
    log: Option<Arc<dyn RequestLog>>,
    tool_router: ToolRouter<Self>,
}

impl std::fmt::Debug for KbServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KbServer").field("kb", &(self.current)()).finish_non_exhaustive()
    }
}

fn internal(e: &RagError) -> ErrorData {
    ErrorData::internal_error(e.to_string(), None)
}

/// The name a client gives: with each request (MCP 2026-07-28), else in its handshake.
fn client_name(context: &RequestContext<RoleServer>) -> String {
    context.client_info().map_or_else(|| "unnamed client".to_owned(), |info| info.name)
}

#[tool_router]
impl KbServer {
    /// A server answering from `kb`.
    pub fn new(kb: KnowledgeBase) -> Self {
        Self::live(Arc::new(move || kb.clone()), None)
    }

    /// A server answering from the knowledge base `current` gives at each request, recording
    /// each request in `log`.
    pub fn live(current: CurrentKb, log: Option<Arc<dyn RequestLog>>) -> Self {
        Self { current, log, tool_router: Self::tool_router() }
    }

    fn record(&self, context: &RequestContext<RoleServer>, what: &str, detail: &str) {
        if let Some(log) = &self.log {
            let request =
                Served { at_ms: now_ms(), client: client_name(context), what: what.into(), detail: detail.into() };
            log.served(request);
        }
    }

    #[tool(description = TOOL_DESCRIPTION)]
    async fn knowledge_search(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<SearchArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.record(&context, "knowledge_search", &args.query);
        search_result(&(self.current)(), args).await
    }

    #[tool(description = ragflow::RETRIEVAL_DESCRIPTION)]
    async fn ragflow_retrieval(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<ragflow::RetrievalArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.record(&context, ragflow::RETRIEVAL_TOOL, &args.question);
        tool_answer(ragflow::retrieve(&(self.current)(), args).await)
    }

    #[tool(description = "List the datasets (the knowledge base's folders) with their ids, one JSON object per line \
                          (RAGFlow-compatible).")]
    async fn ragflow_list_datasets(
        &self,
        context: RequestContext<RoleServer>,
        Parameters(args): Parameters<ragflow::DatasetsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        self.record(&context, ragflow::DATASETS_TOOL, "");
        tool_answer(ragflow::datasets(&(self.current)(), &args))
    }
}

/// `knowledge_search` as an MCP tool answers: the passages, a tool error for
/// a mode the knowledge base cannot serve (the caller's to fix), else an
/// internal error.
pub async fn search_result(kb: &KnowledgeBase, args: SearchArgs) -> Result<CallToolResult, ErrorData> {
    tool_answer(search_json(kb, args).await)
}

/// A search's JSON as a tool's answer; what the caller can fix (a mode without embeddings, a
/// failing embedder, an argument out of range) is a tool error the model reads, else an internal error.
fn tool_answer(answer: Result<String, RagError>) -> Result<CallToolResult, ErrorData> {
    match answer {
        Ok(json) => Ok(CallToolResult::success(vec![ContentBlock::text(json)])),
        Err(e @ (RagError::NoEmbeddings | RagError::Embedding { .. } | RagError::BadRequest { .. })) => {
            Ok(CallToolResult::error(vec![ContentBlock::text(e.to_string())]))
        }
        Err(e) => Err(internal(&e)),
    }
}

/// What the model and MCP clients read about `knowledge_search`.
pub const TOOL_DESCRIPTION: &str = "Search the user's local knowledge base (documents in registered folders). \
                                    Returns passages with their file path, heading, line range, score and relevance \
                                    (0 to 1: how much of the query they answer); cite \
                                    them as path:lines.";

/// Runs `knowledge_search` and returns its answer: a JSON list of [`Hit`]s.
pub async fn search_json(kb: &KnowledgeBase, args: SearchArgs) -> Result<String, RagError> {
    let top_k = args.top_k.unwrap_or(5).clamp(1, MAX_TOP_K);
    let mode = args.mode.unwrap_or_else(|| kb.default_mode());
    let hits: Vec<Hit> = kb.search(&args.query, mode, top_k).await?.into_iter().map(Hit::from).collect();
    serde_json::to_string_pretty(&hits).map_err(|e| RagError::Serve { detail: e.to_string() })
}

/// The path a `file://` URI names (percent-encoded or not).
fn uri_path(uri: &str) -> Option<PathBuf> {
    url::Url::parse(uri).ok().filter(|u| u.scheme() == "file").and_then(|u| u.to_file_path().ok())
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for KbServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_resources().build())
            .with_instructions("Patchbay knowledge base: call knowledge_search, read documents as resources.")
    }

    /// The tools, `ragflow_retrieval` listing the datasets in its description as RAGFlow's does.
    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let described = ragflow::retrieval_description(&(self.current)()).map_err(|e| internal(&e))?;
        let mut tools = self.tool_router.list_all();
        for tool in tools.iter_mut().filter(|t| t.name == ragflow::RETRIEVAL_TOOL) {
            tool.description = Some(described.clone().into());
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let docs = (self.current)().documents().map_err(|e| internal(&e))?;
        let resources: Vec<Resource> = docs
            .iter()
            .map(|path| {
                let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
                let mut resource = Resource::new(loader::file_uri(path), name);
                resource.mime_type = Some("text/plain".into());
                resource
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(resources))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.record(&context, "read", &request.uri);
        let kb = (self.current)();
        let not_found = || ErrorData::resource_not_found(format!("{} is not in the knowledge base", request.uri), None);
        let path = uri_path(&request.uri).ok_or_else(not_found)?;
        // Only indexed documents are readable: the server never becomes a general file reader.
        if !kb.documents().map_err(|e| internal(&e))?.contains(&path) {
            return Err(not_found());
        }
        let kind = loader::DocKind::for_path(&path).ok_or_else(not_found)?;
        let max_bytes = kb.settings().map_err(|e| internal(&e))?.max_file_bytes;
        let read = path.clone();
        let text = tokio::task::spawn_blocking(move || {
            loader::read_bytes(&read, max_bytes).and_then(|bytes| loader::extract(kind, &bytes))
        })
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?
        .map_err(|skip| ErrorData::internal_error(format!("{}: {skip}", path.display()), None))?
        .text;
        Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri.clone())]).into())
    }
}

/// Serves `kb` over stdin/stdout until the client disconnects or `cancel` fires.
pub async fn serve_stdio(kb: KnowledgeBase, cancel: CancellationToken) -> Result<(), RagError> {
    let running = KbServer::new(kb)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| RagError::Serve { detail: e.to_string() })?;
    tokio::select! {
        result = running.waiting() => result.map(|_| ()).map_err(|e| RagError::Serve { detail: e.to_string() }),
        () = cancel.cancelled() => Ok(()),
    }
}

/// How long a stopping server waits for its connections to end before it lets them go.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// A bound HTTP server (Streamable HTTP and legacy SSE); [`HttpServer::run`] serves until cancelled.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: axum::Router,
    cancel: CancellationToken,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer").field("addr", &self.listener.local_addr().ok()).finish_non_exhaustive()
    }
}

#[derive(Clone)]
struct Guard {
    expected: String,
    /// Serve only requests whose `Host` names this computer (a loopback bind).
    loopback: bool,
    log: Option<Arc<dyn RequestLog>>,
}

/// Whether a `Host` header names this computer: localhost, 127.0.0.1 or [::1], with a port or
/// none, and nothing else.
fn names_this_computer(host: &str) -> bool {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((name, "")) => (name, None),
            Some((name, after)) => (name, Some(after.strip_prefix(':').unwrap_or("not a port"))),
            None => return false,
        },
        None => host.rsplit_once(':').map_or((host, None), |(name, port)| (name, Some(port))),
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    port_ok
        && (name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback()))
}

/// Rejects requests from browsers (any `Origin`), on a loopback bind requests naming another
/// host (DNS rebinding), and requests without the bearer token.
async fn guard(State(guard): State<Guard>, headers: HeaderMap, request: Request, next: Next) -> Response {
    let refused = |status: StatusCode, why: String| {
        if let Some(log) = &guard.log {
            let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|ConnectInfo(peer)| peer.to_string());
            let client = peer.unwrap_or_else(|| "unknown address".into());
            log.served(Served { at_ms: now_ms(), client, what: "refused".into(), detail: why.clone() });
        }
        let mut response = (status, why).into_response();
        if status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
        }
        response
    };
    if headers.contains_key(header::ORIGIN) {
        return refused(StatusCode::FORBIDDEN, "cross-origin requests are not allowed".into());
    }
    let host = headers.get(header::HOST).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if guard.loopback && !names_this_computer(host) {
        return refused(
            StatusCode::FORBIDDEN,
            format!("this server answers only for this computer, not Host {host:?}"),
        );
    }
    let presented = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if !constant_time_eq(presented.as_bytes(), guard.expected.as_bytes()) {
        return refused(StatusCode::UNAUTHORIZED, "missing or wrong bearer token".into());
    }
    next.run(request).await
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl HttpServer {
    /// Binds `addr` and prepares the Streamable HTTP endpoint `/mcp` and the legacy SSE
    /// endpoints `/sse` and `/messages/`, guarded by `token`.
    /// On a loopback address only requests naming this computer as their
    /// `Host` are served (against DNS rebinding); elsewhere (which the CLI
    /// allows only when asked) clients name the machine as they reach it, and
    /// the token and the `Origin` refusal guard it.
    pub async fn bind(server: KbServer, addr: SocketAddr, token: &str) -> Result<Self, RagError> {
        let listener = tokio::net::TcpListener::bind(addr).await.map_err(|source| RagError::Bind { addr, source })?;
        let cancel = CancellationToken::new();
        let loopback = addr.ip().to_canonical().is_loopback();
        let mut config = StreamableHttpServerConfig::default()
            .with_cancellation_token(cancel.child_token())
            .enforce_origin_validation();
        if !loopback {
            config = config.disable_allowed_hosts();
        }
        let log = server.log.clone();
        let streamable = server.clone();
        let service: StreamableHttpService<KbServer, LocalSessionManager> =
            StreamableHttpService::new(move || Ok(streamable.clone()), Default::default(), config);
        let router = axum::Router::new()
            .nest_service("/mcp", service)
            .merge(sse_server::router(move || server.clone(), cancel.child_token()))
            .layer(axum::middleware::from_fn_with_state(
                Guard { expected: format!("Bearer {token}"), loopback, log },
                guard,
            ));
        Ok(Self { listener, router, cancel })
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, RagError> {
        self.listener.local_addr().map_err(|source| RagError::Io { path: PathBuf::from("listener"), source })
    }

    /// Serves until `cancel` fires, then closes every session and stops listening; connections
    /// still open [`SHUTDOWN_GRACE`] later (a client that stopped reading, a request never
    /// finished) are let go rather than waited for.
    pub async fn run(self, cancel: CancellationToken) -> Result<(), RagError> {
        let sessions = self.cancel.clone();
        let stopped = cancel.clone();
        let serve = axum::serve(self.listener, self.router.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(async move {
                stopped.cancelled().await;
                sessions.cancel();
            });
        let result = tokio::select! {
            result = serve => result,
            () = async {
                cancel.cancelled().await;
                tokio::time::sleep(SHUTDOWN_GRACE).await;
            } => {
                tracing::debug!("the knowledge-base server let go of connections still open");
                Ok(())
            }
        };
        self.cancel.cancel();
        result.map_err(|source| RagError::Io { path: PathBuf::from("http server"), source })
    }
}

/// A fresh random bearer token: two v4 UUIDs from the OS random source (244 random bits), hex.
pub fn generate_token() -> String {
    format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())
}

/// The keyring entry holding the HTTP server's bearer token (the CLI's and the desktop's).
pub const TOKEN_SECRET: &str = "kb/serve-token";

/// The stored bearer token, or a new one stored now; `true` when it is new.
pub fn token(secrets: &dyn SecretStore) -> Result<(String, bool), RagError> {
    if let Some(token) = secrets.get(TOKEN_SECRET)? {
        return Ok((token, false));
    }
    let token = generate_token();
    secrets.set(TOKEN_SECRET, &token)?;
    Ok((token, true))
}

/// Why serving at `addr` needs the user's word: it is reachable from other computers and the server
/// speaks plain HTTP. `None` on this computer's own addresses.
pub fn remote_refusal(addr: SocketAddr) -> Option<String> {
    (!addr.ip().to_canonical().is_loopback()).then(|| {
        format!(
            "{addr} can be reached from other computers, and the server speaks plain HTTP: the token and the \
             documents would cross the network unencrypted"
        )
    })
}

/// An address to serve at: HOST:PORT, or a port alone on 127.0.0.1.
pub fn parse_address(text: &str) -> Result<SocketAddr, RagError> {
    let text = text.trim();
    match text.parse::<u16>() {
        Ok(port) => Ok(SocketAddr::from(([127, 0, 0, 1], port))),
        Err(_) => text.parse().map_err(|_| RagError::BadRequest {
            why: format!("{text:?} is neither a port (8765) nor an IP address with a port (127.0.0.1:8765)"),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::names_this_computer;

    #[test]
    fn only_hosts_naming_this_computer_pass_on_loopback() {
        for host in ["localhost", "LOCALHOST:8765", "127.0.0.1", "127.0.0.1:8765", "[::1]:8765", "[::1]"] {
            assert!(names_this_computer(host), "{host}");
        }
        let refused = [
            "",
            "evil.example",
            "127.0.0.1.evil.example:80",
            "localhost.evil.example",
            "192.0.2.7:8765",
            "[::2]:1",
            "[::1]evil",
            "[::1].evil.example",
            "[::1]:",
            "[::1]:80x",
            "localhost:http",
            "[::1",
        ];
        for host in refused {
            assert!(!names_this_computer(host), "{host}");
        }
    }
}
