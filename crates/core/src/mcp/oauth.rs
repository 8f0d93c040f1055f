//! OAuth for remote MCP servers, on rmcp's `auth` support.
//!
//! [`authorize`] runs the authorization-code flow a desktop app uses:
//! metadata discovery (from the server's `WWW-Authenticate` challenge or the
//! well-known documents), client registration (dynamic, or a client the user
//! registered before), PKCE, and a **loopback redirect**: a one-shot HTTP
//! listener on `127.0.0.1` receives the browser's redirect. Opening the
//! browser is the front end's job ([`AuthorizationUi`]). Tokens (and the
//! registered client id) are kept in the [`SecretStore`] under
//! `mcp/<server>/oauth`, never in SQLite; [`stored`] reloads them so a
//! restart does not ask again, and rmcp refreshes expired tokens.

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::OAuthState;
use rmcp::transport::{AuthError, AuthorizationManager, AuthorizationRequest, CredentialStore, StoredCredentials};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use crate::secrets::SecretStore;

/// The path the loopback listener answers.
pub const CALLBACK_PATH: &str = "/callback";

/// How long the user has to finish in the browser.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(300);

/// Errors of the OAuth flow.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    /// Discovery, registration, or the token exchange failed.
    #[error("OAuth for {server} failed: {source}")]
    Flow {
        server: String,
        #[source]
        source: AuthError,
    },
    /// The loopback listener could not be opened or read.
    #[error("OAuth for {server}: the local redirect listener failed: {source}")]
    Listener {
        server: String,
        #[source]
        source: std::io::Error,
    },
    /// The front end could not show the authorization page.
    #[error("OAuth for {server}: the authorization page could not be opened: {reason}")]
    Open { server: String, reason: String },
    /// The user did not finish in time (or the flow was cancelled).
    #[error("OAuth for {server}: no answer from the browser within {} s", after.as_secs())]
    Timeout { server: String, after: Duration },
    /// Cancelled.
    #[error("OAuth for {server} was cancelled")]
    Cancelled { server: String },
}

/// Shows the authorization page to the user: the desktop opens the browser,
/// the CLI prints the URL (and tries `xdg-open`).
#[async_trait::async_trait]
pub trait AuthorizationUi: Send + Sync {
    /// Opens `url` for `server`'s authorization.
    async fn open(&self, server: &str, url: &str) -> Result<(), String>;
}

/// The secret name that holds a server's OAuth credentials.
pub fn secret_name(server: &str) -> String {
    format!("mcp/{server}/oauth")
}

/// rmcp's credential store on Patchbay's secret store (the OS keyring).
struct SecretCredentials {
    secrets: Arc<dyn SecretStore>,
    name: String,
}

fn store_error(e: impl std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for SecretCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let (secrets, name) = (self.secrets.clone(), self.name.clone());
        let text = tokio::task::spawn_blocking(move || secrets.get(&name)).await.map_err(store_error)?;
        match text.map_err(store_error)? {
            Some(text) => serde_json::from_str(&text).map(Some).map_err(store_error),
            None => Ok(None),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let text = serde_json::to_string(&credentials).map_err(store_error)?;
        let (secrets, name) = (self.secrets.clone(), self.name.clone());
        tokio::task::spawn_blocking(move || secrets.set(&name, &text)).await.map_err(store_error)?.map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let (secrets, name) = (self.secrets.clone(), self.name.clone());
        tokio::task::spawn_blocking(move || secrets.delete(&name))
            .await
            .map_err(store_error)?
            .map(drop)
            .map_err(store_error)
    }
}

/// The authorization stored for `server` at `url`, if there is one.
pub async fn stored(
    server: &str,
    url: &str,
    secrets: Arc<dyn SecretStore>,
) -> Result<Option<AuthorizationManager>, OAuthError> {
    let flow = |source| OAuthError::Flow { server: server.to_owned(), source };
    let store = SecretCredentials { secrets, name: secret_name(server) };
    if store.load().await.map_err(flow)?.is_none() {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new_allowing_private_addresses(url).await.map_err(flow)?;
    manager.set_credential_store(store);
    Ok(manager.initialize_from_store().await.map_err(flow)?.then_some(manager))
}

/// Options of one authorization.
#[derive(Debug, Clone, Default)]
pub struct AuthorizeOptions {
    /// The server's `WWW-Authenticate` challenge, when it sent one.
    pub challenge: Option<String>,
    /// A client registered beforehand (id, optional secret); else dynamic registration.
    pub client: Option<(String, Option<String>)>,
    /// How long to wait for the browser ([`DEFAULT_WAIT`] when `None`).
    pub wait: Option<Duration>,
}

/// Runs the authorization-code flow with PKCE and a loopback redirect; the
/// tokens end up in the secret store. Returns the authorized manager (use it
/// with rmcp's `AuthClient`).
pub async fn authorize(
    server: &str,
    url: &str,
    secrets: Arc<dyn SecretStore>,
    ui: &dyn AuthorizationUi,
    options: AuthorizeOptions,
    cancel: &CancellationToken,
) -> Result<AuthorizationManager, OAuthError> {
    let flow = |source| OAuthError::Flow { server: server.to_owned(), source };
    let listener = |source| OAuthError::Listener { server: server.to_owned(), source };
    let socket = TcpListener::bind(("127.0.0.1", 0)).await.map_err(listener)?;
    let redirect_uri = format!("http://127.0.0.1:{}{CALLBACK_PATH}", socket.local_addr().map_err(listener)?.port());

    let mut manager = AuthorizationManager::new_allowing_private_addresses(url).await.map_err(flow)?;
    manager.set_credential_store(SecretCredentials { secrets, name: secret_name(server) });
    let mut state = OAuthState::Unauthorized(manager);
    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name("Patchbay");
    if let Some(challenge) = options.challenge {
        request = request.with_challenge(challenge);
    }
    if let Some((id, secret)) = options.client {
        request = request.with_preregistered_client(id);
        if let Some(secret) = secret {
            request = request.with_client_secret(secret);
        }
    }
    state.start_authorization(request).await.map_err(flow)?;
    let auth_url = state.get_authorization_url().await.map_err(flow)?;
    // Listen before the page opens: the browser may come back at once.
    let mut receiver = AbortOnDropHandle::new(tokio::spawn(async move { receive_callback(&socket).await }));
    ui.open(server, &auth_url).await.map_err(|reason| OAuthError::Open { server: server.to_owned(), reason })?;

    let wait = options.wait.unwrap_or(DEFAULT_WAIT);
    let callback = tokio::select! {
        () = cancel.cancelled() => return Err(OAuthError::Cancelled { server: server.to_owned() }),
        answer = tokio::time::timeout(wait, &mut receiver) => match answer {
            Ok(Ok(answer)) => answer.map_err(listener)?,
            Ok(Err(join)) => return Err(listener(std::io::Error::other(join))),
            Err(_) => return Err(OAuthError::Timeout { server: server.to_owned(), after: wait }),
        },
    };
    state.handle_callback_url(&format!("http://127.0.0.1{callback}")).await.map_err(flow)?;
    state
        .into_authorization_manager()
        .ok_or_else(|| flow(AuthError::InternalError("the authorization did not complete after the callback".into())))
}

/// Waits for the browser's request to the callback path; answers it with a
/// page that says the window can be closed; returns the path with its query.
async fn receive_callback(socket: &TcpListener) -> std::io::Result<String> {
    loop {
        let (mut stream, _) = socket.accept().await?;
        let (read, mut write) = stream.split();
        let mut first = String::new();
        BufReader::new(read).read_line(&mut first).await?;
        // "GET /callback?code=…&state=… HTTP/1.1"
        let target = first.split_whitespace().nth(1).unwrap_or_default().to_owned();
        let ours = target.starts_with(CALLBACK_PATH);
        let (status, body) = if ours {
            ("200 OK", "Patchbay is authorized. You can close this window.")
        } else {
            ("404 Not Found", "Not the Patchbay authorization callback.")
        };
        let response = format!(
            "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        write.write_all(response.as_bytes()).await?;
        write.shutdown().await?;
        if ours {
            return Ok(target);
        }
    }
}
