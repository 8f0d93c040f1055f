//! `EndpointEmbedder` against a scripted OpenAI-compatible `/v1/embeddings`
//! server (real HTTP on 127.0.0.1): indexing, vector and hybrid search, and
//! clear errors for a 500 and for vectors of the wrong dimension.
//!
//! The server's "model" knows one synonym group: kakapo, parrot and bird
//! share a dimension, so a query for "bird" finds a document that only says
//! "parrot" (BM25 cannot), which is what hybrid search adds.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use patchbay_core::paths::DataDir;
use patchbay_core::rag::{EndpointEmbedder, IndexProgress, KnowledgeBase, RagError, SearchMode};
use patchbay_core::store::Store;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const DIM: usize = 16;

#[derive(Clone, Default)]
struct Seen {
    /// (authorization header, request body) per request.
    requests: Arc<Mutex<Vec<(String, Value)>>>,
}

fn vector(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0.0f32; dim];
    for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
        let slot = match word.trim_end_matches('s') {
            "kakapo" | "parrot" | "bird" => 0,
            "engine" | "motor" => 1,
            other => 2 + other.bytes().map(usize::from).sum::<usize>() % (dim - 2),
        };
        v[slot] += 1.0;
    }
    v
}

async fn embeddings(State(seen): State<Seen>, headers: HeaderMap, Json(body): Json<Value>) -> Response {
    let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
    let calls = {
        let mut requests = seen.requests.lock().unwrap();
        requests.push((auth, body.clone()));
        requests.len()
    };
    let inputs: Vec<String> = serde_json::from_value(body["input"].clone()).unwrap();
    let dim = match body["model"].as_str().unwrap() {
        "broken" => {
            let error =
                json!({"error": {"message": "model not loaded", "type": "server_error", "param": null, "code": null}});
            return (StatusCode::INTERNAL_SERVER_ERROR, Json(error)).into_response();
        }
        // Answers the first request with DIM dimensions, later ones with fewer.
        "shifty" if calls > 1 => DIM / 2,
        _ => DIM,
    };
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| json!({"object": "embedding", "index": i, "embedding": vector(text, dim)}))
        .collect();
    Json(json!({"object": "list", "model": body["model"], "data": data, "usage": {"prompt_tokens": 1, "total_tokens": 1}}))
        .into_response()
}

/// The scripted endpoint; returns its `/v1` base URL and what it saw.
async fn endpoint() -> (String, Seen) {
    let seen = Seen::default();
    let app = axum::Router::new().route("/v1/embeddings", axum::routing::post(embeddings)).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (url, seen)
}

struct Fixture {
    _tmp: tempfile::TempDir,
    kb: KnowledgeBase,
    docs: PathBuf,
}

/// A knowledge base over one folder (samples removed) using `model` at `url`.
fn fixture(url: &str, model: &str) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::new(tmp.path().join("data"));
    let kb = KnowledgeBase::open(&data, Store::open(&data).unwrap()).unwrap();
    kb.remove_folder(&data.path().join("knowledge_base")).unwrap();
    let kb = kb.with_embedder(Some(Arc::new(EndpointEmbedder::new(url, model, Some("sk-test".into())))));
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("birds.md"), "# Wildlife\n\nThe kakapo is a flightless parrot of New Zealand.\n").unwrap();
    std::fs::write(docs.join("cars.md"), "# Cars\n\nA diesel engine needs no spark plugs.\n").unwrap();
    for i in 0..40 {
        std::fs::write(docs.join(format!("note{i:02}.md")), format!("# Note {i}\n\nMeeting minutes number {i}.\n"))
            .unwrap();
    }
    let docs = std::fs::canonicalize(&docs).unwrap();
    kb.add_folder(&docs).unwrap();
    Fixture { _tmp: tmp, kb, docs }
}

async fn index(kb: &KnowledgeBase) -> Result<patchbay_core::rag::IndexReport, RagError> {
    kb.index(Arc::new(|_: &IndexProgress| {}), &CancellationToken::new()).await
}

fn paths(passages: &[patchbay_core::rag::Excerpt]) -> Vec<&Path> {
    passages.iter().map(|p| p.path.as_path()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_vectors_power_vector_and_hybrid_search() {
    let (url, seen) = endpoint().await;
    let f = fixture(&url, "good");
    let report = index(&f.kb).await.unwrap();
    assert_eq!(report.indexed, 42);
    assert_eq!(f.kb.status().unwrap().totals.vectors, f.kb.status().unwrap().totals.chunks);
    {
        let requests = seen.requests.lock().unwrap();
        assert!(requests.iter().all(|(auth, body)| auth == "Bearer sk-test" && body["model"] == "good"));
    }

    // "bird" is not in any document: BM25 finds nothing, the vectors find the parrot.
    assert!(f.kb.search("bird", SearchMode::Bm25, 5).await.unwrap().is_empty());
    let birds = f.docs.join("birds.md");
    let vector = f.kb.search("bird", SearchMode::Vector, 3).await.unwrap();
    assert_eq!(paths(&vector)[0], birds);
    assert!(vector[0].score > 0.3 && vector[0].score > vector[1].score, "{vector:?}");
    let hybrid = f.kb.search("bird", SearchMode::Hybrid, 3).await.unwrap();
    assert_eq!(paths(&hybrid)[0], birds);
    // Where both rankings agree, fusion puts the document first.
    let hybrid = f.kb.search("diesel engine", SearchMode::Hybrid, 3).await.unwrap();
    assert_eq!(paths(&hybrid)[0], f.docs.join("cars.md"));
    assert_eq!(f.kb.default_mode(), SearchMode::Hybrid);

    // Re-indexing unchanged files embeds nothing again.
    let before = seen.requests.lock().unwrap().len();
    assert_eq!(index(&f.kb).await.unwrap().unchanged, 42);
    assert_eq!(seen.requests.lock().unwrap().len(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_from_the_endpoint_is_a_clear_error() {
    let (url, _seen) = endpoint().await;
    let f = fixture(&url, "broken");
    let err = index(&f.kb).await.unwrap_err();
    let RagError::Embedding { detail } = &err else { panic!("{err:?}") };
    assert!(detail.contains("model not loaded"), "{detail}");
    assert!(detail.contains(&url) && detail.contains("broken"), "the error names the endpoint: {detail}");

    let err = f.kb.search("parrot", SearchMode::Vector, 3).await.unwrap_err();
    assert!(matches!(&err, RagError::Embedding { detail } if detail.contains("model not loaded")), "{err:?}");
    // BM25 does not need the endpoint.
    assert!(f.kb.search("parrot", SearchMode::Bm25, 3).await.is_ok());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_of_a_different_dimension_are_refused() {
    let (url, _seen) = endpoint().await;
    let f = fixture(&url, "shifty");
    // The first file's answer sets the dimension; the next file's answer has fewer.
    let err = index(&f.kb).await.unwrap_err();
    let RagError::Embedding { detail } = &err else { panic!("{err:?}") };
    assert!(
        detail.contains(&format!("{}-dimensional", DIM / 2)) && detail.contains(&format!("{DIM} dimensions")),
        "{detail}"
    );
}
