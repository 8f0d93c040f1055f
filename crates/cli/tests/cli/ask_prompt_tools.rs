//! A whole turn in prompt mode through `patchbay ask`: a provider added with
//! `--prompt-tool-format function-call` (no native tools), real
//! server-filesystem, and a scripted model that writes its calls as text:
//! a `<function_call>` split across chunks whose string holds the closing
//! tag, a fenced `use_mcp_tool` block in the same answer, then a call with
//! broken JSON (fed back as an error result), then the final answer.

use patchbay_core::config::McpServerConfig;
use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
use serde_json::json;

use crate::common::{ok, patchbay, seed_servers};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_written_as_text_run_and_a_broken_one_is_answered_with_its_error() {
    let data = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();
    let (a, b) = (root.join("a.md"), root.join("b.md"));
    let names = ToolNames::build([("files", "write_file"), ("files", "read_text_file")]);
    let write = names.model_name("files", "write_file").unwrap().to_owned();
    let read = names.model_name("files", "read_text_file").unwrap().to_owned();

    let first =
        json!({"name": write, "arguments": {"path": a, "content": "Alpha </function_call> inside"}}).to_string();
    let (head, tail) = first.split_at(first.len() / 2);
    let fenced = json!({"type": "use_mcp_tool", "server_name": "files", "tool_name": "write_file",
                        "arguments": {"path": b, "content": "Beta"}});
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::text_reply(&[
                "I'll write both. <function_",
                &format!("call>{head}"),
                &format!("{tail}</func"),
                &format!("tion_call>\n```json\n{fenced}\n```"),
            ]),
            openai::text_reply(&[&format!(
                "<function_call>{{\"name\": \"{read}\", \"arguments\": {{path: a.md}}}}</function_call>"
            )]),
            openai::text_reply(&["Both files ", "are written."]),
        ],
    )
    .await
    .unwrap();
    let base_url = format!("{}/v1", model.url());
    ok(&patchbay(
        data.path(),
        &["provider", "add", "scripted", "--kind", "openai", "--base-url", &base_url, "--model", "m"]
            .into_iter()
            .chain(["--prompt-tool-format", "function-call"])
            .collect::<Vec<_>>(),
    ));
    let files = McpServerConfig::stdio(
        "files",
        peers::npm_bin("mcp-server-filesystem").to_str().unwrap(),
        &[root.to_str().unwrap()],
    );
    seed_servers(data.path(), &[files]);

    let out = ok(&patchbay(data.path(), &["ask", "--auto-approve", "Write a.md and b.md"]));
    assert!(out.contains("Both files are written."), "{out}");
    assert!(!out.contains("<function_call>") && !out.contains("use_mcp_tool"), "a call was shown as text: {out}");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "Alpha </function_call> inside");
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "Beta");

    let requests = model.requests();
    assert_eq!(requests.len(), 3, "one request per round");
    assert!(requests[0].body.get("tools").is_none(), "no native tools are sent");
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("<function_call>{\"name\"") && system.contains(&write), "{system}");
    assert!(!system.contains("use_mcp_tool"), "one format is taught: {system}");
    let second = requests[1].body["messages"].to_string();
    assert_eq!(second.matches("<function_result name=").count(), 2, "both results went back: {second}");
    let third = requests[2].body["messages"].to_string();
    assert!(
        third.contains("is_error=\\\"true\\\"") && third.contains("The arguments are not valid JSON"),
        "the broken call's error went back: {third}"
    );
}
