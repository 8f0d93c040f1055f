//! The host both front ends start: one data directory's store, knowledge
//! base and MCP registry, opened and wired the same way for the window
//! (`app`, built on it) and the CLI, so that a fix to start-up reaches both.
//!
//! [`Host::open`] applies the saved proxy, marks answers a crash cut off
//! interrupted, opens the knowledge base and builds the registry. The front
//! end then installs how it answers servers' requests ([`Host::configure`]),
//! attaches the built-in server, shares the roots and hands each turn the
//! registry's tools ([`Host::tools`]). The front ends differ only in how
//! they show events and answer questions.

mod embed;
pub mod proxy;
#[cfg(test)]
mod tests;
pub mod turn;

use std::sync::{Arc, RwLock, Weak};

use crate::agent::{ToolBudget, ToolEmbedder, TurnLimits};
use crate::builtin::{self, KnowledgeSource};
use crate::config::{ConfigError, ConfigStore, McpServerConfig};
use crate::conversations::{ConversationError, ConversationStore};
use crate::mcp::traces::TraceStore;
use crate::mcp::{McpRegistry, RegistryOptions, RegistryTools, ServerRequests};
use crate::net::NetError;
use crate::paths::DataDir;
use crate::rag::{KnowledgeBase, RagError};
use crate::roots::{self, RootsError, SharedFolders};
use crate::secrets::{SecretError, SecretStore};
use crate::store::{Store, StoreError};

pub use proxy::apply_saved_proxy;
pub use turn::{HostTurn, TurnAnswers, TurnEvent, WaitingCall};

/// The setting that holds the tools' share of the context window, in percent.
pub const TOOL_SHARE_SETTING: &str = "chat.tool_share_percent";

/// Errors of opening and wiring a host.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Conversation(#[from] ConversationError),
    #[error(transparent)]
    Rag(#[from] RagError),
    /// Boxed: it may carry a knowledge-base error.
    #[error(transparent)]
    Roots(Box<RootsError>),
    /// The saved proxy cannot be used.
    #[error(transparent)]
    Proxy(#[from] NetError),
}

impl From<RootsError> for HostError {
    fn from(e: RootsError) -> Self {
        Self::Roots(Box::new(e))
    }
}

/// What opening found, for the front end to tell the user (or not).
#[derive(Debug)]
#[non_exhaustive]
pub struct Opened {
    /// How many answers a crash had cut off (now marked interrupted, their text kept).
    pub interrupted: usize,
    /// Why the saved proxy is not in use, when it is not: requests go out
    /// without it. The window opens anyway; the CLI refuses to go on.
    pub proxy_failed: Option<HostError>,
}

/// One data directory's store, knowledge base and MCP registry, as every
/// front end starts them. The fields are the app's to use directly.
pub struct Host {
    pub(crate) dir: DataDir,
    pub(crate) store: Store,
    pub(crate) secrets: Arc<dyn SecretStore>,
    pub(crate) config: ConfigStore,
    pub(crate) registry: McpRegistry,
    /// Replaced as a whole when the embeddings change ([`Host::load_embedder`], the app's settings).
    pub(crate) kb: RwLock<KnowledgeBase>,
    /// Serialises updates of the registry's roots.
    roots_sync: tokio::sync::Mutex<()>,
    /// Tool search's vectors, kept across turns.
    tool_vectors: Arc<embed::VectorCache>,
}

impl Host {
    /// Opens the host over an opened store: the saved proxy applied, answers
    /// a crash cut off marked interrupted, the knowledge base opened (without
    /// its embedder: see [`Host::load_embedder`]) and the registry built, with
    /// no server configured yet.
    pub fn open(dir: DataDir, store: Store, secrets: Arc<dyn SecretStore>) -> Result<(Arc<Self>, Opened), HostError> {
        let proxy_failed = apply_saved_proxy(&store, secrets.as_ref()).err();
        let interrupted = ConversationStore::new(store.clone()).recover_interrupted()?.len();
        let kb = KnowledgeBase::open(&dir, store.clone())?;
        let registry = McpRegistry::new(secrets.clone(), RegistryOptions::for_data_dir(&dir, &store)?);
        let host = Self {
            config: ConfigStore::new(store.clone()),
            registry,
            kb: RwLock::new(kb),
            dir,
            store,
            secrets,
            roots_sync: tokio::sync::Mutex::default(),
            tool_vectors: Arc::default(),
        };
        Ok((Arc::new(host), Opened { interrupted, proxy_failed }))
    }

    /// Gives the knowledge base the embedder its settings name (an API key
    /// read from the keyring, or a local model loaded) and returns it. Until
    /// then, and when this fails, keyword search works and vector search does not.
    pub fn load_embedder(&self) -> Result<KnowledgeBase, RagError> {
        let mut kb = self.kb.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        let embedder = kb.configured_embedder(self.secrets.as_ref())?;
        *kb = kb.clone().with_embedder(embedder);
        Ok(kb.clone())
    }

    /// Installs how the front end answers servers' sampling and elicitation
    /// requests, then configures `servers` (servers learn what the host
    /// answers when they start, so the answerer comes first).
    pub fn configure(&self, servers: Vec<McpServerConfig>, requests: Arc<dyn ServerRequests>) {
        self.registry.set_server_requests(requests);
        self.registry.configure(servers);
    }

    /// Attaches Patchbay's built-in server; its `knowledge_search` searches
    /// the host's knowledge base as it is at the time of the call (whether
    /// the model sees that tool is [`Host::tools`]'s `knowledge_tool`).
    pub fn attach_builtin(self: &Arc<Self>) {
        builtin::attach(&self.registry, Some(Arc::new(HostKnowledge(Arc::downgrade(self)))));
    }

    /// Shares the knowledge-base folders and the shared folders with the
    /// servers as roots, as stored now. Updates run one at a time, each
    /// reading the lists when it runs, so the last change wins.
    pub async fn share_roots(&self) -> Result<(), HostError> {
        let _one_at_a_time = self.roots_sync.lock().await;
        let current = roots::effective(&self.kb(), &SharedFolders::new(self.store.clone()))?;
        self.registry.set_roots(current).await;
        Ok(())
    }

    /// The tools of `servers` and the built-in server for a turn
    /// (`knowledge_search` only when `knowledge_tool`), grants pinned to the
    /// stored servers' identities and every call's trace stored.
    pub fn tools(&self, mut servers: Vec<McpServerConfig>, knowledge_tool: bool) -> Result<RegistryTools, HostError> {
        servers.push(builtin::config(knowledge_tool));
        let ids = self.config.server_ids()?;
        let traces = TraceStore::new(self.store.clone());
        Ok(RegistryTools::new(self.registry.clone(), servers).with_server_ids(ids).with_traces(traces))
    }

    /// Tool search's embedder: the knowledge base's embedding model, when it has one loaded.
    pub fn tool_embedder(&self) -> Option<Arc<dyn ToolEmbedder>> {
        let kb = self.kb();
        let embedder = kb.embedder()?.clone();
        let english_only = kb.settings().ok()?.embeddings.is_some_and(|c| c.english_only());
        Some(Arc::new(embed::KbToolEmbedder { embedder, english_only, cache: self.tool_vectors.clone() }))
    }

    /// The knowledge base as it is now.
    pub fn kb(&self) -> KnowledgeBase {
        self.kb.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// A turn's limits: the policy's per-turn cap and when tools are found
    /// through search (the share of the window set in the settings).
    pub fn turn_limits(&self) -> Result<TurnLimits, HostError> {
        let defaults = self.registry.policy_defaults();
        let share = self.store.setting::<u8>(TOOL_SHARE_SETTING)?;
        let tool_budget =
            ToolBudget { share_percent: share.unwrap_or(ToolBudget::default().share_percent), max_tools: None };
        Ok(TurnLimits { tool_budget, ..TurnLimits::for_policy(&defaults) })
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn secrets(&self) -> &Arc<dyn SecretStore> {
        &self.secrets
    }

    pub fn config(&self) -> &ConfigStore {
        &self.config
    }

    pub fn registry(&self) -> &McpRegistry {
        &self.registry
    }
}

/// The host's knowledge base as `knowledge_search` finds it. Weak, so the
/// registry holding the built-in server does not keep the host alive.
struct HostKnowledge(Weak<Host>);

impl KnowledgeSource for HostKnowledge {
    fn knowledge(&self) -> Option<KnowledgeBase> {
        self.0.upgrade().map(|host| host.kb())
    }
}
