//! The `patchbay` binary; everything is in the library.

fn main() -> std::process::ExitCode {
    patchbay_cli::main()
}
