//! `kill -9` in the middle of a streamed answer loses at most the last flush
//! interval (250 ms): `patchbay ask` streams from a scripted OpenAI-compatible
//! server that sends one word every 20 ms and never finishes; the test reads
//! the answer from the CLI's stdout as it appears, kills the process with
//! SIGKILL, then opens the data directory again with `patchbay conversation
//! export`. Every word shown more than 250 ms (plus scheduling slack) before
//! the kill must be stored, in order, and the message must be marked
//! interrupted with a note, its text kept.

use std::io::Read;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use patchbay_test_support::scripted::{End, Format, Reply, ScriptedServer, openai};
use serde_json::json;

use crate::common::{command, env_model, patchbay};

const WORD_EVERY: Duration = Duration::from_millis(20);
const FLUSH: Duration = Duration::from_millis(250);
/// Scheduling noise allowed on a busy machine, on top of the flush interval.
const SLACK: Duration = Duration::from_millis(400);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_killed_mid_stream_keeps_the_text_and_is_marked_interrupted() {
    let mut frames = vec![openai::delta(json!({"role": "assistant", "content": ""}))];
    frames.extend((0..5000).map(|i| openai::delta(json!({ "content": format!("w{i} ") }))));
    let model = ScriptedServer::start(Format::OpenAi, vec![Reply::Stream { frames, gap: WORD_EVERY, end: End::Hang }])
        .await
        .unwrap();
    let data = tempfile::tempdir().unwrap();

    let mut ask = command(data.path());
    ask.args(["ask", "--no-tools", "--model", "slow-1", "talk forever"]);
    let mut child = env_model(&mut ask, &model).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    // Reads stdout as it arrives: (when it was read, how much had been shown by then).
    let mut stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || tx.send((Instant::now(), buf[..n].to_vec())).is_err() {
                break;
            }
        }
    });
    let mut shown: Vec<u8> = Vec::new();
    let mut seen: Vec<(Instant, usize)> = Vec::new();
    while String::from_utf8_lossy(&shown).split_whitespace().count() < 60 {
        let (at, bytes) = rx.recv_timeout(Duration::from_secs(60)).expect("patchbay ask streams the answer");
        shown.extend_from_slice(&bytes);
        seen.push((at, shown.len()));
    }
    let killed_at = Instant::now();
    child.kill().unwrap(); // SIGKILL
    let status = child.wait().unwrap();
    assert!(!status.success(), "the process was killed");
    // Words already in the pipe were shown before the kill too.
    for (at, bytes) in rx.iter() {
        shown.extend_from_slice(&bytes);
        seen.push((at.min(killed_at), shown.len()));
    }
    reader.join().unwrap();
    let shown = String::from_utf8(shown).unwrap();
    let must_have_len = seen.iter().filter(|(at, _)| *at + FLUSH + SLACK < killed_at).map(|(_, len)| *len).max();
    let must_have = &shown[..must_have_len.expect("the test streamed long enough to check something")];
    assert!(must_have.split_whitespace().count() >= 10, "too little was old enough to check: {must_have:?}");

    // Opening the data directory again marks the answer interrupted and keeps its text.
    let export = patchbay(data.path(), &["conversation", "export", "1", "--format", "json"]);
    assert!(export.status.success(), "{}", String::from_utf8_lossy(&export.stderr));
    let conversation: serde_json::Value = serde_json::from_slice(&export.stdout).unwrap();
    let answer = &conversation["messages"][1];
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["status"], "interrupted", "{answer}");
    assert!(answer["error"].as_str().is_some_and(|e| e.contains("Interrupted")), "a note the UI can show: {answer}");
    let text = answer["text"].as_str().unwrap();
    let words = text.split_whitespace().count();
    let stream_start: String = (0..words).map(|i| format!("w{i} ")).collect();
    assert_eq!(text, stream_start, "stored text is the stream's beginning, in order");
    assert!(
        text.starts_with(must_have),
        "text shown more than {FLUSH:?} before the kill was lost: stored {text:?}, shown {must_have:?}"
    );
    assert_eq!(model.requests().len(), 1);
}
