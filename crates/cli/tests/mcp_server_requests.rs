//! Servers' sampling and elicitation requests during `patchbay mcp call`,
//! answered on the terminal (a pseudo-terminal driven like a user) or refused
//! with the reason when there is none; against the real server-everything.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use patchbay_core::config::{ConfigStore, McpServerConfig};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_test_support::peers;

fn seeded() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&DataDir::resolve(Some(tmp.path().to_path_buf())).unwrap()).unwrap();
    let everything =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    ConfigStore::new(store).replace_servers(&[everything]).unwrap();
    tmp
}

/// `patchbay mcp call everything TOOL --args ARGS` with no terminal (stdin closed).
fn call_without_terminal(dir: &Path, tool: &str, args: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_patchbay"))
        .arg("--data-dir")
        .arg(dir)
        .args(["mcp", "call", "everything", tool, "--args", args])
        .stdin(Stdio::null())
        .output()
        .expect("run patchbay")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
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

/// Runs `patchbay mcp call everything TOOL` on a pseudo-terminal, answering
/// prompts by `rules` ([text in the prompt line, answer]); the terminal's output.
fn call_on_terminal(dir: &Path, tool: &str, rules: serde_json::Value) -> (bool, String) {
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pty_answer.py");
    let out = Command::new(peers::python())
        .arg(driver)
        .arg(rules.to_string())
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_patchbay"))
        .arg("--data-dir")
        .arg(dir)
        .args(["mcp", "call", "everything", tool])
        .output()
        .expect("run the terminal driver");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    (out.status.success(), text(&out.stdout))
}

#[test]
fn on_a_terminal_a_form_is_asked_field_by_field_and_sent() {
    let tmp = seeded();
    let rules = serde_json::json!([["Answer?", "y"], ["legal name", "Ada Lovelace"], ["Agree to the terms", "y"]]);
    let (ok, screen) = call_on_terminal(tmp.path(), "trigger-elicitation-request", rules);
    assert!(ok, "{screen}");
    assert!(screen.contains("[everything] asks: Please provide inputs for the following fields:"), "{screen}");
    // Typed answers, and defaults taken with Enter.
    assert!(screen.contains("- Name: Ada Lovelace"), "{screen}");
    assert!(screen.contains("- Agreed to terms: true"), "{screen}");
    assert!(screen.contains("- Favorite Integer: 42"), "{screen}");
}

#[test]
fn on_a_terminal_a_form_can_be_declined() {
    let tmp = seeded();
    let (ok, screen) =
        call_on_terminal(tmp.path(), "trigger-elicitation-request", serde_json::json!([["Answer?", "n"]]));
    assert!(ok, "{screen}");
    assert!(screen.contains("User declined"), "{screen}");
    assert!(!screen.contains("legal name"), "no field was asked: {screen}");
}
