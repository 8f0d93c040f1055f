//! `patchbay`: the headless front end over `patchbay-core`.
//!
//! Each subcommand parses its arguments, makes one core call and prints the
//! result. Errors reach the user through `anyhow` with the core's message,
//! which says where and why.

mod info;
mod kb;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use patchbay_core::paths::{DATA_DIR_ENV, DataDir};

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
    /// The knowledge base: folders, indexing, search, MCP server.
    Kb(kb::KbArgs),
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("PATCHBAY_LOG"))
        .with_writer(std::io::stderr)
        .init();
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
        Command::Kb(args) => kb::run(&dir, args),
    }
}
