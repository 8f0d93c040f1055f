//! The MCP host: transports, tool naming, approval policy and result handling.

pub mod approval;
pub mod content;
pub mod naming;
pub mod sse;
