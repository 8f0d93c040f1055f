//! `patchbay backup FILE` and `patchbay restore FILE`: a copy of the database
//! taken while Patchbay may be running, and restoring one at the next start.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use patchbay_core::paths::DataDir;
use patchbay_core::store::{Store, stage_restore};

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// Where to write the backup (a new file).
    file: PathBuf,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A backup written by `patchbay backup` or the app.
    file: PathBuf,
}

pub fn backup(dir: &DataDir, args: &BackupArgs) -> anyhow::Result<ExitCode> {
    let written = Store::open(dir)?.backup(&args.file, false)?;
    println!(
        "backed up to {} ({} bytes); API keys and secrets stay in the OS keyring",
        written.path.display(),
        written.bytes
    );
    Ok(ExitCode::SUCCESS)
}

pub fn restore(dir: &DataDir, args: &RestoreArgs) -> anyhow::Result<ExitCode> {
    let version = stage_restore(dir, &args.file)?;
    // Opening the store puts it in place now, unless Patchbay runs on this data folder.
    let store = Store::open(dir)?;
    let conversations: i64 = store.read(|c| c.query_row("SELECT count(*) FROM conversations", [], |r| r.get(0)))?;
    if patchbay_core::store::restore_staged(dir) {
        println!(
            "{} (schema {version}) will be restored when Patchbay next starts with no other copy running",
            args.file.display()
        );
    } else {
        println!(
            "restored {} (schema {version}, {conversations} conversations); the replaced database is kept beside it as patchbay.db.before-restore-*",
            args.file.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
