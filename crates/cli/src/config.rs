//! `patchbay config import|export`: MCP servers in and out, in every common shape.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use patchbay_core::config::{
    ConfigStore, EntryStatus, ExportFormat, ExportOptions, ImportChoice, ImportMode, ImportOptions, SecretState,
    TransportConfig,
};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::KeyringStore;
use patchbay_core::store::Store;

#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Import MCP servers from a file or `-` (stdin): Claude Desktop, VS Code, Cursor, Gemini CLI, Zed, opencode, Codex (TOML), RAGFlow or Patchbay.
    Import(ImportArgs),
    /// Export MCP servers (stdout unless --output).
    Export(ExportArgs),
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The file to read, or `-` for stdin.
    file: PathBuf,
    /// Show what would change and write nothing.
    #[arg(long)]
    dry_run: bool,
    /// Make the imported servers the whole list (others are removed).
    #[arg(long)]
    replace: bool,
    /// Also move this env or header value into the keyring, as SERVER/FIELD (the server's
    /// name as imported, e.g. `db/DSN`). Repeatable.
    #[arg(long = "secret", value_name = "SERVER/FIELD", value_parser = parse_marked_field)]
    secrets: Vec<(String, String)>,
}

fn parse_marked_field(text: &str) -> Result<(String, String), String> {
    match text.rsplit_once('/') {
        Some((server, field)) if !server.is_empty() && !field.is_empty() => Ok((server.to_owned(), field.to_owned())),
        _ => Err(format!("{text:?} is not SERVER/FIELD (e.g. db/DSN)")),
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Claude,
    Vscode,
    Zed,
    Opencode,
    /// RAGFlow's `mcpServers`: remote servers only.
    Ragflow,
    Patchbay,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    #[arg(long, value_enum, default_value = "claude")]
    format: Format,
    /// Write secret values instead of placeholders (the output then holds your keys).
    #[arg(long)]
    include_secrets: bool,
    /// Write to this file instead of stdout.
    #[arg(long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Only this server (once per server); providers are then left out.
    #[arg(long = "server", value_name = "NAME")]
    servers: Vec<String>,
}

pub fn run(dir: &DataDir, command: &ConfigCommand) -> anyhow::Result<ExitCode> {
    let config = ConfigStore::new(Store::open(dir)?);
    let secrets = KeyringStore::for_data_dir(dir);
    match command {
        ConfigCommand::Import(args) => import(&config, &secrets, args),
        ConfigCommand::Export(args) => export(&config, &secrets, args),
    }
}

fn import(config: &ConfigStore, secrets: &KeyringStore, args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let text = if args.file.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text)?;
        text
    } else {
        std::fs::read_to_string(&args.file).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", args.file.display()))?
    };
    let mut options = ImportOptions::default();
    for (server, field) in &args.secrets {
        options.secret_fields.entry(server.clone()).or_default().insert(field.clone());
    }
    if args.dry_run {
        let preview = config.preview_import(secrets, &text, &options)?;
        for entry in &preview.entries {
            let what = match &entry.status {
                EntryStatus::New => "new".to_owned(),
                EntryStatus::Changed { changes } => {
                    let fields: Vec<_> = changes.iter().map(|c| c.field.as_str()).collect();
                    format!("changed ({})", fields.join(", "))
                }
                EntryStatus::Unchanged => "unchanged".to_owned(),
                EntryStatus::Conflict { existing } => format!("replaces {existing}"),
                EntryStatus::Invalid => "invalid".to_owned(),
            };
            println!("{}: {what}", entry.name);
            // Every value that names a secret, and the keyring entry it uses.
            for note in &entry.secrets {
                let how = match &note.state {
                    SecretState::FromImport => "stored from this file",
                    SecretState::Reference { set: true } | SecretState::Prompt { set: true, .. } => "set",
                    SecretState::Reference { set: false } | SecretState::Prompt { set: false, .. } => "not set",
                };
                println!("  {}: keyring {} ({how})", note.field, note.secret);
            }
            // Every environment variable it reads at start (a remote server is sent the value).
            for read in &entry.environment {
                let how = if read.set { "set" } else { "not set" };
                println!("  {}: reads ${} from the environment ({how})", read.field, read.variable);
            }
        }
        for name in &preview.providers {
            println!("provider {name}: new or replaced");
        }
        if args.replace {
            for name in &preview.removed_on_replace {
                println!("{name}: removed");
            }
        }
        let issues = preview.all_issues();
        for issue in &issues {
            eprintln!("error: {issue}");
        }
        return Ok(if issues.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE });
    }
    let mode = if args.replace { ImportMode::ReplaceAll } else { ImportMode::Merge };
    let outcome = config.apply_import(secrets, &text, &options, &ImportChoice { mode, ..ImportChoice::default() })?;
    println!(
        "imported: {} added, {} updated, {} unchanged, {} removed",
        outcome.added.len(),
        outcome.updated.len(),
        outcome.unchanged.len(),
        outcome.removed.len()
    );
    for name in &outcome.providers {
        println!("provider {name}: imported");
    }
    for name in &outcome.secrets_not_set {
        println!("not set: {name} (run `patchbay secret set {name}`)");
    }
    Ok(ExitCode::SUCCESS)
}

fn export(config: &ConfigStore, secrets: &KeyringStore, args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let format = match args.format {
        Format::Claude => ExportFormat::Claude,
        Format::Vscode => ExportFormat::Vscode,
        Format::Zed => ExportFormat::Zed,
        Format::Opencode => ExportFormat::Opencode,
        Format::Ragflow => ExportFormat::Ragflow,
        Format::Patchbay => ExportFormat::Patchbay,
    };
    if args.include_secrets {
        eprintln!("warning: the export contains secret values; keep it private");
    }
    let options = ExportOptions { format, include_secrets: args.include_secrets };
    if format == ExportFormat::Ragflow {
        let servers = config.servers()?;
        let local: Vec<&str> = servers
            .iter()
            .filter(|s| args.servers.is_empty() || args.servers.contains(&s.name))
            .filter(|s| matches!(s.transport, TransportConfig::Stdio { .. }))
            .map(|s| s.name.as_str())
            .collect();
        if !local.is_empty() {
            eprintln!("note: left out {}: RAGFlow reaches remote servers only", local.join(", "));
        }
    }
    let text = match args.servers.is_empty() {
        true => config.export(options, secrets)?,
        false => config.export_servers(&args.servers, options, secrets)?,
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
