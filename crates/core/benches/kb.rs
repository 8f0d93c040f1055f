//! Knowledge-base benchmark: retrieval quality on Cranfield, and indexing
//! throughput, query latency and memory on Cranfield and a synthetic
//! 100k-chunk corpus, each next to bm25s (PyPI) run in the same process tree
//! on the same data and scored by the same code.
//!
//! ```text
//! python3 -m venv ~/.cache/patchbay/bench-venv
//! ~/.cache/patchbay/bench-venv/bin/pip install -r crates/core/benches/requirements.txt
//! cargo bench -p patchbay-core --bench kb -- [--cranfield DIR] [--python PATH] [--chunks N] [--no-hybrid] [--zh-model DIR]
//! ```
//!
//! Chinese: `benches/data/zh_help.json` (60 help articles and 50 judged questions written for
//! Patchbay, many of them paraphrases) by BM25 alone, hybrid with all-MiniLM-L6-v2 (English
//! only), and hybrid with the multilingual model in `--zh-model DIR` where one is at hand (for
//! example `patchbay kb model get bge-small-zh-v1.5`; no test or bench here downloads it).
//!
//! Patchbay indexes real files through `KnowledgeBase::index` (hashing,
//! chunking, analysis, one SQLite transaction per file) and ranks documents
//! by their best passage (whose score includes its document's BM25), at the
//! default 256-token chunks and at 64 (most Cranfield documents then span
//! several chunks). Results go to stdout as a Markdown table.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

mod corpus;

use anyhow::{Context, Result, bail};
use patchbay_core::paths::DataDir;
use patchbay_core::rag::{ChunkParams, IndexProgress, KbSettings, KnowledgeBase, LocalEmbedder, SearchMode};
use patchbay_core::store::Store;
use tokio_util::sync::CancellationToken;

struct Options {
    cranfield: PathBuf,
    python: PathBuf,
    chunks: usize,
    hybrid: bool,
    /// A multilingual model folder for the Chinese set.
    zh_model: Option<PathBuf>,
}

fn options() -> Result<Options> {
    let mut o = Options {
        cranfield: corpus::cranfield_dir(),
        python: corpus::python("bench-venv"),
        chunks: 100_000,
        hybrid: true,
        zh_model: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cranfield" => o.cranfield = args.next().context("--cranfield DIR")?.into(),
            "--python" => o.python = args.next().context("--python PATH")?.into(),
            "--chunks" => o.chunks = args.next().context("--chunks N")?.parse()?,
            "--no-hybrid" => o.hybrid = false,
            "--zh-model" => o.zh_model = Some(args.next().context("--zh-model DIR")?.into()),
            // cargo bench passes --bench.
            "--bench" => {}
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(o)
}

/// A document: id and the text both engines index.
struct Doc {
    id: String,
    text: String,
}

/// Sections of a SMART file: `.I id` starts a record, `.X` a field.
fn smart_records(text: &str) -> Vec<(String, HashMap<char, String>)> {
    let mut records = Vec::new();
    let mut field = ' ';
    for line in text.lines() {
        if let Some(id) = line.strip_prefix(".I ") {
            records.push((id.trim().to_owned(), HashMap::new()));
            continue;
        }
        if line.len() == 2 && line.starts_with('.') {
            field = line.chars().nth(1).unwrap_or(' ');
            continue;
        }
        if let Some((_, fields)) = records.last_mut() {
            let f: &mut String = fields.entry(field).or_default();
            f.push_str(line);
            f.push('\n');
        }
    }
    records
}

/// A test collection: documents, queries, and which documents answer which query.
struct Collection {
    docs: Vec<Doc>,
    queries: Vec<String>,
    /// Query number (1-based, file order) → document id → grade.
    qrels: HashMap<usize, HashMap<String, u32>>,
}

fn cranfield(dir: &Path) -> Result<Collection> {
    let read =
        |name: &str| std::fs::read_to_string(dir.join(name)).with_context(|| format!("{}", dir.join(name).display()));
    let docs = smart_records(&read("cran.all.1400")?)
        .into_iter()
        .map(|(id, f)| {
            let get = |c| f.get(&c).map(String::as_str).unwrap_or_default().trim().to_owned();
            Doc { id, text: format!("{}\n\n{}", get('T'), get('W')) }
        })
        .collect();
    let queries =
        smart_records(&read("cran.qry")?).into_iter().map(|(_, f)| f.get(&'W').cloned().unwrap_or_default()).collect();
    let mut qrels: HashMap<usize, HashMap<String, u32>> = HashMap::new();
    for line in read("QRelsCorrectedforTRECeval")?.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if let [q, _, doc, grade] = parts[..] {
            qrels.entry(q.parse()?).or_default().insert(doc.to_owned(), grade.parse()?);
        }
    }
    Ok(Collection { docs, queries, qrels })
}

/// The Chinese set: `{docs: [{id, title, text}], queries: [{id, text, relevant: {doc: grade}}]}`.
fn chinese(path: &Path) -> Result<Collection> {
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(path).with_context(|| format!("{}", path.display()))?)?;
    let field = |x: &serde_json::Value, name: &str| x[name].as_str().map(str::to_owned).context("a string field");
    let docs = v["docs"]
        .as_array()
        .context("docs")?
        .iter()
        .map(|d| Ok(Doc { id: field(d, "id")?, text: format!("# {}\n\n{}\n", field(d, "title")?, field(d, "text")?) }))
        .collect::<Result<Vec<_>>>()?;
    let (mut queries, mut qrels) = (Vec::new(), HashMap::new());
    for (i, q) in v["queries"].as_array().context("queries")?.iter().enumerate() {
        queries.push(field(q, "text")?);
        let judged = q["relevant"].as_object().context("relevant")?;
        let grades = judged.iter().map(|(d, g)| Ok((d.clone(), g.as_u64().context("a grade")? as u32)));
        qrels.insert(i + 1, grades.collect::<Result<HashMap<_, _>>>()?);
    }
    Ok(Collection { docs, queries, qrels })
}

/// nDCG@10 (gain 2^grade − 1), Recall@100, MAP@100, averaged over queries with judgements.
fn quality(rankings: &[Vec<String>], qrels: &HashMap<usize, HashMap<String, u32>>) -> (f64, f64, f64) {
    let (mut ndcg, mut recall, mut map, mut n) = (0.0, 0.0, 0.0, 0.0);
    for (i, ranking) in rankings.iter().enumerate() {
        let Some(judged) = qrels.get(&(i + 1)).filter(|j| !j.is_empty()) else { continue };
        let gain = |g: u32| f64::from((1u32 << g) - 1);
        let dcg: f64 = ranking
            .iter()
            .take(10)
            .enumerate()
            .map(|(r, d)| judged.get(d).map_or(0.0, |&g| gain(g)) / (r as f64 + 2.0).log2())
            .sum();
        let mut ideal: Vec<u32> = judged.values().copied().collect();
        ideal.sort_unstable_by(|a, b| b.cmp(a));
        let idcg: f64 = ideal.iter().take(10).enumerate().map(|(r, &g)| gain(g) / (r as f64 + 2.0).log2()).sum();
        let total = judged.len() as f64;
        let (mut hits, mut ap) = (0.0, 0.0);
        for (r, d) in ranking.iter().take(100).enumerate() {
            if judged.contains_key(d) {
                hits += 1.0;
                ap += hits / (r as f64 + 1.0);
            }
        }
        ndcg += if idcg > 0.0 { dcg / idcg } else { 0.0 };
        recall += hits / total;
        map += ap / total;
        n += 1.0;
    }
    (ndcg / n, recall / n, map / n)
}

fn percentile(latencies: &[f64], p: f64) -> f64 {
    let mut sorted = latencies.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

struct Run {
    index_seconds: f64,
    latencies_ms: Vec<f64>,
    rankings: Vec<Vec<String>>,
    peak_rss_mb: f64,
    /// Resident memory the queries added (Patchbay: mostly the BM25 postings built by the first).
    query_rss_growth_mb: f64,
    /// Patchbay: how long after the run its background WAL checkpoint finished.
    checkpoint_seconds: f64,
}

fn write_jsonl(path: &Path, lines: impl Iterator<Item = serde_json::Value>) -> Result<()> {
    let text: String = lines.map(|v| format!("{v}\n")).collect();
    Ok(std::fs::write(path, text)?)
}

fn bm25s(python: &Path, work: &Path, docs: &[Doc], queries: &[String], top_k: usize) -> Result<Run> {
    let corpus = work.join("corpus.jsonl");
    let qs = work.join("queries.jsonl");
    let out = work.join("bm25s.json");
    write_jsonl(&corpus, docs.iter().map(|d| serde_json::json!({"id": d.id, "text": d.text})))?;
    write_jsonl(&qs, queries.iter().map(|q| serde_json::json!({"text": q})))?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/kb_bm25s.py");
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(&corpus)
        .arg(&qs)
        .arg(top_k.to_string())
        .arg(&out)
        .status()
        .with_context(|| format!("run {} (see the install command in benches/kb.rs)", python.display()))?;
    if !status.success() {
        bail!("bm25s failed");
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out)?)?;
    Ok(Run {
        index_seconds: v["index_seconds"].as_f64().unwrap_or(f64::NAN),
        latencies_ms: serde_json::from_value(v["latencies_ms"].clone())?,
        rankings: serde_json::from_value(v["rankings"].clone())?,
        peak_rss_mb: v["max_rss_mb"].as_f64().unwrap_or(f64::NAN),
        query_rss_growth_mb: f64::NAN,
        checkpoint_seconds: f64::NAN,
    })
}

/// Writes each document as `<id>.md` (or groups of sections per file) into `folder`.
fn write_docs(folder: &Path, files: &[(String, String)]) -> Result<()> {
    std::fs::create_dir_all(folder)?;
    for (name, text) in files {
        std::fs::write(folder.join(name), text)?;
    }
    Ok(())
}

/// A knowledge base in `work/data` over `folder` only, cut into chunks of `chunking`, and its database's WAL file.
fn open_kb(work: &Path, folder: &Path, chunking: ChunkParams) -> Result<(KnowledgeBase, PathBuf)> {
    let data = DataDir::new(work.join("data"));
    let kb = KnowledgeBase::open(&data, Store::open(&data)?)?;
    kb.save_settings(&KbSettings { chunking, ..KbSettings::default() })?;
    kb.remove_folder(&data.path().join("knowledge_base"))?;
    kb.add_folder(folder)?;
    let wal = PathBuf::from(format!("{}-wal", data.database().display()));
    Ok((kb, wal))
}

async fn patchbay(
    (kb, wal): &(KnowledgeBase, PathBuf),
    queries: &[String],
    mode: SearchMode,
    top_k: usize,
    doc_of: &dyn Fn(&Path, &str) -> String,
) -> Result<Run> {
    let start = Instant::now();
    kb.index(Arc::new(|_: &IndexProgress| {}), &CancellationToken::new()).await?;
    let index_seconds = start.elapsed().as_secs_f64();
    // The run's WAL is checkpointed (and truncated) on a background thread afterwards.
    while std::fs::metadata(wal).map_or(0, |m| m.len()) > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    let checkpoint_seconds = start.elapsed().as_secs_f64() - index_seconds;
    let mut latencies_ms = Vec::new();
    let mut rankings = Vec::new();
    let rss_before = corpus::status_mb("VmRSS:");
    for q in queries {
        let t = Instant::now();
        // Over-fetch passages so that `top_k` distinct documents remain.
        let passages = kb.search(q, mode, top_k * 2).await?;
        latencies_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        let mut seen = HashSet::new();
        let ranking: Vec<String> = passages
            .iter()
            .map(|p| doc_of(&p.path, &p.heading))
            .filter(|d| seen.insert(d.clone()))
            .take(top_k)
            .collect();
        rankings.push(ranking);
    }
    let query_rss_growth_mb = corpus::status_mb("VmRSS:") - rss_before;
    Ok(Run {
        index_seconds,
        latencies_ms,
        rankings,
        peak_rss_mb: corpus::peak_rss_mb(),
        query_rss_growth_mb,
        checkpoint_seconds,
    })
}

fn stem_of(path: &Path, _heading: &str) -> String {
    path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

fn speed_row(name: &str, run: &Run, mb: f64) -> String {
    format!(
        "| {name} | {:.2} | {:.1} | {:.2} | {:.2} | {:.0} |",
        run.index_seconds,
        mb / run.index_seconds,
        percentile(&run.latencies_ms, 50.0),
        percentile(&run.latencies_ms, 99.0),
        run.peak_rss_mb
    )
}

/// A deterministic synthetic corpus: `files` Markdown files of `sections`
/// sections each, ~150 words per section from a Zipf-like vocabulary.
fn synthetic(chunks: usize) -> (Vec<(String, String)>, Vec<Doc>, Vec<String>) {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let syllables = ["ka", "lo", "mi", "ru", "se", "ta", "ven", "dor", "pli", "zu", "qua", "ny", "fe", "gro", "hin"];
    let vocab: Vec<String> = (0..20_000u64)
        .map(|i| {
            let mut w = String::new();
            let mut n = i + 1;
            while n > 0 {
                w.push_str(syllables[(n % 15) as usize]);
                n /= 15;
            }
            w
        })
        .collect();
    // Zipf-like: the cube of a uniform number favours low ranks.
    let mut word = || {
        let u = (next() % 10_000) as f64 / 10_000.0;
        vocab[((u * u * u) * vocab.len() as f64) as usize].clone()
    };
    let sections = 100;
    let files = chunks.div_ceil(sections);
    let mut out = Vec::new();
    let mut docs = Vec::new();
    for f in 0..files {
        let mut text = String::new();
        for s in 0..sections {
            let body: Vec<String> = (0..150).map(|_| word()).collect();
            let body = body.join(" ");
            text.push_str(&format!("# Section {s}\n\n{body}\n\n"));
            docs.push(Doc { id: format!("{f}/{s}"), text: format!("Section {s}\n\n{body}") });
        }
        out.push((format!("f{f:05}.md"), text));
    }
    let queries = (0..200).map(|_| (0..3).map(|_| word()).collect::<Vec<_>>().join(" ")).collect();
    (out, docs, queries)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let o = options()?;
    let work = tempfile::tempdir()?;

    // Cranfield quality and speed.
    let c = cranfield(&o.cranfield)?;
    let bytes: usize = c.docs.iter().map(|d| d.text.len()).sum();
    let mb = bytes as f64 / 1e6;
    let folder = work.path().join("cranfield");
    write_docs(&folder, &c.docs.iter().map(|d| (format!("{}.txt", d.id), d.text.clone())).collect::<Vec<_>>())?;
    let kb = open_kb(&work.path().join("pb"), &folder, ChunkParams::default())?;
    let ours = patchbay(&kb, &c.queries, SearchMode::Bm25, 100, &stem_of).await?;
    // Documents longer than a chunk: the same texts cut into 64-token chunks.
    let small = ChunkParams { chunk_tokens: 64, overlap_tokens: 8 };
    let kb64 = open_kb(&work.path().join("pb64"), &folder, small)?;
    let ours64 = patchbay(&kb64, &c.queries, SearchMode::Bm25, 100, &stem_of).await?;
    let chunks64 = kb64.0.status()?.totals.chunks;
    let theirs = bm25s(&o.python, work.path(), &c.docs, &c.queries, 100)?;
    println!("## Cranfield ({} documents, {} queries, {mb:.2} MB)\n", c.docs.len(), c.queries.len());
    println!("| engine | nDCG@10 | Recall@100 | MAP@100 |\n|---|---|---|---|");
    let name64 = format!("Patchbay BM25, 64-token chunks ({chunks64} chunks)");
    let mut rows =
        vec![("Patchbay BM25", &ours), (name64.as_str(), &ours64), ("bm25s 0.3.16 (whole documents)", &theirs)];
    let hybrid = if o.hybrid {
        let model = LocalEmbedder::load(&patchbay_test_support::peers::minilm_dir())?;
        let (kb, wal) = open_kb(&work.path().join("hy"), &folder, ChunkParams::default())?;
        let kb = (kb.with_embedder(Some(Arc::new(model))), wal);
        Some(patchbay(&kb, &c.queries, SearchMode::Hybrid, 100, &stem_of).await?)
    } else {
        None
    };
    if let Some(h) = &hybrid {
        rows.push(("Patchbay hybrid (BM25 + MiniLM-L6, RRF)", h));
    }
    for (name, run) in &rows {
        let (n, r, m) = quality(&run.rankings, &c.qrels);
        println!("| {name} | {n:.3} | {r:.3} | {m:.3} |");
    }
    println!("\n| engine | index s | MB/s | query p50 ms | query p99 ms | peak RSS MB |\n|---|---|---|---|---|---|");
    for (name, run) in &rows {
        println!("{}", speed_row(name, run, mb));
    }
    println!("\nPatchbay's WAL checkpoint after its BM25 run (background thread): {:.2} s.", ours.checkpoint_seconds);

    // Chinese.
    let zh = chinese(&Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/zh_help.json"))?;
    let folder = work.path().join("zh");
    write_docs(&folder, &zh.docs.iter().map(|d| (format!("{}.md", d.id), d.text.clone())).collect::<Vec<_>>())?;
    let kb = open_kb(&work.path().join("zh-bm25"), &folder, ChunkParams::default())?;
    let mut zh_rows =
        vec![("Patchbay BM25".to_owned(), patchbay(&kb, &zh.queries, SearchMode::Bm25, 100, &stem_of).await?)];
    let mut models = vec![("all-MiniLM-L6-v2, English only".to_owned(), patchbay_test_support::peers::minilm_dir())];
    if let Some(dir) = &o.zh_model {
        models.push((dir.file_name().unwrap_or_default().to_string_lossy().into_owned(), dir.clone()));
    }
    if !o.hybrid {
        models.clear();
    }
    for (i, (name, dir)) in models.into_iter().enumerate() {
        let (kb, wal) = open_kb(&work.path().join(format!("zh-hy{i}")), &folder, ChunkParams::default())?;
        let kb = (kb.with_embedder(Some(Arc::new(LocalEmbedder::load(&dir)?))), wal);
        zh_rows.push((
            format!("Patchbay hybrid ({name})"),
            patchbay(&kb, &zh.queries, SearchMode::Hybrid, 100, &stem_of).await?,
        ));
    }
    println!("\n## Chinese help articles ({} documents, {} judged questions)\n", zh.docs.len(), zh.queries.len());
    println!("| engine | nDCG@10 | Recall@100 | MAP@100 |\n|---|---|---|---|");
    for (name, run) in &zh_rows {
        let (n, r, m) = quality(&run.rankings, &zh.qrels);
        println!("| {name} | {n:.3} | {r:.3} | {m:.3} |");
    }
    if o.zh_model.is_none() {
        println!("\n(No multilingual model: `--zh-model DIR` adds its hybrid row.)");
    }

    // Synthetic corpus.
    let (files, docs, queries) = synthetic(o.chunks);
    let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
    let mb = bytes as f64 / 1e6;
    let folder = work.path().join("synthetic");
    write_docs(&folder, &files)?;
    let kb = open_kb(&work.path().join("pb-syn"), &folder, ChunkParams::default())?;
    let ours = patchbay(&kb, &queries, SearchMode::Bm25, 10, &stem_of).await?;
    let chunks = kb.0.status()?.totals.chunks;
    let theirs = bm25s(&o.python, work.path(), &docs, &queries, 10)?;
    println!(
        "\n## Synthetic: {chunks} chunks in {} files, {mb:.1} MB, {} queries of 3 words\n",
        files.len(),
        queries.len()
    );
    println!("| engine | index s | MB/s | query p50 ms | query p99 ms | peak RSS MB |\n|---|---|---|---|---|---|");
    println!("{}", speed_row("Patchbay BM25", &ours, mb));
    println!("{}", speed_row("bm25s 0.3.16", &theirs, mb));
    println!("\nPatchbay's WAL checkpoint after its run (background thread): {:.2} s.", ours.checkpoint_seconds);
    println!(
        "\nPatchbay's resident memory grew by {:.1} MB during the queries; the first, which builds the BM25 postings, took {:.0} ms.",
        ours.query_rss_growth_mb, ours.latencies_ms[0]
    );
    // As the app does once it has caught up: the postings (built by the queries) kept beside the database.
    let data = DataDir::new(work.path().join("pb-syn").join("data"));
    let start = Instant::now();
    kb.0.warm_up(&CancellationToken::new()).await?;
    let kept = std::fs::metadata(data.path().join("kb-postings.bin")).map_or(0, |m| m.len());
    println!(
        "\nKeeping the postings beside the database took {:.0} ms ({:.1} MB).",
        start.elapsed().as_secs_f64() * 1000.0,
        kept as f64 / 1e6
    );
    // A restart: the same data dir opened afresh, as the app opens it, and its first query.
    let start = Instant::now();
    let reopened = KnowledgeBase::open(&data, Store::open(&data)?)?;
    let opened_ms = start.elapsed().as_secs_f64() * 1000.0;
    let first = Instant::now();
    reopened.search(&queries[0], SearchMode::Bm25, 20).await?;
    println!(
        "\nAfter a restart (the data dir opened again in this process, its pages in the OS cache): opening took {opened_ms:.0} ms, the first query {:.0} ms.",
        first.elapsed().as_secs_f64() * 1000.0
    );
    Ok(())
}
