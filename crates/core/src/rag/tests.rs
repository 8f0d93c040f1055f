//! Knowledge-base behaviour end to end on real folders: registration, samples,
//! incremental indexing, Chinese retrieval, hybrid search, bad input, the watcher.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::embed::HashEmbedder;
use super::kb::SAMPLES;
use super::*;
use crate::folder::FolderError;
use crate::paths::DataDir;
use crate::store::Store;
use crate::text::analyze;

struct Fixture {
    _tmp: tempfile::TempDir,
    data: DataDir,
    docs: PathBuf,
    kb: KnowledgeBase,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let data = DataDir::new(tmp.path().join("data"));
    let store = Store::open(&data).unwrap();
    let kb = KnowledgeBase::open(&data, store).unwrap();
    let docs = tmp.path().join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    Fixture { _tmp: tmp, data, docs, kb }
}

/// A knowledge base of one indexed file, `birds.md` (no samples).
async fn birds() -> Fixture {
    let f = fixture();
    f.kb.remove_folder(&f.data.path().join("knowledge_base")).unwrap();
    std::fs::write(f.docs.join("birds.md"), "# Birds\n\nThe kakapo is a flightless nocturnal parrot.\n").unwrap();
    f.kb.add_folder(&f.docs).unwrap();
    index(&f.kb).await;
    f
}

fn quiet() -> Arc<dyn Fn(&IndexProgress) + Send + Sync> {
    Arc::new(|_: &IndexProgress| {})
}

async fn index(kb: &KnowledgeBase) -> IndexReport {
    kb.index(quiet(), &CancellationToken::new()).await.unwrap()
}

async fn bm25(kb: &KnowledgeBase, query: &str) -> Vec<Excerpt> {
    kb.search(query, SearchMode::Bm25, 5).await.unwrap()
}

fn skip_of<'a>(report: &'a IndexReport, name: &str) -> Option<&'a Skip> {
    report.skipped.iter().find(|s| s.path.file_name().is_some_and(|n| n == name)).map(|s| &s.reason)
}

#[tokio::test]
async fn fresh_data_dir_has_the_samples_registered_and_removable() {
    let f = fixture();
    let samples = f.data.path().join("knowledge_base");
    assert_eq!(f.kb.folders().unwrap(), std::slice::from_ref(&samples));
    assert!(samples.join("patchbay-faq.md").is_file());
    f.kb.remove_folder(&samples).unwrap();
    assert!(f.kb.folders().unwrap().is_empty());
    // Re-opening does not seed again: removal sticks.
    let kb = KnowledgeBase::open(&f.data, Store::open(&f.data).unwrap()).unwrap();
    assert!(kb.folders().unwrap().is_empty());
    assert!(samples.join("patchbay-faq.md").is_file(), "the user's files stay");
}

#[tokio::test]
async fn folders_are_registered_once_and_checked() {
    let f = fixture();
    let added = f.kb.add_folder(&f.docs).unwrap();
    assert_eq!(added, std::fs::canonicalize(&f.docs).unwrap());
    assert!(matches!(f.kb.add_folder(&f.docs), Err(RagError::AlreadyRegistered { .. })));
    assert!(matches!(f.kb.add_folder(&f.docs.join("nope")), Err(RagError::Folder(FolderError::NotFound { .. }))));
    std::fs::write(f.docs.join("file.md"), "x").unwrap();
    assert!(matches!(f.kb.add_folder(&f.docs.join("file.md")), Err(RagError::Folder(FolderError::NotAFolder { .. }))));
    assert!(matches!(f.kb.remove_folder(Path::new("/not/registered")), Err(RagError::NotRegistered { .. })));
}

#[tokio::test]
async fn chinese_queries_find_the_chinese_samples() {
    let f = fixture();
    let report = index(&f.kb).await;
    assert_eq!(report.indexed, SAMPLES.len());
    let cases = [
        ("扫描版PDF为什么搜不到", "patchbay-faq.zh.md", "没有文字层"),
        ("API密钥保存在哪里", "patchbay-faq.zh.md", "钥匙串"),
        ("倒数排名融合", "检索说明.md", "RRF"),
        ("中断索引会不会留下一半的文件", "检索说明.md", "事务"),
    ];
    for (query, file, needle) in cases {
        let hits = bm25(&f.kb, query).await;
        let top = hits.first().unwrap_or_else(|| panic!("no hit for {query}"));
        assert!(top.path.ends_with(file), "{query}: top hit {:?}", top.path);
        assert!(top.text.contains(needle), "{query}: {}", top.text);
    }
    // Mixed Chinese/English query.
    let hits = bm25(&f.kb, "SQLite FTS5 全文索引").await;
    assert!(hits[0].path.ends_with("检索说明.md") || hits[0].path.ends_with("retrieval.md"), "{hits:?}");
}

#[tokio::test]
async fn english_queries_are_stemmed_and_cite_heading_and_lines() {
    let f = fixture();
    index(&f.kb).await;
    let hits = bm25(&f.kb, "scanned PDFs without text").await;
    let top = &hits[0];
    assert!(top.path.ends_with("patchbay-faq.md"), "{top:?}");
    assert_eq!(top.heading, "Patchbay FAQ > Troubleshooting > A scanned PDF is not found");
    let source = std::fs::read_to_string(&top.path).unwrap();
    let lines: Vec<&str> = source.lines().collect();
    assert_eq!(lines[top.line_start - 1], "### A scanned PDF is not found");
    assert_eq!(lines[top.line_start - 1..top.line_end].join("\n"), top.text);
    assert!(top.score > 0.0);
}

#[tokio::test]
async fn reindexing_is_incremental_and_deleted_files_leave() {
    let f = fixture();
    f.kb.add_folder(&f.docs).unwrap();
    std::fs::write(f.docs.join("a.md"), "# Alpha\n\nzebra crossing rules\n").unwrap();
    std::fs::write(f.docs.join("b.txt"), "giraffe necks are long\n").unwrap();
    let first = index(&f.kb).await;
    assert_eq!(first.indexed, SAMPLES.len() + 2);
    let again = index(&f.kb).await;
    assert_eq!((again.indexed, again.unchanged), (0, SAMPLES.len() + 2));

    std::fs::write(f.docs.join("a.md"), "# Alpha\n\nokapi stripes\n").unwrap();
    std::fs::remove_file(f.docs.join("b.txt")).unwrap();
    let third = index(&f.kb).await;
    assert_eq!((third.indexed, third.removed), (1, 1));
    assert!(bm25(&f.kb, "zebra").await.is_empty());
    assert!(bm25(&f.kb, "giraffe").await.is_empty());
    assert_eq!(bm25(&f.kb, "okapi").await.len(), 1);

    // Changing the chunking settings re-chunks everything.
    let mut settings = f.kb.settings().unwrap();
    settings.chunking.chunk_tokens = 64;
    f.kb.save_settings(&settings).unwrap();
    assert_eq!(index(&f.kb).await.indexed, SAMPLES.len() + 1);
}

#[tokio::test]
async fn removing_a_folder_drops_its_documents() {
    let f = fixture();
    f.kb.add_folder(&f.docs).unwrap();
    std::fs::write(f.docs.join("a.md"), "walrus tusks\n").unwrap();
    index(&f.kb).await;
    assert_eq!(bm25(&f.kb, "walrus").await.len(), 1);
    f.kb.remove_folder(&f.docs).unwrap();
    assert!(bm25(&f.kb, "walrus").await.is_empty());
    let totals = f.kb.status().unwrap().totals;
    assert_eq!(totals.documents as usize, SAMPLES.len());
}

#[tokio::test]
async fn progress_counts_files_and_cancellation_stops_between_files() {
    let f = fixture();
    f.kb.add_folder(&f.docs).unwrap();
    for i in 0..6 {
        std::fs::write(f.docs.join(format!("f{i}.txt")), format!("document number {i}\n")).unwrap();
    }
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    index(&f.kb).await;
    let report =
        f.kb.index(Arc::new(move |p: &IndexProgress| log.lock().unwrap().push(p.clone())), &CancellationToken::new())
            .await
            .unwrap();
    assert_eq!(report.unchanged, SAMPLES.len() + 6);
    let events = seen.lock().unwrap().clone();
    let total = SAMPLES.len() + 6;
    assert_eq!(events.len(), total + 1);
    assert!(events.iter().all(|e| e.files_total == total));
    assert_eq!(events[3].files_done, 3);
    assert!(events[3].current.is_some());
    assert_eq!(events.last().unwrap(), &IndexProgress { files_done: total, files_total: total, current: None });

    std::fs::write(f.docs.join("f0.txt"), "changed\n").unwrap();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let err =
        f.kb.index(
            Arc::new(move |p: &IndexProgress| {
                if p.files_done == 1 {
                    stop.cancel()
                }
            }),
            &cancel,
        )
        .await
        .unwrap_err();
    assert!(matches!(err, RagError::Cancelled), "{err}");
}

// Symlinks and FIFOs are made with Unix calls; the skipping logic itself is portable.
#[cfg(unix)]
#[tokio::test]
async fn bad_input_is_reported_and_the_run_goes_on() {
    let f = fixture();
    f.kb.add_folder(&f.docs).unwrap();
    let d = &f.docs;
    std::fs::write(d.join("good.md"), "# Good\n\nnarwhal horn facts\n").unwrap();
    // A 2 GB sparse file.
    std::fs::File::create(d.join("huge.txt")).unwrap().set_len(2 << 30).unwrap();
    // Binary content named .txt.
    std::fs::write(d.join("binary.txt"), (0..8192u32).map(|i| (i * 31 % 251) as u8).collect::<Vec<u8>>()).unwrap();
    // A PDF without a text layer: a valid one-page PDF that draws nothing.
    std::fs::write(d.join("scan.pdf"), blank_pdf()).unwrap();
    // A symlink loop, a dangling symlink and a FIFO.
    std::fs::create_dir(d.join("sub")).unwrap();
    std::os::unix::fs::symlink(d, d.join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(d.join("missing.md"), d.join("dangling.md")).unwrap();
    let fifo = d.join("pipe.txt");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // Unknown type and a non-UTF-8 file in an unrecognisable encoding.
    std::fs::write(d.join("photo.png"), b"\x89PNG\r\n\x1a\n").unwrap();

    let report = index(&f.kb).await;
    assert!(
        matches!(skip_of(&report, "huge.txt"), Some(Skip::TooLarge { size, .. }) if *size == 2 << 30),
        "{report:#?}"
    );
    assert_eq!(skip_of(&report, "binary.txt"), Some(&Skip::Binary));
    assert_eq!(skip_of(&report, "scan.pdf"), Some(&Skip::NoText));
    assert_eq!(skip_of(&report, "pipe.txt"), Some(&Skip::NotRegular));
    assert_eq!(skip_of(&report, "photo.png"), Some(&Skip::Unsupported));
    assert!(matches!(skip_of(&report, "dangling.md"), Some(Skip::Unreadable { .. })), "{report:#?}");
    assert!(
        matches!(skip_of(&report, "loop"), Some(Skip::Unreadable { detail }) if detail.contains("loop")),
        "{report:#?}"
    );
    assert_eq!(bm25(&f.kb, "narwhal").await.len(), 1);
    // The status keeps the reasons for the UI.
    let status = f.kb.status().unwrap();
    assert!(status.skipped.iter().any(|s| s.path.ends_with("scan.pdf") && s.reason == Skip::NoText));
    let folder = status.folders.iter().find(|s| s.path == std::fs::canonicalize(d).unwrap()).unwrap();
    assert_eq!(folder.documents, 1);
    assert!(folder.skipped >= 7);
}

#[tokio::test]
async fn a_folder_deleted_while_indexing_is_reported_and_its_files_leave() {
    let f = fixture();
    let folder = f.kb.add_folder(&f.docs).unwrap();
    for i in 0..5 {
        std::fs::write(f.docs.join(format!("n{i}.md")), format!("quokka note {i}\n")).unwrap();
    }
    index(&f.kb).await;
    for i in 0..5 {
        std::fs::write(f.docs.join(format!("n{i}.md")), format!("quokka changed {i}\n")).unwrap();
    }
    let docs = f.docs.clone();
    let gone = Arc::new(Mutex::new(false));
    let flag = Arc::clone(&gone);
    let report =
        f.kb.index(
            Arc::new(move |p: &IndexProgress| {
                let mut gone = flag.lock().unwrap();
                if p.current.as_ref().is_some_and(|c| c.starts_with(&docs)) && !*gone {
                    std::fs::remove_dir_all(&docs).unwrap();
                    *gone = true;
                }
            }),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(*gone.lock().unwrap());
    assert_eq!(report.skipped.iter().filter(|s| matches!(s.reason, Skip::Unreadable { .. })).count(), 5);
    assert_eq!(report.removed, 5);
    assert!(bm25(&f.kb, "quokka").await.is_empty());
    // The next run reports the folder as missing and keeps going.
    let next = index(&f.kb).await;
    assert_eq!(next.missing_folders, [folder]);
    assert_eq!(next.unchanged, SAMPLES.len());
}

#[tokio::test]
async fn hybrid_and_vector_search_use_the_embedder() {
    let f = fixture();
    let kb = f.kb.clone().with_embedder(Some(Arc::new(HashEmbedder)));
    assert_eq!(kb.default_mode(), SearchMode::Hybrid);
    let report = index(&kb).await;
    assert_eq!(report.indexed, SAMPLES.len());
    assert_eq!(kb.status().unwrap().totals.vectors, kb.status().unwrap().totals.chunks);
    let vector = kb.search("scanned PDF text layer OCR", SearchMode::Vector, 3).await.unwrap();
    assert!(vector[0].path.ends_with("patchbay-faq.md"), "{vector:?}");
    let hybrid = kb.search("scanned PDF text layer OCR", SearchMode::Hybrid, 3).await.unwrap();
    assert_eq!(hybrid.len(), 3);
    assert!(hybrid[0].text.contains("OCR"), "{hybrid:?}");
    // Without an embedder, vector search is refused plainly.
    assert!(matches!(f.kb.search("x", SearchMode::Vector, 3).await, Err(RagError::NoEmbeddings)));
    assert_eq!(f.kb.default_mode(), SearchMode::Bm25);
}

#[tokio::test]
async fn html_docx_and_code_files_are_indexed_as_text() {
    let f = fixture();
    f.kb.add_folder(&f.docs).unwrap();
    std::fs::write(
        f.docs.join("page.html"),
        "<h1>Pangolin</h1><script>var armadillo=1</script><p>scales &amp; claws</p>",
    )
    .unwrap();
    std::fs::write(f.docs.join("lib.rs"), "/// Computes the capybara score.\nfn capybara() {}\n").unwrap();
    std::fs::write(f.docs.join("memo.docx"), docx_with("Axolotl regeneration")).unwrap();
    let report = index(&f.kb).await;
    assert_eq!(report.indexed, SAMPLES.len() + 3, "{report:#?}");
    let html = bm25(&f.kb, "pangolin claws").await;
    assert_eq!(html[0].heading, "Pangolin");
    assert!(bm25(&f.kb, "armadillo").await.is_empty());
    assert!(bm25(&f.kb, "capybara").await[0].path.ends_with("lib.rs"));
    assert!(bm25(&f.kb, "axolotl").await[0].path.ends_with("memo.docx"));
}

#[tokio::test]
async fn the_watcher_indexes_new_and_deleted_files() {
    let f = fixture();
    f.kb.add_folder(&f.docs).unwrap();
    index(&f.kb).await;
    let runs = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&runs);
    let watcher =
        f.kb.watch(
            Duration::from_millis(200),
            Arc::new(move |r: Result<IndexReport, RagError>| {
                r.unwrap();
                *counter.lock().unwrap() += 1;
            }),
        )
        .unwrap();
    std::fs::write(f.docs.join("new.md"), "meerkat sentinel\n").unwrap();
    wait_for(|| async { bm25(&f.kb, "meerkat").await.len() == 1 }).await;
    std::fs::remove_file(f.docs.join("new.md")).unwrap();
    wait_for(|| async { bm25(&f.kb, "meerkat").await.is_empty() }).await;
    wait_for(|| async { *runs.lock().unwrap() >= 2 }).await;
    drop(watcher);
}

async fn wait_for<F, Fut>(mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("condition not met within 10 s");
}

/// A minimal valid PDF with one empty page (no text layer).
pub(crate) fn blank_pdf() -> Vec<u8> {
    pdf_with("")
}

/// A minimal valid PDF with one page showing `text` (ASCII, no parentheses) in Helvetica.
pub(crate) fn pdf_with(text: &str) -> Vec<u8> {
    let content = if text.is_empty() { String::new() } else { format!("BT /F1 12 Tf 20 100 Td ({text}) Tj ET") };
    let stream = format!("<< /Length {} >>\nstream\n{content}\nendstream", content.len());
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] /Contents 4 0 R \
         /Resources << /Font << /F1 5 0 R >> >> >>",
        &stream,
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n{body}\nendobj\n", i + 1).bytes());
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for o in offsets {
        pdf.extend(format!("{o:010} 00000 n \n").bytes());
    }
    pdf.extend(format!("trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n", objects.len() + 1).bytes());
    pdf
}

/// A minimal DOCX holding one paragraph.
pub(crate) fn docx_with(text: &str) -> Vec<u8> {
    use std::io::Write;
    let mut buf = std::io::Cursor::new(Vec::new());
    let mut zip = zip::ZipWriter::new(&mut buf);
    let opts = zip::write::SimpleFileOptions::default();
    zip.start_file("word/document.xml", opts).unwrap();
    write!(zip, "<w:document><w:body><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:body></w:document>").unwrap();
    zip.finish().unwrap();
    buf.into_inner()
}

#[tokio::test]
async fn auto_context_keeps_matching_passages_within_the_token_budget() {
    use crate::agent::Retriever as _;
    let f = fixture();
    f.kb.remove_folder(&f.data.path().join("knowledge_base")).unwrap();
    let long = "kakapo ".repeat(3_000);
    std::fs::write(f.docs.join("long.md"), format!("# Long\n\n{long}\n")).unwrap();
    std::fs::write(f.docs.join("short.md"), "# Short\n\nA kakapo is a parrot.\n").unwrap();
    std::fs::write(f.docs.join("other.md"), "# Other\n\nNothing about birds here.\n").unwrap();
    f.kb.add_folder(&f.docs).unwrap();
    index(&f.kb).await;

    let options = ContextOptions { max_tokens: 300, ..ContextOptions::default() };
    let passages = f.kb.chat_retriever(options).retrieve("kakapo", CancellationToken::new()).await.unwrap().passages;
    // Only matching passages; the budget holds (the first passage is cut to fit, never dropped).
    assert!(!passages.is_empty());
    assert!(passages.iter().all(|p| p.text.contains("kakapo")), "{passages:?}");
    let tokens: u32 = passages.iter().map(|p| crate::agent::budget::estimate_text(&p.text)).sum();
    assert!(tokens <= 300, "{tokens} tokens");
    assert!(passages.iter().all(|p| p.lines.is_some() && p.heading.is_some()));

    // A query nothing matches gives no context at all.
    let none = f.kb.chat_retriever(ContextOptions::default()).retrieve("zebra", CancellationToken::new()).await;
    assert_eq!(none.unwrap(), crate::agent::Retrieved::default());
}

/// The sources "auto" would cite for `query` with an assistant's default limits.
async fn cited(kb: &KnowledgeBase, query: &str) -> Vec<String> {
    use crate::agent::Retriever as _;
    let passages = kb.chat_retriever(ContextOptions::default()).retrieve(query, CancellationToken::new()).await;
    passages.unwrap().passages.into_iter().map(|p| p.source.rsplit('/').next().unwrap_or_default().to_owned()).collect()
}

#[tokio::test]
async fn auto_context_cites_nothing_for_what_the_documents_do_not_answer_in_any_collection() {
    let f = fixture();
    index(&f.kb).await;
    // The shipped samples: a FAQ and notes about Patchbay, in English and Chinese.
    for unrelated in [
        "[use-tool] please echo something",
        "What is the capital of France?",
        "Please write a haiku about autumn leaves",
        "Tell me a joke",
        "今天天气怎么样？",
        "请帮我写一首关于大海的诗",
    ] {
        assert_eq!(cited(&f.kb, unrelated).await, Vec::<String>::new(), "{unrelated}");
    }
    for (related, source) in [
        ("How do I add a folder?", "patchbay-faq.md"),
        ("Please tell me where my data is stored on Linux", "patchbay-faq.md"),
        ("Which model providers work with Patchbay?", "patchbay-faq.md"),
        ("Why is a scanned PDF not found?", "patchbay-faq.md"),
        ("请问数据保存在哪里？", "patchbay-faq.zh.md"),
        ("如何添加文件夹", "patchbay-faq.zh.md"),
    ] {
        let sources = cited(&f.kb, related).await;
        assert_eq!(sources.first().map(String::as_str), Some(source), "{related}: {sources:?}");
    }

    // Another collection, of another size and subject: the same floor holds.
    f.kb.remove_folder(&f.data.path().join("knowledge_base")).unwrap();
    for (name, text) in [
        (
            "kakapo.md",
            "# Kakapo\n\nThe kakapo is a flightless, nocturnal parrot of New Zealand. It is the heaviest \
                       parrot in the world and may live for ninety years.\n",
        ),
        (
            "kiwi.md",
            "# Kiwi\n\nThe kiwi is a flightless bird of New Zealand that lays a very large egg for its size.\n",
        ),
        (
            "tui.md",
            "# Tui\n\nThe tui is a songbird that sings loudly; it can imitate other birds and even human speech.\n",
        ),
    ] {
        std::fs::write(f.docs.join(name), text).unwrap();
    }
    f.kb.add_folder(&f.docs).unwrap();
    index(&f.kb).await;
    for unrelated in ["[use-tool] please echo something", "How do I add a folder?", "What is the capital of France?"] {
        assert_eq!(cited(&f.kb, unrelated).await, Vec::<String>::new(), "{unrelated}");
    }
    assert_eq!(cited(&f.kb, "Which parrot is the heaviest?").await.first().map(String::as_str), Some("kakapo.md"));
    assert_eq!(cited(&f.kb, "Can a tui imitate speech?").await.first().map(String::as_str), Some("tui.md"));
}

#[tokio::test]
async fn an_assistants_limits_bound_the_passages_and_a_stricter_floor_drops_partial_matches() {
    let f = fixture();
    index(&f.kb).await;
    let query = "How do I add a folder to the knowledge base?";
    let found = f.kb.search(query, SearchMode::Bm25, 10).await.unwrap();
    assert!(found.len() >= 3, "{found:?}");
    assert!(found.iter().all(|p| (0.0..=1.0).contains(&p.term_match)), "{found:?}");
    let best = found.iter().map(Excerpt::relevance).fold(0.0, f64::max);
    assert_eq!(best, 1.0, "the FAQ's answer has every word asked: {found:?}");
    // top k
    assert_eq!(chat::within_limits(found.clone(), 2, 0.0, u32::MAX).len(), 2);
    // The floor keeps the full match and drops the partial ones, in their order.
    let kept = chat::within_limits(found.clone(), 10, 0.9, u32::MAX);
    assert!(!kept.is_empty() && kept.len() < found.len(), "{kept:?}");
    assert!(kept.iter().all(|p| p.relevance() >= 0.9));
    assert_eq!(kept[0].heading, "Patchbay FAQ > Knowledge base > How do I add a folder?");
    // The budget: the first passage is cut to fit, never dropped.
    assert!(crate::agent::budget::estimate_text(&found[0].text) > 20);
    let tight = chat::within_limits(found, 10, 0.0, 20);
    assert_eq!(tight.len(), 1);
    assert!(crate::agent::budget::estimate_text(&tight[0].text) <= 20);
}

#[test]
fn tool_mode_widens_any_tool_selection_to_the_knowledge_tool() {
    use crate::agent::ToolSelection;
    let only = |tools: &[&str]| ToolSelection::Only {
        servers: ["files".to_owned()].into(),
        tools: tools.iter().map(|t| (*t).to_owned()).collect(),
    };
    assert_eq!(chat::offer_tool(ToolSelection::All), ToolSelection::All);
    assert_eq!(
        chat::offer_tool(ToolSelection::None),
        ToolSelection::Only { servers: Default::default(), tools: ["builtin/knowledge_search".to_owned()].into() }
    );
    assert_eq!(chat::offer_tool(only(&["git/log"])), only(&["git/log", "builtin/knowledge_search"]));
}

/// `SqliteIndex` over a fresh store with one registered folder, `/kb`.
fn bare_index() -> (tempfile::TempDir, Store, SqliteIndex) {
    let tmp = tempfile::tempdir().unwrap();
    let store = Store::open(&DataDir::new(tmp.path().join("data"))).unwrap();
    store
        .write(|tx| -> Result<(), crate::store::StoreError> {
            tx.execute("INSERT INTO kb_folders (path, added_at) VALUES ('/kb', 0)", []).map_err(|e| store.error(e))?;
            Ok(())
        })
        .unwrap();
    let index = SqliteIndex::new(store.clone());
    (tmp, store, index)
}

/// Puts `/kb/<name>` with one chunk per text, analysed as documents.
fn put(index: &SqliteIndex, name: &str, texts: &[&str]) {
    let doc = store::DocumentRecord {
        folder: PathBuf::from("/kb"),
        path: PathBuf::from("/kb").join(name),
        fingerprint: format!("{name}:{}", texts.join("|")),
        kind: "text",
        bytes: 0,
    };
    let chunks: Vec<store::ChunkRecord> = texts
        .iter()
        .map(|t| {
            let mut terms = String::new();
            analyze::push_terms(t, analyze::Purpose::Document, &mut terms);
            store::ChunkRecord {
                chunk: Chunk { text: (*t).to_owned(), heading: String::new(), line_start: 1, line_end: 1 },
                terms,
                vector: None,
            }
        })
        .collect();
    index.put_document(&doc, &chunks, None).unwrap();
}

fn query(index: &SqliteIndex, q: &str, k: usize) -> Vec<(i64, f64)> {
    let terms = analyze::terms(q, analyze::Purpose::Query);
    index.bm25(&terms, k).unwrap().iter().map(|p| (p.chunk_id, p.score)).collect()
}

const CORPUS: &[(&str, &[&str])] = &[
    (
        "wings.md",
        &[
            "Boundary layer flow over swept wings at supersonic speeds.",
            "Heat transfer in the laminar boundary layer; heat flux measured on the wing.",
            "",
            "Wing wing wing: a chunk that repeats one word, and is short.",
        ],
    ),
    (
        "shells.md",
        &[
            "Buckling of thin cylindrical shells under axial compression and external pressure.",
            "Shells, plates and beams: vibration of thin plates, buckling of plates.",
            "知识库 支持 中文 检索, and English heat too.",
        ],
    ),
    (
        "flow.md",
        &[
            "Supersonic flow past a cone; shock waves and the pressure on the cone surface.",
            "Pressure distribution, pressure gradient and pressure drag of slender bodies in supersonic flow.",
            "The the the of and: stop words only.",
            "Laminar flow, turbulent flow, transition of the boundary layer in flow over a flat plate.",
        ],
    ),
];

const QUERIES: &[&str] = &[
    "boundary layer",
    "pressure pressure supersonic",
    "heat transfer wing",
    "buckling shells plates",
    "flow",
    "中文 检索 heat",
    "cone shock drag slender",
    "nothing matches zyzzyva",
];

/// The ranking FTS5's own `bm25()` gives over the same stored terms: each chunk's score over the
/// chunks plus its document's over the documents (their chunks' terms joined), best first, ties by id.
fn fts5_ranking(store: &Store, q: &str, k: usize) -> Vec<(i64, f64)> {
    let mut unique: Vec<String> = Vec::new();
    for t in analyze::terms(q, analyze::Purpose::Query) {
        if !unique.contains(&t) {
            unique.push(t);
        }
    }
    if unique.is_empty() {
        return Vec::new();
    }
    let expr = unique.iter().map(|t| format!("\"{t}\"")).collect::<Vec<_>>().join(" OR ");
    let scores = |table: &str| -> std::collections::HashMap<i64, f64> {
        store
            .read(|c| {
                let mut stmt =
                    c.prepare(&format!("SELECT rowid, -bm25({table}) FROM {table} WHERE {table} MATCH ?1"))?;
                stmt.query_map([&expr], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()
            })
            .unwrap()
    };
    let (chunks, docs) = (scores("fts"), scores("fts_docs"));
    let doc_of: std::collections::HashMap<i64, i64> = store
        .read(|c| {
            let mut stmt = c.prepare("SELECT id, doc_id FROM kb_chunks")?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect()
        })
        .unwrap();
    let mut ranked: Vec<(i64, f64)> = chunks.into_iter().map(|(id, s)| (id, s + docs[&doc_of[&id]])).collect();
    ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    ranked.truncate(k);
    ranked
}

fn fill_fts5(store: &Store) {
    store
        .write(|tx| -> Result<(), crate::store::StoreError> {
            tx.execute_batch(
                "DROP TABLE IF EXISTS temp.fts; DROP TABLE IF EXISTS temp.fts_docs; \
                 CREATE VIRTUAL TABLE temp.fts USING fts5(terms, content='', tokenize='unicode61 remove_diacritics 0'); \
                 INSERT INTO temp.fts (rowid, terms) SELECT id, terms FROM kb_chunks; \
                 CREATE VIRTUAL TABLE temp.fts_docs USING fts5(terms, content='', tokenize='unicode61 remove_diacritics 0'); \
                 INSERT INTO temp.fts_docs (rowid, terms) \
                 SELECT doc_id, group_concat(terms, ' ') FROM (SELECT doc_id, terms FROM kb_chunks ORDER BY doc_id, id) \
                 GROUP BY doc_id;",
            )
            .map_err(|e| store.error(e))
        })
        .unwrap();
}

fn assert_same_ranking(ours: &[(i64, f64)], fts: &[(i64, f64)], q: &str) {
    assert_eq!(ours.iter().map(|r| r.0).collect::<Vec<_>>(), fts.iter().map(|r| r.0).collect::<Vec<_>>(), "{q}");
    for (a, b) in ours.iter().zip(fts) {
        assert!((a.1 - b.1).abs() <= 1e-9, "{q}: chunk {} scores {} here, {} in FTS5", a.0, a.1, b.1);
    }
}

#[test]
fn bm25_of_chunks_and_documents_matches_fts5() {
    let (_tmp, store, index) = bare_index();
    for (name, texts) in CORPUS {
        put(&index, name, texts);
    }
    fill_fts5(&store);
    let mut matched = 0;
    for q in QUERIES {
        for k in [1, 3, 100] {
            let ours = query(&index, q, k);
            assert_same_ranking(&ours, &fts5_ranking(&store, q, k), q);
            matched += ours.len();
        }
    }
    assert!(matched > 40, "the queries match: {matched}");

    // After writes that went through the in-memory postings (built by the
    // queries above): a re-put document, a removed one, a new one.
    put(&index, "wings.md", &["Wing flutter at transonic speeds.", "Boundary layer suction on a wing."]);
    assert!(index.remove_document(Path::new("/kb/shells.md")).unwrap());
    put(&index, "cones.md", &["Cone in supersonic flow; pressure on a cone."]);
    fill_fts5(&store);
    for q in QUERIES.iter().chain(&["flutter transonic", "buckling"]) {
        assert_same_ranking(&query(&index, q, 100), &fts5_ranking(&store, q, 100), q);
    }

    // Enough documents come and go for both indexes to compact their dead slots, and one
    // document is longer than a batch of the load from the database.
    let long: Vec<String> = (0..4_500).map(|i| format!("panel {i} flutter boundary")).collect();
    put(&index, "long.md", &long.iter().map(String::as_str).collect::<Vec<_>>());
    for i in 0..600 {
        put(&index, &format!("tmp{i}.md"), &["supersonic cone boundary layer", "heat flux"]);
    }
    for i in 0..600 {
        assert!(index.remove_document(Path::new(&format!("/kb/tmp{i}.md"))).unwrap());
    }
    fill_fts5(&store);
    let reloaded = SqliteIndex::new(store.clone());
    for q in QUERIES.iter().chain(&["flutter transonic", "panel 4321 flutter"]) {
        let fts = fts5_ranking(&store, q, 100);
        assert_same_ranking(&query(&index, q, 100), &fts, q);
        assert_same_ranking(&query(&reloaded, q, 100), &fts, q);
    }
}

#[test]
fn bm25_postings_follow_puts_and_removals() {
    let (_tmp, _store, index) = bare_index();
    put(&index, "a.md", &["The capybara grazes by the river."]);
    put(&index, "b.md", &["A heron waits by the river."]);
    put(&index, "c.md", &["Pond weed."]);
    // The first query builds the postings from the stored terms.
    assert_eq!(query(&index, "capybara", 5).len(), 1);
    assert_eq!(query(&index, "river", 5).len(), 2);

    // Re-put with new text: the old words stop matching, the new ones match.
    put(&index, "a.md", &["An axolotl sleeps in the lake."]);
    assert!(query(&index, "capybara", 5).is_empty());
    let hits = index.bm25(&analyze::terms("axolotl", analyze::Purpose::Query), 5).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].path, Path::new("/kb/a.md"));
    assert!(hits[0].text.contains("axolotl"));
    assert_eq!(query(&index, "river", 5).len(), 1);

    // A removed document stops matching; N shrinks (idf of what is left changes).
    let before = query(&index, "heron", 5);
    assert!(index.remove_document(Path::new("/kb/a.md")).unwrap());
    assert!(!index.remove_document(Path::new("/kb/a.md")).unwrap());
    assert!(query(&index, "axolotl", 5).is_empty());
    let after = query(&index, "heron", 5);
    assert_eq!(after.len(), 1);
    assert_ne!(before[0].1, after[0].1, "N went from 3 to 2");

    // Many writes: dead slots are compacted away and rankings stay exact.
    for round in 0..40 {
        let texts: Vec<String> = (0..20).map(|i| format!("round{round} item {i} heron lake")).collect();
        put(&index, "many.md", &texts.iter().map(String::as_str).collect::<Vec<_>>());
    }
    assert_eq!(query(&index, "heron", 100).len(), 21, "20 chunks of many.md and b.md");
    assert!(query(&index, "round38", 100).is_empty());
    assert_eq!(query(&index, "round39", 100).len(), 20);
}

#[tokio::test]
async fn removing_a_folder_drops_its_passages_from_search() {
    let f = fixture();
    std::fs::write(f.docs.join("okapi.md"), "# Okapi\n\nThe okapi lives in the rainforest.\n").unwrap();
    f.kb.add_folder(&f.docs).unwrap();
    index(&f.kb).await;
    assert_eq!(bm25(&f.kb, "okapi").await.len(), 1);
    f.kb.remove_folder(&f.docs).unwrap();
    assert!(bm25(&f.kb, "okapi").await.is_empty());
}

/// An embedder whose endpoint is down: hybrid search fails.
struct DownEmbedder;

#[async_trait::async_trait]
impl Embedder for DownEmbedder {
    fn model_id(&self) -> &str {
        "test:down"
    }

    async fn embed(&self, _texts: &[String], _cancel: &CancellationToken) -> Result<Vec<Vec<f32>>, RagError> {
        Err(RagError::Embedding { detail: "connection refused".into() })
    }
}

/// Knowledge sources in "auto", against the RAGFlow-shaped peer (tests/peers/ragflow_retrieval.py):
/// their passages are fused with the local ones and held to the same floor; a source too slow, one
/// whose server was replaced since it was added, and the local index failing are each named,
/// while the others still answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sources_are_fused_with_the_local_index_and_each_failure_is_named() {
    use crate::agent::Retriever as _;
    use crate::config::McpServerConfig;
    use crate::mcp::{McpRegistry, RegistryOptions};
    use sources::{KnowledgeSource, SourceShape};

    let f = birds().await;

    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/peers/ragflow_retrieval.py");
    let python = patchbay_test_support::peers::python().display().to_string();
    let registry = McpRegistry::new(Arc::new(crate::secrets::MemoryStore::default()), RegistryOptions::default());
    registry.configure([
        McpServerConfig::stdio("fleet", &python, &[script]),
        McpServerConfig::stdio("slow", &python, &[script, "--slow", "5"]),
    ]);
    registry.start_all().await;
    registry.wait_settled(Duration::from_secs(30)).await;
    let source = |name: &str, server: &str, id: &str| KnowledgeSource {
        name: name.into(),
        server: server.into(),
        tool: "ragflow_retrieval".into(),
        shape: SourceShape::Ragflow,
        server_id: Some(id.into()),
        tool_fingerprint: None,
    };
    let pinned = |s: KnowledgeSource| sources::pin(&registry, s).unwrap();
    let sources = vec![
        pinned(source("Fleet", "fleet", "id-1")),
        pinned(source("Slow", "slow", "id-2")),
        pinned(source("Old", "fleet", "id-0")),
        source("Unpinned", "fleet", "id-1"),
    ];
    let ids = [("fleet".to_owned(), "id-1".to_owned()), ("slow".to_owned(), "id-2".to_owned())].into();
    let remote = chat::Remote::new(registry.clone(), sources, ids);
    // A low floor: the local index weighs the question's words it lacks (brakes, van) as rare.
    let options =
        ContextOptions { source_timeout: Duration::from_secs(1), min_relevance: 0.05, ..ContextOptions::default() };
    let question = "When are the delivery van brakes checked, and is the kakapo a parrot?";

    let retrieve = |kb: &KnowledgeBase, options: ContextOptions| {
        let retriever = kb.chat_retriever(options).with_remote(remote.clone());
        async move { retriever.retrieve(question, CancellationToken::new()).await.unwrap() }
    };

    let found = retrieve(&f.kb, options).await;
    let cited: Vec<(Option<&str>, &str)> =
        found.passages.iter().map(|p| (p.origin.as_deref(), p.source.rsplit('/').next().unwrap())).collect();
    assert!(cited.contains(&(Some("Fleet"), "fleet-maintenance.pdf")), "{cited:?}");
    assert!(cited.contains(&(None, "birds.md")), "{cited:?}");
    // The fuel chunk comes back (its stop words give it the peer's similarity 0.33) and passes 0.05.
    assert!(cited.contains(&(Some("Fleet"), "fleet-fuel.pdf")), "{cited:?}");
    let why: Vec<(&str, &str)> = found.unavailable.iter().map(|u| (u.name.as_str(), u.why.as_str())).collect();
    assert_eq!(why.len(), 3, "{why:?}");
    // A source stored without its tool's definition (by an older Patchbay) is not called.
    assert!(why.iter().any(|(name, w)| *name == "Unpinned" && w.contains("add the source again")), "{why:?}");
    assert!(why.iter().any(|(name, w)| *name == "Slow" && w.contains("1s")), "{why:?}");
    assert!(
        why.iter().any(|(name, w)| *name == "Old" && w.contains("was replaced since this source was added")),
        "{why:?}"
    );

    // Each list is held to the floor before they are fused: at 0.5, the maintenance chunk (two
    // thirds of the words asked) stays; the fuel chunk (0.33) and the local passage (0.1) do not.
    let found = retrieve(&f.kb, ContextOptions { min_relevance: 0.5, ..options }).await;
    let cited: Vec<&str> = found.passages.iter().map(|p| p.source.rsplit('/').next().unwrap()).collect();
    assert_eq!(cited, ["fleet-maintenance.pdf"]);
    // Cited with its relevance, the scale the floor is on (not the fusion's 1/(60 + rank)).
    let relevance = found.passages[0].relevance.expect("a relevance");
    assert!((0.5..=1.0).contains(&relevance), "{relevance}");

    // The local index failing is one more source failing: the others still answer.
    let down = f.kb.clone().with_embedder(Some(Arc::new(DownEmbedder)));
    assert_eq!(down.default_mode(), SearchMode::Hybrid);
    let found = retrieve(&down, options).await;
    assert!(found.passages.iter().all(|p| p.origin.as_deref() == Some("Fleet")) && !found.passages.is_empty());
    assert!(
        found.unavailable.iter().any(|u| u.name == chat::LOCAL && u.why.contains("connection refused")),
        "{:?}",
        found.unavailable
    );
    registry.shutdown().await;
}

/// The postings are kept beside the database once built and after each indexing run, and the next
/// start reads them instead of building them (shown by stored terms changed behind the triggers'
/// back: the kept file still answers), until the chunks change in another process or the
/// triggers that track changes are gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postings_are_kept_for_the_next_start_while_the_chunks_match() {
    let f = birds().await;
    let kept = f.data.path().join("kb-postings.bin");
    assert!(!kept.exists(), "nothing is kept before the postings are built");
    f.kb.warm_up(&CancellationToken::new()).await.unwrap();
    let db = rusqlite::Connection::open(Store::open(&f.data).unwrap().path()).unwrap();
    let generation =
        |db: &rusqlite::Connection| -> i64 { db.query_row("SELECT n FROM kb_postings_gen", [], |r| r.get(0)).unwrap() };
    let mut last = (std::fs::read(&kept).unwrap(), generation(&db));
    // Each run that changes the chunks (a file added, a file deleted) moves the generation and keeps them again.
    for change in ["add", "delete"] {
        match change {
            "add" => std::fs::write(f.docs.join("cats.md"), "# Cats\n\nThe margay climbs trees head first.\n").unwrap(),
            _ => std::fs::remove_file(f.docs.join("cats.md")).unwrap(),
        }
        index(&f.kb).await;
        let now = (std::fs::read(&kept).unwrap(), generation(&db));
        assert_ne!(now.1, last.1, "{change}: the generation moved");
        assert_ne!(now.0, last.0, "{change}: kept again");
        last = now;
    }

    // Behind the triggers' back: the stored terms change, the generation is put back.
    db.execute("UPDATE kb_chunks SET terms = 'zzz' WHERE terms LIKE '%kakapo%'", []).unwrap();
    assert_ne!(generation(&db), last.1);
    db.execute("UPDATE kb_postings_gen SET n = ?1", [last.1]).unwrap();
    let reopen = || KnowledgeBase::open(&f.data, Store::open(&f.data).unwrap()).unwrap();
    assert_eq!(bm25(&reopen(), "kakapo").await.len(), 1, "the kept postings, not the stored terms");

    // Another process changed the chunks (the generation moved): built from the stored terms.
    db.execute("UPDATE kb_postings_gen SET n = n + 1", []).unwrap();
    let kb = reopen();
    assert!(bm25(&kb, "kakapo").await.is_empty());
    assert_eq!(bm25(&kb, "zzz").await.len(), 1);

    // The same when a trigger is gone, though the file's generation is the database's.
    db.execute("UPDATE kb_postings_gen SET n = ?1", [last.1]).unwrap();
    assert_eq!(bm25(&reopen(), "kakapo").await.len(), 1);
    db.execute_batch("DROP TRIGGER kb_chunks_delete_moves").unwrap();
    assert_eq!(bm25(&reopen(), "zzz").await.len(), 1);
    db.execute_batch("CREATE TRIGGER kb_chunks_delete_moves AFTER DELETE ON kb_chunks BEGIN SELECT 1; END").unwrap();

    // And when the file is damaged.
    let mut bytes = std::fs::read(&kept).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&kept, bytes).unwrap();
    assert_eq!(bm25(&reopen(), "zzz").await.len(), 1);
}

/// `ragflow_retrieval` narrows to the datasets asked for before `top_k` counts, as RAGFlow's
/// search does: a dataset whose chunks rank below another's still answers.
#[tokio::test]
async fn a_ragflow_dataset_filter_applies_before_top_k() {
    let f = fixture();
    f.kb.remove_folder(&f.data.path().join("knowledge_base")).unwrap();
    let other = f.docs.parent().unwrap().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(f.docs.join("kakapo.md"), "# Kakapo\n\nThe kakapo, kakapo, kakapo: a parrot.\n").unwrap();
    std::fs::write(other.join("birds.md"), "# Birds\n\nOne of them is the kakapo, among many other birds.\n").unwrap();
    f.kb.add_folder(&f.docs).unwrap();
    let other = f.kb.add_folder(&other).unwrap();
    index(&f.kb).await;

    let ask = |dataset_ids: Option<Vec<String>>| ragflow::RetrievalArgs {
        question: "kakapo".into(),
        dataset_ids,
        document_ids: None,
        page: None,
        page_size: None,
        similarity_threshold: Some(0.0),
        vector_similarity_weight: Some(0.0),
        keyword: None,
        top_k: Some(1),
        rerank_id: None,
        force_refresh: None,
    };
    let files = |answer: String| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        v["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap().rsplit('/').next().unwrap().to_owned())
            .collect()
    };
    assert_eq!(files(ragflow::retrieve(&f.kb, ask(None)).await.unwrap()), ["kakapo.md"], "the best chunk of all");
    let only_other = ask(Some(vec![ragflow::path_id(&other)]));
    assert_eq!(files(ragflow::retrieve(&f.kb, only_other).await.unwrap()), ["birds.md"]);
}

/// A list of knowledge sources that cannot be read is named with the answer (not only logged),
/// and the local knowledge base still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreadable_knowledge_sources_are_named_with_the_answer() {
    use crate::assistants::{KnowledgeLimits, KnowledgeMode};
    use crate::mcp::{McpRegistry, RegistryOptions};

    let f = fixture();
    index(&f.kb).await;
    Store::open(&f.data).unwrap().set_setting("kb.sources", &serde_json::json!("not a list")).unwrap();
    let registry = McpRegistry::new(Arc::new(crate::secrets::MemoryStore::default()), RegistryOptions::default());
    let knowledge = f.kb.for_chat(KnowledgeMode::Context, KnowledgeLimits::default(), &registry);
    let found =
        knowledge.retriever.unwrap().retrieve("How do I add a folder?", CancellationToken::new()).await.unwrap();
    assert!(!found.passages.is_empty(), "the local knowledge base still answers");
    let named: Vec<(&str, &str)> = found.unavailable.iter().map(|u| (u.name.as_str(), u.why.as_str())).collect();
    assert_eq!(named.len(), 1, "{named:?}");
    assert_eq!(named[0].0, chat::SOURCES);
    assert!(named[0].1.contains("kb.sources"), "says which setting: {named:?}");
}
