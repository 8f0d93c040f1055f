//! `patchbay mcp add NAME`: adds a server the MCP Registry lists, the way
//! Settings → MCP servers → Browse the MCP Registry… does, then starts it once
//! to show that it runs.
//!
//! `NAME` is the registry name (`io.github.acme/weather`). A server that runs
//! more than one way (an npm package and a remote, say) needs `--via`. Its
//! variables and headers, and the parts of values the registry leaves to the
//! user (`{tenant}` in a URL, an argument shown as `<hint>`), take
//! `--set KEY=VALUE`; secrets are never taken from the command line, where
//! the shell's history keeps them: each is read from stdin (the variables'
//! first, then the placeholders'), or a prompt that does not echo, and goes to
//! the keyring. An MCPB
//! package is downloaded, checked against the registry's SHA-256 and
//! installed as `patchbay mcp install` would.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Args;
use patchbay_core::app::{App, AppEvents};
use patchbay_core::config::import::secret_name;
use patchbay_core::config::{McpServerConfig, TransportConfig, ValueSource};
use patchbay_core::discover::{
    self, HttpRegistry, Registry, RegistryEntry, RegistryError, RegistrySetting, download_bundle,
};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::KeyringStore;
use tokio_util::sync::CancellationToken;

use crate::install::{self, InstallArgs};
use crate::secret::read_value;

/// The most result pages read looking for the name.
const MAX_PAGES: usize = 10;

#[derive(Debug, Args)]
pub struct AddArgs {
    /// The server's registry name, e.g. `io.github.acme/weather` (`patchbay mcp search` lists them).
    registry_name: String,
    /// How to run it when it runs more than one way: npm, pypi, oci, mcpb, streamable-http or sse.
    #[arg(long)]
    via: Option<String>,
    /// The server's name here (default: the last part of the registry name).
    #[arg(long)]
    name: Option<String>,
    /// A variable or header, `KEY=VALUE` (secrets are asked for instead).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
}

pub fn run(dir: &DataDir, args: &AddArgs) -> anyhow::Result<ExitCode> {
    let store = crate::open_store(dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let mut entry = runtime.block_on(find(&args.registry_name, args.via.as_deref()))?;
    if let Some(bundle) = &entry.bundle {
        let cancel = CancellationToken::new();
        let file = runtime.block_on(download_bundle(bundle, &dir.path().join("downloads"), &cancel))?;
        eprintln!("downloaded {} (SHA-256 checked)", bundle.url);
        drop(runtime);
        return install::run(dir, &InstallArgs::new(file, args.set.clone()));
    }
    let app = App::open(dir.clone(), store, Arc::new(KeyringStore::for_data_dir(dir)), AppEvents::unwatched())?;
    let name = args.name.clone().unwrap_or(entry.id.clone());
    let asked: Vec<&str> = entry.settings.iter().filter(|s| s.placeholder).map(|s| s.name.as_str()).collect();
    let rest: Vec<String> = args
        .set
        .iter()
        .filter(|pair| !pair.split_once('=').is_some_and(|(k, _)| asked.contains(&k)))
        .cloned()
        .collect();
    let mut secrets = fill(&mut entry.config.transport, &name, &rest)?;
    let (config, more) = fill_placeholders(&entry, &name, &args.set)?;
    secrets.extend(more);
    runtime.block_on(async {
        let added = async {
            app.save_server(config.clone(), &secrets).await?;
            println!("added {} {} ({}) as server {}", entry.name, entry.version, entry.via, config.name);
            install::report_start(&app, &config.name).await
        }
        .await;
        app.shutdown().await;
        added
    })
}

/// The registry entry named `name`, run `via` when given.
async fn find(name: &str, via: Option<&str>) -> anyhow::Result<RegistryEntry> {
    let registry = HttpRegistry::configured();
    let cancel = CancellationToken::new();
    let mut cursor: Option<String> = None;
    let mut found = Vec::new();
    for _ in 0..MAX_PAGES {
        let page = registry.search(name, cursor.as_deref(), &cancel).await?;
        for entry in page.entries.into_iter().filter(|e| e.name == name) {
            // One entry per way it runs (a registry lists the latest version once).
            if !found.iter().any(|f: &RegistryEntry| f.via == entry.via) {
                found.push(entry);
            }
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    if found.is_empty() {
        bail!("the MCP registry lists no server named {name:?} (`patchbay mcp search` finds names)");
    }
    let ways: Vec<String> = found.iter().map(|e| e.via.clone()).collect();
    match via {
        Some(via) => found
            .into_iter()
            .find(|e| e.via == via)
            .with_context(|| format!("{name} does not run as {via}; it runs as {}", ways.join(", "))),
        None if found.len() == 1 => Ok(found.remove(0)),
        None => bail!("{name} runs as {}: choose one with --via", ways.join(", ")),
    }
}

/// The entry as server `name` with its placeholders (`{token}` in a header,
/// an argument given as `<hint>`) filled in: from `--set`, and secret ones
/// from stdin; returns the secrets by keyring name.
fn fill_placeholders(
    entry: &RegistryEntry,
    name: &str,
    set: &[String],
) -> anyhow::Result<(McpServerConfig, BTreeMap<String, String>)> {
    let asked: Vec<&RegistrySetting> = entry.settings.iter().filter(|s| s.placeholder).collect();
    let mut values = BTreeMap::new();
    for pair in set {
        let (key, value) = crate::key_value("--set", pair)?;
        match asked.iter().find(|s| s.name == key) {
            Some(s) if s.secret => {
                bail!("--set {key}: it is a secret; leave it out and type it when asked (or pipe it to stdin)")
            }
            Some(_) => {
                values.insert(key.to_owned(), value.to_owned());
            }
            None => {}
        }
    }
    for setting in asked.iter().filter(|s| s.secret) {
        let typed = read_value(&format!("{}: ", setting.name))?;
        if !typed.is_empty() {
            values.insert(setting.name.clone(), typed);
        }
    }
    discover::fill(entry, name, &values).map_err(|e| match e {
        RegistryError::Setting { name, reason } if !asked.iter().any(|s| s.name == name && s.secret) => {
            anyhow::anyhow!("{name}: {reason}; give it with --set {name}=VALUE")
        }
        other => other.into(),
    })
}

/// Fills the entry's variables (or headers) from `--set` and its secrets
/// from stdin; returns the secrets by keyring name.
fn fill(transport: &mut TransportConfig, server: &str, set: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let values = match transport {
        TransportConfig::Stdio { env, .. } => env,
        TransportConfig::StreamableHttp { headers, .. } | TransportConfig::Sse { headers, .. } => headers,
        _ => bail!("the registry entry is neither a program nor a remote server"),
    };
    for pair in set {
        let (key, value) = crate::key_value("--set", pair)?;
        match values.get_mut(key) {
            Some(ValueSource::Secret(_)) => {
                bail!("--set {key}: it is a secret; leave it out and type it when asked (or pipe it to stdin)")
            }
            Some(slot) => *slot = ValueSource::Plain(value.to_owned()),
            None => {
                let keys: Vec<&str> = values.keys().map(String::as_str).collect();
                bail!("--set {key}: the server takes no such setting; it takes: {}", keys.join(", "))
            }
        }
    }
    let mut secrets = BTreeMap::new();
    for (key, value) in values.iter_mut() {
        if matches!(value, ValueSource::Secret(name) if name.is_empty()) {
            let typed = read_value(&format!("{key}: "))?;
            anyhow::ensure!(!typed.is_empty(), "{key} is a secret the server needs; none was typed");
            let name = secret_name(server, key);
            secrets.insert(name.clone(), typed);
            *value = ValueSource::Secret(name);
        }
    }
    Ok(secrets)
}
