//! `patchbay kb` against real data directories and folders.

use crate::common::{ok, patchbay};

#[test]
fn add_index_search_and_remove_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("animals.md"), "# Animals\n\n## Birds\n\nThe kakapo is a flightless parrot.\n").unwrap();

    // A fresh data dir lists the shipped samples.
    let samples = data.join("knowledge_base");
    assert_eq!(ok(&patchbay(&data, &["kb", "list"])), format!("{}\n", samples.display()));

    ok(&patchbay(&data, &["kb", "add", docs.to_str().unwrap()]));
    let canonical = std::fs::canonicalize(&docs).unwrap();
    assert_eq!(ok(&patchbay(&data, &["kb", "list"])), format!("{}\n{}\n", samples.display(), canonical.display()));
    let again = patchbay(&data, &["kb", "add", docs.to_str().unwrap()]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already in the knowledge base"));

    let report: serde_json::Value = serde_json::from_str(&ok(&patchbay(&data, &["kb", "index", "--json"]))).unwrap();
    assert_eq!(report["indexed"], 5);

    let hits: serde_json::Value =
        serde_json::from_str(&ok(&patchbay(&data, &["kb", "search", "flightless parrots", "--json", "--top-k", "3"])))
            .unwrap();
    let top = &hits[0];
    assert_eq!(top["path"], canonical.join("animals.md").to_str().unwrap());
    assert_eq!(top["heading"], "Animals > Birds");
    assert_eq!(top["lines"], serde_json::json!([3, 5]));
    assert!(top["text"].as_str().unwrap().contains("kakapo"));
    assert!(top["score"].as_f64().unwrap() > 0.0);

    let chinese: serde_json::Value =
        serde_json::from_str(&ok(&patchbay(&data, &["kb", "search", "扫描版PDF", "--json"]))).unwrap();
    assert!(chinese[0]["path"].as_str().unwrap().ends_with("patchbay-faq.zh.md"), "{chinese}");

    let vector = patchbay(&data, &["kb", "search", "parrot", "--mode", "vector"]);
    assert!(!vector.status.success());
    assert!(String::from_utf8_lossy(&vector.stderr).contains("no embeddings are configured"));

    let status: serde_json::Value = serde_json::from_str(&ok(&patchbay(&data, &["kb", "status", "--json"]))).unwrap();
    assert_eq!(status["totals"]["documents"], 5);
    assert_eq!(status["default_mode"], "bm25");

    ok(&patchbay(&data, &["kb", "remove", docs.to_str().unwrap()]));
    let hits: serde_json::Value =
        serde_json::from_str(&ok(&patchbay(&data, &["kb", "search", "kakapo", "--json"]))).unwrap();
    assert_eq!(hits, serde_json::json!([]));
}

#[test]
fn local_embeddings_from_a_model_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let model = patchbay_test_support::peers::minilm_dir();

    let bad = patchbay(&data, &["kb", "embeddings", "local", "--model-dir", tmp.path().to_str().unwrap()]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("config.json is missing"), "{bad:?}");

    let saved = ok(&patchbay(&data, &["kb", "embeddings", "local", "--model-dir", model.to_str().unwrap()]));
    assert!(saved.contains("embeddings saved") && saved.contains("English only"), "{saved}");
    let report: serde_json::Value = serde_json::from_str(&ok(&patchbay(&data, &["kb", "index", "--json"]))).unwrap();
    assert!(report["chunks"].as_u64().unwrap() > 0);

    let status: serde_json::Value = serde_json::from_str(&ok(&patchbay(&data, &["kb", "status", "--json"]))).unwrap();
    assert_eq!(status["default_mode"], "hybrid");
    assert_eq!(status["totals"]["vectors"], status["totals"]["chunks"]);
    assert_eq!(status["embeddings"]["kind"], "local");

    // The English sample about scanned PDFs, found by meaning ("OCR" is not in the query).
    let hits: serde_json::Value = serde_json::from_str(&ok(&patchbay(
        &data,
        &["kb", "search", "why can't a scanned document be searched", "--mode", "vector", "--json"],
    )))
    .unwrap();
    assert!(hits[0]["path"].as_str().unwrap().ends_with("patchbay-faq.md"), "{hits}");
    assert!(hits[0]["text"].as_str().unwrap().contains("OCR"), "{hits}");

    let off = ok(&patchbay(&data, &["kb", "embeddings", "off"]));
    assert!(off.contains("embeddings off"), "{off}");
}

/// The line of `kb model list` that names `model`.
fn listed<'a>(list: &'a str, model: &str) -> &'a str {
    list.lines().find(|l| l.starts_with(&format!("{model} "))).unwrap_or_else(|| panic!("{model} in {list}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_is_downloaded_from_a_mirror_and_put_to_use() {
    use patchbay_test_support::hub::TestHub;
    let hub =
        TestHub::serve("sentence-transformers/all-MiniLM-L6-v2", &patchbay_test_support::peers::minilm_dir()).await;
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");

    // English documents (the samples' Chinese aside): the English model is suggested.
    let list = ok(&patchbay(&data, &["kb", "model", "list"]));
    assert!(listed(&list, "all-MiniLM-L6-v2").ends_with("not downloaded  (suggested)"), "{list}");
    assert!(listed(&list, "bge-small-zh-v1.5").contains("Chinese and English"), "{list}");

    let bad = patchbay(&data, &["kb", "model", "hub", "hf-mirror.com"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("the model hub address \"hf-mirror.com\" is not usable"));
    assert_eq!(ok(&patchbay(&data, &["kb", "model", "hub", &hub.url])), format!("hub: {}\n", hub.url));

    let early = patchbay(&data, &["kb", "model", "use", "all-MiniLM-L6-v2"]);
    assert!(String::from_utf8_lossy(&early.stderr).contains("run `patchbay kb model get all-MiniLM-L6-v2` first"));
    let unknown = patchbay(&data, &["kb", "model", "get", "gpt-embed"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no model named \"gpt-embed\" is offered"));

    let got = ok(&patchbay(&data, &["kb", "model", "get", "all-MiniLM-L6-v2"]));
    let folder = data.join("models/all-MiniLM-L6-v2");
    assert!(got.contains(&format!("all-MiniLM-L6-v2 is in {}", folder.display())), "{got}");
    let used = ok(&patchbay(&data, &["kb", "model", "use", "all-MiniLM-L6-v2"]));
    assert!(used.contains("embeddings: all-MiniLM-L6-v2 (English)"), "{used}");
    assert!(listed(&ok(&patchbay(&data, &["kb", "model", "list"])), "all-MiniLM-L6-v2").contains("in use"));

    ok(&patchbay(&data, &["kb", "index"]));
    let hits: serde_json::Value = serde_json::from_str(&ok(&patchbay(
        &data,
        &["kb", "search", "why can't a scanned document be searched", "--mode", "vector", "--json"],
    )))
    .unwrap();
    assert!(hits[0]["text"].as_str().unwrap().contains("OCR"), "{hits}");

    // The user's Chinese documents make the multilingual model the suggestion.
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("笔记.md"), "# 笔记\n\n知识库支持中文检索。\n").unwrap();
    ok(&patchbay(&data, &["kb", "add", docs.to_str().unwrap()]));
    ok(&patchbay(&data, &["kb", "index"]));
    let list = ok(&patchbay(&data, &["kb", "model", "list"]));
    assert!(listed(&list, "bge-small-zh-v1.5").ends_with("(suggested)"), "{list}");
    assert!(!listed(&list, "all-MiniLM-L6-v2").contains("suggested"), "{list}");
}
