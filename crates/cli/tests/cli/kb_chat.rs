//! The knowledge base in chat through `patchbay ask/chat --kb`, against a
//! scripted OpenAI-compatible model: what the model received is checked.

use std::path::PathBuf;

use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
use serde_json::{Value, json};

use crate::common::{command, feed, offered, ok, patchbay};

const FACT: &str = "The kakapo is a flightless nocturnal parrot that can live for ninety years.";

/// A data dir with the scripted provider and an indexed folder holding `birds.md`.
fn setup(model_url: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("birds.md"), format!("# Birds\n\n## Parrots\n\n{FACT}\n")).unwrap();
    let base_url = format!("{model_url}/v1");
    ok(&patchbay(&data, &["provider", "add", "scripted", "--kind", "openai", "--base-url", &base_url, "--model", "m"]));
    ok(&patchbay(&data, &["kb", "add", docs.to_str().unwrap()]));
    ok(&patchbay(&data, &["kb", "index"]));
    let birds = std::fs::canonicalize(docs.join("birds.md")).unwrap();
    (tmp, data, birds)
}

/// The system messages' text of a request the scripted model received.
pub fn system_text(request: &Value) -> String {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m["content"].to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_mode_gives_the_model_numbered_cited_passages() {
    let model =
        ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Kakapos live long [1]."])]).await.unwrap();
    let (_tmp, data, birds) = setup(&model.url());
    let out = patchbay(&data, &["ask", "--kb", "auto", "How long do kakapo parrots live?"]);
    let stdout = ok(&out);
    assert!(stdout.contains("Kakapos live long [1]."), "{stdout}");
    // The citation list is shown with path, lines and heading.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("[1] {}:3-5 › Birds > Parrots", birds.display())), "{stderr}");

    let requests = model.requests();
    assert_eq!(requests.len(), 1);
    let system = system_text(&requests[0].body);
    assert!(system.contains("# Knowledge base"), "{system}");
    assert!(system.contains(&format!("[1] {} › Birds > Parrots (lines 3-5)", birds.display())), "{system}");
    assert!(system.contains(FACT), "the passage never reached the model: {system}");
    assert!(system.contains("cite them by number like [1]"), "{system}");
    // Auto mode does not offer the tool.
    assert!(!offered(&requests[0].body).contains(&"knowledge_search".to_owned()));

    // The citations are stored with the answer.
    let listing = ok(&patchbay(&data, &["conversation", "list"]));
    let id = listing.split_whitespace().next().unwrap();
    let export = ok(&patchbay(&data, &["conversation", "export", id, "--format", "json"]));
    assert!(export.contains(FACT) && export.contains("birds.md"), "{export}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_the_documents_do_not_answer_gets_no_context_and_kb_search_shows_why() {
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Echo."])]).await.unwrap();
    let (_tmp, data, birds) = setup(&model.url());
    // The shipped FAQ says "use" and "tool" often; that is not what was asked.
    let query = "[use-tool] please echo something";
    let out = patchbay(&data, &["ask", "--no-tools", query]);
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("[1]"), "nothing is cited: {stderr}");
    assert!(!system_text(&model.requests()[0].body).contains("# Knowledge base"));

    // kb search shows each passage's relevance; with the assistants' floor nothing is left.
    let all = ok(&patchbay(&data, &["kb", "search", query]));
    assert!(all.contains("patchbay-faq.md") && all.contains("relevance 0."), "{all}");
    let floored = ok(&patchbay(&data, &["kb", "search", query, "--min-relevance", "0.4"]));
    assert!(floored.contains("no passage matches (at least 0.4 relevant)"), "{floored}");
    let hits: Vec<Value> = serde_json::from_str(&ok(&patchbay(
        &data,
        &[
            "kb",
            "search",
            "How long do kakapo parrots live?",
            "--min-relevance",
            "0.4",
            "--max-tokens",
            "100",
            "--json",
        ],
    )))
    .unwrap();
    assert_eq!(hits[0]["path"], birds.to_str().unwrap());
    assert!(hits.iter().all(|h| h["relevance"].as_f64().unwrap() >= 0.4), "{hits:?}");
    let bad = patchbay(&data, &["kb", "search", query, "--min-relevance", "2"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("\"2\" is not a relevance between 0 and 1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_assistant_uses_auto_and_off_turns_it_off() {
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![openai::text_reply(&["With context."]), openai::text_reply(&["Without context."])],
    )
    .await
    .unwrap();
    let (_tmp, data, _birds) = setup(&model.url());
    ok(&patchbay(&data, &["ask", "--no-tools", "Tell me about the kakapo"]));
    ok(&patchbay(&data, &["ask", "--no-tools", "--kb", "off", "Tell me about the kakapo"]));
    let requests = model.requests();
    assert!(system_text(&requests[0].body).contains(FACT));
    assert!(!system_text(&requests[1].body).contains("# Knowledge base"));
    assert!(!requests[1].body.to_string().contains(FACT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_mode_offers_knowledge_search_and_the_model_reads_its_result() {
    let args = json!({"query": "kakapo lifespan", "top_k": 2}).to_string();
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_kb", "knowledge_search", &[&args])]),
            openai::text_reply(&["Ninety years, says birds.md."]),
        ],
    )
    .await
    .unwrap();
    let (_tmp, data, birds) = setup(&model.url());
    // Even with other tools turned off, tool mode offers knowledge_search (and nothing else).
    let out = patchbay(&data, &["ask", "--no-tools", "--kb", "tool", "How long do kakapos live?"]);
    assert!(ok(&out).contains("Ninety years"));

    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one request per round");
    assert_eq!(offered(&requests[0].body), ["knowledge_search"]);
    let tool = &requests[0].body["tools"][0]["function"];
    assert!(tool["parameters"]["properties"]["query"].is_object(), "{tool}");
    assert!(!system_text(&requests[0].body).contains("# Knowledge base"), "tool mode adds no context");

    let messages = requests[1].body["messages"].as_array().unwrap();
    let result = messages.iter().find(|m| m["role"] == "tool").expect("a tool result");
    assert_eq!(result["tool_call_id"], "call_kb");
    let content = result["content"].as_str().map_or_else(|| result["content"].to_string(), str::to_owned);
    let hits: Value = serde_json::from_str(&content).unwrap_or_else(|e| panic!("{e}: {content}"));
    assert_eq!(hits[0]["path"], birds.to_str().unwrap());
    assert_eq!(hits[0]["heading"], "Birds > Parrots");
    assert_eq!(hits[0]["lines"], json!([3, 5]));
    assert!(hits[0]["text"].as_str().unwrap().contains(FACT));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_takes_the_same_kb_flag() {
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Noted [1]."])]).await.unwrap();
    let (_tmp, data, _birds) = setup(&model.url());
    let out = feed(command(&data).args(["chat", "--kb", "auto", "--no-tools"]), "what is a kakapo?\n/quit\n");
    assert!(ok(&out).contains("Noted [1]."));
    assert!(system_text(&model.requests()[0].body).contains(FACT));
}
