//! Every tool server-everything offers, called through the registry over
//! stdio, legacy SSE and streamable HTTP, and each result turned into the model's and the UI's copies: text,
//! images, annotated content, resource links, embedded text and blob
//! resources, `structuredContent`, and the server's own toggles. The tools
//! that need a hook or a long wait (sampling, elicitation, roots, progress) have
//! their own tests; this one checks that together they cover the whole inventory.

use crate::mcp_common as common;

use common::*;
use patchbay_core::llm::ContentPart;
use patchbay_core::mcp::protocol::content::{ResultLimits, for_model, for_ui};
use patchbay_core::mcp::{CallEvent, CallOptions, McpRegistry};
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Tools exercised by other test files (named there).
const COVERED_ELSEWHERE: [&str; 5] = [
    "echo",                           // mcp_stdio_everything
    "get-env",                        // mcp_stdio_everything
    "get-sum",                        // mcp_stdio_everything
    "trigger-long-running-operation", // mcp_stdio_everything, mcp_http
    "get-roots-list",                 // mcp_server_requests
];

/// Offered only to a client that advertises sampling or elicitation, which a
/// registry without a hook does not; mcp_server_requests calls them with hooks.
const NEED_HOOKS: [&str; 3] = ["trigger-elicitation-request", "trigger-url-elicitation", "trigger-sampling-request"];

/// Tools this file calls.
const CALLED_HERE: [&str; 9] = [
    "get-tiny-image",
    "get-annotated-message",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "simulate-research-query",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_of_server_everything_answers_over_every_transport_and_reaches_model_and_ui() {
    let (configs, running) = everything_on_every_transport().await;
    let registry = registry();
    registry.configure(configs);
    registry.start_all().await;
    for server in ["stdio", "sse", "http"] {
        start_ready(&registry, server).await;
        every_tool(&registry, server).await;
    }
    registry.shutdown().await;
    drop(running);
}

async fn every_tool(registry: &McpRegistry, server: &'static str) {
    let mut offered: Vec<String> = registry.tools(server).unwrap().into_iter().map(|t| t.name.to_string()).collect();
    offered.sort();
    let mut known: Vec<String> = COVERED_ELSEWHERE.iter().chain(&CALLED_HERE).map(|s| (*s).to_owned()).collect();
    known.sort();
    assert_eq!(offered, known, "{server}: a tool is offered that no test calls, or a tested one is gone");
    assert!(NEED_HOOKS.iter().all(|t| !offered.iter().any(|o| o == t)), "{offered:?}");

    let limits = ResultLimits::default();
    let call = |tool: &'static str, args: serde_json::Value| {
        let registry = registry.clone();
        async move {
            registry
                .call_tool(server, tool, args.as_object().cloned(), CallOptions::default(), CancellationToken::new())
                .await
                .unwrap_or_else(|e| panic!("{server} {tool}: {e}"))
        }
    };

    // An image: the model gets the image itself, the UI the block.
    let image = call("get-tiny-image", json!({})).await;
    let model = for_model(&image, &limits);
    assert!(
        model.parts.iter().any(
            |p| matches!(p, ContentPart::Image { mime_type, data } if mime_type == "image/png" && data.len() > 100)
        ),
        "{:?}",
        model.parts.iter().map(kind).collect::<Vec<_>>()
    );
    assert!(for_ui(&image, &limits).content.iter().any(|b| matches!(b, ContentBlock::Image(_))));

    // Annotated content: an error message with an image, both kept in order.
    let annotated = call("get-annotated-message", json!({"messageType": "error", "includeImage": true})).await;
    let blocks = for_ui(&annotated, &limits).content;
    let annotations = serde_json::to_value(&blocks[0]).unwrap()["annotations"].clone();
    assert_eq!(annotations["priority"], 1.0, "{annotations}");
    let model = for_model(&annotated, &limits);
    assert_eq!(model.parts.iter().map(kind).collect::<Vec<_>>(), ["text", "image"]);
    assert!(matches!(&model.parts[0], ContentPart::Text { text } if text.contains("Error: Operation failed")));

    // Resource links: the model gets each link; the UI keeps the blocks.
    let links = call("get-resource-links", json!({"count": 3})).await;
    let uris: Vec<String> = for_model(&links, &limits)
        .parts
        .into_iter()
        .filter_map(|p| match p {
            ContentPart::ResourceLink { uri, .. } => Some(uri),
            _ => None,
        })
        .collect();
    assert_eq!(uris.len(), 3, "{uris:?}");
    assert!(uris.iter().all(|u| u.starts_with("demo://resource/")), "{uris:?}");
    // A link can be followed with resources/read.
    let read = registry.read_resource(server, &uris[1], CancellationToken::new()).await.unwrap();
    assert!(!read.contents.is_empty());

    // An embedded text resource becomes text for the model, with its URI.
    let reference = call("get-resource-reference", json!({"resourceType": "Text", "resourceId": 1})).await;
    let model = text_of(&for_model(&reference, &limits).parts);
    assert!(model.contains("[resource demo://resource/dynamic/text/1]") && model.contains("Resource 1:"), "{model}");

    // Structured content, with the text that says the same.
    let weather = call("get-structured-content", json!({"location": "New York"})).await;
    let ui = for_ui(&weather, &limits);
    let structured = ui.structured_content.expect("structuredContent reaches the UI");
    assert!(structured["temperature"].is_number() && structured["conditions"].is_string(), "{structured}");
    assert!(text_of(&for_model(&weather, &limits).parts).contains("temperature"));

    // A binary resource (gzip of a data: URI, no network): a link for the model, the blob for the UI.
    let gzip = call(
        "gzip-file-as-resource",
        json!({"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resource"}),
    )
    .await;
    let model = for_model(&gzip, &limits);
    assert!(
        matches!(&model.parts[..], [ContentPart::ResourceLink { uri, mime_type: Some(m), .. }] if uri.ends_with("hello.gz") && m == "application/gzip"),
        "{:?}",
        model.parts
    );
    let blob = blob_of(&gzip).expect("the UI keeps the gzip blob");
    assert!(blob.starts_with("H4sI"), "gzip magic in base64: {blob}");
    // As a link, the compressed file is a session resource that can be read.
    let link = call(
        "gzip-file-as-resource",
        json!({"name": "again.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resourceLink"}),
    )
    .await;
    let ContentPart::ResourceLink { uri, .. } = &for_model(&link, &limits).parts[0] else { panic!("{link:?}") };
    let read = registry.read_resource(server, uri, CancellationToken::new()).await.unwrap();
    assert!(serde_json::to_string(&read).unwrap().contains("H4sI"));

    // The server's toggles answer on and off.
    for tool in ["toggle-simulated-logging", "toggle-subscriber-updates"] {
        let on = text(&call(tool, json!({})).await);
        let off = text(&call(tool, json!({})).await);
        assert!(on.contains("Started") && off.contains("Stopped"), "{tool}: {on:?} then {off:?}");
    }

    // A tool that must run as a task (2025-11-25, experimental): over every
    // transport its stages reach the call as progress and its report is the result.
    let (tx, mut rx) = tokio::sync::mpsc::channel(64);
    let options = CallOptions { events: Some(tx), ..CallOptions::default() };
    assert!(registry.runs_as_task(server, "simulate-research-query"), "{server}");
    let topic = json!({"topic": "rust"}).as_object().cloned();
    let research = registry
        .call_tool(server, "simulate-research-query", topic, options, CancellationToken::new())
        .await
        .unwrap_or_else(|e| panic!("{server} simulate-research-query: {e}"));
    let model = for_model(&research, &limits);
    assert!(!model.is_error, "{research:?}");
    assert!(text_of(&model.parts).contains("# Research Report: rust"), "{:?}", model.parts);
    let mut stages = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let CallEvent::Progress { message: Some(message), .. } = event {
            stages.push(message);
        }
    }
    assert!(stages.iter().any(|m| m == "Gathering sources..."), "{server}: {stages:?}");
    assert!(stages.iter().any(|m| m == "Generating report..."), "{server}: {stages:?}");
    // The session is still usable.
    assert_eq!(text(&call("get-sum", json!({"a": 1, "b": 2})).await), "The sum of 1 and 2 is 3.");
}

fn kind(part: &ContentPart) -> &'static str {
    match part {
        ContentPart::Text { .. } => "text",
        ContentPart::Image { .. } => "image",
        ContentPart::Audio { .. } => "audio",
        ContentPart::ResourceLink { .. } => "link",
    }
}

fn text_of(parts: &[ContentPart]) -> String {
    parts
        .iter()
        .filter_map(|p| match p {
            ContentPart::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn blob_of(result: &CallToolResult) -> Option<String> {
    for_ui(result, &ResultLimits::default()).content.into_iter().find_map(|b| match b {
        ContentBlock::Resource(e) => match e.resource {
            ResourceContents::BlobResourceContents { blob, .. } => Some(blob),
            _ => None,
        },
        _ => None,
    })
}
