//! Patchbay's core: everything the desktop app and the CLI share.
//!
//! The core never depends on Tauri. It takes paths, stores and cancellation
//! tokens as arguments and hands back values and streams; the front ends
//! (`src-tauri`, `crates/cli`) only adapt them. See `ARCHITECTURE.md`.

pub mod agent;
pub mod app;
pub mod assistants;
pub mod attach;
pub mod builtin;
pub mod bundle;
pub mod clock;
pub mod config;
pub mod conversations;
pub mod discover;
pub mod downloads;
pub mod file_name;
pub mod folder;
pub mod host;
pub mod info;
pub mod llm;
pub mod logfile;
pub mod mcp;
pub mod net;
pub mod paths;
pub mod rag;
pub mod roots;
pub mod schedules;
pub mod secrets;
pub mod store;
pub mod text;

pub use info::AppInfo;
