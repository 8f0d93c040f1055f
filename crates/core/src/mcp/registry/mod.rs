//! [`McpRegistry`]: every configured MCP server, its status, inventory and calls. It is cheap to
//! clone; calls from several conversations run concurrently over the same connections.
//!
//! Each started server has a supervisor task that owns its connection: it connects, publishes
//! [`ServerStatus::Ready`], watches for the connection closing, failed pings and `list_changed`, and
//! restarts a server that crashed after it was ready with backoff ([`ServerStatus::Restarting`]).
//! Stopping (or dropping the last handle) closes stdin, waits, then kills the process group. It
//! remembers each server's log level and resource subscriptions across restarts
//! ([`McpEvent::ResourceUpdated`]), sends servers' requests to the [`ServerRequests`] hook and
//! answers `roots/list` from [`McpRegistry::set_roots`].
//!
//! This file is the facade; [`supervisor`] starts, pings and restarts each server over [`connect`]
//! (and [`listen`]s to a 2026-07-28 one);
//! [`calls`] runs calls with their deadlines and cancellation; [`rate`] holds the rate limits.

mod calls;
pub mod connect;
mod listen;
pub mod rate;
mod supervisor;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use rmcp::model::{
    ClientNotification, ClientRequest, Icon, ProgressToken, Prompt, RequestId, Resource, ResourceTemplate,
    RootsListChangedNotification, ServerResult, Tool,
};
use rmcp::service::{Peer, RoleClient};
use serde::Serialize;
use tokio::sync::{OnceCell, broadcast, mpsc, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use self::calls::unexpected;
use self::connect::StartFailure;
use self::rate::CallWindow;
use self::supervisor::{check_health, supervise};
use crate::config::{McpServerConfig, Policy, PolicyDefaults, PolicyOutline, Resolved, TransportConfig};
use crate::mcp::error::McpError;
use crate::mcp::launch::stdio::StderrLog;
use crate::mcp::launch::{LaunchReport, LoginEnv};
use crate::mcp::protocol::about::ServerAbout;
use crate::mcp::protocol::approval::ApprovalPolicy;
use crate::mcp::protocol::client::{CallRoutes, SharedRoots};
use crate::mcp::protocol::events::{CallEvent, McpEvent};
use crate::mcp::protocol::inventory::Inventory;
use crate::mcp::protocol::requests::{DenyAll, McpRoot, ServerRequests};
use crate::mcp::protocol::revision::Probed;
use crate::mcp::status::ServerStatus;
use crate::mcp::wire::TransportKind;
use crate::mcp::wire::in_process::InProcessServer;
use crate::mcp::wire::lane::Lane;
use crate::secrets::SecretStore;

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

/// The last time a server's health was checked (a ping), and how it went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct HealthCheck {
    /// When, in milliseconds since the Unix epoch.
    #[ts(type = "number")]
    pub at_ms: i64,
    /// How long the answer took, or until the ping was given up.
    #[ts(type = "number")]
    pub round_trip_ms: u64,
    /// Why it failed; `None` when the server answered.
    pub error: Option<String>,
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
    /// Its last health check, kept across restarts.
    pub health: Option<HealthCheck>,
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
    /// It speaks 2026-07-28 or later ([`crate::mcp::protocol::revision::is_modern`]).
    modern: bool,
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
    inventory: RwLock<Inventory>,
    report: Mutex<Option<LaunchReport>>,
    supervisor: tokio::sync::Mutex<Option<Supervisor>>,
    /// Set by [`McpRegistry::set_log_level`]; else the registry's default.
    log_level: Mutex<Option<LogLevel>>,
    /// Resource URIs subscribed to, renewed at each start.
    subscriptions: Mutex<BTreeSet<String>>,
    /// Wakes the supervisor to listen again with the changed subscriptions (2026-07-28).
    relisten: tokio::sync::Notify,
    /// What the server's last acknowledged listen stream took and refused (2026-07-28).
    listened: watch::Sender<Listened>,
    /// Its calls of the last minute, for its rate limits.
    calls: Mutex<CallWindow>,
    /// Its last health check (the supervisor's every `health_interval`, or one asked for).
    health: Mutex<Option<HealthCheck>>,
    /// Whether it was found older than 2026-07-28, or to speak it (a stdio server; see
    /// [`crate::mcp::protocol::revision::probe`]).
    probed: Probed,
}

/// What a 2026-07-28 server's listen stream took of the resources asked for.
#[derive(Debug, Default)]
struct Listened {
    acknowledged: Vec<String>,
    refused: Vec<String>,
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
    /// The level `slot`'s server sends log messages at: its own, else the registry's default.
    fn log_level(&self, slot: &Slot) -> Option<LogLevel> {
        lock(&slot.log_level).or(self.options.log_level)
    }

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

    /// The settings `name` runs with.
    pub fn server_config(&self, name: &str) -> Result<McpServerConfig, McpError> {
        Ok(lock(&self.slot(name)?.config).clone())
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
                        inventory: RwLock::default(),
                        report: Mutex::default(),
                        supervisor: tokio::sync::Mutex::default(),
                        log_level: Mutex::default(),
                        subscriptions: Mutex::default(),
                        relisten: tokio::sync::Notify::new(),
                        listened: watch::Sender::new(Listened::default()),
                        calls: Mutex::default(),
                        health: Mutex::default(),
                        probed: Probed::default(),
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
                // Only a shutdown refuses, and then every start is refused alike.
                let _ = self.start_slot(&slot).await;
            }
        }
    }

    /// Starts one server (enabled or not) unless it is already running; refused once
    /// [`Self::shutdown`] has begun.
    pub async fn start(&self, name: &str) -> Result<(), McpError> {
        let slot = self.slot(name)?;
        self.start_slot(&slot).await
    }

    async fn start_slot(&self, slot: &Arc<Slot>) -> Result<(), McpError> {
        let mut supervisor = slot.supervisor.lock().await;
        // Checked under the slot's lock, which the shutdown's stop takes after cancelling
        // the root: a start either sees the shutdown or is there for the stop to find.
        if self.inner.root.is_cancelled() {
            return Err(McpError::ShuttingDown { server: slot.name.clone() });
        }
        if supervisor.as_ref().is_some_and(|s| !s.handle.is_finished()) {
            return Ok(());
        }
        let stop = self.inner.root.child_token();
        self.shared().set_status(slot, ServerStatus::Starting);
        let handle = tokio::spawn(supervise(self.shared().clone(), slot.clone(), stop.clone()));
        *supervisor = Some(Supervisor { stop, handle });
        Ok(())
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
    /// waits until their processes are gone. For good: no server starts after it
    /// (a restart after a crash, a start asked for meanwhile).
    pub async fn shutdown(&self) {
        self.inner.root.cancel();
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
                    tools: read(&slot.inventory).tools.len(),
                    health: lock(&slot.health).clone(),
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
        Ok(read(&self.slot(name)?.inventory).tools.clone())
    }

    /// The tools of every ready server, by server name.
    pub fn all_tools(&self) -> Vec<(String, Vec<Tool>)> {
        let slots: Vec<Arc<Slot>> = read(&self.shared().servers).values().cloned().collect();
        slots
            .iter()
            .filter(|s| *s.status.borrow() == ServerStatus::Ready)
            .map(|s| (s.name.clone(), read(&s.inventory).tools.clone()))
            .collect()
    }

    /// What the server said about using it when it started (its `instructions`).
    pub fn instructions(&self, name: &str) -> Result<Option<String>, McpError> {
        Ok(read(&self.slot(name)?.inventory).instructions.clone())
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
        Ok(read(&self.slot(name)?.inventory).icons.clone())
    }

    /// The server's resources.
    pub fn resources(&self, name: &str) -> Result<Vec<Resource>, McpError> {
        Ok(read(&self.slot(name)?.inventory).resources.clone())
    }

    /// The server's resource templates.
    pub fn resource_templates(&self, name: &str) -> Result<Vec<ResourceTemplate>, McpError> {
        Ok(read(&self.slot(name)?.inventory).resource_templates.clone())
    }

    /// The server's prompts.
    pub fn prompts(&self, name: &str) -> Result<Vec<Prompt>, McpError> {
        Ok(read(&self.slot(name)?.inventory).prompts.clone())
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

    /// Asks a server to send log messages at `level` and above
    /// (`logging/setLevel`), now if it is ready and at each later start.
    /// A 2026-07-28 server gets the level with each request instead.
    pub async fn set_log_level(&self, server: &str, level: LogLevel, ct: CancellationToken) -> Result<(), McpError> {
        *lock(&self.slot(server)?.log_level) = Some(level);
        if self.live(server)?.0.modern {
            return Ok(());
        }
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
        self.shared().log_level(self.slot(server).ok()?.as_ref())
    }

    /// Subscribes to changes of the resource `uri` (`resources/subscribe`);
    /// they arrive as [`McpEvent::ResourceUpdated`]. Renewed after a restart.
    /// A 2026-07-28 server is asked to listen again, for the new set, and answers by
    /// acknowledging the resource or not (then it is dropped from the set and refused here).
    pub async fn subscribe_resource(&self, server: &str, uri: &str, ct: CancellationToken) -> Result<(), McpError> {
        if self.live(server)?.0.modern {
            return self.listen_to(server, uri, ct).await;
        }
        let request = subscription_request(uri, true);
        match self.request(server, request, CallOptions::default(), ct).await? {
            ServerResult::EmptyResult(_) => {
                lock(&self.slot(server)?.subscriptions).insert(uri.to_owned());
                Ok(())
            }
            other => Err(unexpected(server, &other)),
        }
    }

    /// Adds `uri` to a 2026-07-28 server's listen stream and waits for the server's answer
    /// (an answer given before this call does not count).
    async fn listen_to(&self, server: &str, uri: &str, ct: CancellationToken) -> Result<(), McpError> {
        if !self.can_subscribe(server) {
            let reason = "the server does not offer resource subscriptions".to_owned();
            return Err(McpError::Protocol { server: server.to_owned(), reason });
        }
        let slot = self.slot(server)?;
        let mut listened = slot.listened.subscribe();
        let added = lock(&slot.subscriptions).insert(uri.to_owned());
        slot.relisten.notify_one();
        let asked = |list: &[String]| list.iter().any(|u| u == uri);
        let answered = async {
            loop {
                listened.changed().await?;
                let now = listened.borrow_and_update();
                if asked(&now.acknowledged) || asked(&now.refused) {
                    return Ok::<bool, watch::error::RecvError>(asked(&now.refused));
                }
            }
        };
        // The stream opens within DISCOVER_WAIT; a moment more for the supervisor to take it.
        let within = crate::mcp::wire::DISCOVER_WAIT + Duration::from_secs(1);
        let refused = tokio::select! {
            () = ct.cancelled() => Err(McpError::Cancelled { server: server.to_owned() }),
            answer = tokio::time::timeout(within, answered) => match answer {
                Ok(Ok(refused)) => Ok(refused),
                Ok(Err(_)) => Err(McpError::NotReady { server: server.to_owned(), status: slot.status.borrow().clone() }),
                Err(_) => Err(McpError::Timeout { server: server.to_owned(), after: within }),
            },
        };
        match refused {
            Ok(false) => Ok(()),
            refused => {
                // Not taken: a resource this call added is not kept.
                if added {
                    lock(&slot.subscriptions).remove(uri);
                    slot.relisten.notify_one();
                }
                Err(refused.err().unwrap_or_else(|| McpError::Protocol {
                    server: server.to_owned(),
                    reason: format!("the server does not send updates of {uri}"),
                }))
            }
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
        let slot = self.slot(server)?;
        lock(&slot.subscriptions).remove(uri);
        if self.live(server)?.0.modern {
            slot.relisten.notify_one();
            return Ok(());
        }
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

    /// Pings a ready server now ("Check now"); the check is kept as its last.
    pub async fn ping(&self, server: &str) -> Result<HealthCheck, McpError> {
        let (live, _) = self.live(server)?;
        let slot = self.slot(server)?;
        check_health(&slot, &live.peer, self.shared().options.ping_timeout).await
    }

    /// The last health check of `server`, if it was checked since Patchbay started.
    pub fn health(&self, server: &str) -> Option<HealthCheck> {
        self.slot(server).ok().and_then(|slot| lock(&slot.health).clone())
    }
}

#[expect(deprecated, reason = "rmcp marks logging deprecated (SEP-2577); servers still offer it")]
fn set_level_request(level: LogLevel) -> ClientRequest {
    use rmcp::model::{SetLevelRequest, SetLevelRequestParams};
    ClientRequest::SetLevelRequest(SetLevelRequest::new(SetLevelRequestParams::new(logging_level(level))))
}

/// The protocol's name for `level`.
#[expect(deprecated, reason = "rmcp marks logging deprecated (SEP-2577); 2026-07-28 servers still offer it")]
fn logging_level(level: LogLevel) -> rmcp::model::LoggingLevel {
    use rmcp::model::LoggingLevel;
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

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
