//! The one place the CLI turns a resolved provider profile into a model client.

use std::sync::Arc;

use patchbay_core::agent::ResolvedProvider;
use patchbay_core::llm::{self, Provider};
use patchbay_core::secrets::SecretStore;

/// Builds the provider for a resolved profile. The API key was already
/// resolved (from the keyring or the environment); header secrets are read
/// from `secrets`.
pub fn provider_for(resolved: &ResolvedProvider, secrets: &dyn SecretStore) -> anyhow::Result<Arc<dyn Provider>> {
    let mut keyless = resolved.profile.clone();
    keyless.api_key = None;
    let mut settings = llm::settings_from_profile(&keyless, secrets)?;
    settings.api_key = resolved.api_key.clone();
    Ok(Arc::from(llm::build(&resolved.profile, settings)?))
}
