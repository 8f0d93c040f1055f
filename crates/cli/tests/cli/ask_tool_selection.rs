//! `patchbay ask --servers a,b` and `--no-tools`: which MCP servers start and
//! which tools reach the model, seen in the request the scripted
//! OpenAI-compatible server records. Two servers are configured: `time`
//! (mcp-server-time) and `broken` (a command that does not exist, so starting
//! it prints a note on stderr). And `--attach FILE`: what reaches the model;
//! `--reasoning`: the effort the model is asked for.

use std::path::Path;
use std::process::Output;

use patchbay_core::config::McpServerConfig;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};

use crate::common::{command, env_model, offered, seed_servers};

fn seed(dir: &Path) {
    let time = McpServerConfig::stdio("time", peers::venv_bin("mcp-server-time").to_str().unwrap(), &[]);
    let broken = McpServerConfig::stdio("broken", "/nonexistent/patchbay-test-server", &[]);
    seed_servers(dir, &[time, broken]);
}

/// `patchbay ask FLAGS… --model scripted "What time is it?"`, the model from the environment.
fn ask(dir: &Path, model: &ScriptedServer, flags: &[&str]) -> Output {
    let mut ask = command(dir);
    ask.arg("ask").args(flags).args(["--model", "scripted", "What time is it?"]);
    env_model(&mut ask, model).output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_flag_starts_only_the_named_servers_and_no_tools_offers_none() {
    let data = tempfile::tempdir().unwrap();
    seed(data.path());
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![openai::text_reply(&["Noon."]), openai::text_reply(&["I cannot check."])],
    )
    .await
    .unwrap();

    let out = ask(data.path(), &model, &["--servers", "time"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("broken"), "a server not named was started: {stderr}");
    let tools = offered(&model.requests()[0].body);
    assert!(tools.iter().any(|t| t.starts_with("time") && t.contains("get_current_time")), "{tools:?}");
    assert!(tools.iter().any(|t| t == "current_time"), "built-in tools stay offered: {tools:?}");

    let out = ask(data.path(), &model, &["--no-tools"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("broken"), "--no-tools starts no server: {stderr}");
    assert_eq!(offered(&model.requests()[1].body), Vec::<String>::new(), "--no-tools offers no tool");

    let out = ask(data.path(), &model, &["--servers", "time,nope"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no MCP server named nope") && stderr.contains("time, broken"), "{stderr}");
    assert_eq!(model.requests().len(), 2, "nothing was sent for the bad flag");
}

/// A picture and a text file reach the model as an image part and as text
/// under the file's name; a binary file is refused before anything is sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_files_reach_the_model_and_a_binary_file_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let write = |name: &str, bytes: &[u8]| {
        let path = files.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let (png, notes, archive) =
        (write("dot.png", b"\x89PNG"), write("notes.md", b"squares are red"), write("backup.zip", b"PK\x03\x04\0\xff"));
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["A dot and a note."])]).await.unwrap();

    let out = ask(data.path(), &model, &["--no-tools", "--attach", &png, "--attach", &notes]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("A dot and a note."));
    let body = &model.requests()[0].body;
    let user = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").expect("a user message");
    let parts = user["content"].as_array().expect("content parts");
    assert_eq!(parts[0]["text"], "What time is it?");
    assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,iVBORw==");
    assert_eq!(parts[2]["text"], "<attachment title=\"notes.md\">\nsquares are red\n</attachment>");

    let out = ask(data.path(), &model, &["--no-tools", "--attach", &notes, "--attach", &archive]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("backup.zip: a binary file cannot be attached"), "{stderr}");
    assert_eq!(model.requests().len(), 1, "nothing was sent with a refused file");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_flag_asks_the_model_for_that_effort() {
    let data = tempfile::tempdir().unwrap();
    let replies = vec![openai::text_reply(&["Noon."]), openai::text_reply(&["Noon."]), openai::text_reply(&["Noon."])];
    let model = ScriptedServer::start(Format::OpenAi, replies).await.unwrap();
    let out = ask(data.path(), &model, &["--no-tools", "--reasoning", "medium"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(model.requests()[0].body["reasoning_effort"], "medium");
    let out = ask(data.path(), &model, &["--no-tools"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(model.requests()[1].body.get("reasoning_effort").is_none(), "the assistant sets none");
    let out = ask(data.path(), &model, &["--no-tools", "--reasoning", "off"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(model.requests()[2].body["reasoning_effort"], "none");
}
