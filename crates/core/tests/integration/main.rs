//! The core's integration tests, one binary (one link, one process: the
//! tests of every file run side by side). Files whose tests change
//! process-wide state (the installed proxy, the peak memory they measure)
//! stay binaries of their own: `net_proxy*.rs`, `secrets_at_rest.rs`,
//! `mcp_oversized_*.rs`.

#[path = "../common/mod.rs"]
mod common;
#[path = "../mcp_common/mod.rs"]
mod mcp_common;
#[path = "../oauth_common/mod.rs"]
mod oauth_common;

mod agent_result_paging;
mod agent_tool_limits;
mod agent_tool_search;
mod app_approvals;
mod app_bundles;
mod app_chat;
mod app_events;
mod app_kb_share;
mod app_kb_sources;
mod app_policy;
mod app_roots;
mod app_schedules;
mod app_settings;
mod app_views;
mod config_import;
mod config_roundtrip;
mod floors;
mod kb_endpoint_embeddings;
mod kb_local_embeddings;
mod kb_models;
mod kb_sources;
mod llm_anthropic;
mod llm_gemini;
mod llm_openai;
mod llm_prompt_tools;
mod mcp_call_deadline;
mod mcp_everything_tools;
mod mcp_hostile;
mod mcp_http;
mod mcp_lifecycle;
mod mcp_list_changed;
mod mcp_logging_subscriptions;
mod mcp_pagination;
mod mcp_python_peers;
mod mcp_python_transports;
mod mcp_revision_stdio;
mod mcp_sandbox;
mod mcp_sandbox_peers;
mod mcp_server_requests;
mod mcp_sse;
mod mcp_sse_registry;
mod mcp_stdio_everything;
mod mcp_tasks;
mod net_redirects;
mod oauth_callback;
mod oauth_endpoints;
mod provider_probe;
mod secret_service;
