//! `patchbay roots`: the folders shared with MCP servers as roots.
//!
//! `list` prints the effective roots (knowledge-base folders, then shared
//! folders) one path per line; `add` and `remove` change the shared folders.
//! Servers started by later commands (and the app, when it next updates its
//! roots) see the change.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use patchbay_core::paths::DataDir;
use patchbay_core::rag::KnowledgeBase;
use patchbay_core::roots::{self, SharedFolders};
use patchbay_core::store::Store;

#[derive(Debug, Subcommand)]
pub enum RootsCommand {
    /// Print the roots servers see (knowledge-base and shared folders), one per line.
    List,
    /// Share a folder with MCP servers.
    Add { folder: PathBuf },
    /// Stop sharing a folder (knowledge-base folders stay shared).
    Remove { folder: PathBuf },
}

pub fn run(dir: &DataDir, command: &RootsCommand) -> anyhow::Result<ExitCode> {
    let store = Store::open(dir)?;
    let shared = SharedFolders::new(store.clone());
    match command {
        RootsCommand::List => {
            let kb = KnowledgeBase::open(dir, store)?;
            for folder in roots::folders(&kb, &shared)? {
                println!("{}", folder.display());
            }
        }
        RootsCommand::Add { folder } => println!("{}", shared.add(folder)?.display()),
        RootsCommand::Remove { folder } => shared.remove(folder)?,
    }
    Ok(ExitCode::SUCCESS)
}
