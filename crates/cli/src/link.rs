//! `patchbay mcp install-link URL`: adds the server an install link carries
//! (`patchbay://mcp/install?…`, Cursor's or VS Code's "Add to …" links), as the
//! window's confirmation does: it prints what would run, where it connects and
//! the security policy it gets, asks to confirm (`--yes` confirms beforehand;
//! without a terminal it is needed), asks for the secrets it needs (from stdin,
//! or a prompt that does not echo; empty leaves one to set later), then adds and
//! starts it once. `--dry-run` prints and writes nothing. A bad link, or one
//! carrying a secret value, is refused and nothing is written.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use patchbay_core::app::views::ImportEntry;
use patchbay_core::app::{App, AppEvents};
use patchbay_core::config::{TransportConfig, ValueSource};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::KeyringStore;

use crate::secret::read_value;

#[derive(Debug, Args)]
pub struct InstallLinkArgs {
    /// The link, quoted (a shell reads `&` and `?`).
    link: String,
    /// Print what the link would add and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Add it without asking (what was printed is what is added); needed without a terminal.
    #[arg(long, conflicts_with = "dry_run")]
    yes: bool,
}

pub fn run(dir: &DataDir, args: &InstallLinkArgs) -> anyhow::Result<ExitCode> {
    let store = crate::open_store(dir)?;
    let app = App::open(dir.clone(), store, Arc::new(KeyringStore::for_data_dir(dir)), AppEvents::unwatched())?;
    let preview = app.import_preview(&args.link)?;
    if !preview.warnings.is_empty() {
        for warning in &preview.warnings {
            eprintln!("error: {warning}");
        }
        eprintln!("the link was refused; nothing was written");
        return Ok(ExitCode::FAILURE);
    }
    let entry = preview.entries.first().context("the link names no server; nothing was written")?;
    describe(entry, &preview.format);
    if entry.status == "unchanged" {
        println!("{} is already added with these settings; nothing to do", entry.name);
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        println!("dry run: nothing was written");
        return Ok(ExitCode::SUCCESS);
    }
    if !args.yes && !confirmed(&entry.name)? {
        eprintln!("not added; nothing was written");
        return Ok(ExitCode::FAILURE);
    }
    let mut answers = BTreeMap::new();
    for input in &preview.inputs {
        let typed = read_value(&format!("{}: ", input.description.as_deref().unwrap_or(&input.id)))?;
        answers.insert(input.id.clone(), typed);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let added = async {
            let report = app
                .import_apply(&args.link, std::slice::from_ref(&entry.name), false, answers, BTreeMap::new())
                .await?;
            println!("added {}", entry.name);
            for name in &report.secrets_not_set {
                println!("not set: {name} (run `patchbay secret set {name}`)");
            }
            crate::install::report_start(&app, &entry.name).await
        }
        .await;
        app.shutdown().await;
        added
    })
}

/// Whether the user, on the terminal, says to add `name`; without a terminal, no (`--yes` says yes).
fn confirmed(name: &str) -> anyhow::Result<bool> {
    if !std::io::stdin().is_terminal() {
        eprintln!("there is no terminal to confirm on: pass --yes to add {name} as printed above");
        return Ok(false);
    }
    eprint!("Add {name}? [y/N]: ");
    std::io::stderr().flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}

/// What the entry runs or reaches, and under which policy.
fn describe(entry: &ImportEntry, format: &str) {
    // A link never changes a server you have: it is new, or the same again.
    let status = if entry.status == "unchanged" { "already added, unchanged" } else { "new" };
    let source = match format {
        "patchbay_link" => "a Patchbay install link",
        "cursor_link" => "a Cursor install link",
        "vscode_link" => "a VS Code install link",
        other => other,
    };
    println!("{} ({status}), from {source}", entry.name);
    let values = |label: &str, values: &BTreeMap<String, ValueSource>| {
        for (name, value) in values {
            let shown = match value {
                ValueSource::Plain(text) => format!("= {text:?}"),
                ValueSource::Secret(_) => "(a secret, asked for below)".to_owned(),
                ValueSource::Env(text) => format!("= {text:?} (read from your environment at each start)"),
            };
            let steers = if entry.steering.contains(name) {
                "  <- changes what the program runs or loads: check it"
            } else {
                ""
            };
            println!("  {label:<9} {} {shown}{steers}", visible(name));
        }
    };
    match &entry.incoming.transport {
        TransportConfig::Stdio { command, args, env, cwd } => {
            let line: Vec<String> = std::iter::once(command).chain(args).map(|a| quote(a)).collect();
            println!("  runs:     {}", line.join(" "));
            if let Some(cwd) = cwd {
                println!("  in:       {}", visible(&cwd.display().to_string()));
            }
            values("env:", env);
        }
        TransportConfig::StreamableHttp { url, headers }
        | TransportConfig::Sse { url, headers }
        | TransportConfig::Auto { url, headers } => {
            println!("  connects: {}", visible(url));
            values("header:", headers);
        }
        _ => {}
    }
    for read in &entry.environment {
        println!("  reads:    your ${} into {} (its value goes to the server)", read.variable, read.field);
    }
    if !entry.incoming.enabled {
        println!("  added switched off");
    }
    println!("  policy:   {}", entry.policy);
}

/// `text` with its control characters escaped (a link can hold none; this is the last guard).
fn visible(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// An argument as a shell would need it.
fn quote(arg: &str) -> String {
    let arg = visible(arg);
    if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "\"'$`\\".contains(c)) {
        format!("'{}'", arg.replace('\'', r"'\''"))
    } else {
        arg
    }
}
