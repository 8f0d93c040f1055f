//! Settings → Knowledge base → Share: the knowledge base served to other apps and computers over
//! HTTP (Streamable HTTP at `/mcp`, legacy SSE at `/sse`), as `patchbay kb serve --http` serves it.
//!
//! The server answers from the knowledge base as it is at each request, with the bearer token kept
//! in the keyring (the CLI's too), and records each request for the page's log. Its settings are
//! kept, so sharing resumes when Patchbay starts; a failure to listen is shown on the page, never
//! lost. Another computer may reach it only when the user allows it: the server speaks plain HTTP.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::views::{KbShare, KbShareClient, KbShareSettings};
use super::{App, AppError, AppEvent, AppEvents, lock};
use crate::rag::serve::{self, HttpServer, KbServer, RequestLog, Served};
use crate::secrets::SecretValue;

/// Where the share settings are kept.
const SETTING: &str = "kb.share";
/// Requests the log keeps, newest last.
const LOG_LENGTH: usize = 200;
/// The name the copied configurations give the server.
const SERVER_NAME: &str = "patchbay-knowledge";

/// The share settings as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Stored {
    enabled: bool,
    address: String,
    allow_remote: bool,
}

impl Default for Stored {
    fn default() -> Self {
        Self { enabled: false, address: "127.0.0.1:8765".into(), allow_remote: false }
    }
}

/// The requests a shared knowledge base answered or refused, newest last. A change is told to
/// the window ([`AppEvent::KbShareChanged`]) once until the window reads the log again: a
/// burst of requests (anyone who reaches the port can send them) is one event, not a flood.
pub(crate) struct ShareLog {
    requests: Mutex<VecDeque<Served>>,
    events: AppEvents,
    /// A change was told and the log not read since.
    told: AtomicBool,
}

impl ShareLog {
    /// Tells the window the share changed, unless it was told and has not read since.
    fn changed(&self) {
        if !self.told.swap(true, Ordering::SeqCst) {
            self.events.report(AppEvent::KbShareChanged);
        }
    }
}

impl RequestLog for ShareLog {
    fn served(&self, request: Served) {
        let mut log = lock(&self.requests);
        if log.len() == LOG_LENGTH {
            log.pop_front();
        }
        log.push_back(request);
        drop(log);
        self.changed();
    }
}

/// How long a restart waits for the server it replaces to let go of its address.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// A share server serving.
struct Running {
    at: SocketAddr,
    /// The token it was started with (the copied configurations carry this one).
    token: SecretValue,
    cancel: CancellationToken,
    /// Fires when the server has stopped (its address is free again).
    stopped: oneshot::Receiver<()>,
}

/// The share server's state while Patchbay runs.
pub(crate) struct Sharing {
    running: Option<Running>,
    /// Why it is not serving although it should.
    error: Option<String>,
    log: Arc<ShareLog>,
    /// Held across a whole restart: two at once (start-up and a save, a save and a new token)
    /// would each start a server, and one would be left running unseen.
    restarting: Arc<tokio::sync::Mutex<()>>,
}

impl Sharing {
    /// Not serving yet; its requests are told to `events`.
    pub(crate) fn new(events: AppEvents) -> Self {
        Self {
            running: None,
            error: None,
            log: Arc::new(ShareLog { requests: Mutex::default(), events, told: AtomicBool::new(false) }),
            restarting: Arc::default(),
        }
    }
}

impl App {
    fn stored_share(&self) -> Result<Stored, AppError> {
        Ok(self.inner.store.setting::<Stored>(SETTING)?.unwrap_or_default())
    }

    /// The share settings, where it serves, why not, and the requests it answered.
    pub fn kb_share(&self) -> Result<KbShare, AppError> {
        let stored = self.stored_share()?;
        let sharing = lock(&self.inner.sharing);
        // Read now: the next change is told again.
        sharing.log.told.store(false, Ordering::SeqCst);
        let serving = sharing.running.as_ref().map(|r| r.at);
        Ok(KbShare {
            settings: KbShareSettings {
                enabled: stored.enabled,
                address: stored.address,
                allow_remote: stored.allow_remote,
            },
            url: serving.map(|at| format!("http://{at}/mcp")),
            sse_url: serving.map(|at| format!("http://{at}/sse")),
            error: sharing.error.clone(),
            log: lock(&sharing.log.requests).iter().rev().cloned().collect(),
        })
    }

    /// Saves the share settings and starts, moves or stops the server to match. An address
    /// the server cannot use is refused before anything is saved; one it cannot listen on is
    /// saved, and the page says why it is not serving.
    pub async fn kb_set_share(&self, settings: KbShareSettings) -> Result<KbShare, AppError> {
        let addr = serve::parse_address(&settings.address)?;
        // Turning sharing off never needs the user's word.
        if let Some(why) = serve::remote_refusal(addr).filter(|_| settings.enabled && !settings.allow_remote) {
            return Err(AppError::Invalid(format!("{why}; use 127.0.0.1, or allow other computers")));
        }
        let stored =
            Stored { enabled: settings.enabled, address: addr.to_string(), allow_remote: settings.allow_remote };
        self.inner.store.set_setting(SETTING, &stored)?;
        self.restart_share().await;
        self.kb_share()
    }

    /// A new bearer token; clients configured with the old one are refused from now on.
    pub async fn kb_share_new_token(&self) -> Result<KbShare, AppError> {
        self.inner.secrets.set(serve::TOKEN_SECRET, &serve::generate_token())?;
        self.restart_share().await;
        self.kb_share()
    }

    /// Stops the share server, and starts it again when sharing is on (at start-up too). Why it
    /// does not serve although it should is kept for the page ([`KbShare::error`]).
    pub(crate) async fn restart_share(&self) {
        let restarting = lock(&self.inner.sharing).restarting.clone();
        let _one_at_a_time = restarting.lock().await;
        let before = {
            let mut sharing = lock(&self.inner.sharing);
            sharing.error = None;
            sharing.running.take()
        };
        if let Some(before) = before {
            before.cancel.cancel();
            if tokio::time::timeout(STOP_WAIT, before.stopped).await.is_err() {
                tracing::warn!("the knowledge base's previous share server did not stop within {STOP_WAIT:?}");
            }
        }
        if let Err(e) = self.start_share().await {
            tracing::warn!("the knowledge base is not shared: {e}");
            lock(&self.inner.sharing).error = Some(format!("not sharing: {e}"));
        }
        // Serving or not, and why (at start-up the page may have read before).
        let log = lock(&self.inner.sharing).log.clone();
        log.changed();
    }

    /// Starts the share server when sharing is on.
    async fn start_share(&self) -> Result<(), AppError> {
        let stored = self.stored_share()?;
        if !stored.enabled {
            return Ok(());
        }
        let addr = serve::parse_address(&stored.address)?;
        let (token, _) = serve::token(self.inner.secrets.as_ref())?;
        let host = self.inner.host.clone();
        let log = lock(&self.inner.sharing).log.clone();
        let server = KbServer::live(Arc::new(move || host.kb()), Some(log));
        let server = HttpServer::bind(server, addr, &token).await?;
        let at = server.local_addr()?;
        let cancel = self.inner.shutdown.child_token();
        let (done, stopped) = oneshot::channel();
        let token = SecretValue::new(token);
        lock(&self.inner.sharing).running = Some(Running { at, token, cancel: cancel.clone(), stopped });
        let app = self.clone();
        self.spawn(async move {
            let ended = server.run(cancel.clone()).await;
            // Ended on its own (not stopped): the page says so rather than "serving".
            if !cancel.is_cancelled() {
                let why = ended.err().map_or_else(|| "the server stopped".to_owned(), |e| e.to_string());
                tracing::warn!("sharing the knowledge base stopped: {why}");
                let mut sharing = lock(&app.inner.sharing);
                sharing.running = None;
                sharing.error = Some(format!("not sharing: {why}"));
                let log = sharing.log.clone();
                drop(sharing);
                log.changed();
            }
            let _ = done.send(());
        })
    }

    /// The `mcpServers` entry that connects `client` to the shared knowledge base, with the token.
    pub fn kb_share_config(&self, client: KbShareClient) -> Result<String, AppError> {
        let serving = lock(&self.inner.sharing).running.as_ref().map(|r| (r.at, r.token.expose().to_owned()));
        let (mut at, token) =
            serving.ok_or_else(|| AppError::Invalid("the knowledge base is not shared: turn sharing on".into()))?;
        // A server listening on every address is for other computers: they reach it at this
        // computer's network address (127.0.0.1 when it has none; the page says so).
        if at.ip().is_unspecified() {
            at.set_ip(network_address().unwrap_or(std::net::Ipv4Addr::LOCALHOST.into()));
        }
        let url = format!("http://{at}/mcp");
        let entry = match client {
            KbShareClient::ClaudeDesktop => {
                // Claude Desktop's file starts local programs only: mcp-remote bridges to HTTP. The header
                // is passed through the environment, as mcp-remote advises (its value has a space).
                let mut args = vec!["-y".to_owned(), "mcp-remote".into(), url, "--header".into()];
                args.push("Authorization:${PATCHBAY_KB_AUTH}".into());
                if !at.ip().is_loopback() {
                    args.push("--allow-http".into());
                }
                json!({"command": "npx", "args": args, "env": {"PATCHBAY_KB_AUTH": format!("Bearer {token}")}})
            }
            KbShareClient::Cursor => json!({"url": url, "headers": {"Authorization": format!("Bearer {token}")}}),
            KbShareClient::Patchbay => {
                json!({"type": "http", "url": url, "headers": {"Authorization": format!("Bearer {token}")}})
            }
        };
        let config = json!({"mcpServers": {SERVER_NAME: entry}});
        serde_json::to_string_pretty(&config).map_err(|e| AppError::Invalid(e.to_string()))
    }
}

/// The address other computers reach this one at: the source address of its route towards
/// 192.0.2.1 (TEST-NET-1, reserved for documentation), found by pointing a UDP socket at it (a
/// UDP `connect` sends nothing). `None` without such a route.
fn network_address() -> Option<std::net::IpAddr> {
    let socket = std::net::UdpSocket::bind((std::net::Ipv4Addr::UNSPECIFIED, 0)).ok()?;
    socket.connect((std::net::Ipv4Addr::new(192, 0, 2, 1), 9)).ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_unspecified() && !ip.is_loopback()).then_some(ip)
}
