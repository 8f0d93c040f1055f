//! What the window tests share: a data folder seeded with the scripted model and the real
//! server-everything.

use std::path::Path;

use anyhow::Result;
use patchbay_core::config::{ApprovalMode, ConfigStore, McpServerConfig, ProviderProfile};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_test_support::peers;

/// A data folder whose provider is the scripted model and whose servers are `servers`.
pub fn seed_with(dir: &Path, model_url: &str, servers: &[McpServerConfig]) -> Result<()> {
    let config = ConfigStore::new(Store::open(&DataDir::new(dir))?);
    config.save_provider(&ProviderProfile::openai_compatible(
        "scripted",
        format!("{model_url}/v1"),
        "scripted-model",
    ))?;
    config.replace_servers(servers)?;
    Ok(())
}

/// [`seed_with`] server-everything, its echo tool set to ask.
pub fn seed(dir: &Path, model_url: &str) -> Result<()> {
    let mut everything =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    everything.tool_approval.insert("echo".into(), ApprovalMode::Ask);
    seed_with(dir, model_url, &[everything])
}
