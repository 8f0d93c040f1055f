//! No secret a session used is left on disk where Patchbay writes: after a
//! turn that reached a provider with its API key, a remote MCP server with a
//! bearer token, another one signed in with OAuth (authorization code, PKCE,
//! dynamic registration), all through a proxy that needs a login, the data
//! dir (database, WAL, log file), a backup and every export format are
//! scanned byte for byte, and none of those values is found. The proxy choice
//! is process-wide, so this file holds one test.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use patchbay_core::app::views::{GeneralSettings, TurnEvent};
use patchbay_core::app::{App, AppEvents, ApprovalAnswer, TurnInput};
use patchbay_core::config::{
    ApprovalMode, ExportFormat, McpServerConfig, ProviderProfile, TransportConfig, ValueSource,
};
use patchbay_core::conversations::ExportFormat as ConversationFormat;
use patchbay_core::mcp::oauth::AuthorizationUi;
use patchbay_core::net::ProxyChoice;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::proxy::RecordingProxy;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock, ErrorData, ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, tool, tool_handler, tool_router};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PROVIDER_KEY: &str = "sk-scan-provider-7f3a9c41d2";
const BEARER: &str = "pat-scan-bearer-51be0a77c9";
const ACCESS_TOKEN: &str = "oauth-scan-access-0c8d2e6f1b";
const REFRESH_TOKEN: &str = "oauth-scan-refresh-93aa17e4d5";
const CLIENT_SECRET: &str = "oauth-scan-client-secret-66f0b2";
const PROXY_USER: &str = "scan-proxy-user-4e1d";
const PROXY_PASSWORD: &str = "scan-proxy-pass-b7c2a9";

/// One tool that says who called it.
#[derive(Clone)]
struct Whoami {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Whoami {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    #[tool(description = "Says that the caller was let in.")]
    async fn whoami(&self) -> Result<CallToolResult, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text("you were let in")]))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Whoami {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

fn mcp_service() -> StreamableHttpService<Whoami, LocalSessionManager> {
    StreamableHttpService::new(|| Ok(Whoami::new()), Default::default(), StreamableHttpServerConfig::default())
}

/// What the servers saw: each accepted `Authorization` value, by endpoint.
#[derive(Clone, Default)]
struct Seen(Arc<Mutex<Vec<String>>>);

impl Seen {
    fn push(&self, what: String) {
        self.0.lock().unwrap().push(what);
    }
    fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

async fn require(State((expected, seen)): State<(String, Seen)>, request: Request, next: Next) -> Response {
    let presented = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).unwrap_or_default();
    if presented != expected {
        return (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], "sign in").into_response();
    }
    seen.push(format!("{} {presented}", request.uri().path()));
    next.run(request).await
}

/// Two MCP endpoints and an authorization server on one origin: `/pat/mcp`
/// wants a fixed bearer token, `/oauth/mcp` one issued by `/token` after the
/// authorization code flow.
async fn remote_servers(seen: Seen) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let prm = json!({"resource": format!("{base}/oauth/mcp"), "authorization_servers": [base.clone()]});
    let asm = json!({
        "issuer": base.clone(),
        "authorization_endpoint": format!("{base}/authorize"),
        "token_endpoint": format!("{base}/token"),
        "registration_endpoint": format!("{base}/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
    });
    let pat = axum::Router::new()
        .nest_service("/pat/mcp", mcp_service())
        .layer(axum::middleware::from_fn_with_state((format!("Bearer {BEARER}"), seen.clone()), require));
    let oauth = axum::Router::new()
        .nest_service("/oauth/mcp", mcp_service())
        .layer(axum::middleware::from_fn_with_state((format!("Bearer {ACCESS_TOKEN}"), seen.clone()), require));
    let registered = seen.clone();
    let router = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/oauth/mcp", get(move || async move { axum::Json(prm) }))
        .route("/.well-known/oauth-authorization-server", get(move || async move { axum::Json(asm) }))
        .route(
            "/register",
            post(move |body: axum::Json<serde_json::Value>| async move {
                registered.push("register".into());
                let mut answer = body.0;
                answer["client_id"] = json!("scan-client");
                answer["client_secret"] = json!(CLIENT_SECRET);
                (StatusCode::CREATED, axum::Json(answer))
            }),
        )
        .route(
            "/authorize",
            get(|Query(query): Query<BTreeMap<String, String>>| async move {
                Redirect::to(&format!("{}?code=scan-code&state={}", query["redirect_uri"], query["state"]))
            }),
        )
        .route(
            "/token",
            post(|| async {
                axum::Json(json!({
                    "access_token": ACCESS_TOKEN, "token_type": "Bearer", "expires_in": 3600,
                    "refresh_token": REFRESH_TOKEN,
                }))
            }),
        )
        .merge(pat)
        .merge(oauth);
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    base
}

/// A browser that follows the authorization page's redirect back to Patchbay.
struct Browser;

#[async_trait::async_trait]
impl AuthorizationUi for Browser {
    async fn open(&self, _server: &str, url: &str) -> Result<(), String> {
        let client = reqwest::Client::builder().no_proxy().build().map_err(|e| e.to_string())?;
        client.get(url).send().await.map_err(|e| e.to_string())?;
        Ok(())
    }
}

fn remote(name: &str, url: String, headers: BTreeMap<String, ValueSource>) -> McpServerConfig {
    let mut config = McpServerConfig::with_transport(name, TransportConfig::StreamableHttp { url, headers });
    config.approval = ApprovalMode::Allow;
    config
}

async fn wait_ready(app: &App, name: &str) {
    for _ in 0..300 {
        let servers = app.list_servers().unwrap();
        let server = servers.iter().find(|s| s.config.name == name).expect("configured");
        if server.status.state == "ready" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} did not become ready: {:?}", app.list_servers().unwrap());
}

/// Every file below `dir`, with its bytes.
fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.push((path, bytes));
        }
    }
    out
}

/// Logs like the desktop app: into the data dir's log file, here with
/// Patchbay's debug lines as well.
fn log_to(dir: &DataDir) {
    use tracing_subscriber::prelude::*;
    let file = patchbay_core::logfile::LogFile::open(&dir.log_file()).unwrap();
    tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::new("info,patchbay_core=debug"))
        .with(tracing_subscriber::fmt::layer().with_ansi(false).with_writer(Mutex::new(file)))
        .init();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_secret_of_a_session_is_left_in_the_data_dir_logs_backups_or_exports() {
    let root = tempfile::tempdir().unwrap();
    let data = DataDir::new(root.path().join("data"));
    data.prepare().unwrap();
    log_to(&data);
    let secrets = Arc::new(MemoryStore::default());
    let app = App::open(data.clone(), Store::open(&data).unwrap(), secrets.clone(), AppEvents::unwatched())
        .unwrap()
        .with_env(|_| None);
    app.start().unwrap();

    // A proxy with a login for every request.
    let proxy = RecordingProxy::start().await.unwrap();
    let proxy_url = proxy.url().replacen("http://", &format!("http://{PROXY_USER}:{PROXY_PASSWORD}@"), 1);
    let settings = app.get_settings().unwrap();
    app.save_settings(&GeneralSettings {
        proxy: ProxyChoice::Custom { url: proxy_url },
        auto_title: false,
        ..settings
    })
    .unwrap();

    // Two remote servers: one with a bearer token typed in the editor, one signed in with OAuth.
    let seen = Seen::default();
    let base = remote_servers(seen.clone()).await;
    let header = "mcp/patsrv/header/Authorization";
    let headers = BTreeMap::from([("Authorization".to_owned(), ValueSource::Secret(header.into()))]);
    let secret = BTreeMap::from([(header.to_owned(), format!("Bearer {BEARER}"))]);
    app.save_server(remote("patsrv", format!("{base}/pat/mcp"), headers), &secret).await.unwrap();
    app.save_server(remote("oauthsrv", format!("{base}/oauth/mcp"), BTreeMap::new()), &BTreeMap::new()).await.unwrap();
    app.authorize_server("oauthsrv", &Browser, CancellationToken::new()).await.unwrap();
    wait_ready(&app, "patsrv").await;
    wait_ready(&app, "oauthsrv").await;

    // A provider with its key, and a turn that calls both servers' tools.
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_1", "patsrv__whoami", &["{}"]), ("call_2", "oauthsrv__whoami", &["{}"])]),
            openai::text_reply(&["Both let me in."]),
        ],
    )
    .await
    .unwrap();
    let profile = ProviderProfile::openai_compatible("scripted", format!("{}/v1", model.url()), "scripted-model");
    app.save_provider(profile, Some(PROVIDER_KEY)).unwrap();
    let conversation = app.create_conversation(None).unwrap();
    let mut events = Vec::new();
    let input = TurnInput::Send { text: "Who am I to both servers?".into(), attachments: vec![] };
    let answering = app.clone();
    app.run_turn(&conversation.id, input, |e| {
        if let TurnEvent::ApprovalNeeded { call_id, .. } = &e {
            answering.respond_approval(call_id, ApprovalAnswer::AllowOnce).unwrap();
        }
        events.push(e);
    })
    .await
    .unwrap();
    let results = events.iter().filter(|e| matches!(e, TurnEvent::ToolResult { result, .. } if !result.is_error));
    assert_eq!(results.count(), 2, "{events:#?}");

    // Every secret was used for real.
    let authorization = model.requests()[0].headers.get("authorization").cloned();
    assert_eq!(authorization.as_deref(), Some(format!("Bearer {PROVIDER_KEY}").as_str()));
    let seen = seen.all();
    assert!(seen.iter().any(|s| s.starts_with("/pat/mcp") && s.ends_with(BEARER)), "{seen:?}");
    assert!(seen.iter().any(|s| s.starts_with("/oauth/mcp") && s.ends_with(ACCESS_TOKEN)), "{seen:?}");
    assert!(seen.iter().any(|s| s == "register"), "dynamic registration gave the client secret: {seen:?}");
    assert!(!proxy.seen().is_empty(), "the requests went through the proxy");

    // What Patchbay writes: a backup and every export, beside the data dir.
    let kept = root.path().join("kept");
    std::fs::create_dir_all(&kept).unwrap();
    app.backup(&kept.join("backup.db"), false).unwrap();
    let formats =
        [ExportFormat::Claude, ExportFormat::Vscode, ExportFormat::Zed, ExportFormat::Opencode, ExportFormat::Patchbay];
    for (i, format) in formats.into_iter().enumerate() {
        std::fs::write(kept.join(format!("config-{i}.json")), app.export_config(format, false).unwrap()).unwrap();
        for server in ["patsrv", "oauthsrv"] {
            std::fs::write(kept.join(format!("{server}-{i}.json")), app.export_server(server, format).unwrap())
                .unwrap();
        }
    }
    for format in [ConversationFormat::Markdown, ConversationFormat::Json] {
        let file = app.export_conversation(&conversation.id, format).unwrap();
        std::fs::write(kept.join(format!("conversation.{}", format.extension())), file.text).unwrap();
    }
    app.shutdown().await;

    let values = [PROVIDER_KEY, BEARER, ACCESS_TOKEN, REFRESH_TOKEN, CLIENT_SECRET, PROXY_USER, PROXY_PASSWORD];
    let scanned = files(root.path());
    assert!(scanned.iter().any(|(p, _)| p.ends_with("patchbay.db")), "the database was scanned");
    assert!(scanned.iter().any(|(p, _)| p == &data.log_file()), "the log was scanned");
    let log = String::from_utf8_lossy(&std::fs::read(data.log_file()).unwrap()).into_owned();
    assert!(log.contains("oauthsrv"), "the log speaks of the session: {log}");
    let mut found = Vec::new();
    for (path, bytes) in &scanned {
        for value in values {
            if memchr::memmem::find(bytes, value.as_bytes()).is_some() {
                found.push(format!("{value} in {}", path.display()));
            }
        }
    }
    assert!(found.is_empty(), "secrets left on disk: {found:#?}");
}
