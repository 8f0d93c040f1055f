//! `patchbay provider add|list|remove|test|presets`: model providers; API keys only via stdin.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use patchbay_core::config::model::{ProviderKind, ProviderProfile};
use patchbay_core::config::presets;
use patchbay_core::config::{ConfigStore, PromptToolFormat, SecretValue};
use patchbay_core::llm::ThinkingParam;
use patchbay_core::llm::probe::probe;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::KeyringStore;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Subcommand)]
pub enum ProviderCommand {
    /// Add or replace a provider.
    Add(AddArgs),
    /// List providers.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a provider and its stored API key.
    Remove { name: String },
    /// List the presets `add --preset` takes.
    Presets,
    /// Make a real request (list models) and report what went wrong, if anything.
    Test {
        name: String,
        /// Seconds to wait for the provider.
        #[arg(long, default_value_t = 15)]
        timeout: u64,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    Openai,
    Anthropic,
    Gemini,
}

#[derive(Debug, Args)]
pub struct AddArgs {
    name: String,
    /// Start from a preset (`patchbay provider presets`); the options below override it.
    #[arg(long)]
    preset: Option<String>,
    #[arg(long, value_enum, required_unless_present = "preset")]
    kind: Option<Kind>,
    #[arg(long, required_unless_present = "preset")]
    base_url: Option<String>,
    /// The default model.
    #[arg(long, required_unless_present = "preset")]
    model: Option<String>,
    /// Read the API key from stdin (one line).
    #[arg(long)]
    api_key_stdin: bool,
    /// Context window in tokens.
    #[arg(long)]
    context_window: Option<u32>,
    /// The model cannot call tools natively: use prompt-based tool calling.
    #[arg(long)]
    no_native_tools: bool,
    /// The call format taught without native tools (implies --no-native-tools).
    #[arg(long, value_enum)]
    prompt_tool_format: Option<FormatChoice>,
    /// The field an OpenAI-compatible server reads to think or not (default: the
    /// preset's, else chosen from the base URL).
    #[arg(long, value_enum)]
    thinking: Option<ThinkingChoice>,
}

/// `--prompt-tool-format`: [`PromptToolFormat`].
#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatChoice {
    /// `<function_call>{"name": …, "arguments": …}</function_call>`.
    FunctionCall,
    /// A fenced JSON `use_mcp_tool` block naming server and tool.
    UseMcpTool,
}

/// `--thinking`: [`ThinkingParam`].
#[derive(Debug, Clone, Copy, ValueEnum)]
enum ThinkingChoice {
    /// Chosen from the base URL.
    Auto,
    /// `reasoning_effort` (OpenAI, Ollama, OpenRouter, …).
    ReasoningEffort,
    /// `thinking.type` (DeepSeek, Doubao/Ark, GLM).
    ThinkingType,
    /// `enable_thinking` (Qwen on DashScope, SiliconFlow).
    EnableThinking,
    /// `chat_template_kwargs.enable_thinking` (vLLM, SGLang, llama.cpp server).
    ChatTemplate,
}

pub fn run(dir: &DataDir, command: &ProviderCommand) -> anyhow::Result<ExitCode> {
    let config = ConfigStore::new(crate::open_store(dir)?);
    let secrets = KeyringStore::for_data_dir(dir);
    match command {
        ProviderCommand::Add(args) => {
            let key = if args.api_key_stdin {
                let key = crate::secret::read_value("API key: ")?;
                anyhow::ensure!(!key.is_empty(), "--api-key-stdin given but stdin is empty");
                Some(SecretValue::new(key))
            } else {
                None
            };
            let profile = profile(args)?;
            let saved = config.add_provider(profile, key.as_ref(), &secrets)?;
            println!("saved provider {}", saved.name);
        }
        ProviderCommand::List { json } => {
            let providers = config.providers()?;
            if *json {
                println!("{}", serde_json::to_string_pretty(&providers)?);
            } else {
                for p in providers {
                    let key = if p.api_key.is_some() { "key in keyring" } else { "no key" };
                    println!("{}\t{:?}\t{}\t{}\t{key}", p.name, p.kind, p.base_url, p.default_model);
                }
            }
        }
        ProviderCommand::Presets => {
            for p in presets::presets() {
                let model = if p.default_model.is_empty() { "(name one with --model)" } else { p.default_model };
                let key = if p.needs_key { "API key" } else { "no key" };
                println!("{}\t{}\t{}\t{model}\t{key}", p.id, p.label, p.base_url);
            }
        }
        ProviderCommand::Remove { name } => {
            config.remove_provider(name, &secrets)?;
            println!("removed provider {name}");
        }
        ProviderCommand::Test { name, timeout } => {
            let profile = config.provider(name)?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let cancel = CancellationToken::new();
            let report = runtime.block_on(probe(&profile, &secrets, Duration::from_secs(*timeout), &cancel))?;
            println!("{}: OK, {}", report.provider, crate::count(report.models.len(), "model"));
            if let Some(window) = report.windows.get(&profile.default_model) {
                println!("the list states {}'s context window: {window} tokens", profile.default_model);
            }
            config.keep_listed_windows(name, report.windows)?;
            if !report.default_model_listed {
                println!("note: the default model {} is not in the provider's list", profile.default_model);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The profile `add` saves: the preset's, if one was named, with the options given on top.
fn profile(args: &AddArgs) -> anyhow::Result<ProviderProfile> {
    let mut profile = match &args.preset {
        Some(id) => presets::preset(id)
            .ok_or_else(|| anyhow::anyhow!("no preset named {id:?}; `patchbay provider presets` lists them"))?
            .profile(&args.name),
        None => ProviderProfile::openai_compatible(&args.name, String::new(), ""),
    };
    if let Some(kind) = args.kind {
        profile.kind = match kind {
            Kind::Openai => ProviderKind::OpenAi,
            Kind::Anthropic => ProviderKind::Anthropic,
            Kind::Gemini => ProviderKind::Gemini,
        };
    }
    if let Some(url) = &args.base_url {
        profile.base_url.clone_from(url);
    }
    if let Some(model) = &args.model {
        profile.default_model.clone_from(model);
    }
    anyhow::ensure!(
        !profile.default_model.is_empty(),
        "the preset {} names no model: give one with --model",
        args.preset.as_deref().unwrap_or_default()
    );
    if !profile.models.contains(&profile.default_model) {
        profile.models.insert(0, profile.default_model.clone());
    }
    if args.no_native_tools || args.prompt_tool_format.is_some() {
        profile.native_tools = false;
    }
    if let Some(format) = args.prompt_tool_format {
        profile.prompt_tool_format = match format {
            FormatChoice::FunctionCall => PromptToolFormat::FunctionCall,
            FormatChoice::UseMcpTool => PromptToolFormat::UseMcpTool,
        };
    }
    profile.context_window = args.context_window.or(profile.context_window);
    if let Some(thinking) = args.thinking {
        profile.thinking = match thinking {
            ThinkingChoice::Auto => ThinkingParam::Auto,
            ThinkingChoice::ReasoningEffort => ThinkingParam::ReasoningEffort,
            ThinkingChoice::ThinkingType => ThinkingParam::ThinkingType,
            ThinkingChoice::EnableThinking => ThinkingParam::EnableThinking,
            ThinkingChoice::ChatTemplate => ThinkingParam::ChatTemplate,
        };
    }
    Ok(profile)
}
