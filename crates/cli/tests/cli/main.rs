//! The CLI's integration tests: one module per behaviour, all in one test
//! binary, because every test binary links the whole core, and seventeen of
//! them made the test build slow to link and large on disk (issue 32).
//! Shared set-up is in [`common`]. Filter by module: `cargo test --test cli
//! conversation::`.
//!
//! The tests run as threads of one process, so none changes process-wide
//! state (environment variables, the current directory): each gives the
//! `patchbay` process it starts what it needs.

mod ask_agent_task;
mod ask_approval;
mod ask_json;
mod ask_prompt_tools;
mod ask_tool_selection;
mod common;
mod config_import_export;
mod conversation;
mod info;
mod kb;
mod kb_chat;
mod kb_serve;
mod kb_sources;
mod kill_mid_stream;
mod mcp;
mod mcp_host_killed;
mod mcp_install;
mod mcp_install_link;
mod mcp_policy;
mod mcp_registry;
mod mcp_server_requests;
mod provider;
mod roots;
mod schedule;
