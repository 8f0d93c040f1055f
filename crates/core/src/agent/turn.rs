//! The turn loop: one user message in, a stream of [`AgentEvent`]s out.
//!
//! [`Agent::start`] writes the user message and an empty assistant message,
//! then spawns the loop. Each round sends the history to the provider and
//! streams its answer; when the model calls tools, they run concurrently
//! (under a cap, each through approval and a time limit) and their results
//! start the next round. It ends when the model answers without tool calls,
//! at the round limit, on a fatal error, or when stopped.
//!
//! Everything is written as it happens: text is flushed on a timer, tool calls
//! and results when they occur. Stopping drops the provider stream, cancels
//! the token of every running tool call (the MCP host sends
//! `notifications/cancelled`) and keeps the partial message, marked stopped.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures::stream::{FuturesUnordered, Stream, StreamExt};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::AgentError;
use super::budget;
use super::events::{AgentEvent, ApprovalDecision, ApprovalId, ApprovalPolicy, ToolOutcome};
use super::results::{self, Cut, Left, READ_TOOL, ResultRoom};
use super::retrieve::{Retrieved, Retriever, context_block};
use super::tool_search::{self, Offer, SEARCH_TOOL, ToolBudget, ToolEmbedder};
use super::tools::{HostedTool, ToolEvents, ToolHost, ToolInvocation, ToolOutput, ToolSelection};
use crate::config::ApprovalMode;
use crate::conversations::{
    AssistantWriter, Attachment, ConversationError, ConversationId, ConversationStore, FailureKind, KeptResult,
    MessageId, MessageStatus, Role, ToolCallStatus,
};
use crate::llm::{ChatMessage, ChatRequest, FinishReason, Provider, Sampling, StreamEvent, ToolCall};

/// The model a turn talks to.
#[derive(Clone)]
pub struct ModelChoice {
    pub provider: Arc<dyn Provider>,
    /// The provider profile's name, recorded with the message.
    pub provider_name: String,
    pub model: String,
    pub sampling: Sampling,
    /// The model's context window in tokens, when known (no trimming otherwise).
    pub context_window: Option<u32>,
}

impl std::fmt::Debug for ModelChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelChoice")
            .field("provider", &self.provider_name)
            .field("model", &self.model)
            .field("sampling", &self.sampling)
            .field("context_window", &self.context_window)
            .finish()
    }
}

/// Limits of one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnLimits {
    /// Model requests per turn (default 25).
    pub max_rounds: u32,
    /// Tool calls running at once (default 4).
    pub max_parallel_tools: usize,
    /// Time limit of a tool call whose host sets none (default 120 s).
    pub tool_timeout: Duration,
    /// How often streamed text is written to the database (default 250 ms).
    pub flush_interval: Duration,
    /// How long stopped tool calls get to wind down (default 2 s).
    pub cancel_grace: Duration,
    /// Tool calls per turn (the policy's per-turn cap, default 50): the calls
    /// past it are refused, and the rounds after it offer no tools, so the
    /// model answers with what it has.
    pub max_tool_calls: u32,
    /// When the tools are found through search instead of all sent (the
    /// provider's own limit on tools is added per turn).
    pub tool_budget: ToolBudget,
}

impl Default for TurnLimits {
    fn default() -> Self {
        Self {
            max_rounds: 25,
            max_parallel_tools: 4,
            tool_timeout: Duration::from_secs(120),
            flush_interval: Duration::from_millis(250),
            cancel_grace: Duration::from_secs(2),
            max_tool_calls: 50,
            tool_budget: ToolBudget::default(),
        }
    }
}

impl TurnLimits {
    /// The default limits with the per-turn cap of the global policy.
    pub fn for_policy(defaults: &crate::config::PolicyDefaults) -> Self {
        Self { max_tool_calls: defaults.turn_tool_calls, ..Self::default() }
    }
}

/// What the user did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnAction {
    /// A new message at the end of the active branch.
    Send { text: String, attachments: Vec<Attachment> },
    /// Answer the question of this assistant message again (a sibling answer).
    Regenerate { message: MessageId },
    /// Replace this user message by a new version (a sibling) and answer it.
    Edit { message: MessageId, text: String, attachments: Vec<Attachment> },
}

/// Everything a turn needs.
pub struct TurnRequest {
    pub conversation: ConversationId,
    pub action: TurnAction,
    pub model: ModelChoice,
    /// The assistant's system prompt; the conversation's own prompt wins.
    pub system_prompt: Option<String>,
    pub tools: Arc<dyn ToolHost>,
    pub selection: ToolSelection,
    pub approval: ApprovalPolicy,
    /// Adds knowledge-base context before the first round.
    pub retriever: Option<Arc<dyn Retriever>>,
    /// Lets tool search rank by meaning as well as by words.
    pub tool_embedder: Option<Arc<dyn ToolEmbedder>>,
    pub limits: TurnLimits,
}

/// Starts turns and records them in the conversation store.
#[derive(Debug, Clone)]
pub struct Agent {
    conversations: ConversationStore,
}

type Pending = Arc<Mutex<HashMap<ApprovalId, oneshot::Sender<ApprovalDecision>>>>;

/// Stops a turn and answers its approvals; cheap to clone.
#[derive(Debug, Clone)]
pub struct TurnControl {
    cancel: CancellationToken,
    approvals: Pending,
}

impl TurnControl {
    /// Stops the turn; the partial answer is kept, marked stopped.
    pub fn stop(&self) {
        self.cancel.cancel();
    }

    /// Answers an [`AgentEvent::ApprovalNeeded`].
    pub fn answer(&self, approval: ApprovalId, decision: ApprovalDecision) -> Result<(), AgentError> {
        let sender = lock(&self.approvals).remove(&approval).ok_or(AgentError::NoSuchApproval { id: approval })?;
        sender.send(decision).map_err(|_| AgentError::NoSuchApproval { id: approval })
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A running turn: a stream of its events. Dropping it stops the turn.
#[derive(Debug)]
pub struct Turn {
    events: mpsc::UnboundedReceiver<AgentEvent>,
    /// `Done` was yielded: the stream is over, whatever a tool still reports.
    finished: bool,
    control: TurnControl,
    user_message: MessageId,
    assistant_message: MessageId,
}

impl Turn {
    /// Stops the turn and answers approvals, from anywhere.
    pub fn control(&self) -> TurnControl {
        self.control.clone()
    }

    /// The user message this turn answers.
    pub fn user_message_id(&self) -> MessageId {
        self.user_message
    }

    /// The assistant message being written.
    pub fn assistant_message_id(&self) -> MessageId {
        self.assistant_message
    }
}

impl Stream for Turn {
    type Item = AgentEvent;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<AgentEvent>> {
        if self.finished {
            return Poll::Ready(None);
        }
        let next = self.events.poll_recv(cx);
        if let Poll::Ready(Some(AgentEvent::Done { .. })) = &next {
            self.finished = true;
        }
        next
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        // The loop notices, keeps what it has, marks it stopped and ends.
        self.control.cancel.cancel();
    }
}

impl Agent {
    /// An agent writing to `conversations`.
    pub fn new(conversations: ConversationStore) -> Self {
        Self { conversations }
    }

    /// The conversations it writes.
    pub fn conversations(&self) -> &ConversationStore {
        &self.conversations
    }

    /// Writes the user's message and starts the turn on the current tokio runtime.
    pub fn start(&self, request: TurnRequest) -> Result<Turn, AgentError> {
        let conv = &self.conversations;
        let conversation = conv.get(request.conversation)?;
        let (user_message, query) = match &request.action {
            TurnAction::Send { text, attachments } => {
                (conv.add_user_message(conversation.id, conversation.active_leaf, text, attachments)?, text.clone())
            }
            TurnAction::Regenerate { message } => {
                let m = conv.message(*message)?;
                expect_role(&m, conversation.id, Role::Assistant)?;
                let parent = m.parent_id.ok_or(AgentError::NothingToAnswer { message: *message })?;
                (parent, conv.message(parent)?.text)
            }
            TurnAction::Edit { message, text, attachments } => {
                let m = conv.message(*message)?;
                expect_role(&m, conversation.id, Role::User)?;
                (conv.add_user_message(conversation.id, m.parent_id, text, attachments)?, text.clone())
            }
        };
        let writer = AssistantWriter::start(
            conv,
            conversation.id,
            user_message,
            &request.model.provider_name,
            &request.model.model,
        )?;
        let (tx, events) = mpsc::unbounded_channel();
        let control = TurnControl { cancel: CancellationToken::new(), approvals: Pending::default() };
        let assistant_message = writer.message_id();
        // The receiver is alive: this cannot fail.
        let _ = tx.send(AgentEvent::Started {
            conversation_id: conversation.id,
            user_message_id: user_message,
            assistant_message_id: assistant_message,
        });
        let runner = Runner {
            conversations: conv.clone(),
            conversation: conversation.id,
            user_message,
            query,
            writer,
            tx,
            cancel: control.cancel.clone(),
            approvals: control.approvals.clone(),
            next_approval: AtomicU64::new(1),
            tool_calls: AtomicU32::new(0),
            reading: AtomicBool::new(false),
            system_prompt: conversation.system_prompt.or(request.system_prompt),
            request_model: request.model,
            tools: request.tools,
            selection: request.selection,
            policy: request.approval,
            retriever: request.retriever,
            tool_embedder: request.tool_embedder,
            limits: request.limits,
        };
        tokio::spawn(runner.run());
        Ok(Turn { events, finished: false, control, user_message, assistant_message })
    }
}

fn expect_role(m: &crate::conversations::Message, conversation: ConversationId, role: Role) -> Result<(), AgentError> {
    if m.conversation_id != conversation {
        return Err(crate::conversations::ConversationError::MessageNotFound { conversation, id: m.id }.into());
    }
    if m.role != role {
        return Err(
            crate::conversations::ConversationError::WrongRole { id: m.id, expected: role, actual: m.role }.into()
        );
    }
    Ok(())
}

/// How a turn ended.
enum Outcome {
    Complete,
    Stopped,
    RoundLimit(String),
}

/// The MCP servers' instructions for the tools offered this turn, as a
/// system-prompt section (empty when none gave any).
fn instructions_block(instructions: &[(String, String)]) -> String {
    if instructions.is_empty() {
        return String::new();
    }
    let mut block =
        String::from("\n\n# MCP servers\nSome tools come from MCP servers. What each server says about using it:\n");
    for (server, text) in instructions {
        block.push_str(&format!("\n## {server}\n{text}\n"));
    }
    block
}

/// The result of streaming one model response.
enum RoundEnd {
    Stopped,
    Finished { text: String, reasoning: String, signature: Option<String>, calls: Vec<PendingCall> },
}

struct PendingCall {
    id: String,
    name: String,
    arguments: String,
    signature: Option<String>,
    row: i64,
}

struct Runner {
    conversations: ConversationStore,
    conversation: ConversationId,
    user_message: MessageId,
    query: String,
    writer: AssistantWriter,
    tx: mpsc::UnboundedSender<AgentEvent>,
    cancel: CancellationToken,
    approvals: Pending,
    next_approval: AtomicU64,
    /// Tool calls this turn has made (or tried to), for [`TurnLimits::max_tool_calls`].
    tool_calls: AtomicU32,
    /// The conversation keeps a result cut for the model: [`READ_TOOL`] is offered.
    reading: AtomicBool,
    system_prompt: Option<String>,
    request_model: ModelChoice,
    tools: Arc<dyn ToolHost>,
    selection: ToolSelection,
    policy: ApprovalPolicy,
    retriever: Option<Arc<dyn Retriever>>,
    tool_embedder: Option<Arc<dyn ToolEmbedder>>,
    limits: TurnLimits,
}

impl Runner {
    fn emit(&self, event: AgentEvent) {
        // Nobody listening (the front end went away) does not stop the turn's recording.
        let _ = self.tx.send(event);
    }

    async fn run(mut self) {
        let (status, error) = match self.rounds().await {
            Ok(Outcome::Complete) => (MessageStatus::Complete, None),
            Ok(Outcome::Stopped) => (MessageStatus::Stopped, None),
            Ok(Outcome::RoundLimit(message)) => (MessageStatus::RoundLimit, Some((FailureKind::Limit, message))),
            Err(e) => (MessageStatus::Error, Some((e.kind(), e.to_string()))),
        };
        if let Some((kind, message)) = &error {
            self.emit(AgentEvent::Error { kind: *kind, message: message.clone(), fatal: true });
        }
        if let Err(e) = self.writer.finish(status, error.as_ref().map(|(kind, text)| (*kind, text.as_str()))) {
            self.emit(AgentEvent::Error { kind: FailureKind::Storage, message: e.to_string(), fatal: true });
        }
        self.emit(AgentEvent::Done { status, message_id: self.writer.message_id() });
    }

    async fn rounds(&mut self) -> Result<Outcome, AgentError> {
        let history = self.conversations.history(self.conversation, Some(self.user_message))?;
        let mut system = self.system_prompt.clone().unwrap_or_default();
        if let Some(retriever) = self.retriever.clone() {
            let found = tokio::select! {
                () = self.cancel.cancelled() => return Ok(Outcome::Stopped),
                found = retriever.retrieve(&self.query, self.cancel.child_token()) => found,
            };
            match found {
                Ok(Retrieved { passages, unavailable }) if !passages.is_empty() || !unavailable.is_empty() => {
                    self.writer.set_citations(&passages, &unavailable)?;
                    if !passages.is_empty() {
                        system.push_str(&context_block(&passages));
                    }
                    self.emit(AgentEvent::Citations { passages, unavailable });
                }
                Ok(_) => {}
                Err(e) => {
                    self.emit(AgentEvent::Error { kind: FailureKind::Knowledge, message: e.to_string(), fatal: false })
                }
            }
        }
        let tools: Vec<HostedTool> = if self.selection == ToolSelection::None {
            Vec::new()
        } else {
            let listed = tokio::select! {
                () = self.cancel.cancelled() => return Ok(Outcome::Stopped),
                listed = self.tools.list_tools(self.cancel.child_token()) => listed,
            };
            listed.into_iter().filter(|t| self.selection.allows(t)).collect()
        };
        let servers: BTreeSet<String> = tools.iter().map(|t| t.server.clone()).collect();
        system.push_str(&instructions_block(&self.tools.instructions(&servers)));
        let counter = budget::counter_for(&self.request_model.model);
        // One place of the provider's limit is kept for `read_result`.
        let max_tools = self.request_model.provider.max_tools().map(|most| most.saturating_sub(1));
        let limits = ToolBudget { max_tools, ..self.limits.tool_budget };
        let offer = Offer::plan(&tools, &history, self.request_model.context_window, limits, counter);
        if let Some(searchable) = offer.searchable() {
            self.emit(AgentEvent::ToolSearch { searchable, sent: offer.sent() });
        }
        let offer = Mutex::new(offer);
        self.reading.store(self.conversations.has_kept_results(self.conversation)?, Ordering::Relaxed);

        let mut this_turn: Vec<ChatMessage> = Vec::new();
        for round in 0..self.limits.max_rounds {
            if self.cancel.is_cancelled() {
                return Ok(Outcome::Stopped);
            }
            self.emit(AgentEvent::Round { round });
            let mut messages = Vec::with_capacity(history.len() + this_turn.len() + 1);
            if !system.trim().is_empty() {
                messages.push(ChatMessage::System { text: system.clone() });
            }
            messages.extend(history.iter().cloned());
            messages.extend(this_turn.iter().cloned());
            let sampling = self.request_model.sampling;
            let mut specs = lock(&offer).specs(&tools);
            if self.offers_read() {
                specs.push(results::read_spec());
            }
            // What is left of the window once this request is sent, for the results of its calls.
            let mut left = None;
            if let Some(window) = self.request_model.context_window {
                let room = window.saturating_sub(sampling.max_tokens.unwrap_or((window / 4).min(4_096)));
                let fitted = budget::fit(&mut messages, &specs, room, counter);
                if let Some(trim) = fitted.trim {
                    self.emit(AgentEvent::ContextTrimmed {
                        elided_tool_results: trim.elided_tool_results,
                        dropped_messages: trim.dropped_messages,
                        estimated_tokens: trim.estimated_tokens,
                        context_window: window,
                    });
                }
                let results = messages
                    .iter()
                    .filter(|m| matches!(m, ChatMessage::Tool { .. }))
                    .map(|m| budget::count_message(m, counter))
                    .sum();
                left = Some(Left { room, left: room.saturating_sub(fitted.tokens), results });
            }
            let capped = self.tool_calls.load(Ordering::Relaxed) >= self.limits.max_tool_calls;
            let request = ChatRequest {
                model: self.request_model.model.clone(),
                messages,
                tools: if capped { Vec::new() } else { specs },
                sampling,
            };
            let (text, reasoning, signature, calls) = match self.stream_round(round, request, &tools).await? {
                RoundEnd::Stopped => return Ok(Outcome::Stopped),
                RoundEnd::Finished { text, reasoning, signature, calls } => (text, reasoning, signature, calls),
            };
            this_turn.push(ChatMessage::Assistant {
                text,
                reasoning: (!reasoning.is_empty()).then_some(reasoning),
                reasoning_signature: signature,
                tool_calls: calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                        signature: c.signature.clone(),
                    })
                    .collect(),
            });
            if calls.is_empty() {
                return Ok(Outcome::Complete);
            }
            let asked = this_turn.last().map_or(0, |m| budget::count_message(m, counter));
            let left = left.map(|w| Left { left: w.left.saturating_sub(asked), ..w });
            let room = ResultRoom::for_round(left, calls.len(), counter);
            let (results, stopped) = self.run_tools(&calls, &tools, &offer, room).await?;
            for (call, output) in calls.iter().zip(results) {
                let output = output.unwrap_or_else(|| ToolOutput::error("The call was stopped before it finished."));
                this_turn.push(ChatMessage::Tool {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    parts: output.content,
                    is_error: output.is_error,
                });
            }
            if stopped {
                return Ok(Outcome::Stopped);
            }
        }
        Ok(Outcome::RoundLimit(format!(
            "Stopped after {} model requests: the model kept calling tools without giving a final answer. \
             Send another message to let it continue.",
            self.limits.max_rounds
        )))
    }

    async fn stream_round(
        &mut self,
        round: u32,
        request: ChatRequest,
        tools: &[HostedTool],
    ) -> Result<RoundEnd, AgentError> {
        let provider = self.request_model.provider.clone();
        let mut stream = tokio::select! {
            () = self.cancel.cancelled() => return Ok(RoundEnd::Stopped),
            stream = provider.stream(request, self.cancel.child_token()) => stream?,
        };
        let mut ticker = tokio::time::interval(self.limits.flush_interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let (mut text, mut reasoning) = (String::new(), String::new());
        let mut signature: Option<String> = None;
        let mut calls: BTreeMap<usize, PendingCall> = BTreeMap::new();
        // The timer's text flush runs on a blocking thread (a long answer's
        // text and its search index take milliseconds to write), one at a
        // time; every other write of this message waits for it first.
        let mut flushing: Option<tokio::task::JoinHandle<Result<(), ConversationError>>> = None;
        loop {
            let item = tokio::select! {
                biased;
                () = self.cancel.cancelled() => {
                    drop(stream);
                    settle(&mut flushing).await?;
                    for call in calls.values() {
                        self.writer.set_arguments(call.row, &call.arguments)?;
                    }
                    return Ok(RoundEnd::Stopped);
                }
                _ = ticker.tick() => {
                    if flushing.as_ref().is_none_or(tokio::task::JoinHandle::is_finished) {
                        settle(&mut flushing).await?;
                        flushing = self.writer.take_flush().map(|f| tokio::task::spawn_blocking(move || f.write()));
                    }
                    continue;
                }
                item = stream.next() => item,
            };
            let event = match item {
                None => return Err(AgentError::StreamEnded { provider: provider.name().to_owned() }),
                Some(event) => event?,
            };
            match event {
                StreamEvent::TextDelta { text: delta } => {
                    self.writer.push_text(round, &delta);
                    text.push_str(&delta);
                    self.emit(AgentEvent::TextDelta { text: delta });
                }
                StreamEvent::ReasoningDelta { text: delta } => {
                    self.writer.push_reasoning(round, &delta);
                    reasoning.push_str(&delta);
                    self.emit(AgentEvent::ReasoningDelta { text: delta });
                }
                StreamEvent::ToolCallStart { index, id, name } => {
                    if calls.contains_key(&index) {
                        continue;
                    }
                    let real = tools.iter().find(|t| t.spec.name == name);
                    settle(&mut flushing).await?;
                    let row = self.writer.start_tool_call(round, &id, &name, real.map(|t| (&*t.server, &*t.tool)))?;
                    self.emit(AgentEvent::ToolCallStarted {
                        call_id: id.clone(),
                        name: name.clone(),
                        server: real.map(|t| t.server.clone()),
                        tool: real.map(|t| t.tool.clone()),
                    });
                    calls.insert(index, PendingCall { id, name, arguments: String::new(), signature: None, row });
                }
                StreamEvent::ToolCallDelta { index, arguments } => {
                    let Some(call) = calls.get_mut(&index) else {
                        return Err(AgentError::UnknownToolCall { provider: provider.name().to_owned(), index });
                    };
                    call.arguments.push_str(&arguments);
                    let call_id = call.id.clone();
                    self.emit(AgentEvent::ToolArgumentsDelta { call_id, delta: arguments });
                }
                StreamEvent::ToolCallSignature { index, signature } => {
                    let Some(call) = calls.get_mut(&index) else {
                        return Err(AgentError::UnknownToolCall { provider: provider.name().to_owned(), index });
                    };
                    settle(&mut flushing).await?;
                    self.writer.set_signature(call.row, &signature)?;
                    call.signature = Some(signature);
                }
                StreamEvent::ReasoningSignature { signature: proof } => signature = Some(proof),
                StreamEvent::Usage { usage } => {
                    settle(&mut flushing).await?;
                    let total = self.writer.add_usage(usage)?;
                    self.emit(AgentEvent::Usage { usage: total });
                }
                StreamEvent::Finish { reason } => {
                    let note = match reason {
                        FinishReason::Length => {
                            Some((FailureKind::Limit, "The answer was cut off at the output token limit."))
                        }
                        FinishReason::ContentFilter => {
                            Some((FailureKind::Provider, "The provider's content filter stopped the answer."))
                        }
                        _ => None,
                    };
                    if let Some((kind, message)) = note {
                        self.emit(AgentEvent::Error { kind, message: message.into(), fatal: false });
                    }
                    break;
                }
            }
        }
        settle(&mut flushing).await?;
        for call in calls.values() {
            self.writer.set_arguments(call.row, &call.arguments)?;
        }
        self.writer.flush()?;
        Ok(RoundEnd::Finished { text, reasoning, signature, calls: calls.into_values().collect() })
    }

    /// Runs the round's calls concurrently; results in call order (`None`
    /// for calls stopped before they finished) and whether the turn was stopped.
    async fn run_tools(
        &self,
        calls: &[PendingCall],
        tools: &[HostedTool],
        offer: &Mutex<Offer>,
        room: ResultRoom,
    ) -> Result<(Vec<Option<ToolOutput>>, bool), AgentError> {
        let permits = Arc::new(Semaphore::new(self.limits.max_parallel_tools.max(1)));
        let mut running: FuturesUnordered<_> = calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let permits = permits.clone();
                async move { (i, self.run_call(call, tools, offer, room, permits).await) }
            })
            .collect();
        let mut results: Vec<Option<ToolOutput>> = vec![None; calls.len()];
        let mut stopped = false;
        loop {
            tokio::select! {
                biased;
                () = self.cancel.cancelled(), if !stopped => {
                    // Every call's token is a child of ours: they are cancelled now.
                    stopped = true;
                    let grace = self.limits.cancel_grace;
                    let drain = async {
                        while let Some((i, out)) = running.next().await {
                            results[i] = Some(out?);
                        }
                        Ok::<_, AgentError>(())
                    };
                    // Calls that ignore cancellation are dropped after the grace period.
                    if let Ok(done) = tokio::time::timeout(grace, drain).await {
                        done?;
                    }
                    break;
                }
                next = running.next() => match next {
                    Some((i, out)) => results[i] = Some(out?),
                    None => break,
                },
            }
        }
        Ok((results, stopped))
    }

    async fn run_call(
        &self,
        call: &PendingCall,
        tools: &[HostedTool],
        offer: &Mutex<Offer>,
        room: ResultRoom,
        permits: Arc<Semaphore>,
    ) -> Result<ToolOutput, AgentError> {
        let started = Instant::now();
        if lock(offer).is_search(&call.name) {
            // Reads the tools' own descriptions, nothing outside: no approval, no cap.
            let vector = self.query_vector(&call.arguments, tools, offer).await;
            let output = match lock(offer).search(tools, &call.arguments, vector.as_deref()) {
                Ok(found) => ToolOutput::text(found),
                Err(why) => ToolOutput::error(why),
            };
            return self.record(call, ToolCallStatus::Done, output, ToolOutcome::Ran, started, None);
        }
        if call.name == READ_TOOL && self.offers_read() {
            // Reads what a call of this conversation already returned: no approval, no cap.
            let output = self.read_result(call.arguments.clone(), room).await?;
            return self.record(call, ToolCallStatus::Done, output, ToolOutcome::Ran, started, None);
        }
        let (tool, invocation) = match self.prepare(call, tools, offer).await? {
            Err((outcome, refused)) => {
                return self.record(call, ToolCallStatus::Done, refused, outcome, started, None);
            }
            Ok(ready) => ready,
        };
        let _permit = tokio::select! {
            () = self.cancel.cancelled() => {
                let output = ToolOutput::error("The call was stopped before it started.");
                return self.record(call, ToolCallStatus::Cancelled, output, ToolOutcome::Cancelled, started, None);
            }
            permit = permits.acquire_owned() => permit,
        };
        self.writer.tool_running(call.row)?;
        self.emit(AgentEvent::ToolRunning { call_id: call.id.clone() });
        let started = Instant::now();
        let token = self.cancel.child_token();
        let events = ToolEvents::new(call.id.clone(), self.tx.clone());
        let limit = tool.timeout.unwrap_or(self.limits.tool_timeout);
        let (output, outcome) =
            match tokio::time::timeout(limit, self.tools.call_tool(invocation, events, token.clone())).await {
                Ok(output) => (output, ToolOutcome::Ran),
                Err(_) => {
                    token.cancel();
                    let text = format!("The tool did not answer within {} seconds.", limit.as_secs());
                    (ToolOutput::error(text), ToolOutcome::TimedOut)
                }
            };
        let (output, kept) = self.size(call, output, room).await?;
        if self.cancel.is_cancelled() {
            return self.record(call, ToolCallStatus::Cancelled, output, ToolOutcome::Cancelled, started, kept);
        }
        self.record(call, ToolCallStatus::Done, output, outcome, started, kept)
    }

    /// Whether [`READ_TOOL`] is offered: the conversation keeps a cut result, and the turn has tools.
    fn offers_read(&self) -> bool {
        self.reading.load(Ordering::Relaxed) && self.selection != ToolSelection::None
    }

    /// Cuts `output` to `room`, keeping the whole of it with the conversation when it is cut.
    /// Counting, cutting and writing up to 10 MB run on a blocking thread.
    async fn size(
        &self,
        call: &PendingCall,
        output: ToolOutput,
        room: ResultRoom,
    ) -> Result<(ToolOutput, Option<KeptResult>), AgentError> {
        let (conversations, conversation, row) = (self.conversations.clone(), self.conversation, call.row);
        let sized = blocking(move || {
            let Some(cut) = Cut::of(&output, room) else { return Ok((output, None)) };
            let kept = conversations.keep_result(conversation, row, &cut.whole, cut.sent_chars())?;
            Ok((cut.for_model(&kept, output.is_error), Some(kept)))
        })
        .await?;
        if sized.1.is_some() {
            self.reading.store(true, Ordering::Relaxed);
        }
        Ok(sized)
    }

    /// Answers a [`READ_TOOL`] call from the conversation's kept results, on a blocking thread
    /// (it reads up to 10 MB).
    async fn read_result(&self, arguments: String, room: ResultRoom) -> Result<ToolOutput, AgentError> {
        let (conversations, conversation) = (self.conversations.clone(), self.conversation);
        blocking(move || {
            let (number, range) = match results::parse_read(&arguments) {
                Ok(asked) => asked,
                Err(why) => return Ok(ToolOutput::error(why)),
            };
            let kept = match conversations.kept_result(conversation, number) {
                Ok(kept) => kept,
                Err(ConversationError::NoKeptResult { .. }) => {
                    return Ok(ToolOutput::error(format!("This conversation keeps no result {number}.")));
                }
                Err(e) => return Err(e.into()),
            };
            Ok(results::read(&kept, range, room).map_or_else(ToolOutput::error, ToolOutput::text))
        })
        .await
    }

    /// The vector of a search's query, when the knowledge base has an embedding model (and it
    /// reads the query's script); the first search embeds the tools too. `None`: by words alone.
    async fn query_vector(&self, arguments: &str, tools: &[HostedTool], offer: &Mutex<Offer>) -> Option<Vec<f32>> {
        let embedder = self.tool_embedder.as_ref()?;
        let query = lock(offer)
            .search_query(arguments)
            .filter(|q| !embedder.english_only() || crate::text::analyze::is_latin(q))?;
        let with_tools = lock(offer).lacks_vectors();
        let mut texts: Vec<String> =
            if with_tools { tools.iter().map(tool_search::embedding_text).collect() } else { Vec::new() };
        texts.push(query);
        match tool_search::embed_within(embedder.as_ref(), &texts, &self.cancel).await {
            Ok(mut vectors) if vectors.len() == texts.len() => {
                let query = vectors.pop();
                if with_tools {
                    lock(offer).set_vectors(vectors);
                }
                query
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!("tool search goes by words for this query: {e}");
                None
            }
        }
    }

    /// Finds the tool, parses the arguments and asks for approval. `Ok(Err(_))`
    /// is a refusal the model reads as the call's result.
    async fn prepare<'t>(
        &self,
        call: &PendingCall,
        tools: &'t [HostedTool],
        offer: &Mutex<Offer>,
    ) -> Result<Result<(&'t HostedTool, ToolInvocation), (ToolOutcome, ToolOutput)>, AgentError> {
        let Some(tool) = tools.iter().find(|t| t.spec.name == call.name) else {
            // The tools sent, not all of them: with tool search on, the rest are found by searching.
            let names: Vec<String> = lock(offer).specs(tools).into_iter().map(|s| s.name).collect();
            let known = if names.is_empty() { "none".to_owned() } else { names.join(", ") };
            let mut text = format!("There is no tool named {:?}. Available tools: {known}.", call.name);
            if names.iter().any(|n| n == SEARCH_TOOL) {
                text.push_str(&format!(" Call {SEARCH_TOOL} to find the others."));
            }
            return Ok(Err((ToolOutcome::Refused, ToolOutput::error(text))));
        };
        let arguments = match parse_arguments(&call.arguments) {
            Ok(arguments) => arguments,
            Err(reason) => return Ok(Err((ToolOutcome::Refused, ToolOutput::error(reason)))),
        };
        let cap = self.limits.max_tool_calls;
        if self.tool_calls.fetch_add(1, Ordering::Relaxed) >= cap {
            let text = format!(
                "This turn has made {cap} tool calls, the most one turn may make (the per-turn cap); this call was \
                 not made. The cap resets with the user's next message: answer now with what you have."
            );
            return Ok(Err((ToolOutcome::Refused, ToolOutput::error(text))));
        }
        let allowed = match (tool.approval, &self.policy) {
            (ApprovalMode::Deny, _) => {
                let text = format!("The user's settings do not allow {}/{} to run.", tool.server, tool.tool);
                return Ok(Err((ToolOutcome::Refused, ToolOutput::error(text))));
            }
            (ApprovalMode::Allow, _) => true,
            (ApprovalMode::Ask, ApprovalPolicy::AutoApprove) if !tool.strict => true,
            (ApprovalMode::Ask, ApprovalPolicy::Deny { reason }) => {
                let text = format!("The call was not approved: {reason}");
                return Ok(Err((ToolOutcome::Declined, ToolOutput::error(text))));
            }
            (ApprovalMode::Ask, ApprovalPolicy::Unattended { allowed }) => {
                let name = format!("{}/{}", tool.server, tool.tool);
                if tool.strict || !allowed.contains(&name) {
                    let why = if tool.strict { "its server is strict" } else { "the schedule does not allow it" };
                    let text = format!(
                        "The call was not approved: this is a scheduled run with nobody to approve {name}, which \
                         needs approval, and {why}."
                    );
                    return Ok(Err((ToolOutcome::Declined, ToolOutput::error(text))));
                }
                true
            }
            // At strict every call is asked, even where a grant is stored
            // (made before the server's level became strict) and even when
            // the run approves everything else.
            (ApprovalMode::Ask, ApprovalPolicy::Ask | ApprovalPolicy::AutoApprove) => {
                (!tool.strict && self.conversations.has_grant(self.conversation, &tool.pin)?)
                    || self.ask(call, tool, &arguments).await?
            }
        };
        if !allowed {
            return Ok(Err((ToolOutcome::Declined, ToolOutput::error("The user declined this call."))));
        }
        let invocation = ToolInvocation {
            call_id: call.id.clone(),
            conversation: self.conversation,
            name: call.name.clone(),
            server: tool.server.clone(),
            tool: tool.tool.clone(),
            arguments,
            pin: tool.pin.clone(),
        };
        Ok(Ok((tool, invocation)))
    }

    async fn ask(
        &self,
        call: &PendingCall,
        tool: &HostedTool,
        arguments: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<bool, AgentError> {
        let id = self.next_approval.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        lock(&self.approvals).insert(id, tx);
        self.emit(AgentEvent::ApprovalNeeded {
            approval_id: id,
            call_id: call.id.clone(),
            name: call.name.clone(),
            server: tool.server.clone(),
            tool: tool.tool.clone(),
            arguments: serde_json::Value::Object(arguments.clone()),
            strict: tool.strict,
        });
        let decision = tokio::select! {
            () = self.cancel.cancelled() => ApprovalDecision::Deny,
            answer = rx => answer.unwrap_or(ApprovalDecision::Deny),
        };
        lock(&self.approvals).remove(&id);
        match decision {
            ApprovalDecision::AllowOnce => Ok(true),
            // At strict nothing is remembered: the call runs this once.
            ApprovalDecision::AllowForConversation if tool.strict => Ok(true),
            ApprovalDecision::AllowForConversation => {
                self.conversations.grant(self.conversation, &tool.pin)?;
                Ok(true)
            }
            ApprovalDecision::Deny => Ok(false),
        }
    }

    fn record(
        &self,
        call: &PendingCall,
        status: ToolCallStatus,
        output: ToolOutput,
        outcome: ToolOutcome,
        started: Instant,
        kept: Option<KeptResult>,
    ) -> Result<ToolOutput, AgentError> {
        let duration = started.elapsed();
        let ms = i64::try_from(duration.as_millis()).unwrap_or(i64::MAX);
        self.writer.finish_tool_call(call.row, status, &output.content, output.is_error, ms)?;
        self.emit(AgentEvent::ToolResult {
            call_id: call.id.clone(),
            content: output.content.clone(),
            is_error: output.is_error,
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            outcome,
            kept,
        });
        Ok(output)
    }
}

/// Parses a call's arguments: a JSON object, or nothing (no arguments).
fn parse_arguments(text: &str) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    if text.trim().is_empty() {
        return Ok(serde_json::Map::new());
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "The arguments must be a JSON object, not {}. Call the tool again with an object.",
            match other {
                serde_json::Value::Array(_) => "an array",
                serde_json::Value::String(_) => "a string",
                serde_json::Value::Number(_) => "a number",
                serde_json::Value::Bool(_) => "a boolean",
                _ => "null",
            }
        )),
        Err(e) => Err(format!("The arguments are not valid JSON ({e}). Call the tool again with a valid JSON object.")),
    }
}

/// Runs `work` on a blocking thread; a panic there is a panic here (the task is cancelled
/// only when the runtime shuts down, and then nothing waits for it).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, AgentError> + Send + 'static,
) -> Result<T, AgentError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// Waits for the text flush in flight, if any, and returns its result.
async fn settle(
    flushing: &mut Option<tokio::task::JoinHandle<Result<(), ConversationError>>>,
) -> Result<(), AgentError> {
    let Some(handle) = flushing.take() else { return Ok(()) };
    match handle.await {
        Ok(result) => Ok(result?),
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // Cancelled: only when the runtime shuts down, and nothing is left to write to then.
        Err(_) => Ok(()),
    }
}
