//! The chat engine's own cost per streamed token and per tool round, against a floor: the bare
//! async-openai stream over the same connection.
//!
//! An SSE server in this process writes one token per chunk, paced so nothing queues. Per token: from
//! its write to an `AgentEvent::TextDelta` of a real turn (OpenAI provider, SQLite store with its
//! 250 ms flush), against a chunk of async-openai's `create_stream`. Per tool round: from a
//! tool-calling answer's last frame to the next request (`current_time` on the built-in server
//! through the registry, every step written), against async-openai sending it at once.
//!
//! `cargo bench -p patchbay-core --bench chat_overhead -- [TOKENS] [ROUNDS]` (defaults 10000 and
//! 200). Prints a Markdown table for docs/BENCHMARKS.md.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use async_openai::Client;
use async_openai::config::OpenAIConfig;
use async_openai::types::chat::{
    ChatCompletionRequestMessage, ChatCompletionRequestUserMessage, ChatCompletionRequestUserMessageContent,
    CreateChatCompletionRequest,
};
use futures::StreamExt;
use patchbay_core::agent::{
    Agent, AgentEvent, ApprovalPolicy, ModelChoice, Sampling, ToolSelection, TurnAction, TurnLimits, TurnRequest,
};
use patchbay_core::builtin;
use patchbay_core::conversations::{AssistantWriter, ConversationStore};
use patchbay_core::llm::{HttpSettings, OpenAiProvider};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::scripted::openai;
use serde_json::json;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};

/// Pause between two token frames, so each token is measured alone.
const GAP: Duration = Duration::from_micros(500);

/// One scripted answer: its frames, and which of them carry a token.
struct Answer {
    frames: Vec<String>,
    tokens: Vec<bool>,
}

/// What the server saw: per answer, when each token frame and the last frame
/// were written; when each request had fully arrived.
#[derive(Default)]
struct Timeline {
    token_sent: Vec<Vec<Instant>>,
    last_frame: Vec<Instant>,
    request_arrived: Vec<Instant>,
}

/// A bare HTTP/1.1 SSE server on its own thread (blocking I/O, so pacing
/// sleeps instead of spinning and the measured side keeps the cores): reads
/// one request per connection, answers with the next scripted answer, closes.
struct Server {
    addr: SocketAddr,
    timeline: Arc<Mutex<Timeline>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept call.
        let _ = std::net::TcpStream::connect(self.addr);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Server {
    fn start(script: Vec<Answer>) -> Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let timeline = Arc::new(Mutex::new(Timeline::default()));
        let stop = Arc::new(AtomicBool::new(false));
        let (shared, stopping) = (timeline.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let mut script = VecDeque::from(script);
            for socket in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    return;
                }
                let result = socket.map_err(anyhow::Error::from).and_then(|s| serve(s, &shared, &mut script));
                if let Err(e) = result {
                    eprintln!("server: {e:#}");
                }
            }
        });
        Ok(Self { addr, timeline, stop, thread: Some(thread) })
    }

    fn base(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    fn timeline(&self) -> std::sync::MutexGuard<'_, Timeline> {
        self.timeline.lock().unwrap_or_else(|p| p.into_inner())
    }
}

fn serve(mut socket: TcpStream, timeline: &Mutex<Timeline>, script: &mut VecDeque<Answer>) -> Result<()> {
    socket.set_nodelay(true)?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let body_start = loop {
        let n = socket.read(&mut chunk)?;
        if n == 0 {
            bail!("connection closed before the request ended");
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(p) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break p + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..body_start]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .context("request without content-length")?;
    while buf.len() < body_start + length {
        let n = socket.read(&mut chunk)?;
        if n == 0 {
            bail!("connection closed inside the body");
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let arrived = Instant::now();
    let answer = script.pop_front().context("script exhausted")?;
    socket.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
    )?;
    let mut sent = Vec::with_capacity(answer.frames.len());
    let mut last = arrived;
    for (frame, is_token) in answer.frames.iter().zip(&answer.tokens) {
        if *is_token {
            std::thread::sleep(GAP);
        }
        last = Instant::now();
        socket.write_all(frame.as_bytes())?;
        if *is_token {
            sent.push(last);
        }
    }
    socket.shutdown(std::net::Shutdown::Write)?;
    let mut t = timeline.lock().unwrap_or_else(|p| p.into_inner());
    t.request_arrived.push(arrived);
    t.token_sent.push(sent);
    t.last_frame.push(last);
    Ok(())
}

/// A text answer of `n` one-token chunks.
fn text_answer(n: usize) -> Answer {
    let mut frames = vec![openai::delta(json!({"role": "assistant", "content": ""}))];
    frames.extend((0..n).map(|i| openai::delta(json!({"content": format!(" w{i}")}))));
    frames.extend([openai::finish("stop"), openai::usage(10, n as u32), openai::done()]);
    let tokens = (0..frames.len()).map(|i| (1..=n).contains(&i)).collect();
    Answer { frames, tokens }
}

/// An answer that calls `current_time`.
fn tool_answer(round: usize) -> Answer {
    let frames = vec![
        openai::delta(json!({"role": "assistant", "content": null})),
        openai::delta(json!({"tool_calls": [{
            "index": 0, "id": format!("call_{round}"), "type": "function",
            "function": {"name": "current_time", "arguments": "{}"}
        }]})),
        openai::finish("tool_calls"),
        openai::usage(20, 7),
        openai::done(),
    ];
    let tokens = vec![false; frames.len()];
    Answer { frames, tokens }
}

fn settings(base: String) -> HttpSettings {
    let mut s = HttpSettings::new("bench", base);
    s.api_key = Some(patchbay_core::secrets::SecretValue::new("sk-bench"));
    s
}

fn open_agent(dir: &tempfile::TempDir) -> Result<(Agent, i64)> {
    let store = Store::open(&DataDir::new(dir.path()))?;
    let conversations = ConversationStore::new(store);
    let conversation = conversations.create("bench", None, None)?.id;
    Ok((Agent::new(conversations), conversation))
}

async fn turn(base: String, conversation: i64, max_rounds: u32, tools: bool) -> Result<TurnRequest> {
    let host = builtin::standalone_tools(Arc::new(MemoryStore::new()), None).await?;
    Ok(TurnRequest {
        conversation,
        action: TurnAction::Send { text: "go".into(), attachments: Vec::new() },
        model: ModelChoice {
            provider: Arc::new(OpenAiProvider::new(settings(base))?),
            provider_name: "bench".into(),
            model: "bench-model".into(),
            sampling: Sampling::default(),
            context_window: None,
        },
        system_prompt: None,
        tools: Arc::new(host),
        selection: if tools { ToolSelection::All } else { ToolSelection::None },
        approval: ApprovalPolicy::AutoApprove,
        retriever: None,
        tool_embedder: None,
        limits: TurnLimits { max_rounds, ..TurnLimits::default() },
    })
}

/// Per-token latency through a full agent turn.
async fn agent_tokens(n: usize) -> Result<Vec<Duration>> {
    let server = Server::start(vec![text_answer(n)])?;
    let dir = tempfile::tempdir()?;
    let (agent, conversation) = open_agent(&dir)?;
    let mut events = agent.start(turn(server.base(), conversation, 1, false).await?)?;
    let mut received = Vec::with_capacity(n);
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::TextDelta { .. } => received.push(Instant::now()),
            AgentEvent::Error { message, .. } => bail!("turn failed: {message}"),
            _ => {}
        }
    }
    latencies(&server.timeline().token_sent[0], &received)
}

fn raw_request() -> CreateChatCompletionRequest {
    CreateChatCompletionRequest {
        model: "bench-model".into(),
        messages: vec![ChatCompletionRequestMessage::User(ChatCompletionRequestUserMessage {
            content: ChatCompletionRequestUserMessageContent::Text("go".into()),
            name: None,
        })],
        stream: Some(true),
        ..Default::default()
    }
}

fn raw_client(server: &Server) -> Client<OpenAIConfig> {
    Client::with_config(OpenAIConfig::new().with_api_base(server.base()).with_api_key("sk-bench"))
}

/// Per-token latency of async-openai's own stream (the floor).
async fn raw_tokens(n: usize) -> Result<Vec<Duration>> {
    let server = Server::start(vec![text_answer(n)])?;
    let client = raw_client(&server);
    let mut stream = client.chat().create_stream(raw_request()).await?;
    let mut received = Vec::with_capacity(n);
    while let Some(chunk) = stream.next().await {
        let chunk = chunk?;
        let content = chunk.choices.first().and_then(|c| c.delta.content.as_deref()).unwrap_or_default();
        if !content.is_empty() {
            received.push(Instant::now());
        }
    }
    latencies(&server.timeline().token_sent[0], &received)
}

/// Gaps from each answer's last frame to the next request, through the agent.
async fn agent_rounds(rounds: usize) -> Result<Vec<Duration>> {
    let mut script: Vec<Answer> = (0..rounds).map(tool_answer).collect();
    script.push(text_answer(1));
    let server = Server::start(script)?;
    let dir = tempfile::tempdir()?;
    let (agent, conversation) = open_agent(&dir)?;
    let max_rounds = u32::try_from(rounds + 1)?;
    let mut events = agent.start(turn(server.base(), conversation, max_rounds, true).await?)?;
    let mut results = 0;
    while let Some(event) = events.next().await {
        match event {
            AgentEvent::ToolResult { is_error: false, .. } => results += 1,
            AgentEvent::ToolResult { content, .. } => bail!("tool failed: {content:?}"),
            AgentEvent::Error { message, .. } => bail!("turn failed: {message}"),
            _ => {}
        }
    }
    if results != rounds {
        bail!("{results} tool results for {rounds} rounds");
    }
    round_gaps(&server.timeline())
}

/// The same gaps for async-openai alone: the next request goes out as soon as the stream ends.
async fn raw_rounds(rounds: usize) -> Result<Vec<Duration>> {
    let script: Vec<Answer> = (0..=rounds).map(tool_answer).collect();
    let server = Server::start(script)?;
    let client = raw_client(&server);
    for _ in 0..=rounds {
        let mut stream = client.chat().create_stream(raw_request()).await?;
        while let Some(chunk) = stream.next().await {
            chunk?;
        }
    }
    round_gaps(&server.timeline())
}

/// What one periodic flush of the streamed text costs (it runs on the turn's
/// task, so tokens arriving meanwhile wait): 400 tokens of text, then a flush.
fn flush_costs(flushes: usize) -> Result<Vec<Duration>> {
    let dir = tempfile::tempdir()?;
    let store = Store::open(&DataDir::new(dir.path()))?;
    let conversations = ConversationStore::new(store);
    let conversation = conversations.create("bench", None, None)?.id;
    let user = conversations.add_user_message(conversation, None, "go", &[])?;
    let mut writer = AssistantWriter::start(&conversations, conversation, user, "bench", "bench-model")?;
    let mut costs = Vec::with_capacity(flushes);
    for i in 0..flushes {
        for t in 0..400 {
            writer.push_text(0, &format!(" w{i}-{t}"));
        }
        let start = Instant::now();
        writer.flush()?;
        costs.push(start.elapsed());
    }
    Ok(costs)
}

fn round_gaps(t: &Timeline) -> Result<Vec<Duration>> {
    if t.request_arrived.len() < 2 {
        bail!("only {} requests arrived", t.request_arrived.len());
    }
    Ok(t.last_frame.iter().zip(&t.request_arrived[1..]).map(|(last, next)| next.duration_since(*last)).collect())
}

fn latencies(sent: &[Instant], received: &[Instant]) -> Result<Vec<Duration>> {
    if sent.len() != received.len() {
        bail!("{} tokens sent, {} received", sent.len(), received.len());
    }
    Ok(sent.iter().zip(received).map(|(s, r)| r.duration_since(*s)).collect())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn row(what: &str, client: &str, mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    let (p50, p99, max) = (percentile(&samples, 0.5), percentile(&samples, 0.99), samples[samples.len() - 1]);
    println!(
        "| {what} | {client} | {} | {:.1} | {:.1} | {:.1} |",
        samples.len(),
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        max.as_secs_f64() * 1e6
    );
    (p50, p99)
}

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1).filter(|a| !a.starts_with("--"));
    let tokens: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(10_000);
    let rounds: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(200);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async {
        // Warm-up: connections, SQLite, allocator.
        raw_tokens(200).await?;
        agent_tokens(200).await?;

        println!("| measured | client | samples | p50 µs | p99 µs | max µs |");
        println!("|---|---|---:|---:|---:|---:|");
        let (raw50, raw99) =
            row("per token: frame written → token held", "async-openai stream (floor)", raw_tokens(tokens).await?);
        let (a50, a99) =
            row("per token: frame written → token held", "Patchbay turn (`AgentEvent`)", agent_tokens(tokens).await?);
        let (rr50, rr99) =
            row("per tool round: last frame → next request", "async-openai (floor)", raw_rounds(rounds).await?);
        let (ar50, ar99) = row(
            "per tool round: last frame → next request",
            "Patchbay turn (`current_time`)",
            agent_rounds(rounds).await?,
        );
        row("one 250 ms flush (SQLite, growing text)", "`AssistantWriter::flush`", flush_costs(rounds)?);
        let us = |d: Duration, f: Duration| (d.as_secs_f64() - f.as_secs_f64()) * 1e6;
        println!();
        println!(
            "host overhead per token over the floor: p50 {:.1} µs, p99 {:.1} µs (goal: p99 ≤ 1000 µs)",
            us(a50, raw50),
            us(a99, raw99)
        );
        println!(
            "host overhead per tool round over the floor: p50 {:.1} µs, p99 {:.1} µs",
            us(ar50, rr50),
            us(ar99, rr99)
        );
        Ok(())
    })
}
