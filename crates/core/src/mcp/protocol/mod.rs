//! The protocol floor of `mcp/`: what MCP messages mean, above the wire and
//! below the registry.
//!
//! - [`client`] is the rmcp client handler of one connection: it routes progress
//!   and logs to their call ([`events`]) and answers the server's requests
//!   ([`requests`]: sampling, elicitation, roots), running those a server asks
//!   to run as tasks in [`client_tasks`].
//! - [`tasks`] reads and writes task-augmented tool calls (2025-11-25, experimental).
//! - [`inventory`] lists a server's tools, resources and prompts; [`about`] is what
//!   it says of itself; [`icons`] and [`apps`] (MCP Apps views) read their metadata.
//! - [`naming`] maps (server, tool) to model-facing names; [`approval`] decides
//!   whether a call may run; [`content`] converts and caps results;
//!   [`uri_template`] expands resource templates.
//! - [`revision`] chooses the protocol revision a connection negotiates.

pub mod about;
pub mod approval;
pub mod apps;
pub mod client;
pub mod client_tasks;
pub mod content;
pub mod events;
pub mod icons;
pub mod inventory;
pub mod naming;
pub mod requests;
pub mod revision;
pub mod tasks;
pub mod uri_template;
