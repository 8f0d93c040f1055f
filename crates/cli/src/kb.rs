//! `patchbay kb`: the knowledge base from the terminal.
//!
//! `add | list | index | status | remove | search | embeddings | model | source | serve`. Each
//! subcommand makes one core call on [`KnowledgeBase`] and prints the result;
//! `index` draws a progress bar when stderr is a terminal.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use patchbay_core::paths::DataDir;
use patchbay_core::rag::chat::within_limits;
use patchbay_core::rag::serve::{self, Hit};
use patchbay_core::rag::{EmbeddingConfig, IndexProgress, KnowledgeBase, SearchMode, models};
use patchbay_core::secrets::KeyringStore;

#[derive(Debug, Args)]
pub struct KbArgs {
    #[command(subcommand)]
    command: KbCommand,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum Mode {
    Bm25,
    Vector,
    Hybrid,
}

impl From<Mode> for SearchMode {
    fn from(m: Mode) -> Self {
        match m {
            Mode::Bm25 => Self::Bm25,
            Mode::Vector => Self::Vector,
            Mode::Hybrid => Self::Hybrid,
        }
    }
}

#[derive(Debug, Subcommand)]
enum KbCommand {
    /// Register a folder.
    Add { folder: PathBuf },
    /// Print the registered folders, one per line.
    List,
    /// Bring the index up to date.
    Index {
        /// Print the report as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show folders, counts, embeddings and skipped files.
    Status {
        #[arg(long)]
        json: bool,
    },
    /// Unregister a folder (its files stay on disk).
    Remove { folder: PathBuf },
    /// Search the knowledge base.
    Search {
        query: String,
        /// Default: hybrid when embeddings are configured, otherwise bm25.
        #[arg(long, value_enum)]
        mode: Option<Mode>,
        #[arg(long, default_value_t = 5)]
        top_k: usize,
        /// Leave out passages less relevant than this (0 to 1; an assistant's floor is 0.4 by default).
        #[arg(long, default_value_t = 0.0, value_parser = relevance_floor)]
        min_relevance: f64,
        /// Keep passages within about this many tokens, as an assistant's context budget does.
        #[arg(long)]
        max_tokens: Option<u32>,
        /// Print a JSON list of {path, score, relevance, text, heading, lines}.
        #[arg(long)]
        json: bool,
    },
    /// Configure embeddings (re-run `kb index` afterwards).
    #[command(subcommand)]
    Embeddings(EmbeddingsCommand),
    /// Local embedding models to download and use: list, get NAME, use NAME, hub [URL].
    #[command(subcommand)]
    Model(ModelCommand),
    /// Remote retrieval tools the chat searches beside the knowledge base: list, add, remove, try.
    #[command(subcommand)]
    Source(crate::kb_sources::SourceCommand),
    /// Serve the knowledge base as an MCP server.
    Serve {
        /// Over stdin/stdout.
        #[arg(long, conflicts_with = "http", required_unless_present = "http")]
        stdio: bool,
        /// Over HTTP at this address, bearer token required: Streamable HTTP at /mcp and legacy SSE at /sse;
        /// a port (on 127.0.0.1) or HOST:PORT (e.g. 127.0.0.1:8765).
        #[arg(long, value_name = "ADDR", value_parser = serve_address)]
        http: Option<SocketAddr>,
        /// Let --http listen on an address other than this computer's own (127.0.0.1, ::1). The server speaks
        /// plain HTTP: the bearer token and the documents cross the network unencrypted.
        #[arg(long, requires = "http")]
        allow_remote: bool,
    },
}

#[derive(Debug, Subcommand)]
enum EmbeddingsCommand {
    /// An OpenAI-compatible endpoint (Ollama, OpenAI, vLLM, llama.cpp server).
    Endpoint {
        /// Base URL, e.g. http://127.0.0.1:11434/v1.
        #[arg(long)]
        url: String,
        #[arg(long)]
        model: String,
        /// Name of the keyring secret holding the endpoint's API key.
        #[arg(long)]
        api_key_secret: Option<String>,
    },
    /// A local BERT-family model folder (config.json, tokenizer.json, model.safetensors), run in-process.
    Local {
        #[arg(long, value_name = "DIR")]
        model_dir: PathBuf,
    },
    /// Turn embeddings off (search uses BM25).
    Off,
}

#[derive(Debug, Subcommand)]
enum ModelCommand {
    /// The models offered: languages, size, whether downloaded, in use or suggested.
    List,
    /// Download a model into the data folder (a stopped download resumes).
    Get {
        name: String,
        /// Download from this hub this time (else the saved hub, HF_ENDPOINT, or huggingface.co).
        #[arg(long)]
        hub: Option<String>,
    },
    /// Use a downloaded model for the knowledge base's embeddings (run `kb index` afterwards).
    Use { name: String },
    /// Print the hub models come from, or save another (a mirror such as https://hf-mirror.com).
    Hub {
        url: Option<String>,
        /// Forget the saved hub (back to HF_ENDPOINT or huggingface.co).
        #[arg(long, conflicts_with = "url")]
        default: bool,
    },
}

/// An `--http` address: HOST:PORT, or a port alone on 127.0.0.1.
fn serve_address(text: &str) -> Result<SocketAddr, String> {
    serve::parse_address(text).map_err(|e| e.to_string())
}

/// A `--min-relevance`: a number from 0 to 1.
fn relevance_floor(text: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|v| (0.0..=1.0).contains(v))
        .ok_or_else(|| format!("{text:?} is not a relevance between 0 and 1 (for example 0.4)"))
}

pub fn run(dir: &DataDir, args: KbArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Runtime::new()?;
    runtime.block_on(run_async(dir, args))
}

async fn run_async(dir: &DataDir, args: KbArgs) -> anyhow::Result<ExitCode> {
    let store = crate::open_store(dir)?;
    let secrets = KeyringStore::for_data_dir(dir);
    match args.command {
        KbCommand::Add { folder } => {
            let added = KnowledgeBase::open(dir, store)?.add_folder(&folder)?;
            println!("added {}; run `patchbay kb index` to index it", added.display());
        }
        KbCommand::List => {
            for folder in KnowledgeBase::open(dir, store)?.folders()? {
                println!("{}", folder.display());
            }
        }
        KbCommand::Remove { folder } => {
            KnowledgeBase::open(dir, store)?.remove_folder(&folder)?;
            println!("removed {}", folder.display());
        }
        KbCommand::Index { json } => {
            let kb = KnowledgeBase::open_configured(dir, store, &secrets)?;
            let bar = ProgressBar::new(0);
            bar.set_style(ProgressStyle::with_template("{bar:40} {pos}/{len} {wide_msg}")?);
            let shown = bar.clone();
            let progress = Arc::new(move |p: &IndexProgress| {
                shown.set_length(p.files_total as u64);
                shown.set_position(p.files_done as u64);
                shown.set_message(p.current.as_ref().map(|c| c.display().to_string()).unwrap_or_default());
            });
            let cancel = crate::cancelled_by_ctrl_c();
            let report = kb.index(progress, &cancel).await;
            bar.finish_and_clear();
            let report = report?;
            if json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                println!(
                    "indexed {} ({}), {} unchanged, {} removed, {} skipped",
                    crate::count(report.indexed, "file"),
                    crate::count(report.chunks, "chunk"),
                    report.unchanged,
                    report.removed,
                    report.skipped.len()
                );
                for s in &report.skipped {
                    println!("  skipped {}: {}", s.path.display(), s.reason);
                }
                for m in &report.missing_folders {
                    println!("  missing folder {} (its index is kept)", m.display());
                }
            }
        }
        KbCommand::Status { json } => {
            let status = KnowledgeBase::open(dir, store)?.status()?;
            if json {
                println!("{}", serde_json::to_string_pretty(&status)?);
            } else {
                for f in &status.folders {
                    let state = if f.exists { "" } else { " (missing)" };
                    println!(
                        "{}{state}: {}, {} skipped",
                        f.path.display(),
                        crate::count(f.documents, "document"),
                        f.skipped
                    );
                }
                let t = &status.totals;
                let (documents, chunks) = (crate::count(t.documents, "document"), crate::count(t.chunks, "chunk"));
                println!("{documents}, {chunks}, {}", crate::count(t.vectors, "vector"));
                match &status.embeddings {
                    Some(e) => println!("embeddings: {}", serde_json::to_string(e)?),
                    None => println!("embeddings: off (search uses BM25)"),
                }
                if let Some(note) = &status.embeddings_note {
                    println!("note: {note}");
                }
            }
        }
        KbCommand::Search { query, mode, top_k, min_relevance, max_tokens, json } => {
            let kb = KnowledgeBase::open_configured(dir, store, &secrets)?;
            let mode = mode.map_or_else(|| kb.default_mode(), SearchMode::from);
            // Over-fetch when a floor may drop passages, as the chat's context does.
            let fetch = if min_relevance > 0.0 { top_k * 2 } else { top_k };
            let found = kb.search(&query, mode, fetch).await?;
            let kept = within_limits(found, top_k, min_relevance, max_tokens.unwrap_or(u32::MAX));
            let hits: Vec<Hit> = kept.into_iter().map(Hit::from).collect();
            if json {
                println!("{}", serde_json::to_string_pretty(&hits)?);
            } else if hits.is_empty() {
                println!("no passage matches (at least {min_relevance} relevant)");
            } else {
                for (i, h) in hits.iter().enumerate() {
                    println!(
                        "[{}] {}:{}-{}  score {:.3}  relevance {:.2}  {}",
                        i + 1,
                        h.path,
                        h.lines[0],
                        h.lines[1],
                        h.score,
                        h.relevance,
                        h.heading
                    );
                    for line in h.text.lines().take(4) {
                        println!("    {line}");
                    }
                }
            }
        }
        KbCommand::Embeddings(command) => {
            let kb = KnowledgeBase::open(dir, store)?;
            let config = match command {
                EmbeddingsCommand::Endpoint { url, model, api_key_secret } => {
                    Some(EmbeddingConfig::Endpoint { base_url: url, model, api_key_secret })
                }
                EmbeddingsCommand::Local { model_dir } => Some(EmbeddingConfig::Local { model_dir }),
                EmbeddingsCommand::Off => None,
            };
            let config = kb.set_embeddings(config)?;
            match &config {
                Some(_) => println!("embeddings saved; run `patchbay kb index` to embed the documents"),
                None => println!("embeddings off; search uses BM25"),
            }
            if let Some(note) = config.as_ref().and_then(EmbeddingConfig::language_note) {
                println!("note: {note}");
            }
        }
        KbCommand::Model(command) => model(dir, &KnowledgeBase::open(dir, store)?, command).await?,
        KbCommand::Source(command) => crate::kb_sources::run(dir, store, command).await?,
        KbCommand::Serve { stdio, http, allow_remote } => {
            if let Some((addr, why)) = http.and_then(|addr| serve::remote_refusal(addr).map(|why| (addr, why))) {
                if !allow_remote {
                    anyhow::bail!(
                        "not serving on {addr}: {why}; use 127.0.0.1 (or a port alone), or pass --allow-remote to \
                         serve there anyway"
                    );
                }
                eprintln!(
                    "warning: serving on {addr} over plain HTTP (--allow-remote): anyone on the network path can \
                     read the bearer token and the documents; use it on a trusted network or behind a TLS proxy"
                );
            }
            let kb = KnowledgeBase::open_configured(dir, store, &secrets)?;
            let cancel = crate::cancelled_by_ctrl_c();
            if stdio {
                serve::serve_stdio(kb, cancel).await?;
            } else if let Some(addr) = http {
                let (token, new) = serve::token(&secrets)?;
                let name = serve::TOKEN_SECRET;
                if new {
                    eprintln!("new bearer token (shown once, kept in the keyring as {name}): {token}");
                } else {
                    eprintln!("using the bearer token stored in the keyring as {name}");
                }
                let server = serve::HttpServer::bind(serve::KbServer::new(kb), addr, &token).await?;
                let at = server.local_addr()?;
                eprintln!(
                    "serving the knowledge base at http://{at}/mcp (Streamable HTTP) and http://{at}/sse (legacy SSE)"
                );
                server.run(cancel).await?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

async fn model(dir: &DataDir, kb: &KnowledgeBase, command: ModelCommand) -> anyhow::Result<()> {
    let root = models::models_dir(dir);
    match command {
        ModelCommand::List => {
            for listed in kb.models(&root, false)? {
                let state = match listed.state {
                    _ if listed.in_use => "in use",
                    models::ModelState::Ready => "downloaded",
                    models::ModelState::Partial => "partly downloaded",
                    models::ModelState::Absent => "not downloaded",
                };
                let mark = if listed.suggested { "  (suggested)" } else { "" };
                let m = listed.model;
                println!("{:<40} {:<32} {:>4} MB  {state}{mark}", m.name, m.languages, m.megabytes);
            }
            println!("hub: {}", kb.model_hub()?);
        }
        ModelCommand::Get { name, hub } => {
            let wanted = models::find(&name)?;
            let hub = match hub {
                Some(url) => models::check_hub(&url)?,
                None => kb.model_hub()?,
            };
            let bar = ProgressBar::new(0);
            bar.set_style(ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {wide_msg}")?);
            let shown = bar.clone();
            let progress = move |p: &models::DownloadProgress| {
                shown.set_length(p.total_bytes);
                shown.set_position(p.done_bytes);
                shown.set_message(p.file.clone());
            };
            let cancel = crate::cancelled_by_ctrl_c();
            let got = models::download(&root, &hub, wanted, models::STALL_TIMEOUT, &progress, &cancel).await;
            bar.finish_and_clear();
            let folder = got?;
            println!(
                "{} is in {}; `patchbay kb model use {}` puts it to work",
                wanted.name,
                folder.display(),
                wanted.name
            );
        }
        ModelCommand::Use { name } => {
            let wanted = models::find(&name)?;
            if models::state(&root, wanted) != models::ModelState::Ready {
                anyhow::bail!("{} is not downloaded; run `patchbay kb model get {}` first", wanted.name, wanted.name);
            }
            kb.set_embeddings(Some(EmbeddingConfig::Local { model_dir: root.join(wanted.name) }))?;
            println!(
                "embeddings: {} ({}); run `patchbay kb index` to embed the documents",
                wanted.name, wanted.languages
            );
        }
        ModelCommand::Hub { url, default } => {
            let hub = if default || url.is_some() { kb.set_model_hub(url.as_deref())? } else { kb.model_hub()? };
            println!("hub: {hub}");
        }
    }
    Ok(())
}
