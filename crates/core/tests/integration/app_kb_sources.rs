//! Settings → Knowledge base → Knowledge sources against a real RAGFlow-shaped server
//! (tests/peers/ragflow_retrieval.py): the page is offered its tool, known by shape, with its text
//! arguments; a preview of a real answer lists the fields to map; a mapped source is tried and
//! saved; a source needs a configured server.

use crate::app_events::Recorder;

use std::sync::Arc;
use std::time::Duration;

use patchbay_core::app::App;
use patchbay_core::config::{ConfigStore, McpServerConfig};
use patchbay_core::mcp::ServerStatus;
use patchbay_core::paths::DataDir;
use patchbay_core::rag::sources::{KnowledgeSource, SourceShape};
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use tokio_util::sync::CancellationToken;

const RAGFLOW: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/peers/ragflow_retrieval.py");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_is_offered_previewed_mapped_tried_and_saved_as_a_source() {
    let temp = tempfile::tempdir().unwrap();
    let data = DataDir::new(temp.path().join("data"));
    let server = McpServerConfig::stdio("ragflow", peers::python().to_str().unwrap(), &[RAGFLOW]);
    ConfigStore::new(Store::open(&data).unwrap()).replace_servers(&[server]).unwrap();
    let (sender, _events) = Recorder::new();
    let app = App::open(data.clone(), Store::open(&data).unwrap(), Arc::new(MemoryStore::default()), sender)
        .unwrap()
        .with_env(|_| None);
    app.start().unwrap();
    for _ in 0..400 {
        if app.registry().status("ragflow").ok() == Some(ServerStatus::Ready) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(app.registry().status("ragflow").unwrap(), ServerStatus::Ready);

    // Offered, known by its shape, the question's argument first; Patchbay's own tools are not.
    let candidates = app.kb_source_candidates();
    assert!(candidates.iter().all(|c| c.server != "builtin"), "{candidates:?}");
    let ragflow = candidates.iter().find(|c| c.tool == "ragflow_retrieval").expect("offered");
    assert_eq!(ragflow.shape, Some(SourceShape::Ragflow));
    assert_eq!(ragflow.text_args, ["question", "rerank_id"]);

    // A preview of its real answer lists the fields of the first result.
    let preview = app
        .kb_preview_source("ragflow", "ragflow_retrieval", "question", "prune roses", CancellationToken::new())
        .await
        .unwrap();
    for field in ["content", "document_name", "similarity"] {
        assert!(preview.fields.contains(&field.to_owned()), "{field} in {:?}", preview.fields);
    }
    assert!(preview.answer.contains("outward-facing bud"), "{}", preview.answer);

    // Mapped on those fields, it is tried as a chat reads it, then saved.
    let mapped = KnowledgeSource {
        name: "Garden".into(),
        server: "ragflow".into(),
        tool: "ragflow_retrieval".into(),
        shape: SourceShape::Mapped {
            query_arg: "question".into(),
            text: "content".into(),
            title: Some("document_name".into()),
            source: None,
        },
        server_id: None,
        tool_fingerprint: None,
    };
    let hits = app.kb_try_source(mapped.clone(), "prune the roses", CancellationToken::new()).await.unwrap();
    assert_eq!(hits[0].document, "garden-roses.docx");
    assert!(hits[0].relevance > 0.5, "{hits:?}");
    // Saved with the identity of the server it was added for.
    let saved = app.kb_put_source(mapped.clone()).unwrap();
    assert_eq!(saved.len(), 1);
    assert!(saved[0].server_id.as_ref().is_some_and(|id| !id.is_empty()), "{saved:?}");
    // And pinned to its tool's definition.
    assert!(saved[0].tool_fingerprint.as_ref().is_some_and(|f| !f.is_empty()), "{saved:?}");
    assert_eq!(KnowledgeSource { server_id: None, tool_fingerprint: None, ..saved[0].clone() }, mapped);
    assert_eq!(app.kb_sources().unwrap(), saved);

    // A source needs a configured server, a name, and for a mapping the text field.
    let nowhere = KnowledgeSource { server: "nope".into(), ..mapped.clone() };
    let nowhere = app.kb_put_source(nowhere).unwrap_err();
    assert_eq!(nowhere.kind(), patchbay_core::app::ErrorKind::NotFound);
    assert_eq!(nowhere.to_string(), "there is no MCP server named \"nope\"");
    let unmapped = KnowledgeSource {
        shape: SourceShape::Mapped { query_arg: "question".into(), text: " ".into(), title: None, source: None },
        ..mapped.clone()
    };
    let refused = app.kb_put_source(unmapped).unwrap_err().to_string();
    assert!(refused.contains("which field holds each result's text"), "{refused}");
    // A preview of a tool the server does not offer says so.
    let bad = app.kb_preview_source("ragflow", "no_such_tool", "q", "x", CancellationToken::new()).await.unwrap_err();
    assert!(bad.to_string().contains("ragflow offers no tool no_such_tool"), "{bad}");
    // Deleting its server drops the source: a server added later under the name gets no questions.
    app.delete_server("ragflow").await.unwrap();
    assert!(app.kb_sources().unwrap().is_empty());
    app.shutdown().await;
}
