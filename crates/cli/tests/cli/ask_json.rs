//! `patchbay ask --json`, the CLI as a tool for scripts: JSON Lines on
//! stdout, with real server-everything and the scripted model.

use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
use serde_json::json;

use crate::common::{ok, patchbay, seed_servers};

/// `ask --json`: one JSON object per event as it happens, then the answer with
/// every call (server, tool, arguments, result, elapsed time, success, error).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_json_prints_events_then_the_answer_with_every_call() {
    let data = tempfile::tempdir().unwrap();
    let everything = crate::common::everything("everything");
    seed_servers(data.path(), &[everything]);
    let names = ToolNames::build([("everything", "get-sum"), ("everything", "echo")]);
    let sum = names.model_name("everything", "get-sum").unwrap().to_owned();
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[
                ("call_sum", &sum, &["{\"a\": 2, \"b\": 3}"]),
                ("call_bad", &sum, &["{\"a\": \"x\"}"]),
            ]),
            openai::text_reply(&["Five, ", "and one failed."]),
        ],
    )
    .await
    .unwrap();
    crate::common::seed_scripted_provider(data.path(), &model.url());
    let out = ok(&patchbay(data.path(), &["ask", "--json", "--auto-approve", "Add 2 and 3"]));
    let lines: Vec<serde_json::Value> =
        out.lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"))).collect();
    let types: Vec<&str> = lines.iter().filter_map(|l| l["type"].as_str()).collect();
    for t in ["tool_call_started", "tool_result", "text_delta", "done"] {
        assert!(types.contains(&t), "no {t} event: {types:?}");
    }
    assert_eq!(types.last(), Some(&"answer"), "{types:?}");
    let answer = lines.last().unwrap();
    assert_eq!(answer["text"], "Five, and one failed.");
    assert_eq!(answer["reason"], "stop");
    let calls = answer["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2, "{answer}");
    assert_eq!(calls[0]["server"], "everything");
    assert_eq!(calls[0]["tool"], "get-sum");
    assert_eq!(calls[0]["arguments"], json!({"a": 2, "b": 3}));
    assert_eq!(calls[0]["result"], "The sum of 2 and 3 is 5.");
    assert_eq!(calls[0]["success"], true);
    assert!(calls[0]["elapsed_ms"].is_u64() && calls[0]["error"].is_null(), "{}", calls[0]);
    assert_eq!(calls[1]["success"], false);
    assert!(calls[1]["error"].as_str().is_some_and(|e| !e.is_empty()), "{}", calls[1]);
}
