//! The desktop app: thin Tauri glue over `patchbay-core`.
//!
//! This is the only crate that knows Tauri. Commands deserialise their input,
//! make one core call and map the error once, into [`IpcError`]. The core is
//! opened at start-up; when that fails (unusable data dir, damaged or newer
//! database) the window still opens and every command answers with the error,
//! so the user sees why instead of a crash.

mod commands;
mod error;
mod instance;
mod startup;
mod state;

pub use error::{IpcError, IpcErrorKind};

use std::path::PathBuf;

/// Reads `--data-dir DIR` (or `--data-dir=DIR`) from the command line.
fn data_dir_arg(args: impl IntoIterator<Item = String>) -> Option<PathBuf> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--data-dir" {
            return args.next().map(PathBuf::from);
        }
        if let Some(v) = arg.strip_prefix("--data-dir=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// Builds and runs the app until the last window closes.
pub fn run() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_env("PATCHBAY_LOG"))
        .with_writer(std::io::stderr)
        .init();
    let requested_dir = data_dir_arg(std::env::args().skip(1));
    let data_dir = patchbay_core::paths::DataDir::resolve(requested_dir.clone()).ok();
    let state = state::AppState::open(requested_dir);
    if let Err(e) = &state.core {
        tracing::error!("Patchbay started without its core: {e}");
    }
    let context = tauri::generate_context!();
    let result = tauri::Builder::default()
        // Single instance first: a second launch must exit before anything else starts.
        .plugin(instance::single_instance(&context.config().identifier, data_dir.as_ref()))
        .plugin(instance::window_state(data_dir.as_ref()))
        .on_page_load(startup::on_page_load)
        .manage(state)
        .invoke_handler(tauri::generate_handler![commands::ping, commands::app_info])
        .run(context);
    if let Err(e) = result {
        eprintln!("error: Patchbay could not start its window: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::data_dir_arg;
    use std::path::PathBuf;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn data_dir_is_read_in_both_spellings() {
        assert_eq!(data_dir_arg(args(&["--data-dir", "/x"])), Some(PathBuf::from("/x")));
        assert_eq!(data_dir_arg(args(&["-v", "--data-dir=/y"])), Some(PathBuf::from("/y")));
        assert_eq!(data_dir_arg(args(&["--other"])), None);
    }
}
