//! `patchbay secret set|delete|list`: values come from stdin or a hidden prompt, never argv.

use std::io::{BufRead, IsTerminal, Write};
use std::process::{Command, ExitCode, Stdio};

use clap::Subcommand;
use patchbay_core::config::ConfigStore;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{KeyringStore, SecretStore};
use patchbay_core::store::Store;

#[derive(Debug, Subcommand)]
pub enum SecretCommand {
    /// Store a secret; the value is read from stdin (or a prompt that does not echo).
    Set { name: String },
    /// Delete a secret.
    Delete { name: String },
    /// Every secret the configuration refers to, and whether it is set.
    List,
}

pub fn run(dir: &DataDir, command: &SecretCommand) -> anyhow::Result<ExitCode> {
    let secrets = KeyringStore::for_data_dir(dir);
    match command {
        SecretCommand::Set { name } => {
            let value = read_value(&format!("value for {name}: "))?;
            anyhow::ensure!(!value.is_empty(), "no value given on stdin; nothing was stored");
            secrets.set(name, &value)?;
            println!("stored {name}");
        }
        SecretCommand::Delete { name } => {
            if secrets.delete(name)? {
                println!("deleted {name}");
            } else {
                anyhow::bail!("no secret named {name}");
            }
        }
        SecretCommand::List => {
            let config = ConfigStore::new(Store::open(dir)?);
            for r in config.secret_status(&secrets)? {
                let state = if r.set { "set" } else { "not set" };
                println!("{}\t{state}\t{} {}", r.secret, r.used_by, r.field);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One line from stdin without its line ending; on a terminal, prompts with echo turned off.
pub fn read_value(prompt: &str) -> anyhow::Result<String> {
    let stdin = std::io::stdin();
    let tty = stdin.is_terminal();
    if tty {
        eprint!("{prompt}");
        std::io::stderr().flush()?;
        stty("-echo");
    }
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if tty {
        stty("echo");
        eprintln!();
    }
    read?;
    Ok(line.trim_end_matches(['\n', '\r']).to_owned())
}

fn stty(arg: &str) {
    // `stty` acts on its stdin, which is inherited: the user's terminal.
    let _ = Command::new("stty").arg(arg).stdin(Stdio::inherit()).status();
}
