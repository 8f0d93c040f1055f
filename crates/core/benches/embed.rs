//! Local embedding throughput: Patchbay's in-process model (`LocalEmbedder`, `rag::bert`) against
//! sentence-transformers on PyTorch (CPU), the same all-MiniLM-L6-v2 weights and the same texts in
//! the same run: chunks of about 200 words and short ones (Cranfield's titles), chunks per
//! second, peak memory, and how close each vector is to the reference's.
//!
//! ```text
//! python3 -m venv ~/.cache/patchbay/st-venv
//! ~/.cache/patchbay/st-venv/bin/pip install sentence-transformers
//! cargo bench -p patchbay-core --bench embed -- [--cranfield DIR] [--python PATH] [--long N] [--short N]
//! ```
//!
//! Patchbay runs in this process (peak memory: this process's), sentence-transformers in a child
//! process of its own.

use std::path::{Path, PathBuf};
use std::time::Instant;

mod corpus;

use anyhow::{Context, Result, bail};
use patchbay_core::rag::{Embedder, LocalEmbedder};
use tokio_util::sync::CancellationToken;

struct Options {
    cranfield: PathBuf,
    python: PathBuf,
    long: usize,
    short: usize,
}

fn options() -> Result<Options> {
    let mut o =
        Options { cranfield: corpus::cranfield_dir(), python: corpus::python("st-venv"), long: 320, short: 1_000 };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--cranfield" => o.cranfield = args.next().context("--cranfield DIR")?.into(),
            "--python" => o.python = args.next().context("--python PATH")?.into(),
            "--long" => o.long = args.next().context("--long N")?.parse()?,
            "--short" => o.short = args.next().context("--short N")?.parse()?,
            "--bench" => {}
            other => bail!("unknown argument {other}"),
        }
    }
    Ok(o)
}

/// Cranfield's abstracts run together and cut every 200 words, and its titles.
fn texts(dir: &Path, long: usize, short: usize) -> Result<(Vec<String>, Vec<String>)> {
    let all = std::fs::read_to_string(dir.join("cran.all.1400")).context("cran.all.1400")?;
    let (mut titles, mut words) = (Vec::new(), Vec::new());
    let mut field = ' ';
    let mut title = String::new();
    for line in all.lines() {
        if line.starts_with(".I ") || (line.len() == 2 && line.starts_with('.')) {
            if field == 'T' && !title.trim().is_empty() {
                titles.push(title.split_whitespace().collect::<Vec<_>>().join(" "));
            }
            title.clear();
            field = line.chars().nth(1).unwrap_or(' ');
            continue;
        }
        match field {
            'T' => {
                title.push_str(line);
                title.push(' ');
            }
            'W' => words.extend(line.split_whitespace().map(str::to_owned)),
            _ => {}
        }
    }
    let chunks: Vec<String> = words.chunks(200).filter(|c| c.len() == 200).map(|c| c.join(" ")).take(long).collect();
    titles.truncate(short);
    Ok((chunks, titles))
}

struct Theirs {
    seconds: f64,
    threads: u64,
    max_rss_mb: f64,
    vectors: Vec<Vec<f32>>,
}

fn sentence_transformers(python: &Path, model: &Path, texts: &[String]) -> Result<Theirs> {
    let work = tempfile::tempdir()?;
    let input = work.path().join("texts.jsonl");
    let out = work.path().join("out.json");
    let lines: String = texts.iter().map(|t| format!("{}\n", serde_json::json!({ "text": t }))).collect();
    std::fs::write(&input, lines)?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/embed_st.py");
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(model)
        .arg(&input)
        .arg(&out)
        .status()
        .with_context(|| format!("run {} (see the install command in benches/embed.rs)", python.display()))?;
    if !status.success() {
        bail!("sentence-transformers failed");
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&out)?)?;
    Ok(Theirs {
        seconds: v["seconds"].as_f64().unwrap_or(f64::NAN),
        threads: v["threads"].as_u64().unwrap_or(0),
        max_rss_mb: v["max_rss_mb"].as_f64().unwrap_or(f64::NAN),
        vectors: serde_json::from_value(v["vectors"].clone())?,
    })
}

fn main() -> Result<()> {
    let o = options()?;
    let model_dir = patchbay_test_support::peers::minilm_dir();
    let (long, short) = texts(&o.cranfield, o.long, o.short)?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let model = LocalEmbedder::load(&model_dir)?;
    let embed = |texts: &[String]| runtime.block_on(model.embed(texts, &CancellationToken::new()));
    embed(&long[..8])?;
    println!("| texts | engine | chunks/s | seconds | peak RSS MB | lowest cosine to the reference |");
    println!("|---|---|---:|---:|---:|---:|");
    for (name, texts) in [("about 200 words", &long), ("short (titles)", &short)] {
        let start = Instant::now();
        let ours = embed(texts)?;
        let seconds = start.elapsed().as_secs_f64();
        let ours_rss = corpus::peak_rss_mb();
        let n = texts.len() as f64;
        // Printed before the reference runs, which may be missing (`--python /bin/false`).
        println!(
            "| {name} ({}) | Patchbay | {:.1} | {seconds:.2} | {ours_rss:.0} | (next row) |",
            texts.len(),
            n / seconds
        );
        let theirs = sentence_transformers(&o.python, &model_dir, texts)?;
        let lowest = ours
            .iter()
            .zip(&theirs.vectors)
            .map(|(a, b)| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>())
            .fold(f32::INFINITY, f32::min);
        println!("| {name} ({}) | Patchbay's vectors against the reference's | | | | {lowest:.5} |", texts.len());
        println!(
            "| {name} ({}) | sentence-transformers ({} torch threads) | {:.1} | {:.2} | {:.0} | 1 |",
            texts.len(),
            theirs.threads,
            n / theirs.seconds,
            theirs.seconds,
            theirs.max_rss_mb
        );
    }
    Ok(())
}
