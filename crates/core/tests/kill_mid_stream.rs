//! `kill -9` in the middle of a streamed answer loses at most the last flush
//! interval: a child process (this test binary, run again) streams a turn
//! from an endless slow provider into a real database and prints every delta
//! with the time it was emitted; the parent kills it with SIGKILL and checks
//! the stored message against what the child had shown.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use futures::stream::BoxStream;
use patchbay_core::agent::{
    Agent, AgentEvent, ApprovalPolicy, BuiltinTools, ModelChoice, Sampling, ToolSelection, TurnAction, TurnLimits,
    TurnRequest,
};
use patchbay_core::conversations::{ConversationStore, MessageStatus};
use patchbay_core::llm::{ChatRequest, LlmError, Provider, StreamEvent};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use tokio_util::sync::CancellationToken;

const CHILD_ENV: &str = "PATCHBAY_KILL_TEST_DATA_DIR";
const TOKEN_EVERY: Duration = Duration::from_millis(20);
const FLUSH: Duration = Duration::from_millis(250);
/// Scheduling noise allowed on a busy machine, on top of the flush interval.
const SLACK_MS: u128 = 400;

fn now_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis()
}

/// Streams `w0 w1 w2 …` forever, one word every [`TOKEN_EVERY`].
struct Endless;

#[async_trait::async_trait]
impl Provider for Endless {
    fn name(&self) -> &str {
        "endless"
    }

    async fn stream(
        &self,
        _request: ChatRequest,
        _cancel: CancellationToken,
    ) -> Result<BoxStream<'static, Result<StreamEvent, LlmError>>, LlmError> {
        Ok(futures::stream::unfold(0u64, |i| async move {
            tokio::time::sleep(TOKEN_EVERY).await;
            Some((Ok(StreamEvent::TextDelta { text: format!("w{i} ") }), i + 1))
        })
        .boxed())
    }
}

fn child(dir: &str) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let store = Store::open(&DataDir::new(dir)).unwrap();
        let conversations = ConversationStore::new(store);
        let c = conversations.create("kill test", None, None).unwrap();
        let agent = Agent::new(conversations);
        let mut turn = agent
            .start(TurnRequest {
                conversation: c.id,
                action: TurnAction::Send { text: "talk forever".into(), attachments: Vec::new() },
                model: ModelChoice {
                    provider: Arc::new(Endless),
                    provider_name: "endless".into(),
                    model: "slow-1".into(),
                    sampling: Sampling::default(),
                    context_window: None,
                },
                system_prompt: None,
                tools: Arc::new(BuiltinTools),
                selection: ToolSelection::None,
                approval: ApprovalPolicy::AutoApprove,
                retriever: None,
                limits: TurnLimits { flush_interval: FLUSH, ..TurnLimits::default() },
            })
            .unwrap();
        println!("MSG {}", turn.assistant_message_id());
        while let Some(event) = turn.next().await {
            if let AgentEvent::TextDelta { text } = event {
                println!("DELTA {} {text}", now_ms());
            }
        }
    });
}

fn after<'a>(line: &'a str, marker: &str) -> Option<&'a str> {
    line.find(marker).map(|i| &line[i + marker.len()..])
}

#[test]
fn a_turn_killed_mid_stream_keeps_the_text_written_so_far() {
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        child(&dir);
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut proc = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "a_turn_killed_mid_stream_keeps_the_text_written_so_far", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, tmp.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(proc.stdout.take().unwrap()).lines();
    let mut message = None;
    let mut deltas: Vec<(u128, String)> = Vec::new();
    while deltas.len() < 60 {
        let line = lines.next().expect("the child printed deltas").unwrap();
        // libtest may print "test name ... " on the same line first.
        if let Some(id) = after(&line, "MSG ") {
            message = Some(id.parse::<i64>().unwrap());
        } else if let Some(rest) = after(&line, "DELTA ") {
            let (at, text) = rest.split_once(' ').unwrap();
            deltas.push((at.parse().unwrap(), text.to_owned()));
        }
    }
    let killed_at = now_ms();
    proc.kill().unwrap();
    proc.wait().unwrap();
    // Deltas already in the pipe were shown before the kill too.
    for line in lines.map_while(Result::ok) {
        if let Some(rest) = after(&line, "DELTA ") {
            let (at, text) = rest.split_once(' ').unwrap();
            deltas.push((at.parse().unwrap(), text.to_owned()));
        }
    }

    let store = Store::open(&DataDir::new(tmp.path())).unwrap();
    let m = ConversationStore::new(store).message(message.expect("the child named its message")).unwrap();
    assert_eq!(m.status, MessageStatus::Streaming, "a killed turn is left as it was");
    // The stored text is the stream's beginning, in order (it may hold a word
    // the child wrote to the database but had not printed yet).
    let words = m.text.split_whitespace().count();
    let expected: String = (0..words).map(|i| format!("w{i} ")).collect();
    assert_eq!(m.text, expected, "stored text is the stream's beginning, in order");
    let must_have: String = deltas
        .iter()
        .filter(|(at, _)| *at + FLUSH.as_millis() + SLACK_MS < killed_at)
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(!must_have.is_empty(), "the test streamed long enough to check something");
    assert!(
        m.text.starts_with(&must_have),
        "text older than the flush interval was lost: stored {:?}, expected at least {:?}",
        m.text,
        must_have
    );
}
