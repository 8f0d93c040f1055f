//! `patchbay conversation list | show ID | messages ID | search TEXT | export ID --format md|json |
//! rename ID TITLE | delete ID | fork ID MESSAGE | delete-message ID MESSAGE | pin ID | unpin ID`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand, ValueEnum};
use patchbay_core::conversations::{ConversationId, ConversationStore, ExportFormat, MessageId};
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
    /// The messages of the branch shown, one line each: id, role and the first line of the text.
    Messages { id: ConversationId },
    /// Carry on from a message in a new conversation: the branch up to it is copied.
    Fork { id: ConversationId, message: MessageId },
    /// Delete a message and every reply after it.
    DeleteMessage { id: ConversationId, message: MessageId },
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
        ConversationCommand::Messages { id } => {
            for b in conversations.branch(*id)? {
                let first = b.message.text.lines().next().unwrap_or_default();
                println!("{:>6}  {:<9}  {first}", b.message.id, b.message.role.to_string());
            }
        }
        ConversationCommand::Fork { id, message } => {
            let fork = conversations.fork(*id, *message)?;
            println!("carried on in conversation {} ({})", fork.id, fork.title);
        }
        ConversationCommand::DeleteMessage { id, message } => match conversations.delete_message(*id, *message)? {
            Some(leaf) => println!("deleted; the branch shown ends at message {leaf}"),
            None => println!("deleted; conversation {id} has no messages left"),
        },
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
