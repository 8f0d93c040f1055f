//! Patchbay desktop entry point. Called `patchbay` (the .deb's `/usr/bin/patchbay`
//! runs this binary under that name), it is the command-line app instead: one
//! binary in the package, not two.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

use std::process::ExitCode;

fn main() -> ExitCode {
    if std::env::args_os().next().is_some_and(|name| patchbay_desktop_lib::is_cli_name(&name)) {
        return patchbay_cli::main();
    }
    patchbay_desktop_lib::run();
    ExitCode::SUCCESS
}
