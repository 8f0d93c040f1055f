//! Servers' sampling and elicitation requests during `patchbay mcp call` (also
//! those a server asks to run as tasks),
//! answered on the terminal (a pseudo-terminal driven like a user) or refused
//! with the reason when there is none; against the real server-everything, with
//! sampling run on a scripted OpenAI-compatible model through the real client.

use std::path::Path;
use std::process::{Command, Output};

use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};

use crate::common::{BIN, everything, fixture, patchbay, seed_scripted_provider, seed_servers, text};

fn seeded() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    seed_servers(tmp.path(), &[everything("everything")]);
    tmp
}

/// `patchbay mcp call everything TOOL --args ARGS` with no terminal (stdin closed).
fn call_without_terminal(dir: &Path, tool: &str, args: &str) -> Output {
    patchbay(dir, &["mcp", "call", "everything", tool, "--args", args])
}

#[test]
fn without_a_terminal_sampling_is_refused_with_the_reason_the_server_gets() {
    let tmp = seeded();
    let out = call_without_terminal(tmp.path(), "trigger-sampling-request", r#"{"prompt": "hi"}"#);
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{}", text(&out.stdout));
    // The tool's error result carries the refusal the server received.
    assert!(stderr.contains("sampling request refused: there is no terminal to ask the user"), "{stderr}");
}

#[test]
fn without_a_terminal_elicitation_is_declined() {
    let tmp = seeded();
    let out = call_without_terminal(tmp.path(), "trigger-elicitation-request", "{}");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("User declined"), "{}", text(&out.stdout));
    assert!(text(&out.stderr).contains("there is no terminal"), "{}", text(&out.stderr));
}

/// Runs `patchbay mcp call everything TOOL --args ARGS` on a pseudo-terminal,
/// answering prompts by `rules` ([text in the prompt line, answer]); the
/// terminal's output.
fn call_on_terminal(dir: &Path, tool: &str, args: &str, rules: serde_json::Value) -> (bool, String) {
    let out = Command::new(peers::python())
        .arg(fixture("pty_answer.py"))
        .arg(rules.to_string())
        .arg("--")
        .arg(BIN)
        .arg("--data-dir")
        .arg(dir)
        .args(["mcp", "call", "everything", tool, "--args", args])
        .output()
        .expect("run the terminal driver");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    (out.status.success(), text(&out.stdout))
}

#[test]
fn on_a_terminal_a_form_is_asked_field_by_field_and_sent() {
    let tmp = seeded();
    let rules = serde_json::json!([["Answer?", "y"], ["legal name", "Ada Lovelace"], ["Agree to the terms", "y"]]);
    let (ok, screen) = call_on_terminal(tmp.path(), "trigger-elicitation-request", "{}", rules);
    assert!(ok, "{screen}");
    assert!(screen.contains("[everything] asks: Please provide inputs for the following fields:"), "{screen}");
    // Typed answers, and defaults taken with Enter.
    assert!(screen.contains("- Name: Ada Lovelace"), "{screen}");
    assert!(screen.contains("- Agreed to terms: true"), "{screen}");
    assert!(screen.contains("- Favorite Integer: 42"), "{screen}");
}

#[test]
fn on_a_terminal_a_form_the_server_asked_to_run_as_a_task_is_asked_and_sent() {
    let tmp = seeded();
    let rules = serde_json::json!([["Answer?", "y"], ["full name", "Grace Hopper"], ["agree to the terms", "n"]]);
    let (ok, screen) = call_on_terminal(tmp.path(), "trigger-elicitation-request-async", "{}", rules);
    assert!(ok, "{screen}");
    assert!(screen.contains("(async task demo)"), "{screen}");
    // The server polled the task and fetched the answer when it was sent.
    assert!(screen.contains("[COMPLETED] User provided the requested information!"), "{screen}");
    assert!(screen.contains("- Name: Grace Hopper") && screen.contains("- Agreed to terms: false"), "{screen}");
}

#[test]
fn on_a_terminal_a_form_can_be_declined() {
    let tmp = seeded();
    let (ok, screen) =
        call_on_terminal(tmp.path(), "trigger-elicitation-request", "{}", serde_json::json!([["Answer?", "n"]]));
    assert!(ok, "{screen}");
    assert!(screen.contains("User declined"), "{screen}");
    assert!(!screen.contains("legal name"), "no field was asked: {screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_sampling_is_shown_run_on_the_model_and_sent_after_two_yeses() {
    let tmp = seeded();
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Tides ", "come twice a day."])])
        .await
        .unwrap();
    // The model sampling requests run on.
    seed_scripted_provider(tmp.path(), &model.url());
    let rules = serde_json::json!([["Run it on scripted/scripted-model", "y"], ["Send this reply", "y"]]);
    let dir = tmp.path().to_path_buf();
    let (ok, screen) = tokio::task::spawn_blocking(move || {
        call_on_terminal(&dir, "trigger-sampling-request", r#"{"prompt": "why tides?"}"#, rules)
    })
    .await
    .unwrap();
    assert!(ok, "{screen}");
    // The review shows the server's request before anything runs.
    assert!(screen.contains("[everything] asks for a model completion"), "{screen}");
    assert!(screen.contains("system: You are a helpful test server."), "{screen}");
    assert!(screen.contains("user: Resource trigger-sampling-request context: why tides?"), "{screen}");
    assert!(screen.contains("reply (scripted-model): Tides come twice a day."), "{screen}");
    // The model got the server's messages; the server got the model's reply.
    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].body.to_string().contains("why tides?"), "{}", requests[0].body);
    assert!(screen.contains("LLM sampling result"), "{screen}");
    assert!(screen.contains("Tides come twice a day."), "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_terminal_a_declined_sampling_request_never_reaches_the_model() {
    let tmp = seeded();
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["unused"])]).await.unwrap();
    seed_scripted_provider(tmp.path(), &model.url());
    let rules = serde_json::json!([["Run it on", "n"]]);
    let dir = tmp.path().to_path_buf();
    let (ok, screen) = tokio::task::spawn_blocking(move || {
        call_on_terminal(&dir, "trigger-sampling-request", r#"{"prompt": "secret plans"}"#, rules)
    })
    .await
    .unwrap();
    // The tool fails with the refusal the server received.
    assert!(!ok, "{screen}");
    assert!(screen.contains("the user declined the sampling request"), "{screen}");
    assert!(model.requests().is_empty(), "the model was asked: {:?}", model.requests().len());
}
