//! `patchbay conversation list | show ID | search TEXT | export ID --format md|json | rename ID TITLE | delete ID`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use patchbay_core::conversations::{ConversationId, ConversationStore, ExportFormat};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;

#[derive(Debug, Args)]
pub struct ConversationArgs {
    #[command(subcommand)]
    command: ConversationCommand,
}

#[derive(Debug, Subcommand)]
enum ConversationCommand {
    /// Every conversation, pinned ones first, then most recent first.
    List,
    /// The active branch of one conversation, as Markdown.
    Show { id: ConversationId },
    /// Full-text search across all messages (Chinese and other CJK text included).
    Search {
        text: String,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Export one conversation.
    Export {
        id: ConversationId,
        #[arg(long, value_enum, default_value_t = Format::Md)]
        format: Format,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Rename a conversation.
    Rename { id: ConversationId, title: String },
    /// Delete a conversation and all its messages.
    Delete { id: ConversationId },
    /// Keep a conversation at the top of the list.
    Pin { id: ConversationId },
    /// Let a pinned conversation take its place by date again.
    Unpin { id: ConversationId },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Format {
    Md,
    Json,
}

pub fn run(dir: &DataDir, args: &ConversationArgs) -> anyhow::Result<ExitCode> {
    let conversations = ConversationStore::new(Store::open(dir)?);
    conversations.recover_interrupted()?;
    match &args.command {
        ConversationCommand::List => {
            for c in conversations.list()? {
                let pin = if c.pinned { "📌 " } else { "" };
                println!("{:>5}  {pin}{}", c.id, c.title);
            }
        }
        ConversationCommand::Show { id } => print!("{}", conversations.export(*id, ExportFormat::Markdown)?),
        ConversationCommand::Search { text, limit } => {
            for hit in conversations.search(text, *limit)? {
                println!("{:>5}  {}  ({}): {}", hit.conversation_id, hit.title, hit.role, hit.snippet);
            }
        }
        ConversationCommand::Export { id, format, output } => {
            let format = match format {
                Format::Md => ExportFormat::Markdown,
                Format::Json => ExportFormat::Json,
            };
            let text = conversations.export(*id, format)?;
            match output {
                Some(path) => {
                    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?
                }
                None => print!("{text}"),
            }
        }
        ConversationCommand::Rename { id, title } => conversations.rename(*id, title)?,
        ConversationCommand::Delete { id } => conversations.delete(*id)?,
        ConversationCommand::Pin { id } => conversations.set_pinned(*id, true)?,
        ConversationCommand::Unpin { id } => conversations.set_pinned(*id, false)?,
    }
    Ok(ExitCode::SUCCESS)
}
