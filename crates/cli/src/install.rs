//! `patchbay mcp install FILE.mcpb`: installs an MCP bundle as a server, as
//! the settings page does, then starts it once to show that it runs.
//!
//! Settings come from `--set KEY=VALUE` (repeat a key for a list of folders);
//! sensitive ones are never taken from the command line, where the shell's
//! history keeps them: each is read from stdin, or a prompt that does not
//! echo.
//!
//! `patchbay mcp configure SERVER` changes the settings of a bundle that is
//! installed: the ones given with `--set` change, the others keep their value
//! (a sensitive one left empty is kept); `--show` prints them. `--dry-run` shows what the bundle is, who signed it and which
//! settings it takes; an install of a bundle that is not signed by a trusted
//! publisher says so on stderr. A bundle changed after it was signed is refused.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use patchbay_core::app::views::ServerStatusView;
use patchbay_core::app::{App, AppEvents};
use patchbay_core::bundle::{BundleInfo, BundleSetting, BundleValues, Signature};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::KeyringStore;
use patchbay_core::store::Store;
use serde_json::Value;

use crate::secret::read_value;

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// The bundle (`.mcpb`, or `.dxt` from before the rename).
    file: PathBuf,
    /// A setting, `KEY=VALUE`; repeat a key to give several folders or files.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Show the bundle and its settings; install nothing.
    #[arg(long)]
    dry_run: bool,
}

#[derive(Debug, Args)]
pub struct ConfigureArgs {
    /// The server a bundle installed.
    server: String,
    /// A setting to change, `KEY=VALUE`; repeat a key to give several folders or files.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Print the settings and their values; change nothing.
    #[arg(long)]
    show: bool,
}

impl InstallArgs {
    /// Installs `file` with the settings `set` (`KEY=VALUE`).
    pub fn new(file: PathBuf, set: Vec<String>) -> Self {
        Self { file, set, dry_run: false }
    }
}

/// The terminal's language, as the C library reads it (`LC_ALL`, then
/// `LC_MESSAGES`, then `LANG`), for the bundle's strings.
fn terminal_locale() -> String {
    ["LC_ALL", "LC_MESSAGES", "LANG"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .unwrap_or_default()
}

/// The app on `dir` (secrets in its keyring), and a runtime to drive it.
fn open_app(dir: &DataDir) -> anyhow::Result<(App, tokio::runtime::Runtime)> {
    let store = Store::open(dir)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let app = App::open(dir.clone(), store, Arc::new(KeyringStore::for_data_dir(dir)), AppEvents::unwatched())?;
    Ok((app, runtime))
}

pub fn run(dir: &DataDir, args: &InstallArgs) -> anyhow::Result<ExitCode> {
    let (app, runtime) = open_app(dir)?;
    let info = app.bundle_preview(&args.file, &terminal_locale())?;
    if args.dry_run {
        print_info(&info);
        return Ok(ExitCode::SUCCESS);
    }
    if !matches!(info.signature, Signature::Signed { .. }) {
        eprintln!("note: {}", info.signature);
    }
    if let Some(warning) = signer_warning(&info) {
        eprintln!("{warning}");
    }
    let values = values(&info, &args.set, false)?;
    runtime.block_on(async {
        let installed = install(&app, &info, &values).await;
        app.shutdown().await;
        installed
    })
}

/// Installs the bundle `info` shows: the copy it was read from, signed by whom it says.
async fn install(app: &App, info: &BundleInfo, values: &BundleValues) -> anyhow::Result<ExitCode> {
    let preview = info.preview_id.as_deref().context("a bundle's preview has an id")?;
    let signer = info.signature.signer().map(|s| s.fingerprint.as_str());
    let name = app.install_bundle(preview, signer, values).await?;
    let replaced = info.installed_version.as_deref().map(|v| format!(" (was {v})")).unwrap_or_default();
    println!("installed {} {}{replaced} as server {name}", info.title, info.version);
    report_start(app, &name).await
}

/// Waits for the server `name` to start and prints whether it became ready.
pub async fn report_start(app: &App, name: &str) -> anyhow::Result<ExitCode> {
    let server = wait_settled(app, name).await?;
    match server.state {
        "ready" => {
            println!("{name}  ready  {}", crate::count(server.tool_count, "tool"));
            Ok(ExitCode::SUCCESS)
        }
        state => {
            let reason = server.error.unwrap_or_default();
            eprintln!("{name}  {state}: {reason}\n(see `patchbay mcp doctor {name}`)");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Waits until the server is ready or has failed (or its start time is over).
async fn wait_settled(app: &App, name: &str) -> anyhow::Result<ServerStatusView> {
    let find = || -> anyhow::Result<(ServerStatusView, u64)> {
        let server = app.list_servers()?.into_iter().find(|s| s.config.name == name).context("the server is gone")?;
        Ok((server.status, server.config.timeouts.startup_secs))
    };
    let (_, startup) = find()?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(startup + 5);
    loop {
        let (status, _) = find()?;
        if matches!(status.state, "ready" | "failed") || tokio::time::Instant::now() >= deadline {
            return Ok(status);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `patchbay mcp configure`: an installed bundle's settings, shown or changed.
pub fn configure(dir: &DataDir, args: &ConfigureArgs) -> anyhow::Result<ExitCode> {
    let (app, runtime) = open_app(dir)?;
    let info = app.bundle_settings(&args.server, &terminal_locale())?;
    if args.show {
        info.settings.iter().for_each(|setting| println!("{}", setting_line(setting)));
        return Ok(ExitCode::SUCCESS);
    }
    let values = values(&info, &args.set, true)?;
    runtime.block_on(async {
        let configured = async {
            app.configure_bundle(&args.server, &values).await?;
            println!("changed the settings of {} (server {})", info.title, args.server);
            report_start(&app, &args.server).await
        }
        .await;
        app.shutdown().await;
        configured
    })
}

/// The settings from `--set` (else, with `keep`, the value each has now), and
/// the sensitive ones read from stdin.
fn values(info: &BundleInfo, set: &[String], keep: bool) -> anyhow::Result<BundleValues> {
    let mut given: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for pair in set {
        let (key, value) = crate::key_value("--set", pair)?;
        let Some(setting) = info.settings.iter().find(|s| s.key == key) else {
            let keys: Vec<&str> = info.settings.iter().map(|s| s.key.as_str()).collect();
            bail!("--set {key}: the bundle has no such setting; it has: {}", keys.join(", "));
        };
        if setting.sensitive {
            bail!(
                "--set {key}: {} is sensitive; leave it out and type it when asked (or pipe it to stdin)",
                setting.title
            );
        }
        given.entry(key.to_owned()).or_default().push(value.to_owned());
    }
    let mut values = BundleValues::new();
    for setting in &info.settings {
        let value = if setting.sensitive {
            if setting.kept {
                eprintln!("{}: kept from the installed version (type a new one to replace it)", setting.title);
            }
            let typed = read_value(&format!("{}: ", setting.title))?;
            (!typed.is_empty()).then_some(Value::String(typed))
        } else {
            given
                .remove(&setting.key)
                .map(|list| match (setting.multiple, list.as_slice()) {
                    (false, [one]) => Value::String(one.clone()),
                    _ => Value::Array(list.into_iter().map(Value::String).collect()),
                })
                .or_else(|| setting.value.clone().filter(|_| keep))
        };
        if let Some(value) = value {
            values.insert(setting.key.clone(), value);
        }
    }
    Ok(values)
}

fn print_info(info: &BundleInfo) {
    println!(
        "{} {} by {} ({} server, installs as {})",
        info.title,
        info.version,
        info.author,
        kind(info),
        info.server_name
    );
    println!("{}", info.signature);
    if let Some(version) = &info.installed_version {
        println!("replaces the installed version {version}");
    }
    if let Some(warning) = signer_warning(info) {
        println!("{warning}");
    }
    if !info.description.is_empty() {
        println!("{}", info.description);
    }
    if let Some(runtime) = &info.runtime {
        println!("needs {runtime}");
    }
    for tool in &info.tools {
        println!("tool  {}  {}", tool.name, tool.description.as_deref().unwrap_or(""));
    }
    for setting in &info.settings {
        println!("setting  {}", setting_line(setting));
    }
}

/// The warning for an update not signed with the installed version's certificate.
fn signer_warning(info: &BundleInfo) -> Option<String> {
    let old = info.installed_signature.as_ref().filter(|_| info.signer_changed)?.signer()?;
    Some(format!(
        "warning: the installed version was signed by {} (certificate {}…), and this one is not signed with that \
         certificate: make sure it comes from the same publisher",
        old.publisher,
        &old.fingerprint[..16.min(old.fingerprint.len())]
    ))
}

fn kind(info: &BundleInfo) -> String {
    serde_json::to_value(info.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
}

fn setting_line(s: &BundleSetting) -> String {
    let mut flags =
        vec![serde_json::to_value(s.kind).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()];
    if s.multiple {
        flags.push("several".into());
    }
    flags.push(if s.required { "required".into() } else { "optional".into() });
    if s.sensitive {
        flags.push("sensitive, asked for".into());
    }
    if let Some(default) = &s.default {
        flags.push(format!("default {default}"));
    }
    if s.kept {
        flags.push("kept in the keyring".into());
    }
    if let Some(value) = &s.value {
        flags.push(format!("now {value}"));
    }
    format!("{}  {} ({})", s.key, s.title, flags.join(", "))
}
