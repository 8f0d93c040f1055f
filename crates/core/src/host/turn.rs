//! One turn as every front end sees it: the agent's events become
//! [`TurnEvent`]s here, for the window and the CLI alike, and approvals are
//! answered by the call's id ([`TurnAnswers`]).
//!
//! A call is shown being written as the model writes it, and its card once
//! its arguments are complete (at approval, start or result); a call that
//! failed because its server went down carries the server's stderr tail. The
//! views a turn's events carry (messages, traces, citations, errors) live
//! here too; `app::views` re-exports them with the rest of the window's.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde::{Deserialize, Serialize};

use super::Host;
use crate::agent::{AgentError, AgentEvent, ApprovalDecision, ApprovalId, ToolOutcome, Turn, TurnControl};
use crate::conversations::{
    FailureKind, KeptResult, Message, MessageId, MessageStatus, Part, Passage, Role, ToolCallRecord, ToolCallStatus,
    Unavailable,
};
use crate::llm::{ContentPart, Usage};
use crate::mcp::{McpRegistry, ServerStatus};

/// What kind of failure an error is, for the UI to choose its action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The data directory cannot be used.
    DataDir,
    /// The database cannot be opened or written.
    Database,
    /// The OS keyring is unavailable or refused access.
    Keyring,
    /// The request itself was wrong.
    InvalidInput,
    /// The thing asked for does not exist.
    NotFound,
    /// Anything else.
    Internal,
    /// The model provider failed.
    Provider,
    /// An MCP server failed.
    Mcp,
    /// Stopped by the user.
    Cancelled,
    /// A time limit passed.
    Timeout,
    /// A turn reached one of its limits (tool rounds, output tokens).
    Limit,
    /// The knowledge base could not be searched.
    Knowledge,
}

impl From<FailureKind> for ErrorKind {
    fn from(kind: FailureKind) -> Self {
        match kind {
            FailureKind::Provider => Self::Provider,
            FailureKind::Storage => Self::Database,
            FailureKind::Config => Self::InvalidInput,
            FailureKind::Limit => Self::Limit,
            FailureKind::Knowledge => Self::Knowledge,
            FailureKind::Internal => Self::Internal,
        }
    }
}

/// An error as the UI shows it: `{kind, message}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct ErrorView {
    pub kind: ErrorKind,
    /// A sentence that says where and why.
    pub message: String,
}

/// Progress of a running tool call.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ProgressView {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// A log message a call produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct LogView {
    pub level: String,
    pub message: String,
}

/// The result of a tool call.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ToolResultView {
    /// What the model was sent.
    pub content: Vec<ContentPart>,
    pub structured_content: Option<serde_json::Value>,
    pub is_error: bool,
    /// The whole result, kept with the conversation, when the model was sent only its start.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub kept: Option<KeptResult>,
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum TraceStatus {
    PendingApproval,
    Running,
    Done,
    Error,
    Cancelled,
    Denied,
}

/// One tool call of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ToolTrace {
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub arguments: serde_json::Value,
    pub status: TraceStatus,
    pub duration_ms: Option<i64>,
    pub progress: Option<ProgressView>,
    pub result: Option<ToolResultView>,
    pub error: Option<String>,
    pub stderr_tail: Option<String>,
    pub logs: Vec<LogView>,
}

/// Arguments as JSON: the parsed object, or the model's text when it is not JSON.
pub(crate) fn arguments_json(text: &str) -> serde_json::Value {
    if text.trim().is_empty() {
        return serde_json::Value::Object(serde_json::Map::new());
    }
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_owned()))
}

fn first_text(content: &[ContentPart]) -> String {
    content
        .iter()
        .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
        .collect::<Vec<_>>()
        .join("\n")
}

impl From<&ToolCallRecord> for ToolTrace {
    fn from(call: &ToolCallRecord) -> Self {
        let content = call.result.clone().unwrap_or_default();
        let status = match call.status {
            ToolCallStatus::Done if call.is_error => TraceStatus::Error,
            ToolCallStatus::Done => TraceStatus::Done,
            ToolCallStatus::Cancelled => TraceStatus::Cancelled,
            // A stored call still pending or running was interrupted.
            ToolCallStatus::Pending | ToolCallStatus::Running => TraceStatus::Error,
        };
        let error = match call.status {
            ToolCallStatus::Done if call.is_error => Some(first_text(&content)),
            ToolCallStatus::Pending | ToolCallStatus::Running => {
                Some("The call was interrupted before it finished (the app stopped).".to_owned())
            }
            _ => None,
        };
        Self {
            call_id: call.call_id.clone(),
            server: call.server.clone().unwrap_or_default(),
            tool: call.tool.clone().unwrap_or_else(|| call.name.clone()),
            arguments: arguments_json(&call.arguments),
            status,
            duration_ms: call.duration_ms,
            progress: None,
            result: call.result.as_ref().map(|content| ToolResultView {
                content: content.clone(),
                structured_content: None,
                is_error: call.is_error,
                kept: call.kept,
            }),
            error,
            stderr_tail: None,
            logs: Vec::new(),
        }
    }
}

/// A knowledge-base passage the answer cites as `[index]`.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct Citation {
    pub index: usize,
    /// The knowledge source it came from, when not the local knowledge base.
    pub origin: Option<String>,
    pub document: String,
    pub path: String,
    /// How relevant the passage is, 0 to 1; `None` when an older Patchbay cited it.
    pub relevance: Option<f64>,
    pub text: String,
    /// Where the question's words are in `text`: `[start, end)` in UTF-16 code units.
    pub marks: Vec<[usize; 2]>,
    /// The headings the passage sits under, outermost first, joined with " > ".
    pub heading: Option<String>,
    /// Its first and last line in the document, 1-based.
    pub lines: Option<[u32; 2]>,
}

/// Numbers passages from 1, in order.
pub(crate) fn citations(passages: &[Passage]) -> Vec<Citation> {
    passages
        .iter()
        .enumerate()
        .map(|(i, p)| Citation {
            index: i + 1,
            origin: p.origin.clone(),
            document: document_title(&p.source),
            path: p.source.clone(),
            relevance: p.relevance.map(f64::from),
            text: p.text.clone(),
            marks: p.marks.clone(),
            heading: p.heading.clone(),
            lines: p.lines.map(|(first, last)| [first, last]),
        })
        .collect()
}

/// The file name of a path or URI, for display.
pub(crate) fn document_title(source: &str) -> String {
    source.rsplit(['/', '\\']).find(|s| !s.is_empty()).unwrap_or(source).to_owned()
}

/// A message on the active branch.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct MessageView {
    pub id: String,
    pub parent_id: Option<String>,
    pub role: Role,
    pub created_at: i64,
    pub text: String,
    pub reasoning: Option<String>,
    /// Attachments of a user message.
    pub parts: Vec<ContentPart>,
    pub tool_calls: Vec<ToolTrace>,
    pub citations: Vec<Citation>,
    /// Knowledge sources that gave this answer no passages, and why.
    pub unavailable: Vec<Unavailable>,
    pub model: Option<String>,
    /// Ids of this message and its siblings, oldest first.
    pub siblings: Vec<String>,
    pub error: Option<ErrorView>,
}

impl MessageView {
    /// The view of a stored message with its siblings.
    pub fn new(m: &Message, siblings: &[MessageId]) -> Self {
        let reasoning: String = m
            .parts
            .iter()
            .filter_map(|p| if let Part::Reasoning { text, .. } = p { Some(text.as_str()) } else { None })
            .collect();
        let tool_calls = m
            .parts
            .iter()
            .filter_map(|p| if let Part::ToolCall { call, .. } = p { Some(call.as_ref().into()) } else { None });
        let parts = m
            .attachments
            .iter()
            .map(|a| match (&a.uri, &a.media) {
                (Some(uri), _) => {
                    ContentPart::ResourceLink { uri: uri.clone(), name: Some(a.title.clone()), mime_type: None }
                }
                (None, Some(_)) => a.to_part(),
                (None, None) => ContentPart::text(format!("{}\n\n{}", a.title, a.text)),
            })
            .collect();
        let error = match m.status {
            // Answers stored before kinds were kept read as the provider's.
            MessageStatus::Error => Some(ErrorView {
                kind: m.error_kind.map_or(ErrorKind::Provider, ErrorKind::from),
                message: m.error.clone().unwrap_or_else(|| "The answer ended with an error.".into()),
            }),
            // Answers a crash cut off were marked interrupted when the store was opened;
            // one still streaming is being written now.
            MessageStatus::Interrupted => Some(ErrorView {
                kind: ErrorKind::Internal,
                message: m.error.clone().unwrap_or_else(|| {
                    "This answer was interrupted when the app stopped; the text up to then is kept.".into()
                }),
            }),
            MessageStatus::RoundLimit => m.error.clone().map(|message| ErrorView { kind: ErrorKind::Limit, message }),
            _ => None,
        };
        Self {
            id: m.id.to_string(),
            parent_id: m.parent_id.map(|p| p.to_string()),
            role: m.role,
            created_at: m.created_at,
            text: m.text.clone(),
            reasoning: Some(reasoning).filter(|r| !r.is_empty()),
            parts,
            tool_calls: tool_calls.collect(),
            citations: citations(&m.citations),
            unavailable: m.unavailable.clone(),
            model: m.model.clone(),
            siblings: siblings.iter().map(ToString::to_string).collect(),
            error,
        }
    }
}

/// Why a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum DoneReason {
    Stop,
    Cancelled,
    Error,
    Length,
}

impl From<MessageStatus> for DoneReason {
    fn from(s: MessageStatus) -> Self {
        match s {
            MessageStatus::Complete | MessageStatus::Streaming => Self::Stop,
            MessageStatus::Stopped => Self::Cancelled,
            MessageStatus::Error | MessageStatus::Interrupted => Self::Error,
            MessageStatus::RoundLimit => Self::Length,
        }
    }
}

/// One event of a turn as the chat view receives it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEvent {
    /// First: the stored user message (`None` when regenerating).
    TurnStarted {
        user_message: Option<Box<MessageView>>,
        assistant_message_id: String,
        model: String,
    },
    TextDelta {
        text: String,
    },
    ReasoningDelta {
        text: String,
    },
    /// The model began writing a call; its arguments follow as `ToolArgumentsDelta`s.
    ToolCallWriting {
        call_id: String,
        server: String,
        tool: String,
    },
    /// More of a call's arguments as the model writes them (JSON text).
    ToolArgumentsDelta {
        call_id: String,
        delta: String,
    },
    /// A call's arguments are complete: its card, with them parsed, in the
    /// state it is in (waiting for approval, or running).
    ToolCallStarted {
        call_id: String,
        server: String,
        tool: String,
        arguments: serde_json::Value,
        status: TraceStatus,
    },
    /// A call waits for the user's answer ([`TurnAnswers::answer`]); its card came first.
    ApprovalNeeded {
        call_id: String,
        server: String,
        tool: String,
        arguments: serde_json::Value,
        /// The server runs at strict: only "allow once" and "deny" are offered.
        strict: bool,
    },
    ToolRunning {
        call_id: String,
    },
    ToolProgress {
        call_id: String,
        progress: ProgressView,
    },
    ToolLog {
        call_id: String,
        log: LogView,
    },
    ToolResult {
        call_id: String,
        result: ToolResultView,
        duration_ms: u64,
    },
    ToolFailed {
        call_id: String,
        error: String,
        stderr_tail: Option<String>,
        duration_ms: u64,
    },
    ToolCancelled {
        call_id: String,
    },
    ToolDenied {
        call_id: String,
    },
    Citations {
        citations: Vec<Citation>,
        /// Knowledge sources that gave no passages, and why.
        unavailable: Vec<Unavailable>,
    },
    /// Not every tool fits the model's context: `sent` go with each request,
    /// the other `searchable` are found through tool search.
    ToolSearch {
        searchable: usize,
        sent: usize,
    },
    /// Older history was shortened to fit the model's context window.
    ContextTrimmed {
        /// Tool results replaced by a short note.
        elided_tool_results: usize,
        /// Whole older messages left out.
        dropped_messages: usize,
        /// The context window it had to fit.
        context_window: u32,
    },
    Usage {
        usage: Usage,
    },
    Error {
        error: ErrorView,
    },
    /// Always last.
    Done {
        reason: DoneReason,
    },
}

impl Host {
    /// Follows `turn`, one of this host's: its events as [`TurnEvent`]s.
    pub fn watch(&self, turn: Turn) -> HostTurn {
        let answers = TurnAnswers { control: turn.control(), waiting: Arc::default() };
        HostTurn {
            turn,
            mapper: EventMapper { registry: self.registry.clone(), pending: HashMap::new() },
            ready: VecDeque::new(),
            answers,
        }
    }
}

/// A running turn's events as the front ends receive them.
pub struct HostTurn {
    turn: Turn,
    mapper: EventMapper,
    /// Events mapped and not yet handed on (one agent event can become two).
    ready: VecDeque<TurnEvent>,
    answers: TurnAnswers,
}

impl HostTurn {
    /// Stops the turn and answers its approvals, from anywhere.
    pub fn answers(&self) -> TurnAnswers {
        self.answers.clone()
    }

    /// The user message this turn answers.
    pub fn user_message_id(&self) -> MessageId {
        self.turn.user_message_id()
    }

    /// The assistant message this turn writes.
    pub fn assistant_message_id(&self) -> MessageId {
        self.turn.assistant_message_id()
    }

    /// The next event; `None` after [`TurnEvent::Done`].
    pub async fn next(&mut self) -> Option<TurnEvent> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Some(event);
            }
            let event = self.turn.next().await?;
            // Answerable before any of its events (the card comes first) is handed out.
            if let AgentEvent::ApprovalNeeded { approval_id, call_id, server, tool, strict, .. } = &event {
                let call = WaitingCall { server: server.clone(), tool: tool.clone(), strict: *strict };
                lock(&self.answers.waiting).insert(call_id.clone(), (*approval_id, call));
            }
            self.ready.extend(self.mapper.map(event));
        }
    }
}

/// Stops a turn and answers the approvals it waits for, by the call's id. Cheap to clone.
#[derive(Clone)]
pub struct TurnAnswers {
    control: TurnControl,
    waiting: Arc<Mutex<HashMap<String, (ApprovalId, WaitingCall)>>>,
}

/// A call that waits for the user's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitingCall {
    pub server: String,
    pub tool: String,
    /// The server runs at strict, where no answer is remembered.
    pub strict: bool,
}

impl TurnAnswers {
    /// Stops the turn; the partial answer is kept, marked stopped.
    pub fn stop(&self) {
        self.control.stop();
    }

    /// The call `call_id`, while it waits for an answer.
    pub fn waiting(&self, call_id: &str) -> Option<WaitingCall> {
        lock(&self.waiting).get(call_id).map(|(_, call)| call.clone())
    }

    /// Answers the [`TurnEvent::ApprovalNeeded`] of call `call_id`.
    pub fn answer(&self, call_id: &str, decision: ApprovalDecision) -> Result<(), AgentError> {
        let (approval, _) = lock(&self.waiting)
            .remove(call_id)
            .ok_or_else(|| AgentError::NoApprovalFor { call_id: call_id.to_owned() })?;
        self.control.answer(approval, decision)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Turns the agent's events into [`TurnEvent`]s, keeping each call as the model wrote it.
struct EventMapper {
    registry: McpRegistry,
    /// The turn's calls by id.
    pending: HashMap<String, PendingCard>,
}

/// A call as the model wrote it, and whether its card was shown.
struct PendingCard {
    server: String,
    tool: String,
    arguments: String,
    shown: bool,
}

impl EventMapper {
    fn map(&mut self, event: AgentEvent) -> Vec<TurnEvent> {
        match event {
            AgentEvent::TextDelta { text } => vec![TurnEvent::TextDelta { text }],
            AgentEvent::ReasoningDelta { text } => vec![TurnEvent::ReasoningDelta { text }],
            AgentEvent::ToolCallStarted { call_id, name, server, tool } => {
                let card = PendingCard {
                    server: server.unwrap_or_default(),
                    tool: tool.unwrap_or(name),
                    arguments: String::new(),
                    shown: false,
                };
                let writing = TurnEvent::ToolCallWriting {
                    call_id: call_id.clone(),
                    server: card.server.clone(),
                    tool: card.tool.clone(),
                };
                self.pending.insert(call_id, card);
                vec![writing]
            }
            AgentEvent::ToolArgumentsDelta { call_id, delta } => match self.pending.get_mut(&call_id) {
                Some(card) if !card.shown => {
                    card.arguments.push_str(&delta);
                    vec![TurnEvent::ToolArgumentsDelta { call_id, delta }]
                }
                _ => Vec::new(),
            },
            AgentEvent::ApprovalNeeded { call_id, server, tool, arguments, strict, .. } => {
                let mut out = self.card(&call_id, TraceStatus::PendingApproval);
                out.push(TurnEvent::ApprovalNeeded { call_id, server, tool, arguments, strict });
                out
            }
            AgentEvent::ToolRunning { call_id } => {
                let mut out = self.card(&call_id, TraceStatus::Running);
                out.push(TurnEvent::ToolRunning { call_id });
                out
            }
            AgentEvent::ToolProgress { call_id, progress, total, message } => {
                vec![TurnEvent::ToolProgress { call_id, progress: ProgressView { progress, total, message } }]
            }
            AgentEvent::ToolLog { call_id, level, message } => {
                vec![TurnEvent::ToolLog { call_id, log: LogView { level, message } }]
            }
            AgentEvent::ToolResult { call_id, content, is_error, duration_ms, outcome, kept } => {
                let server = self.pending.get(&call_id).map(|card| card.server.clone());
                let mut out = self.card(&call_id, TraceStatus::Running);
                let error = || {
                    content
                        .iter()
                        .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
                        .collect::<Vec<_>>()
                        .join("\n")
                };
                out.push(match outcome {
                    ToolOutcome::Declined => TurnEvent::ToolDenied { call_id },
                    ToolOutcome::Cancelled => TurnEvent::ToolCancelled { call_id },
                    ToolOutcome::Refused | ToolOutcome::TimedOut => {
                        TurnEvent::ToolFailed { call_id, error: error(), stderr_tail: None, duration_ms }
                    }
                    ToolOutcome::Ran if is_error && self.server_down(server.as_deref()) => {
                        let stderr_tail = server.as_deref().and_then(|s| self.stderr_tail(s));
                        TurnEvent::ToolFailed { call_id, error: error(), stderr_tail, duration_ms }
                    }
                    _ => TurnEvent::ToolResult {
                        call_id,
                        result: ToolResultView { content, structured_content: None, is_error, kept },
                        duration_ms,
                    },
                });
                out
            }
            AgentEvent::Citations { passages, unavailable } => {
                vec![TurnEvent::Citations { citations: citations(&passages), unavailable }]
            }
            AgentEvent::Usage { usage } => vec![TurnEvent::Usage { usage }],
            AgentEvent::Error { kind, message, .. } => {
                vec![TurnEvent::Error { error: ErrorView { kind: kind.into(), message } }]
            }
            AgentEvent::ContextTrimmed { elided_tool_results, dropped_messages, context_window, .. } => {
                vec![TurnEvent::ContextTrimmed { elided_tool_results, dropped_messages, context_window }]
            }
            AgentEvent::ToolSearch { searchable, sent } => vec![TurnEvent::ToolSearch { searchable, sent }],
            AgentEvent::Done { status, .. } => vec![TurnEvent::Done { reason: DoneReason::from(status) }],
            AgentEvent::Started { .. } | AgentEvent::Round { .. } => Vec::new(),
        }
    }

    /// The card of a call in `status`, the first time it is needed.
    fn card(&mut self, call_id: &str, status: TraceStatus) -> Vec<TurnEvent> {
        match self.pending.get_mut(call_id) {
            Some(card) if !card.shown => {
                card.shown = true;
                vec![TurnEvent::ToolCallStarted {
                    call_id: call_id.to_owned(),
                    server: card.server.clone(),
                    tool: card.tool.clone(),
                    arguments: arguments_json(&card.arguments),
                    status,
                }]
            }
            _ => Vec::new(),
        }
    }

    fn server_down(&self, server: Option<&str>) -> bool {
        server
            .filter(|s| !s.is_empty())
            .is_some_and(|s| self.registry.status(s).is_ok_and(|status| !matches!(status, ServerStatus::Ready)))
    }

    fn stderr_tail(&self, server: &str) -> Option<String> {
        let lines = self.registry.stderr_tail(server, 20).ok()?;
        Some(lines.join("\n")).filter(|t| !t.is_empty())
    }
}
