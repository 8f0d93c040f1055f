//! The context windows of well-known hosted models, for a provider profile
//! that sets none: without a window a turn neither trims its history to fit
//! nor finds tools through search (with one, it does both). Only models whose API serves the whole
//! window are listed; a local server's window is its own setting (Ollama's
//! `num_ctx`), so local models need the profile's field.

use crate::config::{ProviderKind, ProviderProfile};

/// Name prefixes (lower case, without a router's `openai/`) and their windows in tokens; the
/// longest matching prefix wins.
const KNOWN: &[(&str, u32)] = &[
    ("gpt-3.5-turbo", 16_385),
    ("gpt-3.5-turbo-instruct", 4_096),
    ("gpt-4", 8_192),
    ("gpt-4-32k", 32_768),
    ("gpt-4-0125", 128_000),
    ("gpt-4-1106", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-4-vision", 128_000),
    ("gpt-4o", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.5", 128_000),
    ("gpt-5", 400_000),
    ("gpt-5-chat", 128_000),
    ("o1", 200_000),
    ("o1-mini", 128_000),
    ("o1-preview", 128_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-", 200_000),
    ("claude-2.0", 100_000),
    ("claude-instant", 100_000),
    ("gemini-1.5-pro", 2_097_152),
    ("gemini-1.5-flash", 1_048_576),
    ("gemini-2", 1_048_576),
    ("gemini-2.5-flash-image", 32_768),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    ("mistral-large", 128_000),
    ("mistral-large-2402", 32_000),
];

/// The most tools OpenAI's chat completions accept in one request.
pub const OPENAI_MAX_TOOLS: usize = 128;

/// The most tools one request to `profile`'s API may carry, when it has a
/// limit: OpenAI's, when tools are sent natively (prompt-based tools go in
/// the system prompt, where the window is the limit).
pub fn tool_limit(profile: &ProviderProfile) -> Option<usize> {
    (profile.kind == ProviderKind::OpenAi && profile.native_tools).then_some(OPENAI_MAX_TOOLS)
}

/// The window of `model` served by `profile`: the profile's own setting, else the window the
/// provider's model list stated for it, else the model's when it is a well-known hosted one.
pub fn context_window(profile: &ProviderProfile, model: &str) -> Option<u32> {
    profile
        .context_window
        .or_else(|| profile.listed_windows.get(model).copied())
        .or_else(|| known_context_window(model))
}

/// The context window of `model` when it is a well-known hosted model.
pub fn known_context_window(model: &str) -> Option<u32> {
    let name = model.trim().to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    KNOWN.iter().filter(|(prefix, _)| name.starts_with(prefix)).max_by_key(|(prefix, _)| prefix.len()).map(|&(_, w)| w)
}

#[cfg(test)]
mod tests {
    use super::known_context_window;

    #[test]
    fn the_longest_known_prefix_names_the_window() {
        assert_eq!(known_context_window("gpt-4o-mini"), Some(128_000));
        assert_eq!(known_context_window("openai/gpt-4.1-nano"), Some(1_047_576));
        assert_eq!(known_context_window("gpt-4-0613"), Some(8_192));
        assert_eq!(known_context_window("gpt-4-1106-preview"), Some(128_000));
        assert_eq!(known_context_window("o1-preview"), Some(128_000));
        assert_eq!(known_context_window("claude-instant-1.2"), Some(100_000));
        assert_eq!(known_context_window("Claude-Sonnet-4-5"), Some(200_000));
        assert_eq!(known_context_window("llama3.1:8b"), None, "a local model's window is its server's setting");
        assert_eq!(known_context_window("scripted-model"), None);
    }
}
