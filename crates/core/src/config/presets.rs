//! Provider presets: the providers people add most, each with the API it
//! speaks, its base URL and a model to start with, so adding DeepSeek or a
//! local Ollama is a pick and an API key rather than a search for the right URL.
//!
//! The settings page offers them (`App::provider_presets`) and the CLI takes
//! one with `patchbay provider add NAME --preset ID`. A preset only fills in a
//! [`ProviderProfile`]; nothing refers to it afterwards.

use serde::Serialize;

use super::model::ProviderKind::{self, Anthropic, Gemini, OpenAi};
use super::model::ProviderProfile;
use super::model::ThinkingParam::{self, ChatTemplate, EnableThinking, ThinkingType};

/// A provider as it is usually set up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct ProviderPreset {
    /// Stable identifier (`deepseek`), also the suggested profile name.
    pub id: &'static str,
    /// What the user reads (`DeepSeek`).
    pub label: &'static str,
    /// The API it speaks.
    pub kind: ProviderKind,
    /// Its API's base URL.
    pub base_url: &'static str,
    /// A model to start with; empty where the user must name one (a local
    /// server runs whatever model was loaded, Ark wants an endpoint's model ID).
    pub default_model: &'static str,
    /// Further models offered in the model picker.
    pub models: &'static [&'static str],
    /// Whether requests need an API key (local servers do not).
    pub needs_key: bool,
    /// Whether tool calls go through the API's native tool calling; `false`
    /// uses the prompt-based fallback, which works with any model.
    pub native_tools: bool,
    /// How its server is asked to think, or not.
    pub thinking: ThinkingParam,
}

impl ProviderPreset {
    /// A profile named `name` set up as this preset says, without an API key.
    pub fn profile(&self, name: &str) -> ProviderProfile {
        ProviderProfile {
            name: name.to_owned(),
            kind: self.kind,
            base_url: self.base_url.to_owned(),
            default_model: self.default_model.to_owned(),
            models: self.models.iter().map(|m| (*m).to_owned()).collect(),
            headers: Default::default(),
            api_key: None,
            native_tools: self.native_tools,
            context_window: None,
            listed_windows: Default::default(),
            thinking: self.thinking,
            prompt_tool_format: Default::default(),
        }
    }
}

const fn remote(
    id: &'static str,
    label: &'static str,
    kind: ProviderKind,
    base_url: &'static str,
    default_model: &'static str,
    models: &'static [&'static str],
) -> ProviderPreset {
    ProviderPreset {
        id,
        label,
        kind,
        base_url,
        default_model,
        models,
        needs_key: true,
        native_tools: true,
        thinking: ThinkingParam::Auto,
    }
}

/// `preset` with its server's way of being asked to think.
const fn thinking(preset: ProviderPreset, thinking: ThinkingParam) -> ProviderPreset {
    ProviderPreset { thinking, ..preset }
}

const fn local(id: &'static str, label: &'static str, base_url: &'static str, native_tools: bool) -> ProviderPreset {
    ProviderPreset {
        id,
        label,
        kind: ProviderKind::OpenAi,
        base_url,
        default_model: "",
        models: &[],
        needs_key: false,
        native_tools,
        thinking: ThinkingParam::Auto,
    }
}

const PRESETS: &[ProviderPreset] = &[
    remote("openai", "OpenAI", OpenAi, "https://api.openai.com/v1", "gpt-4o", &["gpt-4o-mini", "gpt-4.1", "o4-mini"]),
    remote(
        "anthropic",
        "Anthropic",
        Anthropic,
        "https://api.anthropic.com",
        "claude-sonnet-4-5",
        &["claude-opus-4-1", "claude-haiku-4-5"],
    ),
    remote(
        "gemini",
        "Google Gemini",
        Gemini,
        "https://generativelanguage.googleapis.com/v1beta",
        "gemini-2.5-flash",
        &["gemini-2.5-pro"],
    ),
    thinking(
        remote("deepseek", "DeepSeek", OpenAi, "https://api.deepseek.com/v1", "deepseek-chat", &["deepseek-reasoner"]),
        ThinkingType,
    ),
    thinking(
        remote("ark", "Doubao (Volcengine Ark)", OpenAi, "https://ark.cn-beijing.volces.com/api/v3", "", &[]),
        ThinkingType,
    ),
    thinking(
        remote(
            "dashscope",
            "Qwen (Alibaba Cloud DashScope)",
            OpenAi,
            "https://dashscope.aliyuncs.com/compatible-mode/v1",
            "qwen-plus",
            &["qwen-max", "qwen-turbo"],
        ),
        EnableThinking,
    ),
    remote("moonshot", "Kimi (Moonshot AI)", OpenAi, "https://api.moonshot.cn/v1", "", &[]),
    thinking(
        remote(
            "zhipu",
            "GLM (Zhipu AI)",
            OpenAi,
            "https://open.bigmodel.cn/api/paas/v4",
            "glm-4-plus",
            &["glm-4-flash"],
        ),
        ThinkingType,
    ),
    thinking(
        remote(
            "siliconflow",
            "SiliconFlow",
            OpenAi,
            "https://api.siliconflow.cn/v1",
            "deepseek-ai/DeepSeek-V3",
            &["Qwen/Qwen2.5-72B-Instruct"],
        ),
        EnableThinking,
    ),
    remote("openrouter", "OpenRouter", OpenAi, "https://openrouter.ai/api/v1", "openai/gpt-4o-mini", &[]),
    remote("groq", "Groq", OpenAi, "https://api.groq.com/openai/v1", "llama-3.3-70b-versatile", &[]),
    remote(
        "mistral",
        "Mistral AI",
        OpenAi,
        "https://api.mistral.ai/v1",
        "mistral-large-latest",
        &["mistral-small-latest"],
    ),
    local("ollama", "Ollama (this computer)", "http://127.0.0.1:11434/v1", true),
    local("lmstudio", "LM Studio (this computer)", "http://127.0.0.1:1234/v1", true),
    thinking(local("vllm", "vLLM (this computer)", "http://127.0.0.1:8000/v1", true), ChatTemplate),
    // llama-server calls tools natively only when started with `--jinja`; the
    // prompt-based fallback works either way.
    thinking(local("llamacpp", "llama.cpp server (this computer)", "http://127.0.0.1:8080/v1", false), ChatTemplate),
];

/// Every preset, in the order the settings page offers them.
pub fn presets() -> &'static [ProviderPreset] {
    PRESETS
}

/// The preset with this id.
pub fn preset(id: &str) -> Option<&'static ProviderPreset> {
    PRESETS.iter().find(|p| p.id == id)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn ids_are_unique_and_usable_as_profile_names() {
        let mut seen = HashSet::new();
        for p in presets() {
            assert!(seen.insert(p.id), "{} twice", p.id);
            assert!(p.id.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()), "{}", p.id);
            assert_eq!(preset(p.id), Some(p));
        }
        assert_eq!(preset("nope"), None);
    }

    #[test]
    fn every_base_url_is_an_absolute_http_url_without_a_trailing_slash() {
        for p in presets() {
            let url = url::Url::parse(p.base_url).unwrap_or_else(|e| panic!("{}: {e}", p.id));
            assert!(!p.base_url.ends_with('/'), "{}", p.id);
            if p.needs_key {
                assert_eq!(url.scheme(), "https", "{}: a key never goes over plain HTTP", p.id);
            } else {
                assert_eq!(url.host_str(), Some("127.0.0.1"), "{}: keyless presets are local servers", p.id);
            }
        }
    }

    #[test]
    fn the_providers_named_in_the_brief_are_there_with_their_apis() {
        for (id, kind) in [
            ("openai", OpenAi),
            ("deepseek", OpenAi),
            ("ark", OpenAi),
            ("ollama", OpenAi),
            ("vllm", OpenAi),
            ("llamacpp", OpenAi),
            ("anthropic", Anthropic),
            ("gemini", Gemini),
        ] {
            assert_eq!(preset(id).map(|p| p.kind), Some(kind), "{id}");
        }
    }

    #[test]
    fn a_profile_from_a_preset_carries_its_settings_and_no_key() {
        let profile = preset("deepseek").unwrap().profile("work");
        assert_eq!(profile.name, "work");
        assert_eq!(profile.kind, OpenAi);
        assert_eq!(profile.base_url, "https://api.deepseek.com/v1");
        assert_eq!(profile.default_model, "deepseek-chat");
        assert_eq!(profile.models, ["deepseek-reasoner"]);
        assert_eq!(profile.api_key, None);
        assert!(profile.native_tools);
        assert!(!preset("llamacpp").unwrap().profile("l").native_tools);
    }
}
