//! The one place the CLI turns a resolved provider profile into a model client.

use std::sync::Arc;

use patchbay_core::agent::ResolvedProvider;
use patchbay_core::llm::Provider;
use patchbay_core::secrets::SecretStore;

/// Builds the provider for a resolved profile. The API key was already
/// resolved (from the keyring or the environment); header secrets are read
/// from `secrets`.
pub fn provider_for(resolved: &ResolvedProvider, secrets: &dyn SecretStore) -> anyhow::Result<Arc<dyn Provider>> {
    Ok(resolved.build(secrets)?)
}
