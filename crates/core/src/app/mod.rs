//! The services a windowed front end needs, over the rest of the core.
//!
//! [`App`] owns one data directory's stores, the shared MCP registry and the
//! knowledge base, and offers the operations the desktop's commands map to
//! one by one (`ui/IPC.md` is that contract). Results are the serialisable
//! views of [`views`]: ids as strings, timestamps in milliseconds, every
//! error an [`ErrorView`] with an [`ErrorKind`] the UI branches on. Things
//! that happen on their own (server status, indexing progress) arrive on the
//! front end's stream of [`AppEvent`]s; a turn's events (the host's
//! `TurnEvent`s) go to the callback of the call that started it.
//!
//! Nothing here knows Tauri: the desktop crate only deserialises arguments,
//! calls one method and maps the error; the tests drive `App` directly.

mod bundles;
mod chat;
mod diff;
mod embedding_models;
mod icons;
mod import_export;
mod knowledge;
mod policy;
mod presets;
mod prompts_resources;
mod providers;
mod requests;
mod roots;
mod schedules;
mod servers;
mod share;
mod sources;
mod titles;
mod tools;
pub mod views;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::agent::{Agent, AgentError};
use crate::assistants::{AssistantError, AssistantStore};
use crate::attach::AttachError;
use crate::bundle::BundleError;
use crate::config::ConfigError;
use crate::conversations::{ConversationError, ConversationId, ConversationStore};
use crate::discover::RegistryError;
use crate::downloads::DownloadError;
use crate::folder::FolderError;
use crate::host::{Host, HostError, TurnAnswers};
use crate::llm::LlmError;
use crate::mcp::oauth::OAuthError;
use crate::mcp::{McpError, McpEvent, McpRegistry};
use crate::paths::{DataDir, PathsError};
use crate::rag::RagError;
use crate::roots::RootsError;
use crate::schedules::ScheduleError;
use crate::secrets::{SecretError, SecretStore};
use crate::store::{Store, StoreError};

pub use chat::{ApprovalAnswer, AttachmentInput, TurnInput};
pub use presets::{restore_backup, window_language};
pub use requests::{ServerRequestResponse, ServerRequestView, TextMessage};
pub use views::{ErrorKind, ErrorView};

/// Errors of the app services, each with the [`ErrorKind`] the UI shows.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AppError {
    #[error(transparent)]
    Paths(#[from] PathsError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Conversation(#[from] ConversationError),
    #[error(transparent)]
    Attach(#[from] AttachError),
    #[error(transparent)]
    Agent(#[from] AgentError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Assistant(#[from] AssistantError),
    #[error(transparent)]
    Mcp(#[from] McpError),
    #[error(transparent)]
    Rag(#[from] RagError),
    #[error(transparent)]
    Bundle(#[from] BundleError),
    #[error(transparent)]
    Discover(#[from] RegistryError),
    /// Boxed: rmcp's OAuth errors are large, and every result carries this enum.
    #[error(transparent)]
    OAuth(Box<OAuthError>),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error(transparent)]
    Download(#[from] DownloadError),
    /// Boxed: it may carry a knowledge-base error, and every result carries this enum.
    #[error(transparent)]
    Roots(Box<RootsError>),
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// An id or name that does not exist.
    #[error("{0}")]
    NotFound(String),
    /// An argument the operation cannot use.
    #[error("{0}")]
    Invalid(String),
    /// No turn or approval is waiting under that id.
    #[error("{0}")]
    NotWaiting(String),
}

impl AppError {
    /// What kind of failure this is, for the UI to choose its action.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Paths(_) | Self::Store(StoreError::DataDir(_)) => ErrorKind::DataDir,
            Self::Store(_) => ErrorKind::Database,
            Self::Secret(SecretError::InvalidName { .. }) => ErrorKind::InvalidInput,
            Self::Secret(_) => ErrorKind::Keyring,
            Self::Conversation(e) => conversation_kind(e),
            Self::Attach(_) => ErrorKind::InvalidInput,
            Self::Agent(e) => match e {
                AgentError::Conversation(e) => conversation_kind(e),
                AgentError::Llm(e) => llm_kind(e),
                AgentError::Config(e) => config_kind(e),
                AgentError::NoSuchApproval { .. } | AgentError::NoApprovalFor { .. } => ErrorKind::NotFound,
                AgentError::NothingToAnswer { .. } => ErrorKind::InvalidInput,
                _ => ErrorKind::Provider,
            },
            Self::Config(e) => config_kind(e),
            Self::Assistant(AssistantError::NotFound { .. }) => ErrorKind::NotFound,
            Self::Assistant(AssistantError::Invalid { .. }) => ErrorKind::InvalidInput,
            Self::Assistant(_) => ErrorKind::Database,
            Self::Mcp(e) => mcp_kind(e),
            Self::Rag(RagError::Mcp(e)) => mcp_kind(e),
            Self::Rag(RagError::Config(e)) => config_kind(e),
            Self::Rag(e) => match e {
                RagError::Store(_) => ErrorKind::Database,
                RagError::Secret(_) => ErrorKind::Keyring,
                RagError::Cancelled => ErrorKind::Cancelled,
                RagError::Timeout { .. } => ErrorKind::Timeout,
                RagError::Folder(FolderError::NotFound { .. })
                | RagError::NotRegistered { .. }
                | RagError::UnknownServer { .. } => ErrorKind::NotFound,
                _ => ErrorKind::InvalidInput,
            },
            Self::Llm(e) => llm_kind(e),
            Self::Download(DownloadError::Write { .. }) => ErrorKind::DataDir,
            Self::Download(_) => ErrorKind::InvalidInput,
            Self::Bundle(BundleError::Write { .. }) => ErrorKind::DataDir,
            Self::Bundle(_) => ErrorKind::InvalidInput,
            Self::Discover(RegistryError::Cancelled) => ErrorKind::Cancelled,
            Self::Discover(RegistryError::Setting { .. }) => ErrorKind::InvalidInput,
            Self::Discover(_) => ErrorKind::Mcp,
            Self::Roots(e) => match **e {
                RootsError::Store(_) => ErrorKind::Database,
                RootsError::Rag(RagError::Store(_)) => ErrorKind::Database,
                RootsError::Folder(FolderError::NotFound { .. }) | RootsError::NotShared { .. } => ErrorKind::NotFound,
                _ => ErrorKind::InvalidInput,
            },
            Self::OAuth(e) => match **e {
                OAuthError::Cancelled { .. } => ErrorKind::Cancelled,
                OAuthError::Timeout { .. } => ErrorKind::Timeout,
                _ => ErrorKind::Mcp,
            },
            Self::Schedule(e) => match e {
                ScheduleError::Store(_) | ScheduleError::Decode { .. } => ErrorKind::Database,
                ScheduleError::NotFound(_) => ErrorKind::NotFound,
                _ => ErrorKind::InvalidInput,
            },
            Self::NotFound(_) | Self::NotWaiting(_) => ErrorKind::NotFound,
            Self::Invalid(_) => ErrorKind::InvalidInput,
        }
    }

    /// The error as the UI receives it.
    pub fn view(&self) -> ErrorView {
        ErrorView { kind: self.kind(), message: self.to_string() }
    }
}

impl From<RootsError> for AppError {
    fn from(e: RootsError) -> Self {
        Self::Roots(Box::new(e))
    }
}

/// Each host error as the kind it was before the host opened the data directory.
impl From<HostError> for AppError {
    fn from(e: HostError) -> Self {
        match e {
            HostError::Store(e) => e.into(),
            HostError::Secret(e) => e.into(),
            HostError::Config(e) => e.into(),
            HostError::Conversation(e) => e.into(),
            HostError::Rag(e) => e.into(),
            HostError::Roots(e) => Self::Roots(e),
            HostError::Proxy(e) => Self::Invalid(e.to_string()),
        }
    }
}

impl From<OAuthError> for AppError {
    fn from(e: OAuthError) -> Self {
        Self::OAuth(Box::new(e))
    }
}

fn conversation_kind(e: &ConversationError) -> ErrorKind {
    match e {
        ConversationError::Store(_) | ConversationError::Decode { .. } => ErrorKind::Database,
        ConversationError::NotFound { .. }
        | ConversationError::MessageNotFound { .. }
        | ConversationError::NoKeptResult { .. } => ErrorKind::NotFound,
        _ => ErrorKind::InvalidInput,
    }
}

fn mcp_kind(e: &McpError) -> ErrorKind {
    match e {
        McpError::Timeout { .. } | McpError::StartTimeout { .. } => ErrorKind::Timeout,
        McpError::Cancelled { .. } | McpError::ShuttingDown { .. } => ErrorKind::Cancelled,
        McpError::UnknownServer { .. } => ErrorKind::NotFound,
        McpError::UriTemplate { .. } => ErrorKind::InvalidInput,
        _ => ErrorKind::Mcp,
    }
}

fn config_kind(e: &ConfigError) -> ErrorKind {
    match e {
        ConfigError::Store(_) | ConfigError::Decode { .. } => ErrorKind::Database,
        ConfigError::NotFound { .. } => ErrorKind::NotFound,
        ConfigError::Secret(_) => ErrorKind::Keyring,
        _ => ErrorKind::InvalidInput,
    }
}

fn llm_kind(e: &LlmError) -> ErrorKind {
    match e {
        LlmError::Cancelled => ErrorKind::Cancelled,
        LlmError::Timeout { .. } => ErrorKind::Timeout,
        _ => ErrorKind::Provider,
    }
}

/// What the app reports on its own, in the order it happened. The front end
/// reads them as a stream ([`AppEvents::channel`]): the desktop emits each as
/// a window event, tests record them, and nobody need watch.
/// Not `non_exhaustive`: a front end must show every kind.
#[derive(Debug, Clone)]
pub enum AppEvent {
    /// A server's state or tool count changed.
    ServerStatus(views::ServerStatusView),
    /// A server wrote a line to stderr, or logged a message (`notifications/message`).
    ServerLog(views::ServerLogLine),
    /// Indexing made progress (`done == total` when finished).
    KbProgress(views::KbProgress),
    /// A model download made progress, finished or failed.
    KbModelProgress(views::KbModelProgress),
    /// A server asks for sampling or elicitation: show the dialog, answer
    /// with [`App::respond_server_request`].
    ServerRequest(ServerRequestView),
    /// A server's request (by its id) waits no more: answered, in this window or another, or
    /// given up (the turn stopped, the server's own time limit): its dialogs go.
    ServerRequestEnded(String),
    /// The model named a conversation after its first answer.
    ConversationRenamed(views::ConversationRenamed),
    /// A resource the user watches changed (`notifications/resources/updated`).
    ResourceUpdated(views::ResourceUpdated),
    /// A sandboxed server's filtering proxy refused a host: show it with
    /// "allow this domain" ([`App::allow_domain`]).
    ConnectionBlocked(views::ConnectionBlocked),
    /// The shared knowledge base changed: it answered or refused a request (Settings →
    /// Knowledge base → Share's log), or its server stopped on its own. [`App::kb_share`] says
    /// how it is now.
    KbShareChanged,
}

/// The receiving end of an app's events.
pub type AppEventStream = tokio::sync::mpsc::UnboundedReceiver<AppEvent>;

/// Where an app sends its [`AppEvent`]s.
#[derive(Clone)]
pub struct AppEvents(tokio::sync::mpsc::UnboundedSender<AppEvent>);

impl AppEvents {
    /// Events and the stream they arrive on, in order.
    pub fn channel() -> (Self, AppEventStream) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        (Self(tx), rx)
    }

    /// Events nobody watches: for front ends with no window (the CLI's
    /// installs) and tests that look at results only.
    pub fn unwatched() -> Self {
        Self::channel().0
    }

    /// Reports `event`; with nobody watching it is dropped.
    fn report(&self, event: AppEvent) {
        let _ = self.0.send(event);
    }
}

/// Reads an environment variable.
type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// The window's state over the [`Host`]'s: `inner.store`, `inner.registry`,
/// `inner.kb` and the rest of the host's fields read through to the host.
struct Inner {
    host: Arc<Host>,
    conversations: ConversationStore,
    assistants: AssistantStore,
    agent: Agent,
    events: AppEvents,
    turns: Mutex<HashMap<ConversationId, TurnAnswers>>,
    /// Conversations a turn is being sent to, from the call's first line, counted (two sends
    /// may overlap until one is refused): a new chat whose first message is still on its way
    /// (reading attachments, starting the built-in server) is not unused.
    sending: Mutex<HashMap<ConversationId, usize>>,
    indexing: Mutex<HashMap<std::path::PathBuf, knowledge::Indexing>>,
    /// Model downloads running (or failed), by model name (see [`embedding_models`]).
    model_downloads: Mutex<HashMap<String, embedding_models::Download>>,
    /// The runtime [`App::start`] ran on: background work (indexing) is
    /// spawned there, also when a front end calls from a plain thread.
    runtime: std::sync::OnceLock<tokio::runtime::Handle>,
    /// Re-indexes knowledge-base folders when their files change.
    watcher: Mutex<Option<crate::rag::KbWatcher>>,
    /// Sampling and elicitation requests waiting for the user, oldest first.
    server_requests: Mutex<Vec<requests::Waiting>>,
    /// Icons fetched from servers' URLs (see [`icons`]).
    icons: Mutex<HashMap<url::Url, icons::Fetched>>,
    /// Bundles previewed and not yet installed, by preview id (see [`bundles`]).
    previews: Mutex<bundles::Previews>,
    /// Environment lookup for the provider fallback (`OPENAI_API_KEY`, …).
    env: Box<EnvLookup>,
    /// Hosts each server's filtering proxy refused, until allowed (see [`policy`]).
    blocked: Mutex<HashMap<String, std::collections::BTreeSet<String>>>,
    /// The system's scheduler, which runs schedules while Patchbay is closed.
    timer: Box<dyn crate::schedules::timer::SystemTimer>,
    /// The knowledge base shared over HTTP (see [`share`]).
    sharing: Mutex<share::Sharing>,
    /// Fired by [`App::shutdown`]: background indexing and loading stop.
    shutdown: tokio_util::sync::CancellationToken,
}

impl std::ops::Deref for Inner {
    type Target = Host;

    fn deref(&self) -> &Host {
        &self.host
    }
}

/// The app's services for one data directory. Cheap to clone.
#[derive(Clone)]
pub struct App {
    inner: Arc<Inner>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl App {
    /// Opens the services over an opened store. Call [`App::start`] on a
    /// tokio runtime afterwards to start the MCP servers.
    pub fn open(
        dir: DataDir,
        store: Store,
        secrets: Arc<dyn SecretStore>,
        events: AppEvents,
    ) -> Result<Self, AppError> {
        let (host, opened) = Host::open(dir, store, secrets)?;
        if opened.interrupted > 0 {
            tracing::info!("{} answers were interrupted when Patchbay last stopped", opened.interrupted);
        }
        // The window opens without the proxy rather than not at all.
        if let Some(e) = opened.proxy_failed {
            tracing::warn!("the saved proxy is not used: {e}");
        }
        host.load_embedder()?;
        let conversations = ConversationStore::new(host.store.clone());
        let inner = Inner {
            assistants: AssistantStore::new(host.store.clone()),
            agent: Agent::new(conversations.clone()),
            conversations,
            host,
            sharing: Mutex::new(share::Sharing::new(events.clone())),
            events,
            turns: Mutex::default(),
            sending: Mutex::default(),
            indexing: Mutex::default(),
            model_downloads: Mutex::default(),
            runtime: std::sync::OnceLock::new(),
            watcher: Mutex::default(),
            server_requests: Mutex::default(),
            icons: Mutex::default(),
            previews: Mutex::default(),
            env: Box::new(|k| std::env::var(k).ok()),
            blocked: Mutex::default(),
            timer: crate::schedules::timer::for_this_system(),
            shutdown: tokio_util::sync::CancellationToken::new(),
        };
        Ok(Self { inner: Arc::new(inner) })
    }

    /// Replaces how the environment is read (tests use an empty one).
    pub fn with_env(self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|_| panic!("with_env before the app is shared"));
        inner.env = Box::new(env);
        Self { inner: Arc::new(inner) }
    }

    /// Replaces the system's scheduler (tests record what it is asked).
    pub fn with_timer(self, timer: impl crate::schedules::timer::SystemTimer + 'static) -> Self {
        let mut inner = Arc::try_unwrap(self.inner).unwrap_or_else(|_| panic!("with_timer before the app is shared"));
        inner.timer = Box::new(timer);
        Self { inner: Arc::new(inner) }
    }

    /// Starts stdio servers in `env` instead of the login shell's environment
    /// (tests put their peers first on `PATH`).
    pub fn with_login_env(self, env: crate::mcp::LoginEnv) -> Self {
        let _ = self.inner.registry.clone().with_login_env(env);
        self
    }

    /// Starts every enabled MCP server in the background, forwards the
    /// registry's events, and brings the knowledge base up to date (then
    /// watches its folders). Returns at once.
    pub fn start(&self) -> Result<(), AppError> {
        let _ = self.inner.runtime.set(tokio::runtime::Handle::current());
        let host = &self.inner.host;
        host.configure(host.config.servers()?, requests::hook(&self.inner));
        host.attach_builtin();
        let mut rx = host.registry.subscribe();
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(async move {
            loop {
                let event = match rx.recv().await {
                    Ok(event) => event,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                };
                let Some(inner) = weak.upgrade() else { break };
                let app = App { inner };
                match event {
                    McpEvent::Status { server, .. } | McpEvent::InventoryChanged { server } => {
                        if let Some(status) = app.server_status(&server) {
                            app.inner.events.report(AppEvent::ServerStatus(status));
                        }
                    }
                    McpEvent::Log { server, message } => {
                        let line = views::log_line(&message);
                        app.inner.events.report(AppEvent::ServerLog(views::ServerLogLine { server, line }));
                    }
                    McpEvent::Stderr { server, line } => {
                        app.inner.events.report(AppEvent::ServerLog(views::ServerLogLine { server, line }));
                    }
                    // Attached resources are read when a message is sent; a watched one is shown again.
                    McpEvent::ResourceUpdated { server, uri } => {
                        app.inner.events.report(AppEvent::ResourceUpdated(views::ResourceUpdated { server, uri }));
                    }
                    // The refusal is on the server's stderr tail too; this is the one to act on.
                    McpEvent::ConnectionBlocked { server, host } => {
                        if app.note_blocked(&server, &host) {
                            app.inner
                                .events
                                .report(AppEvent::ConnectionBlocked(views::ConnectionBlocked { server, host }));
                        }
                    }
                }
            }
        });
        // Servers may ask for the roots as soon as they start: set them first.
        let app = self.clone();
        tokio::spawn(async move {
            if let Err(e) = app.sync_roots().await {
                tracing::warn!("no roots are shared with MCP servers: {e}");
            }
            if let Err(e) = app.restore_server_choices().await {
                tracing::warn!("the servers' log levels and watched resources were not restored: {e}");
            }
            app.inner.registry.start_all().await;
        });
        let app = self.clone();
        tokio::spawn(async move { app.restart_share().await });
        self.catch_up_and_watch()
    }

    /// Runs `task` in the background on the app's runtime.
    fn spawn(&self, task: impl std::future::Future<Output = ()> + Send + 'static) -> Result<(), AppError> {
        let runtime = self.inner.runtime.get().cloned().or_else(|| tokio::runtime::Handle::try_current().ok());
        let runtime = runtime.ok_or_else(|| AppError::Invalid("the app was not started on a runtime".into()))?;
        runtime.spawn(task);
        Ok(())
    }

    /// Stops every turn, background indexing and every server (on exit).
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        for control in lock(&self.inner.turns).values() {
            control.stop();
        }
        self.inner.registry.shutdown().await;
    }

    /// The shared MCP registry.
    pub fn registry(&self) -> &McpRegistry {
        &self.inner.registry
    }

    /// The data directory.
    pub fn dir(&self) -> &DataDir {
        &self.inner.dir
    }
}
