//! The IPC contract's TypeScript types, generated from the Rust types with
//! `ts-rs` (which follows their serde attributes), so the window cannot drift
//! from what the commands send and accept.
//!
//! The types are those reachable from [`roots`]: every command's arguments and
//! result, and every event's payload. They are written, sorted by name, to one
//! file, [`FILE`]; the area modules of `ui/src/lib/ipc/` import from it. The
//! test fails when the committed file differs; `UPDATE_IPC_TYPES=1` rewrites it.

use std::any::TypeId;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use patchbay_core::app::views::{
    AssistantView, CompletionTarget, CompletionView, ConnectionBlocked, ConversationDetail, ConversationRenamed,
    ConversationSettings, ConversationSummary, DoctorReport, GeneralSettings, ImportPreviewView, ImportReport,
    KbDocument, KbEmbeddings, KbEmbeddingsChoice, KbFolder, KbHit, KbModelProgress, KbModels, KbProgress, KbShare,
    KbShareClient, KbShareSettings, KbSourceCandidate, KbSourcePreview, KeptPage, MessagePage, MessageView,
    PolicyPreview, PolicySettings, PromptInfo, ProviderView, RegistryFill, ResourceInfo, ResourceTemplateInfo,
    ResourceUpdated, RootsView, ScheduleAdded, ScheduleInput, ScheduleView, ServerLogLine, ServerStatusView,
    ServerView, ToolInfo, ToolResultView, TraceRecord, TurnEvent,
};
use patchbay_core::app::{ApprovalAnswer, AttachmentInput, ServerRequestResponse, ServerRequestView};
use patchbay_core::bundle::BundleInfo;
use patchbay_core::config::{
    ApprovalMode, McpServerConfig, PolicyDefaults, ProviderPreset, ProviderProfile, ServerPreset,
};
use patchbay_core::discover::{BundleSource, RegistryEntry, RegistryPage};
use patchbay_core::downloads::SavedFile;
use patchbay_core::info::AppInfo;
use patchbay_core::mcp::protocol::content::ResourcePreview;
use patchbay_core::mcp::{CallEvent, LogLevel};
use patchbay_core::rag::sources::KnowledgeSource;
use ts_rs::{Config, TS, TypeVisitor};

use crate::commands::chat::TurnOutcome;
use crate::error::IpcError;
use crate::mcp_apps::AppViewInfo;
use crate::opened::Opened;
use crate::quick_ask::ShortcutStatus;
use crate::updates::{UpdateProgress, UpdateView};

/// The generated file, from the repository's root.
const FILE: &str = "ui/src/lib/ipc/generated.ts";

/// The command that rewrites [`FILE`].
const REGENERATE: &str = "UPDATE_IPC_TYPES=1 cargo test --workspace --lib ipc_types";

/// Every type the window receives from or sends to the backend; their fields'
/// types follow from these.
fn roots(v: &mut Collect) {
    // Errors and events.
    v.visit::<IpcError>();
    v.visit::<TurnEvent>();
    v.visit::<CallEvent>();
    v.visit::<ServerStatusView>();
    v.visit::<ServerLogLine>();
    v.visit::<KbProgress>();
    v.visit::<KbModelProgress>();
    v.visit::<ServerRequestView>();
    v.visit::<ConversationRenamed>();
    v.visit::<ResourceUpdated>();
    v.visit::<ConnectionBlocked>();
    // The app.
    v.visit::<AppInfo>();
    // Conversations and turns.
    v.visit::<ConversationSummary>();
    v.visit::<ConversationDetail>();
    v.visit::<MessagePage>();
    v.visit::<MessageView>();
    v.visit::<ConversationSettings>();
    v.visit::<AttachmentInput>();
    v.visit::<TurnOutcome>();
    v.visit::<ApprovalAnswer>();
    v.visit::<TraceRecord>();
    v.visit::<KeptPage>();
    // Servers, tools, prompts and resources.
    v.visit::<ServerView>();
    v.visit::<ServerPreset>();
    v.visit::<McpServerConfig>();
    v.visit::<DoctorReport>();
    v.visit::<ToolInfo>();
    v.visit::<ApprovalMode>();
    v.visit::<LogLevel>();
    v.visit::<ToolResultView>();
    v.visit::<ServerRequestResponse>();
    v.visit::<PromptInfo>();
    v.visit::<ResourceInfo>();
    v.visit::<ResourceTemplateInfo>();
    v.visit::<ResourcePreview>();
    v.visit::<CompletionTarget>();
    v.visit::<CompletionView>();
    v.visit::<AppViewInfo>();
    v.visit::<SavedFile>();
    // Policy.
    v.visit::<PolicyPreview>();
    v.visit::<PolicySettings>();
    v.visit::<PolicyDefaults>();
    // The MCP Registry and bundles.
    v.visit::<RegistryPage>();
    v.visit::<RegistryEntry>();
    v.visit::<RegistryFill>();
    v.visit::<BundleSource>();
    v.visit::<BundleInfo>();
    v.visit::<Opened>();
    v.visit::<UpdateView>();
    v.visit::<UpdateProgress>();
    v.visit::<ScheduleView>();
    v.visit::<ScheduleInput>();
    v.visit::<ScheduleAdded>();
    // Providers, import, assistants, settings.
    v.visit::<ProviderView>();
    v.visit::<ProviderProfile>();
    v.visit::<ProviderPreset>();
    v.visit::<ImportPreviewView>();
    v.visit::<ImportReport>();
    v.visit::<AssistantView>();
    v.visit::<GeneralSettings>();
    v.visit::<ShortcutStatus>();
    // The knowledge base and roots.
    v.visit::<KbFolder>();
    v.visit::<KbDocument>();
    v.visit::<KbHit>();
    v.visit::<KbEmbeddings>();
    v.visit::<KbModels>();
    v.visit::<KbEmbeddingsChoice>();
    v.visit::<KbShare>();
    v.visit::<KbShareSettings>();
    v.visit::<KbShareClient>();
    v.visit::<KnowledgeSource>();
    v.visit::<KbSourceCandidate>();
    v.visit::<KbSourcePreview>();
    v.visit::<RootsView>();
}

/// Collects the declarations of the types visited and of their fields' types.
struct Collect {
    cfg: Config,
    seen: HashSet<TypeId>,
    /// Declarations by TypeScript name.
    decls: BTreeMap<String, String>,
}

impl TypeVisitor for Collect {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Only named types are declared (not `Vec`, `Option`, numbers, …).
        if T::output_path().is_none() || !self.seen.insert(TypeId::of::<T>()) {
            return;
        }
        let decl = format!("{}export {}", T::docs().unwrap_or_default(), T::decl(&self.cfg));
        let name = T::ident(&self.cfg);
        if let Some(other) = self.decls.insert(name.clone(), decl.clone()) {
            assert_eq!(other, decl, "two Rust types are both called {name} in TypeScript: rename one (#[ts(rename)])");
        }
        T::visit_dependencies(self);
    }
}

/// The text of [`FILE`].
fn typescript() -> String {
    // serde_json writes every integer as a JSON number.
    let mut v = Collect { cfg: Config::new().with_large_int("number"), seen: HashSet::new(), decls: BTreeMap::new() };
    roots(&mut v);
    let mut text = format!(
        "// Generated from the Rust types by src-tauri/src/ipc_types.rs (ts-rs): do not edit.\n\
         // Regenerate with `{REGENERATE}`.\n"
    );
    for decl in v.decls.values() {
        text.push('\n');
        text.push_str(decl);
        text.push('\n');
    }
    text
}

fn path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(FILE)
}

#[test]
fn ipc_types_are_current() {
    let text = typescript();
    if std::env::var_os("UPDATE_IPC_TYPES").is_some() {
        std::fs::write(path(), &text).unwrap_or_else(|e| panic!("cannot write {FILE}: {e}"));
        return;
    }
    let committed = std::fs::read_to_string(path()).unwrap_or_default();
    if committed != text {
        let line = committed
            .lines()
            .zip(text.lines())
            .position(|(a, b)| a != b)
            .map_or_else(|| committed.lines().count().min(text.lines().count()) + 1, |i| i + 1);
        panic!(
            "{FILE} is stale: it differs from the Rust types from line {line} on.\n\
             Regenerate it with `{REGENERATE}` and commit it."
        );
    }
}
