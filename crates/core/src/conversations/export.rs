//! Exporting one conversation as Markdown (the active branch, as read) or
//! JSON (every message of every branch, with parts, tool calls and usage).

use serde::Serialize;

use super::{Conversation, ConversationError, ConversationId, ConversationStore, Message, MessageId, Part, Role};
use crate::llm::ContentPart;

/// An export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// The active branch as a readable document.
    Markdown,
    /// The whole tree, machine-readable.
    Json,
}

impl ExportFormat {
    /// The file extension of an export in this format.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Markdown => "md",
            Self::Json => "json",
        }
    }
}

/// One conversation's export as a file to save: a name made from its title, and the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportFile {
    pub name: String,
    pub text: String,
}

#[derive(Serialize)]
struct JsonExport<'a> {
    format: &'static str,
    conversation: &'a Conversation,
    active_branch: Vec<MessageId>,
    messages: &'a [Message],
}

impl ConversationStore {
    /// Exports one conversation as a file named after its title.
    pub fn export_file(&self, id: ConversationId, format: ExportFormat) -> Result<ExportFile, ConversationError> {
        let text = self.export(id, format)?;
        Ok(ExportFile { name: file_name(&self.get(id)?.title, format), text })
    }

    /// Exports one conversation.
    pub fn export(&self, id: ConversationId, format: ExportFormat) -> Result<String, ConversationError> {
        let conversation = self.get(id)?;
        let branch = self.branch(id)?;
        match format {
            ExportFormat::Markdown => {
                let messages: Vec<&Message> = branch.iter().map(|b| &b.message).collect();
                Ok(markdown(&conversation, &messages))
            }
            ExportFormat::Json => {
                let messages = self.messages(id)?;
                let doc = JsonExport {
                    format: "patchbay.conversation.v1",
                    conversation: &conversation,
                    active_branch: branch.iter().map(|b| b.message.id).collect(),
                    messages: &messages,
                };
                serde_json::to_string_pretty(&doc)
                    .map_err(|source| ConversationError::Decode { what: format!("conversation {id}"), source })
            }
        }
    }
}

/// Characters of a title kept in a file name, at most.
const FILE_NAME_CHARS: usize = 80;

/// A file name for a conversation titled `title`: the title (in any script),
/// shortened and made safe by [`crate::file_name::safe`]; `conversation` when
/// nothing is left.
fn file_name(title: &str, format: ExportFormat) -> String {
    let title: String = title.chars().take(FILE_NAME_CHARS).collect();
    format!("{}.{}", crate::file_name::safe(&title, "conversation"), format.extension())
}

fn markdown(conversation: &Conversation, messages: &[&Message]) -> String {
    let mut out = format!("# {}\n", conversation.title);
    for m in messages {
        match m.role {
            Role::User => {
                out.push_str("\n## User\n\n");
                out.push_str(m.text.trim_end());
                out.push('\n');
                for a in &m.attachments {
                    out.push_str(&format!("\n> Attached: {}\n", a.title));
                }
            }
            Role::Assistant => {
                let by = match (&m.provider, &m.model) {
                    (Some(p), Some(model)) => format!(" ({p} · {model})"),
                    _ => String::new(),
                };
                out.push_str(&format!("\n## Assistant{by}\n"));
                for part in &m.parts {
                    match part {
                        Part::Text { text, .. } if !text.trim().is_empty() => {
                            out.push('\n');
                            out.push_str(text.trim_end());
                            out.push('\n');
                        }
                        Part::Reasoning { text, .. } if !text.trim().is_empty() => {
                            out.push_str("\n<details><summary>Thinking</summary>\n\n");
                            out.push_str(text.trim_end());
                            out.push_str("\n\n</details>\n");
                        }
                        Part::ToolCall { call, .. } => {
                            let real = match (&call.server, &call.tool) {
                                (Some(s), Some(t)) => format!(" ({s}/{t})"),
                                _ => String::new(),
                            };
                            let outcome = if call.is_error { "error" } else { "result" };
                            out.push_str(&format!(
                                "\n**Tool call** `{}`{real}\n\n```json\n{}\n```\n",
                                call.name, call.arguments
                            ));
                            if let Some(result) = &call.result {
                                out.push_str(&format!("\n**Tool {outcome}**\n\n```\n{}\n```\n", result_text(result)));
                            }
                        }
                        _ => {}
                    }
                }
                if let Some(error) = &m.error {
                    out.push_str(&format!("\n> {error}\n"));
                }
            }
        }
    }
    out
}

fn result_text(parts: &[ContentPart]) -> String {
    parts
        .iter()
        .map(|p| match p {
            ContentPart::Text { text } => text.clone(),
            ContentPart::Image { mime_type, .. } => format!("[image {mime_type}]"),
            ContentPart::Audio { mime_type, .. } => format!("[audio {mime_type}]"),
            ContentPart::ResourceLink { uri, .. } => format!("[resource {uri}]"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}
