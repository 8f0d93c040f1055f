//! [`McpRegistry`]: every configured MCP server, its status, catalogue and calls.
//!
//! Each started server has a supervisor task that owns its connection: it
//! connects (within the start timeout), publishes [`ServerStatus::Ready`], then
//! watches for the connection closing, failed health pings and `list_changed`
//! notifications. A server that crashes after it was ready is restarted with
//! exponential backoff ([`ServerStatus::Restarting`]); one that fails to start
//! is [`ServerStatus::Failed`] until started again. Stopping (or dropping the
//! last registry handle) closes stdin, waits, then kills the process group.
//!
//! The registry is cheap to clone; calls from several conversations run
//! concurrently over the same connections.
//!
//! Per server the registry also remembers a log level (`logging/setLevel`,
//! sent at every start when the server offers logging) and the resources
//! subscribed to (`resources/subscribe`, renewed after a restart); updates
//! arrive as [`McpEvent::ResourceUpdated`]. Requests servers send to the host
//! go to the [`ServerRequests`] hook; `roots/list` is answered from
//! [`McpRegistry::set_roots`] (empty for a server whose `share_roots` is off).
//!
//! A request's time limit is kept here rather than by rmcp: it restarts with
//! each progress notification and stands still while one of the server's
//! sampling or elicitation requests waits for the user, so a dialog left open
//! does not time out the call that caused it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, CompleteRequest, CompleteRequestParams,
    CompletionContext, CompletionInfo, GetPromptRequest, GetPromptRequestParams, GetPromptResult, Icon, JsonObject,
    ProgressToken, Prompt, ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult, Reference, RequestId,
    Resource, ResourceTemplate, RootsListChangedNotification, ServerResult, Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, RoleClient, ServiceError};
use serde::Serialize;
use tokio::sync::{OnceCell, broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::McpError;
use super::about::ServerAbout;
use super::approval::ApprovalPolicy;
use super::catalogue::{Catalogue, Listing};
use super::client::{CallEvent, CallRoutes, HostHandler, LogMessage, RouteGuard, SharedRoots};
use super::client_tasks::ClientTasks;
use super::connect::{self, Connection, Context, StartFailure, TransportKind};
use super::egress::BlockListener;
use super::in_process::InProcessServer;
use super::lane::{Lane, LaneRequest};
use super::launch::{LaunchReport, LoginEnv};
use super::rate::CallWindow;
use super::requests::{DenyAll, McpRoot, ServerRequests};
use super::stdio::StderrLog;
use super::tasks;
use crate::config::{McpServerConfig, Policy, PolicyDefaults, PolicyOutline, Resolved, TransportConfig};
use crate::secrets::SecretStore;

/// A server's state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
#[non_exhaustive]
pub enum ServerStatus {
    Stopped,
    Starting,
    Ready,
    Failed { reason: String },
    Restarting { attempt: u32 },
}

impl ServerStatus {
    /// Ready, failed or stopped: not on its way somewhere.
    pub fn is_settled(&self) -> bool {
        matches!(self, Self::Ready | Self::Failed { .. } | Self::Stopped)
    }
}

impl std::fmt::Display for ServerStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stopped => f.write_str("stopped"),
            Self::Starting => f.write_str("starting"),
            Self::Ready => f.write_str("ready"),
            Self::Failed { reason } => write!(f, "failed: {reason}"),
            Self::Restarting { attempt } => write!(f, "restarting (attempt {attempt})"),
        }
    }
}

/// What the registry reports as it happens.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum McpEvent {
    /// A server's status changed.
    Status { server: String, status: ServerStatus },
    /// A server's tools, resources or prompts changed.
    CatalogueChanged { server: String },
    /// A server sent `notifications/message`.
    Log { server: String, message: LogMessage },
    /// A subscribed resource changed (`notifications/resources/updated`).
    ResourceUpdated { server: String, uri: String },
    /// A stdio server wrote a line to stderr.
    Stderr { server: String, line: String },
    /// A sandboxed server's filtering proxy refused a host outside its allowed domains.
    ConnectionBlocked { server: String, host: String },
}

/// A `logging/setLevel` level: the server sends messages at this level and above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

/// One server as the settings page shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerSnapshot {
    pub name: String,
    pub enabled: bool,
    pub status: ServerStatus,
    /// The transport of the live connection.
    pub transport: Option<TransportKind>,
    /// The stdio server's process id (its process group on Unix).
    pub pid: Option<u32>,
    /// Where its command was found, for stdio servers that were launched.
    pub command: Option<std::path::PathBuf>,
    pub tools: usize,
    /// The security policy in force, in one line (for a remote server only its rate limits apply).
    pub policy: String,
}

/// Registry-wide timing.
#[derive(Debug, Clone)]
pub struct RegistryOptions {
    /// Wait before the first restart; doubles each attempt.
    pub backoff_initial: Duration,
    /// Longest wait between restarts.
    pub backoff_max: Duration,
    /// Restarts after a crash before the server is marked failed.
    pub max_restarts: u32,
    /// How often a ready server is pinged.
    pub health_interval: Duration,
    /// How long a ping may take.
    pub ping_timeout: Duration,
    /// How long a server gets to exit after stdin closes before it is killed.
    pub shutdown_grace: Duration,
    /// The log level asked of every server that offers logging, at each start
    /// (`None`: leave the server's default). [`McpRegistry::set_log_level`] overrides it per server.
    pub log_level: Option<LogLevel>,
    /// How long a sampling or elicitation request may wait for the user.
    pub hook_timeout: Duration,
    /// The security level of servers that set none ([`McpRegistry::set_policy_defaults`] changes it).
    pub policy: PolicyDefaults,
    /// Folders no sandboxed server sees: Patchbay's data folder.
    pub protected: Vec<PathBuf>,
}

impl Default for RegistryOptions {
    fn default() -> Self {
        Self {
            backoff_initial: Duration::from_secs(1),
            backoff_max: Duration::from_secs(60),
            max_restarts: 5,
            health_interval: Duration::from_secs(30),
            ping_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(2),
            log_level: Some(LogLevel::Info),
            hook_timeout: Duration::from_secs(600),
            policy: PolicyDefaults::default(),
            protected: Vec::new(),
        }
    }
}

impl RegistryOptions {
    /// The defaults for the servers of data folder `dir`, which they never see,
    /// with the global policy saved in `store` (its default when unset).
    pub fn for_data_dir(
        dir: &crate::paths::DataDir,
        store: &crate::store::Store,
    ) -> Result<Self, crate::store::StoreError> {
        let policy = store.setting::<PolicyDefaults>(crate::config::policy::DEFAULTS_SETTING)?.unwrap_or_default();
        let protected = vec![dir.path().canonicalize().unwrap_or_else(|_| dir.path().to_path_buf())];
        Ok(Self { policy, protected, ..Self::default() })
    }
}

/// Per-call choices.
#[derive(Debug, Default)]
pub struct CallOptions {
    /// Overrides the server's `call_secs`; reset by each progress notification,
    /// paused while a sampling or elicitation request of the server is pending.
    pub timeout: Option<Duration>,
    /// Receives this call's progress and log messages (dropped when full).
    pub events: Option<mpsc::Sender<CallEvent>>,
    /// Filled with the id and progress token the request went out with, as
    /// the server saw them (for the trace inspector).
    pub sent_as: Option<Arc<OnceLock<WireIds>>>,
}

/// The JSON-RPC id and progress token a request went out with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireIds {
    pub id: RequestId,
    pub progress_token: ProgressToken,
}

/// The live side of a ready server.
#[derive(Clone)]
struct Live {
    peer: Peer<RoleClient>,
    /// Where the registry's requests go when the connection has one ([`Lane`]).
    lane: Option<Lane>,
    routes: CallRoutes,
    kind: TransportKind,
    pid: Option<u32>,
    /// The connection's `share_roots` (a changed config applies from the next start).
    share_roots: bool,
}

impl Live {
    /// Sends `request` through the lane when the connection has one, else through rmcp.
    async fn send(&self, request: ClientRequest) -> Result<Sent, ServiceError> {
        match &self.lane {
            Some(lane) => lane.request(request).map(Sent::Lane),
            None => self.peer.send_request_with_option(request, PeerRequestOptions::no_options()).await.map(Sent::Rmcp),
        }
    }
}

struct Supervisor {
    stop: CancellationToken,
    handle: JoinHandle<()>,
}

struct Slot {
    name: String,
    config: Mutex<McpServerConfig>,
    status: watch::Sender<ServerStatus>,
    stderr: StderrLog,
    live: RwLock<Option<Live>>,
    catalogue: RwLock<Catalogue>,
    report: Mutex<Option<LaunchReport>>,
    supervisor: tokio::sync::Mutex<Option<Supervisor>>,
    /// Set by [`McpRegistry::set_log_level`]; else the registry's default.
    log_level: Mutex<Option<LogLevel>>,
    /// Resource URIs subscribed to, renewed at each start.
    subscriptions: Mutex<BTreeSet<String>>,
    /// Its calls of the last minute, for its rate limits.
    calls: Mutex<CallWindow>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn read<T>(m: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    m.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(m: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    m.write().unwrap_or_else(PoisonError::into_inner)
}

struct Shared {
    secrets: Arc<dyn SecretStore>,
    options: RegistryOptions,
    events: broadcast::Sender<McpEvent>,
    env: OnceCell<LoginEnv>,
    servers: RwLock<BTreeMap<String, Arc<Slot>>>,
    hooks: RwLock<Arc<dyn ServerRequests>>,
    roots: SharedRoots,
    /// Servers that run in this process, by name.
    in_process: RwLock<BTreeMap<String, Arc<dyn InProcessServer>>>,
    policy: RwLock<PolicyDefaults>,
}

impl Shared {
    fn set_status(&self, slot: &Slot, status: ServerStatus) {
        let changed = slot.status.send_if_modified(|current| {
            let changed = *current != status;
            *current = status.clone();
            changed
        });
        if changed {
            // The app's log keeps each server's story (why it failed, when it came back).
            match &status {
                ServerStatus::Ready => tracing::info!(server = %slot.name, "MCP server ready"),
                ServerStatus::Failed { reason } => tracing::warn!(server = %slot.name, %reason, "MCP server failed"),
                _ => {}
            }
            let _ = self.events.send(McpEvent::Status { server: slot.name.clone(), status });
        }
    }

    async fn env(&self) -> &LoginEnv {
        self.env.get_or_init(LoginEnv::detect).await
    }

    /// The policy in force for `config` now.
    fn policy(&self, config: &McpServerConfig) -> Resolved {
        let roots: Vec<PathBuf> =
            read(&self.roots).iter().filter_map(|r| url::Url::parse(&r.uri).ok()?.to_file_path().ok()).collect();
        Policy::resolve(config, &read(&self.policy), &roots)
    }
}

struct Inner {
    shared: Arc<Shared>,
    root: CancellationToken,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // Supervisors close their connections and kill their process groups; if the
        // runtime is gone too, dropping their tasks drops the process guards, which kill.
        self.root.cancel();
    }
}

/// Every configured MCP server. Cheap to clone; the last clone dropped stops them all.
#[derive(Clone)]
pub struct McpRegistry {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for McpRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpRegistry").field("servers", &self.names()).finish()
    }
}

/// Events buffered for a slow subscriber before it starts missing some.
const EVENT_BUFFER: usize = 1024;

impl McpRegistry {
    /// An empty registry; secrets named by server configs are read from `secrets`.
    pub fn new(secrets: Arc<dyn SecretStore>, options: RegistryOptions) -> Self {
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let policy = RwLock::new(options.policy);
        let shared = Shared {
            policy,
            secrets,
            options,
            events,
            env: OnceCell::new(),
            servers: RwLock::default(),
            hooks: RwLock::new(Arc::new(DenyAll)),
            roots: SharedRoots::default(),
            in_process: RwLock::default(),
        };
        Self { inner: Arc::new(Inner { shared: Arc::new(shared), root: CancellationToken::new() }) }
    }

    /// The environment stdio servers start in (asking the login shell the first time).
    pub async fn login_env(&self) -> &LoginEnv {
        self.inner.shared.env().await
    }

    /// Uses `env` for stdio servers instead of asking the login shell.
    pub fn with_login_env(self, env: LoginEnv) -> Self {
        let _ = self.inner.shared.env.set(env);
        self
    }

    fn shared(&self) -> &Arc<Shared> {
        &self.inner.shared
    }

    /// The global part of the security policy; servers started from now on use it.
    pub fn set_policy_defaults(&self, defaults: PolicyDefaults) {
        *write(&self.shared().policy) = defaults;
    }

    /// The global part of the security policy.
    pub fn policy_defaults(&self) -> PolicyDefaults {
        *read(&self.shared().policy)
    }

    /// How calls of `config`'s tools are approved at the level it runs under
    /// (strict asks before every call).
    pub fn approval_policy(&self, config: &McpServerConfig) -> ApprovalPolicy {
        ApprovalPolicy::from_config(config).at_level(self.shared().policy(config).level)
    }

    /// The security policy `name` runs under (from its next start, when it changed).
    pub fn policy(&self, name: &str) -> Result<Resolved, McpError> {
        let slot = self.slot(name)?;
        let config = lock(&slot.config).clone();
        Ok(self.shared().policy(&config))
    }

    /// The policy `config` runs under now (saved or still being edited), as
    /// its one-line summary shows it; a remote server gets only its rate limits.
    pub fn policy_outline(&self, config: &McpServerConfig) -> PolicyOutline {
        PolicyOutline::of(config, &self.shared().policy(config))
    }

    /// Answers servers' sampling and elicitation requests with `hooks` (the
    /// default, [`DenyAll`], refuses them). Servers learn what the host answers
    /// when they start: set this before starting them.
    pub fn set_server_requests(&self, hooks: Arc<dyn ServerRequests>) {
        *write(&self.shared().hooks) = hooks;
    }

    /// The roots shared with servers through `roots/list`.
    pub fn roots(&self) -> Vec<McpRoot> {
        read(&self.shared().roots).clone()
    }

    /// Replaces the shared roots and, when they changed, tells every ready
    /// server that sees them (`notifications/roots/list_changed`; a server
    /// whose `share_roots` is off always gets an empty list). A sandboxed
    /// stdio server that sees them is restarted instead (its sandbox's folders
    /// are fixed when it starts), and waited for.
    pub async fn set_roots(&self, roots: Vec<McpRoot>) {
        {
            let mut current = write(&self.shared().roots);
            if *current == roots {
                return;
            }
            *current = roots;
        }
        let (confined, peers): (Vec<_>, Vec<_>) = self.ready_peers().into_iter().partition(|(name, _)| {
            self.slot(name).is_ok_and(|slot| {
                let config = lock(&slot.config).clone();
                matches!(config.transport, TransportConfig::Stdio { .. })
                    && self.shared().policy(&config).level.sandboxed()
            })
        });
        for (name, _) in confined {
            let startup =
                self.slot(&name).map_or(Duration::ZERO, |s| Duration::from_secs(lock(&s.config).timeouts.startup_secs));
            if let Err(e) = self.restart(&name).await {
                tracing::warn!(server = %name, error = %e, "could not restart a server for its new roots");
                continue;
            }
            let _ = self.wait_server_settled(&name, startup).await;
        }
        for (name, peer) in peers {
            let notification =
                ClientNotification::RootsListChangedNotification(RootsListChangedNotification::default());
            if let Err(e) = peer.send_notification(notification).await {
                tracing::warn!(server = %name, error = %e, "could not announce changed roots");
            }
        }
    }

    fn ready_peers(&self) -> Vec<(String, Peer<RoleClient>)> {
        let slots: Vec<Arc<Slot>> = read(&self.shared().servers).values().cloned().collect();
        slots
            .iter()
            .filter_map(|s| read(&s.live).as_ref().filter(|l| l.share_roots).map(|l| (s.name.clone(), l.peer.clone())))
            .collect()
    }

    /// Adds servers, or replaces their configuration (used from their next start).
    pub fn configure(&self, configs: impl IntoIterator<Item = McpServerConfig>) {
        let mut servers = write(&self.shared().servers);
        for config in configs {
            match servers.get(&config.name) {
                Some(slot) => *lock(&slot.config) = config,
                None => {
                    let (events, server) = (self.shared().events.clone(), config.name.clone());
                    let live_lines = move |line: &str| {
                        // Nobody subscribed is fine: the tail is kept anyway.
                        let _ = events.send(McpEvent::Stderr { server: server.clone(), line: line.to_owned() });
                    };
                    let slot = Slot {
                        name: config.name.clone(),
                        config: Mutex::new(config.clone()),
                        status: watch::channel(ServerStatus::Stopped).0,
                        stderr: StderrLog::with_listener(Arc::new(live_lines)),
                        live: RwLock::default(),
                        catalogue: RwLock::default(),
                        report: Mutex::default(),
                        supervisor: tokio::sync::Mutex::default(),
                        log_level: Mutex::default(),
                        subscriptions: Mutex::default(),
                        calls: Mutex::default(),
                    };
                    servers.insert(config.name, Arc::new(slot));
                }
            }
        }
    }

    /// Adds a server that runs inside this process (Patchbay's built-in tools):
    /// started, listed, called, approved and traced like any other. `config`
    /// gives its name, time limits and approval policy; its transport becomes
    /// [`TransportConfig::InProcess`].
    pub fn attach_in_process(&self, mut config: McpServerConfig, server: Arc<dyn InProcessServer>) {
        config.transport = TransportConfig::InProcess;
        write(&self.shared().in_process).insert(config.name.clone(), server);
        self.configure([config]);
    }

    /// Stops and forgets a server.
    pub async fn remove(&self, name: &str) -> Result<(), McpError> {
        self.stop(name).await?;
        write(&self.shared().servers).remove(name);
        Ok(())
    }

    /// The configured servers' names.
    pub fn names(&self) -> Vec<String> {
        read(&self.shared().servers).keys().cloned().collect()
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>, McpError> {
        read(&self.shared().servers).get(name).cloned().ok_or_else(|| McpError::UnknownServer { name: name.to_owned() })
    }

    /// Starts every enabled server that is not running, in parallel; returns at once.
    /// Follow progress with [`Self::subscribe`] or [`Self::wait_settled`].
    pub async fn start_all(&self) {
        let slots: Vec<Arc<Slot>> = read(&self.shared().servers).values().cloned().collect();
        for slot in slots {
            if lock(&slot.config).enabled {
                self.start_slot(&slot).await;
            }
        }
    }

    /// Starts one server (enabled or not) unless it is already running.
    pub async fn start(&self, name: &str) -> Result<(), McpError> {
        let slot = self.slot(name)?;
        self.start_slot(&slot).await;
        Ok(())
    }

    async fn start_slot(&self, slot: &Arc<Slot>) {
        let mut supervisor = slot.supervisor.lock().await;
        if supervisor.as_ref().is_some_and(|s| !s.handle.is_finished()) {
            return;
        }
        let stop = self.inner.root.child_token();
        self.shared().set_status(slot, ServerStatus::Starting);
        let handle = tokio::spawn(supervise(self.shared().clone(), slot.clone(), stop.clone()));
        *supervisor = Some(Supervisor { stop, handle });
    }

    /// Stops a server and waits until its process is gone.
    pub async fn stop(&self, name: &str) -> Result<(), McpError> {
        let slot = self.slot(name)?;
        let running = slot.supervisor.lock().await.take();
        if let Some(Supervisor { stop, handle }) = running {
            stop.cancel();
            let _ = handle.await;
        }
        self.shared().set_status(&slot, ServerStatus::Stopped);
        Ok(())
    }

    /// Stops then starts a server.
    pub async fn restart(&self, name: &str) -> Result<(), McpError> {
        self.stop(name).await?;
        self.start(name).await
    }

    /// Stops every server, side by side (each may take its grace period), and
    /// waits until their processes are gone.
    pub async fn shutdown(&self) {
        let names = self.names();
        futures::future::join_all(names.iter().map(|name| self.stop(name))).await;
    }

    /// Status events from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<McpEvent> {
        self.shared().events.subscribe()
    }

    /// A server's current status.
    pub fn status(&self, name: &str) -> Result<ServerStatus, McpError> {
        Ok(self.slot(name)?.status.borrow().clone())
    }

    /// Every server, in name order.
    pub fn snapshot(&self) -> Vec<ServerSnapshot> {
        let slots: Vec<Arc<Slot>> = read(&self.shared().servers).values().cloned().collect();
        slots
            .iter()
            .map(|slot| {
                let live = read(&slot.live).clone();
                let config = lock(&slot.config).clone();
                ServerSnapshot {
                    policy: self.policy_outline(&config).to_string(),
                    name: slot.name.clone(),
                    enabled: lock(&slot.config).enabled,
                    status: slot.status.borrow().clone(),
                    transport: live.as_ref().map(|l| l.kind),
                    pid: live.as_ref().and_then(|l| l.pid),
                    command: lock(&slot.report).as_ref().and_then(|r| r.resolved.clone()),
                    tools: read(&slot.catalogue).tools.len(),
                }
            })
            .collect()
    }

    /// Waits until every started server is ready, failed or stopped, or `timeout` passes.
    pub async fn wait_settled(&self, timeout: Duration) {
        let slots: Vec<Arc<Slot>> = read(&self.shared().servers).values().cloned().collect();
        let all = futures::future::join_all(slots.iter().map(|slot| async move {
            let mut rx = slot.status.subscribe();
            let _ = rx.wait_for(ServerStatus::is_settled).await;
        }));
        let _ = tokio::time::timeout(timeout, all).await;
    }

    /// Waits until one server is ready, failed or stopped, or `timeout` passes; its status then.
    pub async fn wait_server_settled(&self, name: &str, timeout: Duration) -> Result<ServerStatus, McpError> {
        let mut rx = self.slot(name)?.status.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(ServerStatus::is_settled)).await;
        let status = rx.borrow().clone();
        Ok(status)
    }

    /// The server's tools (empty until it is ready).
    pub fn tools(&self, name: &str) -> Result<Vec<Tool>, McpError> {
        Ok(read(&self.slot(name)?.catalogue).tools.clone())
    }

    /// The tools of every ready server, by server name.
    pub fn all_tools(&self) -> Vec<(String, Vec<Tool>)> {
        let slots: Vec<Arc<Slot>> = read(&self.shared().servers).values().cloned().collect();
        slots
            .iter()
            .filter(|s| *s.status.borrow() == ServerStatus::Ready)
            .map(|s| (s.name.clone(), read(&s.catalogue).tools.clone()))
            .collect()
    }

    /// What the server said about using it when it started (its `instructions`).
    pub fn instructions(&self, name: &str) -> Result<Option<String>, McpError> {
        Ok(read(&self.slot(name)?.catalogue).instructions.clone())
    }

    /// Who the ready server says it is and what it offers, with how it is
    /// reached; `None` unless it is ready.
    pub fn about(&self, name: &str) -> Result<Option<ServerAbout>, McpError> {
        let slot = self.slot(name)?;
        let live = read(&slot.live).clone();
        let Some(live) = live.filter(|_| *slot.status.borrow() == ServerStatus::Ready) else { return Ok(None) };
        let command = lock(&slot.report).as_ref().and_then(|r| r.resolved.as_ref()).map(|p| p.display().to_string());
        Ok(live.peer.peer_info().map(|info| ServerAbout::new(&info, live.kind, live.pid, command)))
    }

    /// The icons the server gives itself.
    pub fn server_icons(&self, name: &str) -> Result<Vec<Icon>, McpError> {
        Ok(read(&self.slot(name)?.catalogue).icons.clone())
    }

    /// The server's resources.
    pub fn resources(&self, name: &str) -> Result<Vec<Resource>, McpError> {
        Ok(read(&self.slot(name)?.catalogue).resources.clone())
    }

    /// The server's resource templates.
    pub fn resource_templates(&self, name: &str) -> Result<Vec<ResourceTemplate>, McpError> {
        Ok(read(&self.slot(name)?.catalogue).resource_templates.clone())
    }

    /// The server's prompts.
    pub fn prompts(&self, name: &str) -> Result<Vec<Prompt>, McpError> {
        Ok(read(&self.slot(name)?.catalogue).prompts.clone())
    }

    /// The last `lines` lines the server wrote to stderr.
    pub fn stderr_tail(&self, name: &str, lines: usize) -> Result<Vec<String>, McpError> {
        Ok(self.slot(name)?.stderr.tail(lines))
    }

    /// The launch doctor: what the last start of a stdio server found (resolved
    /// command, env keys added, exit code, stderr tail). A server never started is
    /// planned without starting it. `None` for servers that are not stdio.
    pub async fn doctor(&self, name: &str) -> Result<Option<LaunchReport>, McpError> {
        let slot = self.slot(name)?;
        if let Some(report) = lock(&slot.report).clone() {
            return Ok(Some(report));
        }
        let config = lock(&slot.config).clone();
        let env = self.shared().env().await;
        let policy = self.shared().policy(&config);
        match connect::plan_stdio(&config, env, self.shared().secrets.as_ref(), &policy) {
            Ok((_, report)) => Ok(Some(report)),
            Err(StartFailure { error: McpError::NotStdio { .. }, .. }) => Ok(None),
            Err(StartFailure { report: Some(report), .. }) => Ok(Some(*report)),
            Err(StartFailure { error, report: None }) => Err(error),
        }
    }

    /// The ready server's connection, and its configured call timeout.
    fn live(&self, name: &str) -> Result<(Live, Duration), McpError> {
        let slot = self.slot(name)?;
        let live = read(&slot.live).clone();
        let status = slot.status.borrow().clone();
        match live {
            Some(live) if status == ServerStatus::Ready => {
                Ok((live, Duration::from_secs(lock(&slot.config).timeouts.call_secs)))
            }
            _ => Err(McpError::NotReady { server: name.to_owned(), status }),
        }
    }

    /// Calls `tool` on `server`. The timeout (per call, else the server's
    /// `call_secs`) restarts with each progress notification and stands still
    /// while the server's sampling or elicitation requests wait for the user;
    /// cancelling `ct` or running out of time sends `notifications/cancelled`. An `isError` result is a result, not an error.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: CallOptions,
        ct: CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let slot = self.slot(server)?;
        let limits = lock(&slot.config).policy.rate;
        lock(&slot.calls).admit(server, tool, limits)?;
        if self.runs_as_task(server, tool) {
            return self.call_task(server, tool, arguments, options, ct).await;
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        match self.request(server, request, options, ct).await? {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Whether `tool` of `server` must run as a task (its
    /// `execution.taskSupport` is `"required"`, as far as the listing showed
    /// it: see [`Catalogue::task_tools`]); [`Self::call_tool`] runs it as one.
    pub fn runs_as_task(&self, server: &str, tool: &str) -> bool {
        self.slot(server).is_ok_and(|slot| read(&slot.catalogue).task_tools.contains(tool))
    }

    /// Calls a tool that must run as a task ([`tasks`]): the `tools/call` that
    /// creates the task, then `tasks/result`, while the task's status is
    /// polled. The call's clock restarts with each new status (and the
    /// server's progress); giving the call up sends `tasks/cancel`.
    async fn call_task(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: CallOptions,
        ct: CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let (live, call_timeout) = self.live(server)?;
        let timeout = options.timeout.unwrap_or(call_timeout);
        let task_error = |source| McpError::Task { server: server.to_owned(), source };
        // The creating call's route stays open for the task's life: the server's progress names its token.
        let (created, route) =
            self.exchange(server, &live, tasks::create(tool, arguments), timeout, &options, &ct).await?;
        let task = match tasks::Created::read(created).map_err(task_error)? {
            tasks::Created::Done(result) => return Ok(result),
            tasks::Created::Task(task) => task,
        };
        let mut abandon = CancelTask { live: Some(live.clone()), server: server.to_owned(), id: task.task_id.clone() };
        let watch = Arc::new(tasks::TaskWatch::new(options.events, route.progress.clone()));
        let id = task.task_id.clone();
        watch.seen(task);
        let _watching = live.routes.watch_task(id.clone(), watch.clone());
        let result =
            live.send(tasks::about("tasks/result", &id)).await.map_err(|e| McpError::from_service(server, e))?;
        let status = poll_status(live.clone(), server, id, watch);
        let deadline = Deadline { timeout, progress: route.progress.clone(), hooks: live.routes.hooks_pending() };
        let answer = tokio::select! {
            answer = result.answer(server) => answer,
            never = status => match never {},
            () = deadline.expired() => return Err(McpError::Timeout { server: server.to_owned(), after: timeout }),
            () = ct.cancelled() => return Err(McpError::Cancelled { server: server.to_owned() }),
        };
        // The task ended, with its result or its error.
        abandon.live = None;
        tasks::result(answer?).map_err(task_error)
    }

    /// Reads a resource.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        ct: CancellationToken,
    ) -> Result<ReadResourceResult, McpError> {
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(ReadResourceRequestParams::new(uri)));
        match self.request(server, request, CallOptions::default(), ct).await? {
            ServerResult::ReadResourceResult(result) => Ok(result),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Gets a prompt with its arguments.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: Option<JsonObject>,
        ct: CancellationToken,
    ) -> Result<GetPromptResult, McpError> {
        let mut params = GetPromptRequestParams::new(prompt);
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        match self.request(server, request, CallOptions::default(), ct).await? {
            ServerResult::GetPromptResult(result) => Ok(result),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Suggestions for one argument of a prompt or resource template
    /// (`completion/complete`), given what is typed so far and the values of
    /// the other arguments. A server that does not offer completions suggests
    /// nothing, without a request; one that takes longer than 10 s is asked no
    /// more (suggestions are for typing); at most 100 values are kept, as the
    /// protocol allows.
    pub async fn complete(
        &self,
        server: &str,
        reference: Reference,
        argument: ArgumentInfo,
        context: HashMap<String, String>,
        ct: CancellationToken,
    ) -> Result<CompletionInfo, McpError> {
        let (live, _) = self.live(server)?;
        if live.peer.peer_info().is_none_or(|info| info.capabilities.completions.is_none()) {
            return Ok(CompletionInfo::default());
        }
        let mut params = CompleteRequestParams::new(reference, argument);
        if !context.is_empty() {
            params.context = Some(CompletionContext::with_arguments(context));
        }
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        let options = CallOptions { timeout: Some(Duration::from_secs(10)), ..CallOptions::default() };
        match self.request(server, request, options, ct).await? {
            ServerResult::CompleteResult(mut result) => {
                let more = result.completion.values.len() > CompletionInfo::MAX_VALUES;
                result.completion.values.truncate(CompletionInfo::MAX_VALUES);
                if more {
                    result.completion.has_more = Some(true);
                }
                Ok(result.completion)
            }
            other => Err(unexpected(server, &other)),
        }
    }

    /// Asks a server to send log messages at `level` and above
    /// (`logging/setLevel`), now if it is ready and at each later start.
    pub async fn set_log_level(&self, server: &str, level: LogLevel, ct: CancellationToken) -> Result<(), McpError> {
        *lock(&self.slot(server)?.log_level) = Some(level);
        match self.request(server, set_level_request(level), CallOptions::default(), ct).await? {
            ServerResult::EmptyResult(_) => Ok(()),
            other => Err(unexpected(server, &other)),
        }
    }

    /// The level a ready server that offers logging sends messages at (set
    /// with [`Self::set_log_level`], else the registry's default); `None` for
    /// a server that does not log or is not ready.
    pub fn log_level(&self, server: &str) -> Option<LogLevel> {
        let (live, _) = self.live(server).ok()?;
        if live.peer.peer_info().is_none_or(|i| i.capabilities.logging.is_none()) {
            return None;
        }
        lock(&self.slot(server).ok()?.log_level).or(self.shared().options.log_level)
    }

    /// Subscribes to changes of the resource `uri` (`resources/subscribe`);
    /// they arrive as [`McpEvent::ResourceUpdated`]. Renewed after a restart.
    pub async fn subscribe_resource(&self, server: &str, uri: &str, ct: CancellationToken) -> Result<(), McpError> {
        let request = subscription_request(uri, true);
        match self.request(server, request, CallOptions::default(), ct).await? {
            ServerResult::EmptyResult(_) => {
                lock(&self.slot(server)?.subscriptions).insert(uri.to_owned());
                Ok(())
            }
            other => Err(unexpected(server, &other)),
        }
    }

    /// Resources to subscribe to when `server` next starts (and after each
    /// restart), as if subscribed before: kept from an earlier session.
    pub fn resubscribe_on_start(&self, server: &str, uris: impl IntoIterator<Item = String>) -> Result<(), McpError> {
        lock(&self.slot(server)?.subscriptions).extend(uris);
        Ok(())
    }

    /// Ends a subscription (`resources/unsubscribe`).
    pub async fn unsubscribe_resource(&self, server: &str, uri: &str, ct: CancellationToken) -> Result<(), McpError> {
        lock(&self.slot(server)?.subscriptions).remove(uri);
        match self.request(server, subscription_request(uri, false), CallOptions::default(), ct).await? {
            ServerResult::EmptyResult(_) => Ok(()),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Whether a ready server lets clients subscribe to its resources
    /// (`capabilities.resources.subscribe`).
    pub fn can_subscribe(&self, server: &str) -> bool {
        self.live(server).is_ok_and(|(live, _)| {
            live.peer.peer_info().and_then(|i| i.capabilities.resources.as_ref().and_then(|r| r.subscribe))
                == Some(true)
        })
    }

    /// Resource URIs subscribed to on `server`.
    pub fn subscriptions(&self, server: &str) -> Result<Vec<String>, McpError> {
        Ok(lock(&self.slot(server)?.subscriptions).iter().cloned().collect())
    }

    /// Pings a ready server.
    pub async fn ping(&self, server: &str) -> Result<(), McpError> {
        let (live, _) = self.live(server)?;
        ping(server, &live.peer, self.shared().options.ping_timeout).await
    }

    async fn request(
        &self,
        server: &str,
        request: ClientRequest,
        options: CallOptions,
        ct: CancellationToken,
    ) -> Result<ServerResult, McpError> {
        let (live, call_timeout) = self.live(server)?;
        let timeout = options.timeout.unwrap_or(call_timeout);
        let (answer, _route) = self.exchange(server, &live, request, timeout, &options, &ct).await?;
        Ok(answer)
    }

    /// Sends `request` to `server` and waits for its answer within `timeout`
    /// (see [`Deadline`]), cancelling it at the server when `ct` fires or the
    /// time is up. The answer comes with the request's route, open while the
    /// caller holds it: the server's later progress (a task's) still reaches
    /// the call's events and restarts its clock.
    async fn exchange(
        &self,
        server: &str,
        live: &Live,
        request: ClientRequest,
        timeout: Duration,
        options: &CallOptions,
        ct: &CancellationToken,
    ) -> Result<(ServerResult, RouteGuard), McpError> {
        // The deadline is kept here, not by rmcp: it must stand still while the user answers.
        let sent = live.send(request).await.map_err(|e| McpError::from_service(server, e))?;
        let (token, id) = sent.ids();
        if let Some(cell) = &options.sent_as {
            let _ = cell.set(WireIds { id: id.clone(), progress_token: token.clone() });
        }
        let route = live.routes.register(token, id.clone(), options.events.clone());
        let mut cancel = CancelOnDrop { peer: Some(live.peer.clone()), id, reason: CANCELLED };
        let deadline = Deadline { timeout, progress: route.progress.clone(), hooks: live.routes.hooks_pending() };
        let outcome = tokio::select! {
            response = sent.answer(server) => response,
            () = deadline.expired() => {
                cancel.reason = TIMED_OUT;
                return Err(McpError::Timeout { server: server.to_owned(), after: timeout });
            }
            () = ct.cancelled() => return Err(McpError::Cancelled { server: server.to_owned() }),
        };
        // Answered: nothing to cancel.
        cancel.peer = None;
        if let Err(error @ McpError::SignInRequired { .. }) = &outcome {
            self.sign_in_needed(server, error.to_string()).await;
        }
        outcome.map(|answer| (answer, route))
    }

    /// A remote server that refused a request for want of authorization stops
    /// and shows as failed with the reason, where the window offers Sign in
    /// (which restarts it with the new tokens).
    async fn sign_in_needed(&self, server: &str, reason: String) {
        tracing::warn!(%server, "the server asks for a new sign-in; stopping it");
        if self.stop(server).await.is_ok()
            && let Ok(slot) = self.slot(server)
        {
            self.shared().set_status(&slot, ServerStatus::Failed { reason });
        }
    }
}

#[expect(deprecated, reason = "rmcp marks logging deprecated (SEP-2577); servers still offer it")]
fn set_level_request(level: LogLevel) -> ClientRequest {
    use rmcp::model::{LoggingLevel, SetLevelRequest, SetLevelRequestParams};
    let level = match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    };
    ClientRequest::SetLevelRequest(SetLevelRequest::new(SetLevelRequestParams::new(level)))
}

#[expect(deprecated, reason = "resources/subscribe is what servers before 2026-07-28 speak")]
fn subscription_request(uri: &str, subscribe: bool) -> ClientRequest {
    use rmcp::model::{SubscribeRequest, SubscribeRequestParams, UnsubscribeRequest, UnsubscribeRequestParams};
    if subscribe {
        ClientRequest::SubscribeRequest(SubscribeRequest::new(SubscribeRequestParams::new(uri)))
    } else {
        ClientRequest::UnsubscribeRequest(UnsubscribeRequest::new(UnsubscribeRequestParams::new(uri)))
    }
}

/// After a (re)start: the log level and the subscriptions the server had.
/// Failures are logged, not fatal: the server still works without them.
async fn restore(shared: &Shared, slot: &Slot, peer: &Peer<RoleClient>, timeout: Duration) {
    let info = peer.peer_info();
    let caps = info.as_ref().map(|i| &i.capabilities);
    let level = lock(&slot.log_level).or(shared.options.log_level);
    let mut requests = Vec::new();
    if let Some(level) = level.filter(|_| caps.is_some_and(|c| c.logging.is_some())) {
        requests.push(set_level_request(level));
    }
    let subscriptions: Vec<String> = lock(&slot.subscriptions).iter().cloned().collect();
    requests.extend(subscriptions.iter().map(|uri| subscription_request(uri, true)));
    for request in requests {
        let options = PeerRequestOptions::with_timeout(timeout);
        let outcome = match peer.send_request_with_option(request, options).await {
            Ok(handle) => handle.await_response().await,
            Err(e) => Err(e),
        };
        if let Err(e) = outcome {
            tracing::warn!(server = %slot.name, error = %e, "restoring the log level or a subscription failed");
        }
    }
}

fn unexpected(server: &str, result: &ServerResult) -> McpError {
    McpError::Protocol { server: server.to_owned(), reason: format!("unexpected response {result:?}") }
}

/// Why a request was abandoned, as `notifications/cancelled` tells the server.
const CANCELLED: &str = "cancelled by the user";
const TIMED_OUT: &str = "timed out";

/// A request on its way, by rmcp's service loop or by the connection's [`Lane`].
enum Sent {
    Rmcp(RequestHandle<RoleClient>),
    Lane(LaneRequest),
}

impl Sent {
    /// The request's progress token and id.
    fn ids(&self) -> (ProgressToken, RequestId) {
        match self {
            Sent::Rmcp(handle) => (handle.progress_token.clone(), handle.id.clone()),
            Sent::Lane(request) => (request.progress_token.clone(), request.id.clone()),
        }
    }

    async fn answer(self, server: &str) -> Result<ServerResult, McpError> {
        match self {
            Sent::Rmcp(handle) => handle.await_response().await.map_err(|e| McpError::from_service(server, e)),
            Sent::Lane(request) => request.answer().await.map_err(|e| e.for_server(server)),
        }
    }
}

/// Sends `notifications/cancelled` for a request abandoned before its answer.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
    reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(peer) = self.peer.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let params = CancelledNotificationParam::new(Some(self.id.clone()), Some(self.reason.into()));
            let notification = ClientNotification::CancelledNotification(CancelledNotification::new(params));
            runtime.spawn(async move {
                let _ = peer.send_notification(notification).await;
            });
        }
    }
}

/// Sends `tasks/cancel` for a task given up before its result.
struct CancelTask {
    live: Option<Live>,
    server: String,
    id: String,
}

/// How long a `tasks/cancel` is waited for (its answer changes nothing).
const CANCEL_WAIT: Duration = Duration::from_secs(5);

impl Drop for CancelTask {
    fn drop(&mut self) {
        if let Some(live) = self.live.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let request = tasks::about("tasks/cancel", &self.id);
            let (server, id) = (std::mem::take(&mut self.server), std::mem::take(&mut self.id));
            runtime.spawn(async move {
                let cancelled = tokio::time::timeout(CANCEL_WAIT, async {
                    live.send(request).await.map_err(|e| McpError::from_service(&server, e))?.answer(&server).await
                })
                .await;
                if let Ok(Err(error)) = cancelled {
                    tracing::debug!(%server, task = %id, %error, "the server did not take a task's cancellation");
                }
            });
        }
    }
}

/// Polls the task `id`'s status (`tasks/get`) at `server`'s interval, into
/// `watch`. Never ends: the caller stops it when the result comes.
async fn poll_status(live: Live, server: &str, id: String, watch: Arc<tasks::TaskWatch>) -> std::convert::Infallible {
    loop {
        let Some(wait) = watch.next_poll() else { return std::future::pending().await };
        tokio::time::sleep(wait).await;
        let answer = match live.send(tasks::about("tasks/get", &id)).await {
            Ok(sent) => sent.answer(server).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match answer.and_then(|answer| tasks::TaskState::read(answer).map_err(|e| e.to_string())) {
            Ok(state) => watch.seen(state),
            Err(error) => tracing::debug!(task = %id, %error, "polling a task's status failed"),
        }
    }
}

/// A request's time limit: `timeout` without news, restarted by each progress
/// notification of the request and standing still while a sampling or
/// elicitation request of the same server waits for the user (the time left
/// is kept and runs on once every such request is answered).
struct Deadline {
    timeout: Duration,
    progress: Arc<tokio::sync::Notify>,
    hooks: watch::Receiver<usize>,
}

impl Deadline {
    /// Resolves when the time is up.
    async fn expired(mut self) {
        let mut left = self.timeout;
        loop {
            if *self.hooks.borrow_and_update() > 0 {
                // The registry holds the sender as long as the connection's routes live.
                if self.hooks.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
                continue;
            }
            let started = tokio::time::Instant::now();
            tokio::select! {
                () = tokio::time::sleep(left) => return,
                () = self.progress.notified() => left = self.timeout,
                changed = self.hooks.changed() => {
                    left = left.saturating_sub(started.elapsed());
                    if changed.is_err() {
                        tokio::time::sleep(left).await;
                        return;
                    }
                }
            }
        }
    }
}

async fn ping(server: &str, peer: &Peer<RoleClient>, timeout: Duration) -> Result<(), McpError> {
    let request = ClientRequest::PingRequest(Default::default());
    match tokio::time::timeout(timeout, peer.send_request(request)).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(McpError::from_service(server, e)),
        Err(_) => Err(McpError::Timeout { server: server.to_owned(), after: timeout }),
    }
}

fn backoff(options: &RegistryOptions, attempt: u32) -> Duration {
    let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
    options.backoff_initial.saturating_mul(factor).min(options.backoff_max)
}

/// Owns one server's connections from start to stop.
async fn supervise(shared: Arc<Shared>, slot: Arc<Slot>, stop: CancellationToken) {
    let mut attempt = 0u32;
    loop {
        let status = if attempt == 0 { ServerStatus::Starting } else { ServerStatus::Restarting { attempt } };
        shared.set_status(&slot, status);
        // `start_once` watches `stop` itself: a running server must get its
        // graceful shutdown (stdin closed, the grace period, then the group
        // killed), which dropping the future would skip.
        let outcome = start_once(&shared, &slot, &stop).await;
        if stop.is_cancelled() {
            // However the connection ended, it ended because it was stopped.
            break;
        }
        let reason = match outcome {
            Ok(Ended::Stopped) => break,
            Ok(Ended::Crashed(reason)) => {
                attempt = 0;
                reason
            }
            Err(reason) if attempt == 0 => {
                shared.set_status(&slot, ServerStatus::Failed { reason });
                return;
            }
            Err(reason) => reason,
        };
        if attempt >= shared.options.max_restarts {
            shared.set_status(&slot, ServerStatus::Failed { reason });
            return;
        }
        attempt += 1;
        shared.set_status(&slot, ServerStatus::Restarting { attempt });
        tracing::warn!(server = %slot.name, attempt, %reason, "MCP server stopped; restarting");
        tokio::select! {
            () = stop.cancelled() => break,
            () = tokio::time::sleep(backoff(&shared.options, attempt)) => {}
        }
    }
    shared.set_status(&slot, ServerStatus::Stopped);
}

enum Ended {
    Stopped,
    Crashed(String),
}

/// One connection's life: connect, serve until stopped or closed, clean up.
/// `Err` is a failed start.
async fn start_once(shared: &Shared, slot: &Slot, stop: &CancellationToken) -> Result<Ended, String> {
    let config = lock(&slot.config).clone();
    let (changed_tx, mut changed_rx) = mpsc::unbounded_channel();
    let routes = CallRoutes::default();
    let tasks = ClientTasks::default();
    // What the server's requests still run as tasks stops with this connection.
    let _tasks_end = tasks.end_with_connection();
    let handler = HostHandler {
        server: slot.name.clone(),
        routes: routes.clone(),
        events: shared.events.clone(),
        changed: changed_tx,
        hooks: read(&shared.hooks).clone(),
        hook_timeout: shared.options.hook_timeout,
        roots: shared.roots.clone(),
        share_roots: config.share_roots,
        tasks,
    };
    let env = shared.env().await;
    let in_process = read(&shared.in_process).get(&slot.name).cloned();
    let on_block: BlockListener = {
        let (server, events, stderr) = (slot.name.clone(), shared.events.clone(), slot.stderr.clone());
        Arc::new(move |host: &str| {
            tracing::warn!(%server, %host, "blocked a connection: not in the allowed domains");
            stderr.push(format!("patchbay: blocked a connection to {host}: not in the allowed domains"));
            let _ = events.send(McpEvent::ConnectionBlocked { server: server.clone(), host: host.to_owned() });
        })
    };
    let cx = Context {
        env,
        secrets: &shared.secrets,
        stderr: &slot.stderr,
        handler,
        ct: stop.child_token(),
        in_process,
        policy: shared.policy(&config),
        protected: &shared.options.protected,
        on_block,
    };
    let connected = tokio::select! {
        // Stopped while starting: dropping the attempt kills what it spawned.
        () = stop.cancelled() => return Ok(Ended::Stopped),
        connected = connect::connect(&config, cx) => connected,
    };
    let (conn, report) = match connected {
        Ok(ok) => ok,
        Err(StartFailure { error, report }) => {
            *lock(&slot.report) = report.map(|r| *r);
            return Err(error.to_string());
        }
    };
    *lock(&slot.report) = report;
    // The filtering proxy lives as long as this connection.
    let Connection { service, ct, mut child, kind, catalogue, lane, egress: _egress } = conn;
    let listing = Listing::of(lane.clone(), kind);
    let peer = service.peer().clone();
    let pid = child.as_ref().and_then(|c| c.pid());
    *write(&slot.catalogue) = catalogue;
    let call_timeout = Duration::from_secs(config.timeouts.call_secs);
    tokio::select! {
        biased;
        () = restore(shared, slot, &peer, call_timeout) => {}
        // Stopped meanwhile: the loop below ends at once and shuts the server down.
        () = stop.cancelled() => {}
    }
    *write(&slot.live) = Some(Live { peer: peer.clone(), lane, routes, kind, pid, share_roots: config.share_roots });
    let _ = shared.events.send(McpEvent::CatalogueChanged { server: slot.name.clone() });
    shared.set_status(slot, ServerStatus::Ready);

    let mut health = tokio::time::interval(shared.options.health_interval);
    health.tick().await;
    let waiting = service.waiting();
    tokio::pin!(waiting);
    let mut closed = false;
    let ended = loop {
        tokio::select! {
            // A stop also closes the connection (its token is the stop's child): it wins.
            biased;
            () = stop.cancelled() => break Ended::Stopped,
            _ = &mut waiting => {
                closed = true;
                break Ended::Crashed("the connection closed".to_owned());
            }
            Some(list) = changed_rx.recv() => {
                let mut fresh = read(&slot.catalogue).clone();
                match fresh.refresh(&slot.name, &peer, &listing, list, call_timeout).await {
                    Ok(()) => {
                        *write(&slot.catalogue) = fresh;
                        let _ = shared.events.send(McpEvent::CatalogueChanged { server: slot.name.clone() });
                    }
                    Err(e) => tracing::warn!(server = %slot.name, error = %e, "refreshing the catalogue failed"),
                }
            }
            _ = health.tick() => {
                if let Err(e) = ping(&slot.name, &peer, shared.options.ping_timeout).await {
                    break Ended::Crashed(format!("health check failed: {e}"));
                }
            }
        }
    };
    *write(&slot.live) = None;
    ct.cancel();
    if !closed {
        let _ = tokio::time::timeout(shared.options.shutdown_grace, &mut waiting).await;
    }
    if let Some(child) = child.as_mut() {
        let status = child.shutdown(shared.options.shutdown_grace).await;
        if let (Ended::Crashed(_), Some(report)) = (&ended, lock(&slot.report).as_mut()) {
            (report.exit_code, report.signal) = super::stdio::describe(status);
            report.stderr_tail = slot.stderr.tail(40);
        }
    }
    Ok(ended)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_limit() {
        let options = RegistryOptions {
            backoff_initial: Duration::from_millis(100),
            backoff_max: Duration::from_millis(500),
            ..RegistryOptions::default()
        };
        let waits: Vec<u128> = (1..=5).map(|a| backoff(&options, a).as_millis()).collect();
        assert_eq!(waits, vec![100, 200, 400, 500, 500]);
    }

    /// Runs a [`Deadline`] of `timeout`; the task ends when it expires.
    fn deadline(timeout: Duration) -> (Arc<tokio::sync::Notify>, watch::Sender<usize>, JoinHandle<()>) {
        let progress = Arc::new(tokio::sync::Notify::new());
        let (hooks, rx) = watch::channel(0);
        let deadline = Deadline { timeout, progress: progress.clone(), hooks: rx };
        (progress, hooks, tokio::spawn(deadline.expired()))
    }

    #[tokio::test]
    async fn a_deadline_restarts_with_progress_and_stands_still_while_the_user_answers() {
        let limit = Duration::from_millis(300);
        let (progress, _hooks, expired) = deadline(limit);
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(150)).await;
            progress.notify_one();
        }
        assert!(!expired.is_finished(), "progress every 150 ms keeps a 300 ms limit from firing");
        tokio::time::timeout(Duration::from_secs(5), expired).await.unwrap().unwrap();

        let (_, hooks, expired) = deadline(limit);
        hooks.send_modify(|n| *n += 1);
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert!(!expired.is_finished(), "a pending request stops the clock");
        hooks.send_modify(|n| *n -= 1);
        tokio::time::timeout(Duration::from_secs(5), expired).await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn an_unknown_server_is_an_error_and_a_stopped_one_is_not_ready() {
        let registry = McpRegistry::new(Arc::new(crate::secrets::MemoryStore::new()), RegistryOptions::default());
        assert!(matches!(registry.status("nope"), Err(McpError::UnknownServer { .. })));
        registry.configure([McpServerConfig::stdio("s", "true", &[])]);
        let err =
            registry.call_tool("s", "t", None, CallOptions::default(), CancellationToken::new()).await.unwrap_err();
        assert!(matches!(err, McpError::NotReady { status: ServerStatus::Stopped, .. }), "{err:?}");
    }
}
