//! `patchbay`: the headless front end over `patchbay-core`.
//!
//! Each subcommand parses its arguments, makes one core call and prints the
//! result. Errors reach the user through `anyhow` with the core's message,
//! which says where and why. A library so that the desktop binary can be the
//! CLI too when called by its name (the .deb's `/usr/bin/patchbay`): one
//! binary in the package, not two.

mod add;
mod ask;
mod backup;
mod chat;
mod config;
mod conversation;
mod info;
mod install;
mod kb;
mod kb_sources;
mod link;
mod mcp;
mod model;
mod policy;
mod provider;
mod requests;
mod roots;
mod schedule;
mod secret;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use patchbay_core::host::{Host, Opened};
use patchbay_core::paths::{DATA_DIR_ENV, DataDir};
use patchbay_core::secrets::KeyringStore;
use patchbay_core::store::Store;
use tokio_util::sync::CancellationToken;

/// Patchbay: chat with language models that reach tools through MCP servers.
#[derive(Debug, Parser)]
#[command(name = "patchbay", version, about, long_about = None)]
struct Cli {
    /// Data directory (database, indexes). Defaults to the platform's data directory.
    #[arg(long, global = true, env = DATA_DIR_ENV, value_name = "DIR")]
    data_dir: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Show the version, data directory, database schema and keyring status.
    Info(info::InfoArgs),
    /// Send one message and stream the answer (tools run as the model asks).
    Ask(ask::AskArgs),
    /// Chat interactively, keeping one conversation.
    Chat(chat::ChatArgs),
    /// List, show, search, export, rename or delete conversations.
    Conversation(conversation::ConversationArgs),
    /// Import and export MCP server configuration.
    #[command(subcommand)]
    Config(config::ConfigCommand),
    /// Manage model providers.
    #[command(subcommand)]
    Provider(provider::ProviderCommand),
    /// Manage secrets in the OS keyring (values from stdin, never argv).
    #[command(subcommand)]
    Secret(secret::SecretCommand),
    /// List, check, inspect and call the configured MCP servers.
    Mcp(mcp::McpArgs),
    /// The knowledge base: folders, indexing, search, MCP server.
    Kb(kb::KbArgs),
    /// The folders shared with MCP servers as roots.
    #[command(subcommand)]
    Roots(roots::RootsCommand),
    /// Write a copy of the database (conversations, settings, servers, knowledge-base index).
    Backup(backup::BackupArgs),
    /// Restore a backup; the replaced database is kept.
    Restore(backup::RestoreArgs),
    /// Run an assistant's prompt on a schedule: add, list, remove, run-now, run-due, runs.
    #[command(subcommand)]
    Schedule(schedule::ScheduleCommand),
}

/// Splits a `KEY=VALUE` given to `flag` (`--set`, `--arg`), or says how to write it.
pub(crate) fn key_value<'a>(flag: &str, pair: &'a str) -> anyhow::Result<(&'a str, &'a str)> {
    pair.split_once('=').ok_or_else(|| anyhow::anyhow!("{flag} {pair}: write KEY=VALUE"))
}

/// `n` things, in the singular for one: "1 tool", "12 tools".
pub(crate) fn count(n: impl std::fmt::Display, thing: &str) -> String {
    match n.to_string() {
        n if n == "1" => format!("1 {thing}"),
        n => format!("{n} {thing}s"),
    }
}

/// Opens the data directory's database and uses its saved network proxy, for
/// the commands that make requests (providers, remote servers, embeddings).
pub(crate) fn open_store(dir: &DataDir) -> anyhow::Result<Store> {
    let store = Store::open(dir)?;
    patchbay_core::host::apply_saved_proxy(&store, &KeyringStore::for_data_dir(dir))?;
    Ok(store)
}

/// Opens the data directory's host, for the commands that start MCP servers
/// (the same start-up as the window's); like [`open_store`], a saved proxy
/// that cannot be used is an error.
pub(crate) fn open_host(dir: &DataDir) -> anyhow::Result<(Arc<Host>, Opened)> {
    let secrets = Arc::new(KeyringStore::for_data_dir(dir));
    let (host, mut opened) = Host::open(dir.clone(), Store::open(dir)?, secrets)?;
    if let Some(e) = opened.proxy_failed.take() {
        return Err(e.into());
    }
    Ok((host, opened))
}

/// The path that runs this CLI, for the system timer to call
/// ([`timer::cli_beside`](patchbay_core::schedules::timer::cli_beside) this executable).
pub(crate) fn own_path() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    patchbay_core::schedules::timer::cli_beside(&exe)
        .ok_or_else(|| anyhow::anyhow!("the command-line app is not installed beside {}", exe.display()))
}

/// A token cancelled when the user presses Ctrl-C.
pub(crate) fn cancelled_by_ctrl_c() -> CancellationToken {
    let cancel = CancellationToken::new();
    let on_ctrl_c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_ctrl_c.cancel();
        }
    });
    cancel
}

/// A tool call's progress, on stderr.
pub(crate) fn show_progress(progress: f64, total: Option<f64>, message: Option<&str>) {
    let total = total.map(|t| format!("/{t}")).unwrap_or_default();
    eprintln!("  … {progress}{total} {}", message.unwrap_or_default());
}

/// Runs the command line given to this process.
pub fn main() -> ExitCode {
    // The CLI speaks in its own words; libraries' log lines only when asked for with PATCHBAY_LOG.
    let filter = match std::env::var_os("PATCHBAY_LOG") {
        Some(_) => tracing_subscriber::EnvFilter::from_env("PATCHBAY_LOG"),
        None => tracing_subscriber::EnvFilter::new("off"),
    };
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let dir = DataDir::resolve(cli.data_dir)?;
    match cli.command {
        Command::Info(args) => info::run(&dir, &args),
        Command::Ask(args) => ask::run(&dir, &args),
        Command::Chat(args) => chat::run(&dir, &args),
        Command::Conversation(args) => conversation::run(&dir, &args),
        Command::Config(command) => config::run(&dir, &command),
        Command::Provider(command) => provider::run(&dir, &command),
        Command::Secret(command) => secret::run(&dir, &command),
        Command::Mcp(args) => mcp::run(&dir, args),
        Command::Kb(args) => kb::run(&dir, args),
        Command::Roots(command) => roots::run(&dir, &command),
        Command::Backup(args) => backup::backup(&dir, &args),
        Command::Restore(args) => backup::restore(&dir, &args),
        Command::Schedule(command) => schedule::run(&dir, &command),
    }
}
