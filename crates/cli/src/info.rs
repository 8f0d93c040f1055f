//! `patchbay info`: the same facts as the app's `app_info` command.

use std::process::ExitCode;

use clap::Args;
use patchbay_core::AppInfo;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::KeyringStore;
use patchbay_core::store::Store;

#[derive(Debug, Args)]
pub struct InfoArgs {
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(dir: &DataDir, args: &InfoArgs) -> anyhow::Result<ExitCode> {
    let store = Store::open(dir)?;
    let info = AppInfo::gather(dir, &store, &KeyringStore::for_data_dir(dir))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&info)?);
    } else {
        println!("Patchbay {}", info.version);
        println!("data dir:  {}", info.data_dir.display());
        println!("database:  {} (schema {})", info.database.display(), info.schema_version);
        let state = if info.keyring.available { "available" } else { "unavailable" };
        println!("keyring:   {state} ({})", info.keyring.detail);
        println!("log file:  {} (the desktop app's)", info.log_file.display());
    }
    Ok(ExitCode::SUCCESS)
}
