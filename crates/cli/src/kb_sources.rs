//! `patchbay kb source`: remote retrieval tools the chat searches beside the knowledge base
//! (RAGFlow's `ragflow_retrieval`, another Patchbay's `knowledge_search`, or any tool read through
//! a field mapping). `try` starts the source's server and shows what it finds, as a chat would
//! read it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Subcommand;
use patchbay_core::host::Host;
use patchbay_core::paths::DataDir;
use patchbay_core::rag::KnowledgeBase;
use patchbay_core::rag::sources::{self, KnowledgeSource, SourceShape};
use patchbay_core::store::Store;

use crate::requests::{SamplingModel, TerminalRequests};

/// How long `try` waits for the source.
const TRY_LIMIT: Duration = Duration::from_secs(20);

#[derive(Debug, Subcommand)]
pub enum SourceCommand {
    /// The sources: name, server, tool and how its answer is read.
    List,
    /// Add a source (or replace the one of that name). RAGFlow's `ragflow_retrieval` and Patchbay's
    /// `knowledge_search` are known; any other tool needs --query-arg and --text.
    Add {
        name: String,
        /// The MCP server (as `patchbay mcp list` names it).
        #[arg(long)]
        server: String,
        #[arg(long)]
        tool: String,
        /// The tool's argument the question goes in.
        #[arg(long, requires = "text")]
        query_arg: Option<String>,
        /// The field of each result holding its text (a dotted path such as `doc.body`).
        #[arg(long, requires = "query_arg")]
        text: Option<String>,
        /// The field holding a result's title.
        #[arg(long, requires = "query_arg")]
        title: Option<String>,
        /// The field holding where a result comes from (a path or URL).
        #[arg(long = "source", requires = "query_arg")]
        source_field: Option<String>,
    },
    /// Remove a source.
    Remove { name: String },
    /// Ask a source, as a chat would, and print what it finds.
    Try { name: String, query: String },
}

pub async fn run(dir: &DataDir, store: Store, command: SourceCommand) -> anyhow::Result<()> {
    let kb = KnowledgeBase::open(dir, store.clone())?;
    match command {
        SourceCommand::List => {
            for s in kb.sources()? {
                println!("{}  {}/{}  {}", s.name, s.server, s.tool, shape_name(&s.shape));
            }
        }
        SourceCommand::Add { name, server, tool, query_arg, text, title, source_field } => {
            let shape = match (query_arg, text) {
                (Some(query_arg), Some(text)) => SourceShape::Mapped { query_arg, text, title, source: source_field },
                _ => match sources::known(&tool) {
                    Some(shape) => shape,
                    None => bail!(
                        "Patchbay does not know how {tool} answers: give --query-arg (the argument the question \
                         goes in) and --text (the field of each result holding its text), and --title or --source"
                    ),
                },
            };
            kb.check_known_server(&server)?;
            let shown = shape_name(&shape);
            let source =
                KnowledgeSource { name: name.clone(), server, tool, shape, server_id: None, tool_fingerprint: None };
            // Pinned to the tool's definition as its server offers it now.
            let host = started(dir, &source.server).await?;
            let put = kb.put_source(host.registry(), source);
            host.registry().shutdown().await;
            put?;
            println!("added {name} ({shown}); `patchbay kb source try {name} QUESTION` shows what it finds");
        }
        SourceCommand::Remove { name } => {
            kb.remove_source(&name)?;
            println!("removed {name}");
        }
        SourceCommand::Try { name, query } => {
            let source = kb.sources()?.into_iter().find(|s| s.name == name.trim());
            let source = source.with_context(|| format!("there is no knowledge source named {name:?}"))?;
            kb.check_source(&source)?;
            let host = started(dir, &source.server).await?;
            let registry = host.registry();
            let found = sources::ask(registry, &source, &query, 5, TRY_LIMIT, crate::cancelled_by_ctrl_c()).await;
            registry.shutdown().await;
            let found = found?;
            if found.is_empty() {
                println!("{name} found nothing for {query:?}");
            }
            for (i, p) in found.iter().enumerate() {
                let heading = if p.heading.is_empty() { String::new() } else { format!(" › {}", p.heading) };
                println!("[{}] {}{heading}  (relevance {:.2})", i + 1, p.path.display(), p.relevance());
                println!("    {}", p.text.lines().next().unwrap_or_default());
            }
        }
    }
    Ok(())
}

/// The host with `server` started and ready (shut its registry down afterwards).
async fn started(dir: &DataDir, server: &str) -> anyhow::Result<Arc<Host>> {
    let (host, _) = crate::open_host(dir)?;
    if !host.config().server(server)?.enabled {
        bail!("{server} is switched off (Settings → MCP servers switches it on)");
    }
    let servers = host.config().servers()?;
    let hooks = TerminalRequests::new(SamplingModel::default_for(host.store(), host.secrets().as_ref()));
    host.configure(servers, Arc::new(hooks));
    crate::mcp::ready(host.registry(), server, TRY_LIMIT).await?;
    Ok(host)
}

fn shape_name(shape: &SourceShape) -> String {
    match shape {
        SourceShape::Ragflow => "RAGFlow".into(),
        SourceShape::Patchbay => "Patchbay".into(),
        SourceShape::Mapped { query_arg, text, title, source } => {
            let mut fields = vec![format!("question in {query_arg}"), format!("text {text}")];
            fields.extend(title.as_ref().map(|t| format!("title {t}")));
            fields.extend(source.as_ref().map(|s| format!("source {s}")));
            format!("mapped: {}", fields.join(", "))
        }
    }
}
