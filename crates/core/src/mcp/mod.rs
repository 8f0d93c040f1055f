//! MCP: a registry of MCP servers shared by every conversation, the settings page and the CLI,
//! built on rmcp's client (the host that opens it is `crate::host`).
//!
//! Its modules stand on floors, each importing only those below (`crates/core/tests/integration/floors.rs`
//! checks it), lowest first: [`status`] and [`wire`] (how messages travel, and the seams where rmcp
//! lacks something); [`oauth`]; [`error`] ([`McpError`]); [`launch`] (a stdio server's process,
//! sandbox and egress proxy); [`protocol`] (what messages mean); [`registry`] ([`McpRegistry`]);
//! [`traces`], then [`tools`] (calls recorded, and served to the chat engine).
//!
//! This file only declares the floors and re-exports what the rest of the core uses.

pub mod error;
pub mod launch;
pub mod oauth;
pub mod protocol;
pub mod registry;
pub mod status;
pub mod tools;
pub mod traces;
pub mod wire;

pub use error::McpError;
pub use launch::{LaunchReport, LoginEnv};
pub use protocol::events::{CallEvent, LogMessage, McpEvent};
pub use protocol::requests::{
    DenyAll, ElicitationAnswer, ElicitationKind, ElicitationRequest, HookSupport, McpRoot, Refusal, SamplingMessage,
    SamplingReply, SamplingRequest, SamplingRole, ServerRequests, sample_with,
};
pub use registry::{CallOptions, HealthCheck, LogLevel, McpRegistry, RegistryOptions, ServerSnapshot, WireIds};
pub use status::ServerStatus;
pub use tools::RegistryTools;
pub use wire::TransportKind;
pub use wire::in_process::{InProcessServer, serve_on};
