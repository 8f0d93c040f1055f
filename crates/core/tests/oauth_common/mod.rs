//! Helpers for the OAuth tests: a scripted authorization server on
//! `127.0.0.1` (protected-resource metadata for its `/mcp`, authorization
//! server metadata whose endpoints a test chooses, registration and token
//! endpoints that record what reaches them) and front ends for
//! [`patchbay_core::mcp::oauth::authorize`].

#![allow(dead_code, reason = "each test file uses a different part")]

use std::sync::{Arc, Mutex};

use axum::routing::{get, post};
use patchbay_core::mcp::oauth::AuthorizationUi;
use serde_json::{Value, json};

/// What reached the scripted server's registration and token endpoints.
#[derive(Debug, Default, Clone)]
pub struct Seen {
    pub registrations: u32,
    /// The body of each token request.
    pub tokens: Vec<String>,
}

/// A running scripted authorization server.
pub struct Scripted {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    pub seen: Arc<Mutex<Seen>>,
    _server: tokio_util::task::AbortOnDropHandle<()>,
}

impl Scripted {
    /// The MCP server's URL, whose metadata points here.
    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    pub fn seen(&self) -> Seen {
        self.seen.lock().unwrap().clone()
    }
}

/// The endpoints of the metadata; `None` keeps the scripted server's own.
#[derive(Debug, Default, Clone)]
pub struct Endpoints {
    pub authorization: Option<String>,
    pub token: Option<String>,
    pub registration: Option<String>,
}

/// Starts a scripted authorization server whose metadata names `endpoints`
/// (its own `/authorize`, `/token` and `/register` where `None`).
pub async fn authorization_server(endpoints: Endpoints) -> Scripted {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let own = |path: &str, chosen: Option<String>| chosen.unwrap_or_else(|| format!("{base}{path}"));
    let prm = json!({"resource": format!("{base}/mcp"), "authorization_servers": [base.clone()]});
    let asm = json!({
        "issuer": base.clone(),
        "authorization_endpoint": own("/authorize", endpoints.authorization),
        "token_endpoint": own("/token", endpoints.token),
        "registration_endpoint": own("/register", endpoints.registration),
        "response_types_supported": ["code"],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
        "token_endpoint_auth_methods_supported": ["none", "client_secret_post"],
    });
    let seen = Arc::new(Mutex::new(Seen::default()));
    let (on_register, on_token) = (seen.clone(), seen.clone());
    let router = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(move || async move { axum::Json(prm) }))
        .route("/.well-known/oauth-authorization-server", get(move || async move { axum::Json(asm) }))
        .route(
            "/register",
            post(move |axum::Json(request): axum::Json<Value>| async move {
                on_register.lock().unwrap().registrations += 1;
                (
                    axum::http::StatusCode::CREATED,
                    axum::Json(json!({"client_id": "registered-client", "redirect_uris": request["redirect_uris"]})),
                )
            }),
        )
        .route(
            "/token",
            post(move |body: String| async move {
                on_token.lock().unwrap().tokens.push(body);
                axum::Json(json!({"access_token": "scripted-access-token", "token_type": "Bearer", "expires_in": 3600}))
            }),
        );
    let server = tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    Scripted { base, seen, _server: tokio_util::task::AbortOnDropHandle::new(server) }
}

/// A front end that records the pages it is asked to open and opens none.
#[derive(Default)]
pub struct Recording {
    pub opened: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl AuthorizationUi for Recording {
    async fn open(&self, _server: &str, url: &str) -> Result<(), String> {
        self.opened.lock().unwrap().push(url.to_owned());
        Err("this test opens no page".into())
    }
}

/// The `redirect_uri` and `state` of an authorization URL.
pub fn redirect_and_state(auth_url: &str) -> (String, String) {
    let url = reqwest::Url::parse(auth_url).unwrap();
    let find = |name: &str| url.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.into_owned()).unwrap();
    (find("redirect_uri"), find("state"))
}
