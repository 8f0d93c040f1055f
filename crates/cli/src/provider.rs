//! The seam between the CLI and the model providers.
//!
//! INTEGRATION: the providers (`patchbay_core::llm`: OpenAI-compatible via
//! async-openai, Anthropic, Gemini, prompt-based tool calling) are written in
//! parallel with this CLI. When they land, replace the body of
//! [`provider_for`] with the core's constructor, e.g.
//! `Ok(Arc::from(patchbay_core::llm::from_profile(&resolved.profile, resolved.api_key.clone())?))`.
//! Nothing else in the CLI needs to change: `ask` and `chat` only use the
//! returned `Provider`.

use std::sync::Arc;

use anyhow::bail;
use patchbay_core::agent::ResolvedProvider;
use patchbay_core::llm::Provider;

/// Builds the provider for a resolved profile.
pub fn provider_for(resolved: &ResolvedProvider) -> anyhow::Result<Arc<dyn Provider>> {
    bail!(
        "provider {:?} ({:?} at {}) cannot be used yet: this build has no model client linked in \
         (see crates/cli/src/provider.rs)",
        resolved.profile.name,
        resolved.profile.kind,
        resolved.profile.base_url
    )
}
