//! Conversations and turns: the chat view's operations.
//!
//! A turn resolves its model from the conversation's settings, then its
//! assistant, then the first provider; offers the tools of the enabled
//! servers the conversation allows; and hands the host's [`TurnEvent`]s to
//! the view. [`App::respond_approval`] answers a card through the running
//! turn that waits for it (the host's `TurnAnswers`, by the call's id).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::views::{
    ConversationDetail, ConversationRenamed, ConversationSettings, ConversationSummary, KeptPage, MessagePage,
    MessageView, TurnEvent,
};
use super::{App, AppError, AppEvent, lock, titles};
use crate::agent::{
    ApprovalDecision, ApprovalPolicy, BUILTIN_SERVER, ModelChoice, Sampling, ToolHost, ToolSelection, TurnAction,
    TurnRequest, resolve_provider,
};
use crate::assistants::{Assistant, DEFAULT_ASSISTANT, KnowledgeMode};
use crate::attach;
use crate::config::ApprovalMode;
use crate::conversations::{Attachment, ConversationId, ExportFile, ExportFormat, MessageId, MessageStatus};
use crate::host::TurnAnswers;
use crate::llm::Provider;
use crate::mcp::ServerStatus;
use crate::rag::{ChatKnowledge, chat as rag_chat};

/// How long a turn waits for the built-in tools' server to start.
const BUILTIN_START: std::time::Duration = std::time::Duration::from_secs(5);

/// The user's answer to an approval card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalAnswer {
    AllowOnce,
    AllowConversation,
    /// Allow this call and store "allow" for the tool.
    AllowAlways,
    Deny,
}

/// What a turn does: send, regenerate or edit.
#[derive(Debug, Clone)]
pub enum TurnInput {
    Send { text: String, attachments: Vec<AttachmentInput> },
    Regenerate { message: String },
    Edit { message: String, text: String },
}

/// Something the user attaches to a message: the JSON of a `ContentPart`
/// (with the name of the file it came from, when it came from one), or a
/// document to read to text.
#[derive(Debug, Clone, PartialEq, serde::Deserialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AttachmentInput {
    Text {
        text: String,
        #[serde(default)]
        title: Option<String>,
    },
    Image {
        mime_type: String,
        data: String,
        #[serde(default)]
        title: Option<String>,
    },
    Audio {
        mime_type: String,
        data: String,
        #[serde(default)]
        title: Option<String>,
    },
    /// An MCP resource, read from `server` (a resource made from a template)
    /// or else from the server that lists it.
    ResourceLink {
        uri: String,
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        server: Option<String>,
    },
    /// A file's bytes, base64: PDF, Word, HTML, Markdown, code or text ([`attach::encoded_document`]).
    File { title: String, data: String },
}

/// Parses an id the UI sent.
pub(crate) fn parse_id(what: &str, id: &str) -> Result<i64, AppError> {
    id.trim().parse().map_err(|_| AppError::Invalid(format!("{what} id {id:?} is not a number")))
}

/// A new conversation's first question, and the title it gave the conversation.
struct FirstQuestion {
    text: String,
    title: String,
}

/// The title of a conversation before its first message names it.
const NEW_TITLE: &str = "New conversation";
/// The most characters of a kept result one read for the window returns.
pub const KEPT_PAGE_CHARS: u64 = 256 * 1024;

/// How old an unused conversation must be before the start-up sweep takes it: a younger one may
/// be another process's (the CLI's), about to get its first message.
const UNUSED_GRACE_MS: i64 = 60_000;

/// A turn being sent to a conversation, in [`Inner::sending`] until dropped.
struct Sending<'a> {
    set: &'a std::sync::Mutex<HashMap<ConversationId, usize>>,
    id: ConversationId,
}

impl<'a> Sending<'a> {
    fn claim(set: &'a std::sync::Mutex<HashMap<ConversationId, usize>>, id: ConversationId) -> Self {
        *lock(set).entry(id).or_default() += 1;
        Self { set, id }
    }
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        let mut set = lock(self.set);
        if let Some(n) = set.get_mut(&self.id) {
            *n -= 1;
            if *n == 0 {
                set.remove(&self.id);
            }
        }
    }
}

fn settings_key(id: ConversationId) -> String {
    format!("conversation.{id}.settings")
}

impl App {
    /// Conversations, pinned ones first, then newest first; with a query, the
    /// ones whose messages match it, best first, each with the matching passage.
    pub fn list_conversations(&self, query: Option<&str>) -> Result<Vec<ConversationSummary>, AppError> {
        let conversations = &self.inner.conversations;
        let Some(query) = query.map(str::trim).filter(|q| !q.is_empty()) else {
            return Ok(conversations.list()?.iter().map(ConversationSummary::from).collect());
        };
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for hit in conversations.search(query, 200)? {
            if seen.insert(hit.conversation_id) {
                let mut summary = ConversationSummary::from(&conversations.get(hit.conversation_id)?);
                summary.snippet = Some(hit.snippet);
                out.push(summary);
            }
        }
        Ok(out)
    }

    /// Pins a conversation to the top of the list, or unpins it.
    pub fn pin_conversation(&self, id: &str, pinned: bool) -> Result<(), AppError> {
        Ok(self.inner.conversations.set_pinned(parse_id("conversation", id)?, pinned)?)
    }

    /// Starts an empty conversation from an assistant preset (the default when `None`).
    pub fn create_conversation(&self, assistant: Option<&str>) -> Result<ConversationSummary, AppError> {
        let name = assistant.filter(|a| !a.is_empty()).unwrap_or(DEFAULT_ASSISTANT);
        self.inner.assistants.get(name)?;
        let conversation = self.inner.conversations.create(NEW_TITLE, Some(name), None)?;
        let settings = ConversationSettings { assistant_id: Some(name.to_owned()), ..ConversationSettings::default() };
        self.inner.store.set_setting(&settings_key(conversation.id), &settings)?;
        Ok(ConversationSummary::from(&conversation))
    }

    /// Deletes the conversation, and its settings, if nothing was ever done in it: a new chat
    /// the user left before sending. Says whether it did; one in use is left as it is.
    pub fn discard_conversation_if_unused(&self, id: &str) -> Result<bool, AppError> {
        let id = parse_id("conversation", id)?;
        // Held while deleting, so that a turn cannot start sending to it meanwhile.
        let sending = lock(&self.inner.sending);
        if sending.contains_key(&id) {
            return Ok(false);
        }
        // Its settings go with it (a trigger of the store's, in the same transaction).
        Ok(self.inner.conversations.discard_if_unused(id)?)
    }

    /// Deletes the unused conversations made more than [`UNUSED_GRACE_MS`] ago: those the
    /// window closed on.
    pub fn discard_unused_conversations(&self) -> Result<usize, AppError> {
        let unused = self.inner.conversations.unused_before(crate::clock::now_ms() - UNUSED_GRACE_MS)?;
        let mut n = 0;
        for id in unused {
            n += usize::from(self.discard_conversation_if_unused(&id.to_string())?);
        }
        Ok(n)
    }

    /// Up to `length` characters (at most [`KEPT_PAGE_CHARS`]) of result number `result` kept
    /// with `conversation`, from character `offset`: the inspector's whole result.
    pub fn read_kept_result(
        &self,
        conversation: &str,
        result: u32,
        offset: u64,
        length: u64,
    ) -> Result<KeptPage, AppError> {
        let id = parse_id("conversation", conversation)?;
        let whole = self.inner.conversations.kept_result(id, result)?;
        if offset > 0 && offset >= whole.kept.chars {
            return Err(AppError::Invalid(format!(
                "offset {offset} is past the end of result {result} of conversation {id} ({} characters)",
                whole.kept.chars
            )));
        }
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = usize::try_from(length.min(KEPT_PAGE_CHARS)).unwrap_or(usize::MAX);
        Ok(KeptPage { kept: whole.kept, offset, text: whole.text.chars().skip(skip).take(take).collect() })
    }

    /// A new conversation that carries on from `message`: the branch up to
    /// it, the conversation's settings and instructions; its summary.
    pub fn fork_conversation(&self, conversation: &str, message: &str) -> Result<ConversationSummary, AppError> {
        let id = parse_id("conversation", conversation)?;
        let fork = self.inner.conversations.fork(id, parse_id("message", message)?)?;
        let settings = ConversationSettings { system_prompt: None, ..self.conversation_settings(id)? };
        self.inner.store.set_setting(&settings_key(fork.id), &settings)?;
        Ok(ConversationSummary::from(&fork))
    }

    /// Renames a conversation.
    pub fn rename_conversation(&self, id: &str, title: &str) -> Result<(), AppError> {
        Ok(self.inner.conversations.rename(parse_id("conversation", id)?, title)?)
    }

    /// Deletes a conversation and everything in it, its settings too.
    pub fn delete_conversation(&self, id: &str) -> Result<(), AppError> {
        let id = parse_id("conversation", id)?;
        if let Some(control) = lock(&self.inner.turns).remove(&id) {
            control.stop();
        }
        Ok(self.inner.conversations.delete(id)?)
    }

    /// A conversation's active branch and settings.
    pub fn get_conversation(&self, id: &str, tail: Option<usize>) -> Result<ConversationDetail, AppError> {
        let id = parse_id("conversation", id)?;
        let conversation = self.inner.conversations.get(id)?;
        let page = self.page_views(id, tail, None)?;
        Ok(ConversationDetail {
            conversation: ConversationSummary::from(&conversation),
            messages: page.messages,
            earlier: page.earlier,
            settings: self.conversation_settings(id)?,
        })
    }

    /// Up to `limit` branch messages before the message `before`, for scrolling back.
    pub fn earlier_messages(&self, id: &str, before: &str, limit: usize) -> Result<MessagePage, AppError> {
        let id = parse_id("conversation", id)?;
        let before = parse_id("message", before)?;
        self.page_views(id, Some(limit), Some(before))
    }

    fn page_views(
        &self,
        id: ConversationId,
        limit: Option<usize>,
        before: Option<MessageId>,
    ) -> Result<MessagePage, AppError> {
        let page = self.inner.conversations.branch_page(id, limit, before)?;
        let messages = page.messages.iter().map(|b| MessageView::new(&b.message, &b.siblings)).collect();
        Ok(MessagePage { messages, earlier: page.earlier })
    }

    fn conversation_settings(&self, id: ConversationId) -> Result<ConversationSettings, AppError> {
        let conversation = self.inner.conversations.get(id)?;
        let stored = self.inner.store.setting::<ConversationSettings>(&settings_key(id))?;
        let settings = stored.unwrap_or_else(|| ConversationSettings {
            assistant_id: conversation.assistant,
            ..ConversationSettings::default()
        });
        // The instructions live with the conversation, where the turn reads them.
        Ok(ConversationSettings { system_prompt: conversation.system_prompt, ..settings })
    }

    /// Stores the conversation's model, server and tool choices, and its own instructions.
    pub fn update_conversation_settings(&self, id: &str, settings: &ConversationSettings) -> Result<(), AppError> {
        let id = parse_id("conversation", id)?;
        let conversation = self.inner.conversations.get(id)?;
        if let Some(name) = &settings.assistant_id {
            self.inner.assistants.get(name)?;
        }
        if let Some(name) = &settings.provider {
            self.inner.config.provider(name)?;
        }
        // Written only when changed: a new model choice must not count as activity.
        let instructions = settings.system_prompt.as_deref().map(str::trim).filter(|p| !p.is_empty());
        if instructions != conversation.system_prompt.as_deref() {
            self.inner.conversations.set_system_prompt(id, instructions)?;
        }
        let rest = ConversationSettings { system_prompt: None, ..settings.clone() };
        Ok(self.inner.store.set_setting(&settings_key(id), &rest)?)
    }

    /// The conversation as a Markdown or JSON file named after its title.
    pub fn export_conversation(&self, id: &str, format: ExportFormat) -> Result<ExportFile, AppError> {
        Ok(self.inner.conversations.export_file(parse_id("conversation", id)?, format)?)
    }

    /// Shows the branch through `message`; returns it, root first.
    pub fn switch_branch(&self, conversation: &str, message: &str) -> Result<Vec<MessageView>, AppError> {
        let id = parse_id("conversation", conversation)?;
        self.inner.conversations.switch_branch(id, parse_id("message", message)?)?;
        Ok(self.page_views(id, None, None)?.messages)
    }

    /// Deletes a message and the replies after it; returns the branch shown
    /// now, root first. Refused while the conversation's turn runs.
    pub fn delete_message(&self, conversation: &str, message: &str) -> Result<Vec<MessageView>, AppError> {
        let id = parse_id("conversation", conversation)?;
        if lock(&self.inner.turns).contains_key(&id) {
            return Err(AppError::Invalid(format!("conversation {id} has a turn running; stop it first")));
        }
        self.inner.conversations.delete_message(id, parse_id("message", message)?)?;
        Ok(self.page_views(id, None, None)?.messages)
    }

    /// Stops the conversation's running turn; its events end with `done { cancelled }`.
    pub fn cancel_turn(&self, conversation: &str) -> Result<(), AppError> {
        let id = parse_id("conversation", conversation)?;
        let control = lock(&self.inner.turns).get(&id).cloned();
        let control = control.ok_or_else(|| AppError::NotWaiting(format!("conversation {id} has no running turn")))?;
        control.stop();
        Ok(())
    }

    /// Answers a waiting approval card.
    pub fn respond_approval(&self, call_id: &str, answer: ApprovalAnswer) -> Result<(), AppError> {
        let turns: Vec<TurnAnswers> = lock(&self.inner.turns).values().cloned().collect();
        let (answers, waiting) = turns
            .iter()
            .find_map(|answers| answers.waiting(call_id).map(|waiting| (answers, waiting)))
            .ok_or_else(|| AppError::NotWaiting(format!("no approval is waiting for call {call_id}")))?;
        let decision = match answer {
            ApprovalAnswer::AllowOnce => ApprovalDecision::AllowOnce,
            ApprovalAnswer::AllowConversation => ApprovalDecision::AllowForConversation,
            ApprovalAnswer::Deny => ApprovalDecision::Deny,
            // At strict nothing is remembered (the card offers once or deny).
            ApprovalAnswer::AllowAlways if waiting.strict => ApprovalDecision::AllowOnce,
            ApprovalAnswer::AllowAlways => {
                self.set_tool_approval(&waiting.server, &waiting.tool, ApprovalMode::Allow)?;
                ApprovalDecision::AllowOnce
            }
        };
        tracing::debug!(call_id, ?decision, "approval answered");
        Ok(answers.answer(call_id, decision)?)
    }

    /// Runs one turn to its end, passing each event to `on_event`. Returns
    /// the assistant message's id. Errors before the turn starts are
    /// returned; errors during it arrive as events (and `done { error }`).
    pub async fn run_turn(
        &self,
        conversation: &str,
        input: TurnInput,
        mut on_event: impl FnMut(TurnEvent) + Send,
    ) -> Result<String, AppError> {
        let id = parse_id("conversation", conversation)?;
        let _sending = Sending::claim(&self.inner.sending, id);
        let stored = self.inner.conversations.get(id)?;
        let settings = self.conversation_settings(id)?;
        let assistant_name = settings.assistant_id.clone().or(stored.assistant).unwrap_or(DEFAULT_ASSISTANT.into());
        let assistant = self.inner.assistants.get(&assistant_name)?;
        let action = match input {
            TurnInput::Send { text, attachments } => {
                TurnAction::Send { text, attachments: self.attachments(attachments).await? }
            }
            TurnInput::Regenerate { message } => TurnAction::Regenerate { message: parse_id("message", &message)? },
            TurnInput::Edit { message, text } => {
                let message = parse_id("message", &message)?;
                let attachments = self.inner.conversations.message(message)?.attachments;
                TurnAction::Edit { message, text, attachments }
            }
        };
        // Before the conversation is touched: a turn that cannot start changes nothing.
        let model = self.model_choice(&settings, &assistant)?;
        // The first question names the conversation, as in every chat app; once
        // answered, the model may give it a better name (`titles`).
        let mut first_question = None;
        if let TurnAction::Send { text, .. } = &action
            && stored.title == NEW_TITLE
            && !text.trim().is_empty()
        {
            self.inner.conversations.rename(id, text)?;
            let named = self.inner.conversations.get(id)?.title;
            first_question = Some(FirstQuestion { text: text.clone(), title: named });
        }
        let titler = (model.provider.clone(), model.model.clone());
        let regenerate = matches!(action, TurnAction::Regenerate { .. });
        let model_name = model.model.clone();
        let ChatKnowledge { retriever, tool: kb_tool } =
            self.kb().for_chat(assistant.knowledge, assistant.knowledge_limits, &self.inner.registry);
        // A turn right after start-up still gets the built-in tools (they start in
        // milliseconds): start-up starts them after the roots are read, so a turn
        // that comes first starts them itself. An app that was never started has none.
        let registry = &self.inner.registry;
        if matches!(registry.status(BUILTIN_SERVER), Ok(ServerStatus::Stopped)) {
            let _ = registry.start(BUILTIN_SERVER).await;
        }
        let _ = registry.wait_server_settled(BUILTIN_SERVER, BUILTIN_START).await;
        let tools = self.tool_host(kb_tool.is_some())?;
        let mut selection = self.selection(&settings, &assistant, tools.as_ref()).await;
        if kb_tool.is_some() {
            selection = rag_chat::offer_tool(selection);
        }
        let request = TurnRequest {
            conversation: id,
            action,
            model,
            system_prompt: Some(assistant.system_prompt.clone()),
            tools,
            selection,
            approval: ApprovalPolicy::Ask,
            retriever,
            // As in the CLI: an assistant that leaves the knowledge base off sends nothing to its model.
            tool_embedder: (assistant.knowledge != KnowledgeMode::Off)
                .then(|| self.inner.host.tool_embedder())
                .flatten(),
            limits: self.inner.host.turn_limits()?,
        };
        if lock(&self.inner.turns).contains_key(&id) {
            return Err(AppError::Invalid(format!("conversation {id} already has a turn running; stop it first")));
        }
        let mut turn = self.inner.host.watch(self.inner.agent.start(request)?);
        lock(&self.inner.turns).insert(id, turn.answers());
        let assistant_message = turn.assistant_message_id();
        let user_message = (!regenerate).then(|| turn.user_message_id());
        on_event(TurnEvent::TurnStarted {
            user_message: match user_message {
                Some(mid) => Some(Box::new(self.message_view(id, mid)?)),
                None => None,
            },
            assistant_message_id: assistant_message.to_string(),
            model: model_name,
        });
        while let Some(event) = turn.next().await {
            on_event(event);
        }
        lock(&self.inner.turns).remove(&id);
        // The turn is over: a setting that cannot be read means no title, never a failed turn.
        if let Some(question) = first_question
            && matches!(self.auto_title(), Ok(true))
        {
            let (provider, model) = titler;
            self.title_in_background(id, question, assistant_message, provider, model);
        }
        Ok(assistant_message.to_string())
    }

    /// Asks the model for the conversation's title once its first answer is
    /// complete, without holding up the turn; the title replaces the question
    /// only if the conversation is still named after it.
    fn title_in_background(
        &self,
        id: ConversationId,
        question: FirstQuestion,
        answer: MessageId,
        provider: Arc<dyn Provider>,
        model: String,
    ) {
        let app = self.clone();
        let ct = self.inner.shutdown.child_token();
        tokio::spawn(async move {
            let unchanged = || app.inner.conversations.get(id).is_ok_and(|c| c.title == question.title);
            if !unchanged() {
                return;
            }
            let answer = match app.inner.conversations.message(answer) {
                Ok(m) if m.status == MessageStatus::Complete && !m.text.trim().is_empty() => m.text,
                _ => return,
            };
            let asked = titles::ask(provider.as_ref(), &model, &question.text, &answer, &ct);
            let title = match tokio::time::timeout(titles::TIMEOUT, asked).await {
                Ok(Ok(Some(title))) => title,
                Ok(Ok(None)) => return,
                Ok(Err(e)) => return tracing::warn!(conversation = id, error = %e, "the model gave no title"),
                Err(_) => return tracing::warn!(conversation = id, "the model gave no title in time"),
            };
            // The user may have named it meanwhile.
            let renamed = unchanged() && app.inner.conversations.rename(id, &title).is_ok();
            if renamed && let Ok(c) = app.inner.conversations.get(id) {
                app.inner
                    .events
                    .report(AppEvent::ConversationRenamed(ConversationRenamed { id: id.to_string(), title: c.title }));
            }
        });
    }

    fn message_view(&self, conversation: ConversationId, id: MessageId) -> Result<MessageView, AppError> {
        let message = self.inner.conversations.message(id)?;
        let siblings: Vec<MessageId> = self
            .inner
            .conversations
            .messages(conversation)?
            .iter()
            .filter(|m| m.parent_id == message.parent_id)
            .map(|m| m.id)
            .collect();
        Ok(MessageView::new(&message, &siblings))
    }

    /// Checks and reads what the user attached ([`attach`]); attached resources
    /// are read from the server that lists them.
    async fn attachments(&self, inputs: Vec<AttachmentInput>) -> Result<Vec<Attachment>, AppError> {
        let named = |title: Option<String>, otherwise: &str| {
            title.map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).unwrap_or_else(|| otherwise.to_owned())
        };
        let mut out = Vec::new();
        for input in inputs {
            let attachment = match input {
                AttachmentInput::Text { text, title } => attach::text(named(title, "text"), text)?,
                AttachmentInput::Image { mime_type, data, title } => {
                    attach::media(named(title, "image"), &mime_type, data)?
                }
                AttachmentInput::Audio { mime_type, data, title } => {
                    attach::media(named(title, "audio"), &mime_type, data)?
                }
                AttachmentInput::ResourceLink { uri, name, server } => {
                    let text = self.read_resource_text(&uri, server).await?;
                    Attachment { title: named(name, &uri), uri: Some(uri), text, media: None }
                }
                AttachmentInput::File { title, data } => {
                    let title = named(Some(title), "file");
                    // Reading a large PDF or Word file takes a while: not on the runtime's threads.
                    tokio::task::spawn_blocking(move || attach::encoded_document(title, &data))
                        .await
                        .map_err(|e| AppError::Invalid(format!("the attachment could not be read: {e}")))??
                }
            };
            out.push(attachment);
        }
        Ok(out)
    }

    /// The model for a turn: the conversation's choice, else the assistant's,
    /// else the first provider's default (or the environment's).
    fn model_choice(&self, settings: &ConversationSettings, assistant: &Assistant) -> Result<ModelChoice, AppError> {
        let requested = settings.provider.as_deref().or(assistant.provider.as_deref());
        let env = &self.inner.env;
        let resolved = resolve_provider(&self.inner.config, self.inner.secrets.as_ref(), requested, &|k| env(k))?;
        let model = settings
            .model
            .clone()
            .or_else(|| assistant.model.clone())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| resolved.profile.default_model.clone());
        if model.is_empty() {
            return Err(AppError::Invalid(format!(
                "provider {} has no default model: choose a model in the composer or in Settings → Providers",
                resolved.profile.name
            )));
        }
        Ok(ModelChoice {
            provider: resolved.build(self.inner.secrets.as_ref())?,
            provider_name: resolved.profile.name.clone(),
            sampling: Sampling { reasoning: settings.reasoning.or(assistant.sampling.reasoning), ..assistant.sampling },
            context_window: resolved.context_window(&model),
            model,
        })
    }

    /// Every ready server's tools, the built-in ones included
    /// (`knowledge_search` only when `knowledge_tool`).
    pub(crate) fn tool_host(&self, knowledge_tool: bool) -> Result<Arc<dyn ToolHost>, AppError> {
        Ok(Arc::new(self.inner.host.tools(self.inner.config.servers()?, knowledge_tool)?))
    }

    /// The tools a turn offers: the assistant's choice narrowed by the
    /// conversation's servers and hidden tools.
    async fn selection(
        &self,
        settings: &ConversationSettings,
        assistant: &Assistant,
        tools: &dyn ToolHost,
    ) -> ToolSelection {
        if settings.servers.is_none() && settings.disabled_tools.is_empty() {
            return assistant.tools.clone();
        }
        let offered = tools.list_tools(tokio_util::sync::CancellationToken::new()).await;
        let servers: Option<BTreeSet<&str>> = settings.servers.as_ref().map(|s| s.iter().map(String::as_str).collect());
        let chosen = offered
            .iter()
            .filter(|t| assistant.tools.allows(t))
            .filter(|t| t.server == BUILTIN_SERVER || servers.as_ref().is_none_or(|s| s.contains(t.server.as_str())))
            .map(|t| format!("{}/{}", t.server, t.tool))
            .filter(|name| !settings.disabled_tools.contains(name))
            .collect();
        ToolSelection::Only { servers: BTreeSet::new(), tools: chosen }
    }
}
