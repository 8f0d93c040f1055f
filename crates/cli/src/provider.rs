//! `patchbay provider add|list|remove|test`: model providers; API keys only via stdin.

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand, ValueEnum};
use patchbay_core::config::model::{ProviderKind, ProviderProfile};
use patchbay_core::config::providers::probe;
use patchbay_core::config::{ConfigStore, SecretValue};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::KeyringStore;
use patchbay_core::store::Store;
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
    #[arg(long, value_enum)]
    kind: Kind,
    #[arg(long)]
    base_url: String,
    /// The default model.
    #[arg(long)]
    model: String,
    /// Read the API key from stdin (one line).
    #[arg(long)]
    api_key_stdin: bool,
    /// Context window in tokens.
    #[arg(long)]
    context_window: Option<u32>,
    /// The model cannot call tools natively: use prompt-based tool calling.
    #[arg(long)]
    no_native_tools: bool,
}

pub fn run(dir: &DataDir, command: &ProviderCommand) -> anyhow::Result<ExitCode> {
    let config = ConfigStore::new(Store::open(dir)?);
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
            let profile = ProviderProfile {
                name: args.name.clone(),
                kind: match args.kind {
                    Kind::Openai => ProviderKind::OpenAi,
                    Kind::Anthropic => ProviderKind::Anthropic,
                    Kind::Gemini => ProviderKind::Gemini,
                },
                base_url: args.base_url.clone(),
                default_model: args.model.clone(),
                models: vec![args.model.clone()],
                headers: Default::default(),
                api_key: None,
                native_tools: !args.no_native_tools,
                context_window: args.context_window,
            };
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
        ProviderCommand::Remove { name } => {
            config.remove_provider(name, &secrets)?;
            println!("removed provider {name}");
        }
        ProviderCommand::Test { name, timeout } => {
            let profile = config.provider(name)?;
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            let cancel = CancellationToken::new();
            let report = runtime.block_on(probe(&profile, &secrets, Duration::from_secs(*timeout), &cancel))?;
            println!("{}: OK, {} models", report.provider, report.models.len());
            if !report.default_model_listed {
                println!("note: the default model {} is not in the provider's list", profile.default_model);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
