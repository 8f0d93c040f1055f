//! `patchbay ask "message"`: one turn, streamed to the terminal.
//!
//! The answer goes to stdout as it arrives; tool calls, results, approvals
//! and notes go to stderr, so `patchbay ask … > answer.md` keeps only the
//! answer. Without `--auto-approve`, calls that need approval are asked on
//! the terminal; with no terminal they are denied and the model is told.
//! A strict server's calls are asked even with `--auto-approve`. With
//! `--json`, stdout is JSON Lines for scripts instead: each event of the turn
//! as it happens, then one `"type": "answer"` object with the whole answer
//! and every call the turn made.
//! Ctrl-C stops the turn and keeps the partial answer. Servers' sampling and
//! elicitation requests are asked on the terminal too (see `requests.rs`);
//! sampling runs on the turn's provider and model. `chat` reuses
//! [`Session`] and [`Session::turn`].

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, ValueEnum};
use patchbay_core::agent::{
    Agent, ApprovalDecision, ApprovalPolicy, BUILTIN_SERVER, ModelChoice, ProviderSource, Retriever, Sampling,
    ToolEmbedder, ToolHost, ToolSelection, TurnAction, TurnLimits, TurnRequest, resolve_provider,
};
use patchbay_core::assistants::{Assistant, AssistantStore, DEFAULT_ASSISTANT, KnowledgeLimits, KnowledgeMode};
use patchbay_core::attach;
use patchbay_core::conversations::{Attachment, ConversationId, ConversationStore};
use patchbay_core::host::turn::{DoneReason, ErrorView};
use patchbay_core::host::{Host, HostTurn, TurnAnswers, TurnEvent};
use patchbay_core::llm::{ContentPart, ReasoningEffort};
use patchbay_core::mcp::ServerStatus;
use patchbay_core::paths::DataDir;
use patchbay_core::rag::{ChatKnowledge, chat};

use crate::model::provider_for;
use crate::requests::{Refusals, SamplingModel, TerminalRequests};

/// Options shared by `ask` and `chat`.
#[derive(Debug, Args)]
pub struct TurnArgs {
    /// Provider profile name (default: the assistant's, else the first configured).
    #[arg(long)]
    provider: Option<String>,
    /// Model id (default: the assistant's, else the provider's default model).
    #[arg(long)]
    model: Option<String>,
    /// Assistant preset.
    #[arg(long, default_value = DEFAULT_ASSISTANT)]
    assistant: String,
    /// Continue this conversation instead of starting a new one.
    #[arg(long, value_name = "ID")]
    conversation: Option<ConversationId>,
    /// Use only these MCP servers (comma-separated names; disabled ones included).
    /// Built-in tools stay offered.
    #[arg(long, value_delimiter = ',', value_name = "NAMES", conflicts_with = "no_tools")]
    servers: Option<Vec<String>>,
    /// Offer no tools to the model (and start no MCP server but those of the knowledge sources).
    #[arg(long)]
    no_tools: bool,
    /// Run tool calls without asking (a strict server's calls are still asked).
    #[arg(long)]
    auto_approve: bool,
    /// Knowledge base: `auto` adds cited passages before the model answers, `tool` offers the
    /// `knowledge_search` tool, `both` does both (default: the assistant's setting).
    #[arg(long, value_enum, value_name = "MODE")]
    kb: Option<KbChoice>,
    /// How hard a reasoning model thinks, or `off` (default: the assistant's setting, else the model's).
    #[arg(long, value_enum, value_name = "EFFORT")]
    reasoning: Option<EffortChoice>,
}

/// `--reasoning`: [`ReasoningEffort`].
#[derive(Debug, Clone, Copy, ValueEnum)]
enum EffortChoice {
    Off,
    Low,
    Medium,
    High,
}

impl From<EffortChoice> for ReasoningEffort {
    fn from(c: EffortChoice) -> Self {
        match c {
            EffortChoice::Off => Self::Off,
            EffortChoice::Low => Self::Low,
            EffortChoice::Medium => Self::Medium,
            EffortChoice::High => Self::High,
        }
    }
}

/// `--kb`: the names the issue and the CLI use for [`KnowledgeMode`].
#[derive(Debug, Clone, Copy, ValueEnum)]
enum KbChoice {
    Off,
    Auto,
    Tool,
    Both,
}

impl From<KbChoice> for KnowledgeMode {
    fn from(c: KbChoice) -> Self {
        match c {
            KbChoice::Off => Self::Off,
            KbChoice::Auto => Self::Context,
            KbChoice::Tool => Self::Tool,
            KbChoice::Both => Self::Both,
        }
    }
}

#[derive(Debug, Args)]
pub struct AskArgs {
    #[command(flatten)]
    turn: TurnArgs,
    /// Attach a file (repeatable): PNG, JPEG, GIF or WebP images and audio (by extension, up to
    /// 10 MB) go to the model as they are; PDF, Word, HTML, Markdown, code and text files (up to
    /// 20 MB) go as their text, read as the knowledge base reads them.
    #[arg(long = "attach", value_name = "FILE")]
    attach: Vec<PathBuf>,
    /// Print JSON Lines: each event as it happens, then the answer with every call it made.
    #[arg(long)]
    json: bool,
    /// The message.
    message: String,
}

/// Everything needed to run turns from the terminal.
pub struct Session {
    agent: Agent,
    assistant: Assistant,
    model: ModelChoice,
    selection: ToolSelection,
    approval: ApprovalPolicy,
    tools: Arc<dyn ToolHost>,
    retriever: Option<Arc<dyn Retriever>>,
    tool_embedder: Option<Arc<dyn ToolEmbedder>>,
    limits: TurnLimits,
    pub conversation: Option<ConversationId>,
    /// Print each turn as JSON Lines (`ask --json`).
    pub json: bool,
    /// Follows each turn; held also for the built-in `knowledge_search`, which
    /// reads the host's knowledge base (and finds none once the host is gone).
    host: Arc<Host>,
}

/// The knowledge base for `mode` within `limits`; one whose embedder cannot be loaded is reported and left out.
fn open_knowledge(host: &Host, mode: KnowledgeMode, limits: KnowledgeLimits) -> ChatKnowledge {
    if mode == KnowledgeMode::Off {
        return ChatKnowledge::default();
    }
    match host.load_embedder() {
        Ok(kb) => kb.for_chat(mode, limits, host.registry()),
        Err(e) => {
            eprintln!("note: the knowledge base is not available: {e}");
            ChatKnowledge::default()
        }
    }
}

/// Starts the MCP servers to use (`only` those named, else every enabled one;
/// in parallel, each within its start timeout) next to Patchbay's built-in
/// server (the model sees `knowledge_search` when `knowledge_tool`). Servers
/// that fail are reported on stderr and left out; they never block the turn.
/// A name in `only` that is not configured is an error. The servers in `sources` (the knowledge
/// sources' servers) are started too, whether or not their tools are offered.
async fn start_tools(
    host: &Arc<Host>,
    only: Option<&[String]>,
    sources: &[String],
    knowledge_tool: bool,
    requests: TerminalRequests,
) -> anyhow::Result<Arc<dyn ToolHost>> {
    let configured = host.config().servers()?;
    let servers: Vec<_> = match only {
        None => configured.iter().filter(|s| s.enabled).cloned().collect(),
        Some(names) => {
            let unknown: Vec<&str> =
                names.iter().filter(|n| !configured.iter().any(|s| &s.name == *n)).map(String::as_str).collect();
            if !unknown.is_empty() {
                let known: Vec<&str> = configured.iter().map(|s| s.name.as_str()).collect();
                anyhow::bail!(
                    "--servers: no MCP server named {} (configured: {})",
                    unknown.join(", "),
                    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
                );
            }
            configured.iter().filter(|s| names.contains(&s.name)).cloned().collect()
        }
    };
    let started: Vec<_> = configured
        .into_iter()
        .filter(|s| servers.iter().any(|t| t.name == s.name) || (s.enabled && sources.contains(&s.name)))
        .collect();
    host.configure(started.clone(), Arc::new(requests));
    host.share_roots().await?;
    host.attach_builtin();
    let registry = host.registry();
    registry.start_all().await;
    let longest = started.iter().map(|s| s.timeouts.startup_secs).max().unwrap_or(10);
    registry.wait_settled(Duration::from_secs(longest + 5)).await;
    for server in registry.snapshot() {
        if let ServerStatus::Failed { reason } = &server.status {
            eprintln!("note: MCP server {} is not available: {reason}", server.name);
        }
    }
    Ok(Arc::new(host.tools(servers, knowledge_tool)?))
}

/// A scheduled run: nobody to ask (`ApprovalPolicy::Unattended`), servers' requests refused and noted.
pub struct Unattended {
    /// The tools (`server/tool`) that run although they ask for approval.
    pub allowed: std::collections::BTreeSet<String>,
    pub refused: Refusals,
}

impl TurnArgs {
    /// What a scheduled run uses: `assistant`'s provider, model, tools and knowledge.
    pub fn for_assistant(assistant: &str) -> Self {
        Self {
            provider: None,
            model: None,
            assistant: assistant.to_owned(),
            conversation: None,
            servers: None,
            no_tools: false,
            auto_approve: false,
            kb: None,
            reasoning: None,
        }
    }
}

impl Session {
    /// Opens the data directory and resolves assistant, provider and model.
    pub async fn open(dir: &DataDir, args: &TurnArgs) -> anyhow::Result<Self> {
        Self::open_as(dir, args, None).await
    }

    /// [`Session::open`], for a scheduled run when `unattended` is given.
    pub async fn open_as(dir: &DataDir, args: &TurnArgs, unattended: Option<Unattended>) -> anyhow::Result<Self> {
        let (host, opened) = crate::open_host(dir)?;
        if opened.interrupted > 0 {
            eprintln!(
                "note: {} earlier answer(s) were cut off when Patchbay stopped; marked interrupted",
                opened.interrupted
            );
        }
        let store = host.store().clone();
        let assistant = AssistantStore::new(store.clone()).get(&args.assistant)?;
        let limits = host.turn_limits()?;
        let requested = args.provider.as_deref().or(assistant.provider.as_deref());
        let secrets = host.secrets().as_ref();
        let resolved = resolve_provider(host.config(), secrets, requested, &|k| std::env::var(k).ok())?;
        if let ProviderSource::Environment { variable, .. } = resolved.source {
            eprintln!(
                "note: no provider is configured; using {variable} from the environment ({})",
                resolved.profile.base_url
            );
        }
        let model = args
            .model
            .clone()
            .or_else(|| assistant.model.clone())
            .filter(|m| !m.is_empty())
            .or_else(|| Some(resolved.profile.default_model.clone()).filter(|m| !m.is_empty()))
            .with_context(|| match resolved.source {
                ProviderSource::Environment { variable, model_variable } => format!(
                    "{variable} is set but no model is: pass --model MODEL, or set {model_variable} (for Ark, the \
                     model's name, e.g. doubao-seed-1-6-250615, or an endpoint id ep-…)"
                ),
                ProviderSource::Configured => {
                    format!("provider {} has no default model: pass --model", resolved.profile.name)
                }
            })?;
        let provider = provider_for(&resolved, secrets)?;
        let knowledge = args.kb.map_or(assistant.knowledge, KnowledgeMode::from);
        let ChatKnowledge { retriever, tool: kb_tool } = open_knowledge(&host, knowledge, assistant.knowledge_limits);
        let offer_kb = kb_tool.is_some();
        // `--no-tools` starts no configured server but the knowledge sources'; the built-in one is in
        // process and cheap.
        let only = if args.no_tools { Some(&[][..]) } else { args.servers.as_deref() };
        let sampling = SamplingModel {
            provider: provider.clone(),
            provider_name: resolved.profile.name.clone(),
            model: model.clone(),
        };
        let requests = match &unattended {
            Some(u) => TerminalRequests::unattended(u.refused.clone()),
            None => TerminalRequests::new(Ok(sampling)),
        };
        // The knowledge sources' servers run whether or not their tools are offered.
        let sources: Vec<String> = if knowledge.retrieves() {
            host.kb().sources().map(|s| s.into_iter().map(|s| s.server).collect()).unwrap_or_default()
        } else {
            Vec::new()
        };
        let tools = start_tools(&host, only, &sources, offer_kb, requests).await?;
        let mut selection = match &args.servers {
            _ if args.no_tools => ToolSelection::None,
            Some(names) => ToolSelection::Only {
                servers: names.iter().cloned().chain([BUILTIN_SERVER.to_owned()]).collect(),
                tools: Default::default(),
            },
            None => assistant.tools.clone(),
        };
        if offer_kb {
            selection = chat::offer_tool(selection);
        }
        let conversations = ConversationStore::new(store);
        if let Some(id) = args.conversation {
            conversations.get(id)?;
        }
        let approval = if let Some(u) = unattended {
            ApprovalPolicy::Unattended { allowed: u.allowed }
        } else if args.auto_approve {
            ApprovalPolicy::AutoApprove
        } else if std::io::stdin().is_terminal() {
            ApprovalPolicy::Ask
        } else {
            ApprovalPolicy::Deny { reason: "there is no terminal to ask the user (use --auto-approve)".into() }
        };
        Ok(Self {
            selection,
            limits,
            model: ModelChoice {
                provider,
                provider_name: resolved.profile.name.clone(),
                sampling: Sampling {
                    reasoning: args.reasoning.map(Into::into).or(assistant.sampling.reasoning),
                    ..assistant.sampling
                },
                context_window: resolved.context_window(&model),
                model,
            },
            agent: Agent::new(conversations),
            assistant,
            approval,
            tools,
            retriever,
            tool_embedder: host.tool_embedder(),
            conversation: args.conversation,
            json: false,
            host,
        })
    }

    /// Sends one message with its attachments and prints the turn; returns how it ended and what it did.
    pub async fn turn(
        &mut self,
        message: &str,
        attachments: Vec<Attachment>,
    ) -> anyhow::Result<(DoneReason, TurnReport)> {
        let conversations = self.agent.conversations();
        let conversation = match self.conversation {
            Some(id) => id,
            None => conversations.create(message, Some(&self.assistant.name), None)?.id,
        };
        self.conversation = Some(conversation);
        let turn = self.agent.start(TurnRequest {
            conversation,
            action: TurnAction::Send { text: message.to_owned(), attachments },
            model: self.model.clone(),
            system_prompt: Some(self.assistant.system_prompt.clone()),
            tools: self.tools.clone(),
            selection: self.selection.clone(),
            approval: self.approval.clone(),
            retriever: self.retriever.clone(),
            tool_embedder: self.tool_embedder.clone(),
            limits: self.limits,
        })?;
        let mut report = TurnReport { conversation: conversation.to_string(), ..Default::default() };
        let reason = print_turn(self.host.watch(turn), &mut report, self.json).await;
        if self.json {
            println!("{}", report.answer(reason));
        }
        Ok((reason, report))
    }
}

/// What a turn did: the answer and every call it made (what `--json` prints last).
#[derive(Default)]
pub struct TurnReport {
    conversation: String,
    text: String,
    /// Why the turn failed, when it did.
    pub error: Option<ErrorView>,
    /// By call id, in the order the calls were made.
    calls: Vec<(String, serde_json::Value)>,
}

impl TurnReport {
    /// The calls that were not approved, as `server/tool`.
    pub fn denied(&self) -> Vec<String> {
        let field = |c: &serde_json::Value, k: &str| c.get(k).and_then(|v| v.as_str()).unwrap_or("").to_owned();
        self.calls
            .iter()
            .filter(|(_, c)| field(c, "error") == "denied")
            .map(|(_, c)| format!("{}/{}", field(c, "server"), field(c, "tool")))
            .collect()
    }

    fn note(&mut self, event: &TurnEvent) {
        let mut call = |id: &str, fields: serde_json::Value| {
            let at = match self.calls.iter().position(|(c, _)| c == id) {
                Some(at) => at,
                None => {
                    self.calls.push((id.to_owned(), serde_json::json!({"call_id": id})));
                    self.calls.len() - 1
                }
            };
            if let (serde_json::Value::Object(into), serde_json::Value::Object(from)) = (&mut self.calls[at].1, fields)
            {
                into.extend(from);
            }
        };
        match event {
            TurnEvent::TextDelta { text } => self.text.push_str(text),
            TurnEvent::Error { error } => self.error = Some(error.clone()),
            TurnEvent::ToolCallStarted { call_id, server, tool, arguments, .. } => {
                call(call_id, serde_json::json!({"server": server, "tool": tool, "arguments": arguments}))
            }
            TurnEvent::ToolResult { call_id, result, duration_ms } => {
                let text: Vec<&str> = result
                    .content
                    .iter()
                    .filter_map(|p| if let ContentPart::Text { text } = p { Some(text.as_str()) } else { None })
                    .collect();
                let error = result.is_error.then(|| text.join("\n"));
                call(
                    call_id,
                    serde_json::json!({"result": text.join("\n"), "elapsed_ms": duration_ms, "success": !result.is_error,
                                       "error": error}),
                )
            }
            TurnEvent::ToolFailed { call_id, error, duration_ms, .. } => call(
                call_id,
                serde_json::json!({"result": null, "elapsed_ms": duration_ms, "success": false, "error": error}),
            ),
            TurnEvent::ToolDenied { call_id } => {
                call(call_id, serde_json::json!({"result": null, "success": false, "error": "denied"}))
            }
            TurnEvent::ToolCancelled { call_id } => {
                call(call_id, serde_json::json!({"result": null, "success": false, "error": "cancelled"}))
            }
            _ => {}
        }
    }

    fn answer(&self, reason: DoneReason) -> serde_json::Value {
        serde_json::json!({
            "type": "answer",
            "conversation": self.conversation,
            "text": self.text,
            "reason": reason,
            "calls": self.calls.iter().map(|(_, c)| c).collect::<Vec<_>>(),
        })
    }
}

/// Prints a turn's events until it is done (as JSON Lines with `json`), noting
/// them in `report`; Ctrl-C stops it.
async fn print_turn(mut turn: HostTurn, report: &mut TurnReport, json: bool) -> DoneReason {
    let answers = turn.answers();
    let stopper = answers.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            stopper.stop();
        }
    });
    let mut reason = DoneReason::Error;
    let mut out = std::io::stdout();
    while let Some(event) = turn.next().await {
        report.note(&event);
        if json {
            match serde_json::to_string(&event) {
                Ok(line) => println!("{line}"),
                Err(e) => eprintln!("note: an event could not be written as JSON: {e}"),
            }
            match event {
                TurnEvent::ApprovalNeeded { call_id, server, tool, arguments, strict } => {
                    approve(&answers, &call_id, &server, &tool, &arguments, strict).await
                }
                TurnEvent::Done { reason: r } => reason = r,
                _ => {}
            }
            continue;
        }
        match event {
            TurnEvent::TextDelta { text } => {
                print!("{text}");
                let _ = out.flush();
            }
            TurnEvent::ReasoningDelta { text } => eprint!("\x1b[2m{text}\x1b[0m"),
            TurnEvent::ToolCallWriting { server, tool, .. } if server.is_empty() => eprintln!("\n[tool] {tool}"),
            TurnEvent::ToolCallWriting { server, tool, .. } => eprintln!("\n[tool] {server}/{tool}"),
            TurnEvent::ToolProgress { progress: p, .. } => {
                crate::show_progress(p.progress, p.total, p.message.as_deref())
            }
            TurnEvent::ToolLog { log, .. } => eprintln!("  [{}] {}", log.level, log.message),
            TurnEvent::ToolResult { result, duration_ms, .. } => {
                let text: String = result
                    .content
                    .iter()
                    .map(|p| match p {
                        ContentPart::Text { text } => text.clone(),
                        other => format!("{other:?}").chars().take(60).collect(),
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                let what = if result.is_error { "error" } else { "result" };
                eprintln!("  → {what} in {duration_ms} ms: {}", short(&text));
                if let Some(kept) = result.kept {
                    eprintln!(
                        "    (the model was sent {} of {} characters; the whole result is kept as result {})",
                        kept.sent_chars, kept.chars, kept.result
                    );
                }
            }
            TurnEvent::ToolFailed { error, stderr_tail, duration_ms, .. } => {
                eprintln!("  → error in {duration_ms} ms: {}", short(&error));
                if let Some(tail) = stderr_tail {
                    eprintln!("  the server's last words:\n{tail}");
                }
            }
            TurnEvent::ToolDenied { .. } => eprintln!("  → denied"),
            TurnEvent::ToolCancelled { .. } => eprintln!("  → cancelled"),
            TurnEvent::ApprovalNeeded { call_id, server, tool, arguments, strict } => {
                approve(&answers, &call_id, &server, &tool, &arguments, strict).await
            }
            TurnEvent::Citations { citations, unavailable } => {
                for c in citations {
                    let lines = c.lines.map(|[a, b]| format!(":{a}-{b}")).unwrap_or_default();
                    let heading = c.heading.as_deref().map(|h| format!(" › {h}")).unwrap_or_default();
                    let origin = c.origin.as_deref().map(|o| format!("{o}: ")).unwrap_or_default();
                    eprintln!("[{}] {origin}{}{lines}{heading}", c.index, c.path);
                }
                for u in unavailable {
                    eprintln!("note: the knowledge source {} gave nothing: {}", u.name, u.why);
                }
            }
            TurnEvent::ContextTrimmed { elided_tool_results, dropped_messages, context_window } => eprintln!(
                "note: to fit the {context_window}-token context window, {elided_tool_results} older tool \
                 results and {dropped_messages} older messages were left out of this request"
            ),
            TurnEvent::ToolSearch { searchable, sent } => eprintln!(
                "note: {sent} tools are sent with each request and {searchable} more are found through \
                 tool search (there are too many to send them all)"
            ),
            TurnEvent::Error { error } => eprintln!("\nerror: {}", error.message),
            TurnEvent::Done { reason: r } => {
                reason = r;
                println!();
                if r == DoneReason::Cancelled {
                    eprintln!("(stopped; the partial answer is saved)");
                }
            }
            _ => {}
        }
    }
    ctrl_c.abort();
    reason
}

/// Asks about one call on the terminal and gives the turn the answer.
async fn approve(
    answers: &TurnAnswers,
    call_id: &str,
    server: &str,
    tool: &str,
    arguments: &serde_json::Value,
    strict: bool,
) {
    let decision = ask_terminal(server, tool, arguments, strict).await;
    if let Err(e) = answers.answer(call_id, decision) {
        eprintln!("note: {e}");
    }
}

/// The first 200 characters of a tool's answer.
fn short(text: &str) -> String {
    text.chars().take(200).collect()
}

/// Asks about one call; a strict server's calls are asked every time, so
/// "always in this conversation" is not offered for them.
async fn ask_terminal(server: &str, tool: &str, arguments: &serde_json::Value, strict: bool) -> ApprovalDecision {
    if !std::io::stdin().is_terminal() {
        // Only a strict server's call is asked under --auto-approve, and
        // here nobody can answer it.
        eprintln!("Denied {server}/{tool}: {server} is strict, every call is asked, and there is no terminal to ask.");
        return ApprovalDecision::Deny;
    }
    let choices = if strict {
        "[y]es once / [N]o (strict: every call is asked)"
    } else {
        "[y]es once / [a]lways in this conversation / [N]o"
    };
    eprint!("Allow {server}/{tool} with {arguments}? {choices}: ");
    let _ = std::io::stderr().flush();
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await;
    match line.ok().and_then(Result::ok).as_deref().map(str::trim) {
        Some("y" | "Y" | "yes") => ApprovalDecision::AllowOnce,
        Some("a" | "A" | "always") if !strict => ApprovalDecision::AllowForConversation,
        _ => ApprovalDecision::Deny,
    }
}

pub fn run(dir: &DataDir, args: &AskArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(async {
        let attachments = args.attach.iter().map(|p| attach::file(p)).collect::<Result<Vec<_>, _>>()?;
        let mut session = Session::open(dir, &args.turn).await?;
        session.json = args.json;
        let (status, _) = session.turn(&args.message, attachments).await?;
        if let Some(id) = session.conversation {
            eprintln!("conversation {id}");
        }
        Ok(match status {
            DoneReason::Stop | DoneReason::Cancelled => ExitCode::SUCCESS,
            _ => ExitCode::FAILURE,
        })
    })
}
