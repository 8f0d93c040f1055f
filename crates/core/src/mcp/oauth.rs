//! OAuth for remote MCP servers, on rmcp's `auth` support.
//!
//! [`authorize`] runs a desktop app's authorization-code flow: discovery (rmcp's, plus the
//! 2025-03-26 fallback), client registration, PKCE and a loopback redirect on `127.0.0.1`, which
//! other programs can reach too, so it ends only on the answer carrying the sign-in's `state`. The
//! server's metadata decides where the browser goes, so every endpoint is checked first
//! ([`OAuthError::UnsafeEndpoint`]); opening the browser is the front end's job ([`AuthorizationUi`]).
//! Tokens and the client id live in the [`SecretStore`] under `mcp/<server>/oauth`, never in SQLite
//! ([`stored`] reloads them).
//!
//! [`ClientGrant`] is the `client_credentials` grant (SEP-1046), tokens kept in memory only;
//! [`enterprise_token`] is enterprise-managed authorization (SEP-990). [`StepUpClient`] signs in
//! again for the union of scopes ([`scope_union`]) when a request is refused, through
//! [`Reauthorize`], at most [`MAX_AUTHORIZATIONS`] times; without one the refusal is
//! [`super::McpError::SignInRequired`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::auth::enterprise::{
    EmaAuthorizationServer, EmaClientAuthentication, EmaError, EmaExchangeRequest,
};
use rmcp::transport::auth::{
    AuthorizationMetadata, ClientCredentialsConfig, JwtSigningAlgorithm, OAuthState, default_oauth_http_client,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, InsufficientScopeError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use rmcp::transport::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationRequest, AuthorizationSession, CredentialStore,
    StoredCredentials, WWWAuthenticateParams,
};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::AbortOnDropHandle;

use super::wire::http::{Lossless, pass_streams_through};
use crate::config::import::oauth_secret_name;
use crate::config::{ClientCredentials, ClientKey, JwtAlgorithm};
use crate::secrets::{SecretStore, SecretValue};

/// The path the loopback listener answers.
pub const CALLBACK_PATH: &str = "/callback";

/// How long one metadata request may take.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(10);

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
        source: Box<AuthError>,
    },
    /// The loopback listener could not be opened or read.
    #[error("OAuth for {server}: the local redirect listener failed: {source}")]
    Listener {
        server: String,
        #[source]
        source: std::io::Error,
    },
    /// The server's metadata names an endpoint that is neither `https` nor
    /// `http` to this computer ([`crate::net::is_secure_web`]): it is not
    /// opened or posted to.
    #[error(
        "OAuth for {server}: the server's metadata names {} as its {endpoint}; only https, or http to this computer, is opened or sent credentials",
        destination(scheme, host.as_deref())
    )]
    UnsafeEndpoint { server: String, endpoint: Endpoint, scheme: String, host: Option<String> },
    /// The front end could not show the authorization page.
    #[error("OAuth for {server}: the authorization page could not be opened: {reason}")]
    Open { server: String, reason: String },
    /// The user did not finish in time (or the flow was cancelled).
    #[error("OAuth for {server}: no answer from the browser within {} s", after.as_secs())]
    Timeout { server: String, after: Duration },
    /// Cancelled.
    #[error("OAuth for {server} was cancelled")]
    Cancelled { server: String },
    /// An enterprise-managed exchange (identity provider, then the server's
    /// authorization server) was refused or answered something unusable.
    #[error("enterprise sign-in for {server} failed: {source}")]
    Enterprise {
        server: String,
        #[source]
        source: EmaError,
    },
}

/// An endpoint named by a server's OAuth metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Endpoint {
    /// The authorization server itself (its `issuer`, where the
    /// protected-resource metadata sent discovery).
    Issuer,
    /// The page the browser opens (`authorization_endpoint`).
    Authorization,
    /// Where codes, refresh tokens and client secrets are posted (`token_endpoint`).
    Token,
    /// Where the client registers itself (`registration_endpoint`).
    Registration,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Issuer => "authorization server (issuer)",
            Self::Authorization => "authorization endpoint",
            Self::Token => "token endpoint",
            Self::Registration => "registration endpoint",
        })
    }
}

/// "http://example.com", "a file: URL without a host", for [`OAuthError::UnsafeEndpoint`].
fn destination(scheme: &str, host: Option<&str>) -> String {
    match host {
        _ if scheme.is_empty() => "a URL that cannot be read".to_owned(),
        Some(host) if !host.is_empty() => format!("{scheme}://{host}"),
        _ => format!("a {scheme}: URL without a host"),
    }
}

/// Refuses `metadata` when one of its endpoints is neither `https` nor `http`
/// to this computer, before anything is opened or posted.
fn check_endpoints(server: &str, metadata: &AuthorizationMetadata) -> Result<(), OAuthError> {
    let endpoints = [
        (Endpoint::Issuer, metadata.issuer.as_deref()),
        (Endpoint::Authorization, Some(metadata.authorization_endpoint.as_str())),
        (Endpoint::Token, Some(metadata.token_endpoint.as_str())),
        (Endpoint::Registration, metadata.registration_endpoint.as_deref()),
    ];
    for (endpoint, url) in endpoints {
        let Some(url) = url else { continue };
        let parsed = url::Url::parse(url.trim());
        if parsed.as_ref().is_ok_and(crate::net::is_secure_web) {
            continue;
        }
        let (scheme, host) = match &parsed {
            Ok(url) => (url.scheme().to_owned(), url.host_str().map(str::to_owned)),
            Err(_) => (String::new(), None),
        };
        return Err(OAuthError::UnsafeEndpoint { server: server.to_owned(), endpoint, scheme, host });
    }
    Ok(())
}

/// Discovers the authorization server of the MCP server at `url` (from its
/// `challenge`, when it sent one) and sets its metadata on `manager`, once
/// [`check_endpoints`] accepts it; returns that metadata. Every flow starts
/// here, so no endpoint is used unchecked.
async fn discover(
    server: &str,
    url: &str,
    manager: &mut AuthorizationManager,
    challenge: Option<&str>,
) -> Result<AuthorizationMetadata, OAuthError> {
    let flow = |source| OAuthError::Flow { server: server.to_owned(), source: Box::new(source) };
    let metadata = match manager.resolve_metadata_from_challenge(challenge).await {
        Ok(resolution) => resolution.metadata,
        // A 2025-03-26 server: no protected-resource metadata, and the
        // authorization server's metadata at the MCP server's origin names an
        // issuer with a path. Accepted only when no resource metadata exists.
        Err(AuthError::AuthorizationServerMismatch { .. }) if !has_resource_metadata(url).await => {
            origin_metadata(url).await.map_err(flow)?
        }
        Err(e) => return Err(flow(e)),
    };
    check_endpoints(server, &metadata)?;
    manager.set_metadata(metadata.clone());
    Ok(metadata)
}

/// Shows the authorization page to the user: the desktop opens the browser,
/// the CLI prints the URL (and tries `xdg-open`).
#[async_trait::async_trait]
pub trait AuthorizationUi: Send + Sync {
    /// Opens `url` for `server`'s authorization.
    async fn open(&self, server: &str, url: &str) -> Result<(), String>;
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
    let flow = |source| OAuthError::Flow { server: server.to_owned(), source: Box::new(source) };
    let store = SecretCredentials { secrets, name: oauth_secret_name(server) };
    if store.load().await.map_err(flow)?.is_none() {
        return Ok(None);
    }
    let mut manager = AuthorizationManager::new_allowing_private_addresses(url).await.map_err(flow)?;
    manager.set_credential_store(store);
    // Refreshing posts the refresh token to the token endpoint.
    discover(server, url, &mut manager, None).await?;
    Ok(manager.initialize_from_store().await.map_err(flow)?.then_some(manager))
}

/// Options of one authorization.
#[derive(Debug, Clone, Default)]
pub struct AuthorizeOptions {
    /// The server's `WWW-Authenticate` challenge, when it sent one.
    pub challenge: Option<String>,
    /// A client registered beforehand (id, optional secret); else dynamic registration.
    pub client: Option<(String, Option<SecretValue>)>,
    /// How long to wait for the browser ([`DEFAULT_WAIT`] when `None`).
    pub wait: Option<Duration>,
    /// The scopes to ask for; empty lets rmcp choose (the challenge's scope,
    /// else the server's `scopes_supported`). A step-up sets the union
    /// ([`scope_union`]).
    pub scopes: Vec<String>,
    /// The https URL of a client ID metadata document describing Patchbay, used as the
    /// client id where the authorization server supports such documents (else dynamic
    /// registration); a pre-registered client comes first.
    pub client_metadata_url: Option<String>,
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
    let flow = |source| OAuthError::Flow { server: server.to_owned(), source: Box::new(source) };
    let listener = |source| OAuthError::Listener { server: server.to_owned(), source };
    let socket = TcpListener::bind(("127.0.0.1", 0)).await.map_err(listener)?;
    let redirect_uri = format!("http://127.0.0.1:{}{CALLBACK_PATH}", socket.local_addr().map_err(listener)?.port());

    let mut manager = AuthorizationManager::new_allowing_private_addresses(url).await.map_err(flow)?;
    manager.set_credential_store(SecretCredentials { secrets, name: oauth_secret_name(server) });
    discover(server, url, &mut manager, options.challenge.as_deref()).await?;
    let mut request = AuthorizationRequest::new(&redirect_uri).with_client_name("Patchbay");
    if !options.scopes.is_empty() {
        request = request.with_scopes(options.scopes);
    }
    if let Some(url) = options.client_metadata_url {
        request = request.with_client_metadata_url(url);
    }
    if let Some((id, secret)) = options.client {
        request = request.with_preregistered_client(id);
        if let Some(secret) = secret {
            request = request.with_client_secret(secret.expose());
        }
    }
    let session = AuthorizationSession::new(manager, request).await.map_err(|(_, e)| flow(e))?;
    let auth_url = session.auth_url.clone();
    let expected = callback_state(&auth_url).ok_or_else(|| {
        flow(AuthError::InternalError("the authorization URL carries no state to check the answer by".into()))
    })?;
    // Listen before the page opens: the browser may come back at once.
    let mut receiver = AbortOnDropHandle::new(tokio::spawn(receive_callback(socket, expected)));
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
    let mut state = OAuthState::Session(session);
    state.handle_callback_url(&format!("http://127.0.0.1{callback}")).await.map_err(flow)?;
    state
        .into_authorization_manager()
        .ok_or_else(|| flow(AuthError::InternalError("the authorization did not complete after the callback".into())))
}

/// Where a server publishes protected-resource metadata (RFC 9728): with its
/// path inserted first, then at the root.
fn resource_metadata_urls(url: &reqwest::Url) -> Vec<reqwest::Url> {
    let path = url.path().trim_matches('/');
    let mut paths = Vec::new();
    if !path.is_empty() {
        paths.push(format!("/.well-known/oauth-protected-resource/{path}"));
    }
    paths.push("/.well-known/oauth-protected-resource".to_owned());
    paths.into_iter().map(|p| at_path(url, &p)).collect()
}

/// The 2025-03-26 place of authorization-server metadata: the MCP server's origin.
fn origin_metadata_url(url: &reqwest::Url) -> reqwest::Url {
    at_path(url, "/.well-known/oauth-authorization-server")
}

fn at_path(url: &reqwest::Url, path: &str) -> reqwest::Url {
    let mut out = url.clone();
    out.set_path(path);
    out.set_query(None);
    out.set_fragment(None);
    out
}

/// Whether the server at `url` publishes protected-resource metadata.
async fn has_resource_metadata(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else { return false };
    let http = crate::net::client();
    for candidate in resource_metadata_urls(&url) {
        let answer = http.get(candidate).timeout(DISCOVERY_TIMEOUT).send().await;
        if answer.is_ok_and(|r| r.status().is_success()) {
            return true;
        }
    }
    false
}

/// The authorization-server metadata at the MCP server's origin.
async fn origin_metadata(url: &str) -> Result<AuthorizationMetadata, AuthError> {
    let url = reqwest::Url::parse(url)?;
    let response = crate::net::client()
        .get(origin_metadata_url(&url))
        .timeout(DISCOVERY_TIMEOUT)
        .send()
        .await?
        .error_for_status()?;
    Ok(response.json().await?)
}

/// The `state` the authorization URL carries: the answer must bring it back.
fn callback_state(auth_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(auth_url).ok()?;
    url.query_pairs().find(|(key, _)| key == "state").map(|(_, value)| value.into_owned())
}

/// Waits for the browser's request to the callback path with the `state`
/// Patchbay sent; answers it with a page that says the window can be closed;
/// returns the path with its query. Any other program on this computer can
/// connect too, so connections are served side by side (at most
/// [`MAX_CALLBACK_CONNECTIONS`] at once, each bounded by [`serve_callback`]),
/// and a request without the expected state is answered and ignored.
async fn receive_callback(socket: TcpListener, expected: String) -> std::io::Result<String> {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CALLBACK_CONNECTIONS));
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accept = async {
            let slot = slots.clone().acquire_owned().await.expect("the semaphore is never closed");
            (socket.accept().await, slot)
        };
        tokio::select! {
            Some(served) = connections.join_next() => {
                if let Ok(Some(target)) = served {
                    return Ok(target);
                }
            }
            (accepted, slot) = accept => {
                let (stream, _) = accepted?;
                let expected = expected.clone();
                connections.spawn(async move {
                    let _slot = slot;
                    serve_callback(stream, &expected).await
                });
            }
        }
    }
}

/// How many connections the loopback listener serves at once; more wait.
const MAX_CALLBACK_CONNECTIONS: usize = 16;

/// The longest request head (request line and headers) the listener reads.
const MAX_CALLBACK_HEAD: u64 = 16 * 1024;

/// How long one connection to the listener has to send its request.
const CALLBACK_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves one connection to the loopback listener: reads at most
/// [`MAX_CALLBACK_HEAD`] bytes of its request within [`CALLBACK_READ_TIMEOUT`],
/// answers, and returns the request's path with its query when it is the
/// callback with the `expected` state.
async fn serve_callback<S: AsyncRead + AsyncWrite + Unpin>(stream: S, expected: &str) -> Option<String> {
    let (read, mut write) = tokio::io::split(stream);
    let head = tokio::time::timeout(CALLBACK_READ_TIMEOUT, read_request_target(read)).await;
    let target = match head {
        Ok(Ok(Some(target))) => target,
        Ok(Ok(None)) => {
            let _ = respond(&mut write, "431 Request Header Fields Too Large", "The request is too long.").await;
            return None;
        }
        // Silent past the limit, or gone: nothing to answer.
        Ok(Err(_)) | Err(_) => return None,
    };
    let (path, query) = target.split_once('?').unwrap_or((&target, ""));
    let state = url::form_urlencoded::parse(query.as_bytes()).find(|(key, _)| key == "state").map(|(_, v)| v);
    let ours = path == CALLBACK_PATH && state.as_deref() == Some(expected);
    let (status, body) = if ours {
        ("200 OK", "Patchbay has the answer to its sign-in. You can close this window.")
    } else if path == CALLBACK_PATH {
        ("400 Bad Request", "This is not the answer to Patchbay's sign-in: its state does not match.")
    } else {
        ("404 Not Found", "Not the Patchbay authorization callback.")
    };
    // The answer is Patchbay's either way; the browser's page is a courtesy.
    let _ = respond(&mut write, status, body).await;
    ours.then_some(target)
}

/// The target of an HTTP request ("/callback?code=…&state=…" of
/// "GET /callback?code=…&state=… HTTP/1.1"), read with its headers up to the
/// blank line; `None` when the head is longer than [`MAX_CALLBACK_HEAD`].
async fn read_request_target(read: impl AsyncRead + Unpin) -> std::io::Result<Option<String>> {
    let mut reader = BufReader::new(read.take(MAX_CALLBACK_HEAD));
    let mut line = Vec::new();
    let mut target = None;
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 || !line.ends_with(b"\n") {
            // The end of the stream, or of the bytes the listener reads.
            return match reader.get_ref().limit() {
                0 => Ok(None),
                _ => Err(std::io::ErrorKind::UnexpectedEof.into()),
            };
        }
        match &target {
            None => {
                let text = String::from_utf8_lossy(&line);
                target = Some(text.split_whitespace().nth(1).unwrap_or_default().to_owned());
            }
            Some(_) if line == b"\r\n" || line == b"\n" => return Ok(target),
            Some(_) => {}
        }
    }
}

async fn respond(write: &mut (impl AsyncWrite + Unpin), status: &str, body: &str) -> std::io::Result<()> {
    let response = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    write.write_all(response.as_bytes()).await?;
    write.shutdown().await
}

/// The `client_credentials` grant for one server: `credentials` from its
/// configuration with their key material read from the secret store.
/// [`Self::grant`] gets a token; as a [`Reauthorize`] it gets a new one when
/// the server refuses the current one (expired, or short of a scope).
pub struct ClientGrant {
    pub server: String,
    pub url: String,
    pub credentials: ClientCredentials,
    /// The client secret or the PEM private key.
    pub material: SecretValue,
    pub cancel: CancellationToken,
}

impl ClientGrant {
    /// Discovers the authorization server and asks it for a token for the
    /// configured scopes plus `more` (a step-up's); tokens stay in memory.
    pub async fn grant(&self, more: &[String]) -> Result<AuthorizationManager, OAuthError> {
        let server = &self.server;
        let flow = |source| OAuthError::Flow { server: server.clone(), source: Box::new(source) };
        let mut scopes = self.credentials.scopes.clone();
        for scope in more {
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        let (client_id, resource) = (self.credentials.client_id.clone(), Some(self.url.clone()));
        let config = match &self.credentials.key {
            ClientKey::Secret { .. } => ClientCredentialsConfig::ClientSecret {
                client_id,
                client_secret: self.material.expose().to_owned(),
                scopes,
                resource,
            },
            ClientKey::PrivateKey { algorithm, .. } => ClientCredentialsConfig::PrivateKeyJwt {
                client_id,
                signing_key: self.material.expose().as_bytes().to_vec(),
                signing_algorithm: signing_algorithm(*algorithm),
                token_endpoint_audience: None,
                scopes,
                resource,
            },
        };
        // rmcp's grant future is not `Send` (oauth2 holds a `&dyn Fn` across
        // an await), so it runs on a blocking thread, driven by this runtime.
        // rmcp's `authenticate_client_credentials`, with the metadata checked
        // ([`discover`]) before the secret is posted.
        let (server, url, cancel) = (server.clone(), self.url.clone(), self.cancel.clone());
        let handle = tokio::runtime::Handle::current();
        let run = move || {
            handle.block_on(async move {
                let flow = |source| OAuthError::Flow { server: server.clone(), source: Box::new(source) };
                let run = async {
                    let mut manager =
                        AuthorizationManager::new_allowing_private_addresses(url.as_str()).await.map_err(flow)?;
                    discover(&server, &url, &mut manager, None).await?;
                    manager.validate_client_credentials_metadata(&config).map_err(flow)?;
                    manager.configure_client_credentials(&config).map_err(flow)?;
                    manager.exchange_client_credentials(&config).await.map_err(flow)?;
                    Ok(manager)
                };
                tokio::select! {
                    () = cancel.cancelled() => Err(OAuthError::Cancelled { server: server.clone() }),
                    result = run => result,
                }
            })
        };
        tokio::task::spawn_blocking(run).await.map_err(|join| flow(AuthError::InternalError(join.to_string())))?
    }
}

#[async_trait::async_trait]
impl Reauthorize for ClientGrant {
    async fn reauthorize(&self, _challenge: &str, scopes: Vec<String>) -> Result<AuthorizationManager, OAuthError> {
        self.grant(&scopes).await
    }
}

fn signing_algorithm(algorithm: JwtAlgorithm) -> JwtSigningAlgorithm {
    match algorithm {
        JwtAlgorithm::ES256 => JwtSigningAlgorithm::ES256,
        JwtAlgorithm::ES384 => JwtSigningAlgorithm::ES384,
        JwtAlgorithm::RS256 => JwtSigningAlgorithm::RS256,
        JwtAlgorithm::RS384 => JwtSigningAlgorithm::RS384,
        JwtAlgorithm::RS512 => JwtSigningAlgorithm::RS512,
    }
}

/// An organisation's identity provider (IdP) and the user's ID token from it,
/// with the client Patchbay is registered as at the server's authorization
/// server: the inputs of [`enterprise_token`].
pub struct EnterpriseGrant {
    /// The IdP's issuer, as in its metadata.
    pub idp_issuer: String,
    /// The IdP's token endpoint.
    pub idp_token_endpoint: String,
    /// Patchbay's client id at the IdP.
    pub idp_client_id: String,
    /// The user's ID token from the IdP (never logged).
    pub id_token: String,
    /// Patchbay's client id at the server's authorization server.
    pub client_id: String,
    /// Its client secret there (`client_secret_basic`).
    pub client_secret: String,
}

/// Enterprise-managed authorization (SEP-990) for the server at `url`: finds
/// its authorization server (as [`authorize`] does), exchanges the ID token at
/// the IdP for an ID-JAG bound to that server (RFC 8693), and the ID-JAG at the
/// authorization server for an access token (RFC 7523). Returns the token.
pub async fn enterprise_token(
    server: &str,
    url: &str,
    grant: &EnterpriseGrant,
    cancel: &CancellationToken,
) -> Result<String, OAuthError> {
    let flow = |source| OAuthError::Flow { server: server.to_owned(), source: Box::new(source) };
    let enterprise = |source| OAuthError::Enterprise { server: server.to_owned(), source };
    let run = async {
        let mut manager = AuthorizationManager::new_allowing_private_addresses(url).await.map_err(flow)?;
        let metadata = discover(server, url, &mut manager, None).await?;
        let issuer = metadata.issuer.clone().ok_or_else(|| {
            flow(AuthError::InternalError("the authorization server's metadata names no issuer".into()))
        })?;
        let idp = EmaAuthorizationServer::new(&grant.idp_issuer, &grant.idp_token_endpoint, &grant.idp_client_id);
        let resource_as = EmaAuthorizationServer::new(issuer, metadata.token_endpoint, &grant.client_id)
            .with_client_authentication(EmaClientAuthentication::ClientSecretBasic(oauth2::ClientSecret::new(
                grant.client_secret.clone(),
            )));
        let http = default_oauth_http_client().map_err(flow)?;
        let token = EmaExchangeRequest::new_with_id_token(idp, resource_as, url, &grant.id_token)
            .exchange(&http, &http)
            .await
            .map_err(enterprise)?;
        Ok(token.access_token.secret().clone())
    };
    tokio::select! {
        () = cancel.cancelled() => Err(OAuthError::Cancelled { server: server.to_owned() }),
        result = run => result,
    }
}

/// How many times one request may be authorized again before it fails: the
/// spec asks clients to bound step-up retries so a server that never accepts
/// does not loop the user through the browser.
pub const MAX_AUTHORIZATIONS: u32 = 3;

/// Authorizes again when a server asks for it in the middle of a session (a
/// later request answers 401, or 403 `insufficient_scope`). The desktop app
/// passes none: the error then reaches the registry, which marks the server as
/// needing sign-in ([`super::McpError::SignInRequired`]).
#[async_trait::async_trait]
pub trait Reauthorize: Send + Sync {
    /// Runs a new authorization for `scopes` after the server's `challenge`.
    async fn reauthorize(&self, challenge: &str, scopes: Vec<String>) -> Result<AuthorizationManager, OAuthError>;
}

/// [`Reauthorize`] through [`authorize`]: the page opens through `ui` again.
pub struct Interactive {
    pub server: String,
    pub url: String,
    pub secrets: Arc<dyn SecretStore>,
    pub ui: Arc<dyn AuthorizationUi>,
    /// A client registered beforehand (id, optional secret).
    pub client: Option<(String, Option<SecretValue>)>,
    /// See [`AuthorizeOptions::client_metadata_url`].
    pub client_metadata_url: Option<String>,
    pub cancel: CancellationToken,
}

#[async_trait::async_trait]
impl Reauthorize for Interactive {
    async fn reauthorize(&self, challenge: &str, scopes: Vec<String>) -> Result<AuthorizationManager, OAuthError> {
        let options = AuthorizeOptions {
            challenge: Some(challenge.to_owned()),
            client: self.client.clone(),
            wait: None,
            scopes,
            client_metadata_url: self.client_metadata_url.clone(),
        };
        authorize(&self.server, &self.url, self.secrets.clone(), self.ui.as_ref(), options, &self.cancel).await
    }
}

/// The scopes already granted plus those `required` (a challenge's
/// space-separated `scope`) adds, in order and without repeats: a step-up
/// keeps what the session could already do.
pub fn scope_union(granted: &[String], required: Option<&str>) -> Vec<String> {
    let mut scopes = granted.to_vec();
    for scope in required.unwrap_or_default().split_whitespace() {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    scopes
}

/// The streamable HTTP client of a remote server: rmcp's [`AuthClient`] (token
/// on every request, one silent refresh when it is rejected) plus step-up: a
/// request the server refuses with a challenge is authorized again through
/// [`Reauthorize`] for the union of the granted and the asked-for scopes, then
/// sent again, at most [`MAX_AUTHORIZATIONS`] times. Without a [`Reauthorize`]
/// (or past the limit) the request fails with the challenge.
#[derive(Clone)]
pub struct StepUpClient {
    inner: AuthClient<Lossless>,
    reauthorize: Option<Arc<dyn Reauthorize>>,
    limit: u32,
}

impl StepUpClient {
    /// A client on `manager` (signed in or not: without a token requests go
    /// out bare and a 401 drives the authorization).
    pub fn new(manager: AuthorizationManager, reauthorize: Option<Arc<dyn Reauthorize>>) -> Self {
        Self {
            inner: AuthClient::new(Lossless::new(crate::net::client()), manager),
            reauthorize,
            limit: MAX_AUTHORIZATIONS,
        }
    }

    /// Runs `call`, authorizing again on a challenge, within the limit.
    async fn stepping_up<T, F, Fut>(&self, uri: &str, call: F) -> Result<T, StreamableHttpError<reqwest::Error>>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<reqwest::Error>>>,
    {
        let mut authorized = 0;
        loop {
            let result = call().await;
            let challenge = match &result {
                Err(error) => error.auth_challenge().map(str::to_owned),
                Ok(_) => None,
            };
            let (Some(challenge), Some(reauthorize)) = (challenge, &self.reauthorize) else { return result };
            if authorized >= self.limit {
                return Err(StreamableHttpError::Auth(AuthError::AuthorizationFailed(format!(
                    "the server still refuses after {authorized} authorizations ({challenge})"
                ))));
            }
            authorized += 1;
            let base = reqwest::Url::parse(uri).map_err(AuthError::from)?;
            let required = WWWAuthenticateParams::parse(&challenge, &base).scope;
            let granted = self.inner.auth_manager.lock().await.get_current_scopes().await;
            let scopes = scope_union(&granted, required.as_deref());
            tracing::info!(%uri, attempt = authorized, ?scopes, "the server asks for authorization again");
            let manager = reauthorize
                .reauthorize(&challenge, scopes)
                .await
                .map_err(|e| StreamableHttpError::Auth(AuthError::AuthorizationFailed(e.to_string())))?;
            *self.inner.auth_manager.lock().await = manager;
        }
    }
}

impl StreamableHttpClient for StepUpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.stepping_up(&uri, || {
            let (uri, message, session_id) = (uri.clone(), message.clone(), session_id.clone());
            self.inner.post_message(uri, message, session_id, auth_header.clone(), custom_headers.clone())
        })
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
        self.stepping_up(&uri, || {
            let (uri, message, session_id) = (uri.clone(), message.clone(), session_id.clone());
            self.inner.post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_header.clone(),
                custom_headers.clone(),
                max_sse_event_size,
            )
        })
        .await
    }

    pass_streams_through!(inner);
}

/// Whether `error` (or what it wraps) says the server wants the user to
/// (re)authorize: a 401/403 challenge, or an authorization that is missing,
/// expired or was refused.
pub fn needs_sign_in(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.is::<AuthRequiredError>() || error.is::<InsufficientScopeError>() {
            return true;
        }
        if let Some(auth) = error.downcast_ref::<AuthError>() {
            return matches!(
                auth,
                AuthError::AuthorizationRequired
                    | AuthError::AuthorizationFailed(_)
                    | AuthError::TokenExpired
                    | AuthError::TokenRefreshRejected(_)
            );
        }
        current = error.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    const URL: &str = "http://127.0.0.1:9/mcp";

    #[test]
    fn metadata_is_looked_for_path_first_then_at_the_root_then_at_the_origin() {
        let url = reqwest::Url::parse("http://127.0.0.1:9/api/mcp?x=1").unwrap();
        let prm: Vec<String> = resource_metadata_urls(&url).iter().map(ToString::to_string).collect();
        assert_eq!(
            prm,
            [
                "http://127.0.0.1:9/.well-known/oauth-protected-resource/api/mcp",
                "http://127.0.0.1:9/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(origin_metadata_url(&url).as_str(), "http://127.0.0.1:9/.well-known/oauth-authorization-server");
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_that_sends_nothing_is_closed_after_the_read_timeout() {
        let (_client, server) = tokio::io::duplex(1024);
        let started = tokio::time::Instant::now();
        assert_eq!(serve_callback(server, "state").await, None);
        let waited = started.elapsed();
        assert!(
            waited >= CALLBACK_READ_TIMEOUT && waited < CALLBACK_READ_TIMEOUT + Duration::from_secs(1),
            "{waited:?}"
        );
    }

    #[tokio::test]
    async fn a_head_longer_than_the_limit_is_answered_431_after_reading_only_the_limit() {
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let serving = tokio::spawn(serve_callback(server, "state"));
        let line = format!("GET /callback?state=state&code={} HTTP/1.1\r\n", "x".repeat(MAX_CALLBACK_HEAD as usize));
        // The listener stops reading at the limit: the rest of the line is never read.
        let _ = client.write_all(line.as_bytes()).await;
        assert_eq!(serving.await.unwrap(), None);
        let mut answer = String::new();
        client.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
    }

    #[test]
    fn a_step_up_asks_for_the_granted_scopes_plus_the_new_ones() {
        let granted = vec!["mcp:basic".to_owned()];
        assert_eq!(scope_union(&granted, Some("mcp:basic mcp:write")), ["mcp:basic", "mcp:write"]);
        assert_eq!(scope_union(&[], Some(" mcp:read  mcp:read ")), ["mcp:read"]);
        assert_eq!(scope_union(&granted, None), ["mcp:basic"]);
    }

    /// Counts authorizations and records the scopes each asked for.
    #[derive(Default)]
    struct Counting {
        calls: AtomicU32,
        scopes: std::sync::Mutex<Vec<Vec<String>>>,
    }

    #[async_trait::async_trait]
    impl Reauthorize for Counting {
        async fn reauthorize(&self, _: &str, scopes: Vec<String>) -> Result<AuthorizationManager, OAuthError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            self.scopes.lock().unwrap().push(scopes);
            AuthorizationManager::new(URL)
                .await
                .map_err(|source| OAuthError::Flow { server: "s".into(), source: Box::new(source) })
        }
    }

    fn refused() -> StreamableHttpError<reqwest::Error> {
        let header = r#"Bearer error="insufficient_scope", scope="mcp:admin""#;
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(header.into(), Some("mcp:admin".into())))
    }

    #[tokio::test]
    async fn a_server_that_never_accepts_is_authorized_at_most_the_limit_then_fails() {
        let counting = Arc::new(Counting::default());
        let client = StepUpClient::new(AuthorizationManager::new(URL).await.unwrap(), Some(counting.clone()));
        let sent = AtomicU32::new(0);
        let result: Result<(), _> = client
            .stepping_up(URL, || {
                sent.fetch_add(1, Ordering::SeqCst);
                async { Err(refused()) }
            })
            .await;
        assert_eq!(counting.calls.load(Ordering::SeqCst), MAX_AUTHORIZATIONS);
        assert_eq!(sent.load(Ordering::SeqCst), MAX_AUTHORIZATIONS + 1, "sent once, then once per authorization");
        let error = result.unwrap_err();
        assert!(error.to_string().contains("still refuses after 3 authorizations"), "{error}");
        assert!(needs_sign_in(&error));
        assert_eq!(counting.scopes.lock().unwrap()[0], ["mcp:admin"]);
    }

    #[tokio::test]
    async fn a_request_refused_once_is_authorized_once_and_sent_again() {
        let counting = Arc::new(Counting::default());
        let client = StepUpClient::new(AuthorizationManager::new(URL).await.unwrap(), Some(counting.clone()));
        let sent = AtomicU32::new(0);
        let result = client
            .stepping_up(URL, || {
                let first = sent.fetch_add(1, Ordering::SeqCst) == 0;
                async move { if first { Err(refused()) } else { Ok(7) } }
            })
            .await;
        assert_eq!(result.unwrap(), 7);
        assert_eq!(counting.calls.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn without_a_reauthorizer_the_refusal_is_returned_and_means_sign_in() {
        let client = StepUpClient::new(AuthorizationManager::new(URL).await.unwrap(), None);
        let sent = AtomicU32::new(0);
        let error = client
            .stepping_up(URL, || {
                sent.fetch_add(1, Ordering::SeqCst);
                async { Err::<(), _>(refused()) }
            })
            .await
            .unwrap_err();
        assert_eq!(sent.load(Ordering::SeqCst), 1);
        assert!(matches!(error, StreamableHttpError::InsufficientScope(_)));
        assert!(needs_sign_in(&error));
        let other: StreamableHttpError<reqwest::Error> = StreamableHttpError::TransportChannelClosed;
        assert!(!needs_sign_in(&other));
    }
}
