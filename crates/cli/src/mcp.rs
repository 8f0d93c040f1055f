//! `patchbay mcp`: list, start and call the configured MCP servers, install
//! bundles (`install.rs`) and install links (`link.rs`), search the MCP Registry (`search`) and add the
//! servers it lists (`add.rs`).
//!
//! `status`, `tools`, `call`, `prompts`, `prompt`, `resources`, `read`,
//! `complete`, `info` and `doctor` start the servers they need through the
//! same registry the app uses, and stop them before exiting. The servers see
//! the shared roots; their sampling and elicitation requests are asked on the
//! terminal, sampling on the first provider's default model (see `requests.rs`).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use patchbay_core::config::{ConfigStore, McpServerConfig, TransportConfig, ValueSource};
use patchbay_core::discover::{HttpRegistry, Registry};
use patchbay_core::mcp::protocol::about::ServerAbout;
use patchbay_core::mcp::protocol::content::{prompt_text, resource_text};
use patchbay_core::mcp::protocol::{apps, uri_template};
use patchbay_core::mcp::{CallEvent, CallOptions, HealthCheck, McpRegistry, ServerStatus};
use patchbay_core::paths::DataDir;
use rmcp::model::{ArgumentInfo, Reference};
use tokio_util::sync::CancellationToken;

use crate::add::AddArgs;
use crate::install::{ConfigureArgs, InstallArgs};
use crate::link::InstallLinkArgs;
use crate::policy::PolicyArgs;
use crate::requests::{SamplingModel, TerminalRequests};

#[derive(Debug, Args)]
pub struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Every configured server, one line each.
    List,
    /// Start every enabled server, print whether it became ready and answers a ping, stop them.
    Status,
    /// Start a server and check its health: a ping, and how long the answer took.
    Ping { server: String },
    /// The tools a server offers.
    Tools {
        server: String,
        /// Each tool's input schema under its line.
        #[arg(long)]
        schema: bool,
        /// The whole listing as the server sent it, as JSON.
        #[arg(long, conflicts_with = "schema")]
        json: bool,
    },
    /// Call a tool and print the text of its result.
    Call {
        server: String,
        tool: String,
        /// Arguments as a JSON object.
        #[arg(long, value_name = "JSON")]
        args: Option<String>,
    },
    /// Start a server and show what its launch found: command path, exit code, env keys, stderr.
    Doctor { server: String },
    /// Start a server and show who it says it is: name, version, website, the
    /// protocol and transport in use, and what it offers.
    Info { server: String },
    /// The prompts a server offers, with their arguments (`*` marks a required one).
    Prompts { server: String },
    /// Get a prompt and print the text of its messages.
    Prompt {
        server: String,
        name: String,
        /// An argument of the prompt; once per argument.
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
    },
    /// The resources and resource templates a server offers.
    Resources { server: String },
    /// Read a resource and print its text. With `--arg`, URI is a resource
    /// template and the values fill in its variables.
    Read {
        server: String,
        uri: String,
        /// A variable of the resource template; once per variable.
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
    },
    /// What a server suggests for an argument of a prompt or of a resource
    /// template, one value per line.
    Complete {
        server: String,
        /// The prompt the argument belongs to.
        #[arg(long, required_unless_present = "template", conflicts_with = "template")]
        prompt: Option<String>,
        /// The resource template (its URI template) the argument belongs to.
        #[arg(long)]
        template: Option<String>,
        /// The argument's name.
        argument: String,
        /// What is typed so far.
        #[arg(default_value = "")]
        value: String,
        /// The value of another argument, which may narrow the suggestions.
        #[arg(long = "arg", value_name = "KEY=VALUE")]
        args: Vec<String>,
    },
    /// Install an MCP bundle (.mcpb) as a server, or update the one it installed before.
    Install(InstallArgs),
    /// Add the server an install link carries (patchbay://, Cursor's or VS Code's "Add to" links).
    InstallLink(InstallLinkArgs),
    /// Change the settings of an installed bundle (the others keep their value), or `--show` them.
    Configure(ConfigureArgs),
    /// Add a server the MCP Registry lists (by its registry name), and start it once.
    Add(AddArgs),
    /// Show or change a server's security policy: level, folders, network, rate limit.
    Policy(PolicyArgs),
    /// Search the MCP Registry (PATCHBAY_MCP_REGISTRY, else registry.modelcontextprotocol.io).
    Search {
        /// Text the server's registry name contains.
        query: String,
        /// The page after the one that printed this cursor.
        #[arg(long)]
        cursor: Option<String>,
        /// Print the page as JSON: each entry with the server entry it makes.
        #[arg(long)]
        json: bool,
    },
}

/// Prints one page of the registry's servers: each with the ways it runs and
/// the secrets it needs.
fn search(query: &str, cursor: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let page = runtime.block_on(HttpRegistry::configured().search(query, cursor, &CancellationToken::new()))?;
    if json {
        println!("{}", serde_json::to_string_pretty(&page)?);
        return Ok(ExitCode::SUCCESS);
    }
    if page.entries.is_empty() {
        println!("no server in the registry matches {query:?}");
    }
    let mut last = "";
    for entry in &page.entries {
        if entry.name != last {
            println!("{} {}  {}", entry.name, entry.version, entry.description);
            last = &entry.name;
        }
        if let Some(bundle) = &entry.bundle {
            println!("  {:<16} bundle {} (SHA-256 {})", entry.via, bundle.url, bundle.sha256);
            continue;
        }
        let (how, secrets) = match &entry.config.transport {
            TransportConfig::Stdio { command, args, env, .. } => (format!("{command} {}", args.join(" ")), env),
            TransportConfig::StreamableHttp { url, headers } | TransportConfig::Sse { url, headers } => {
                (url.clone(), headers)
            }
            _ => continue,
        };
        let asks: Vec<&str> =
            secrets.iter().filter(|(_, v)| matches!(v, ValueSource::Secret(_))).map(|(k, _)| k.as_str()).collect();
        let asks = if asks.is_empty() { String::new() } else { format!("  (secret: {})", asks.join(", ")) };
        let parts: Vec<&str> = entry.settings.iter().filter(|s| s.placeholder).map(|s| s.name.as_str()).collect();
        let parts = if parts.is_empty() { String::new() } else { format!("  (fill in: {})", parts.join(", ")) };
        println!("  {:<16} {how}{asks}{parts}", entry.via);
    }
    if let Some(next) = &page.next_cursor {
        println!("more: patchbay mcp search {query:?} --cursor {next}");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(dir: &DataDir, args: McpArgs) -> anyhow::Result<ExitCode> {
    if let McpCommand::Install(install) = &args.command {
        return crate::install::run(dir, install);
    }
    if let McpCommand::InstallLink(link) = &args.command {
        return crate::link::run(dir, link);
    }
    if let McpCommand::Configure(configure) = &args.command {
        return crate::install::configure(dir, configure);
    }
    if let McpCommand::Add(add) = &args.command {
        return crate::add::run(dir, add);
    }
    if let McpCommand::Policy(policy) = &args.command {
        return crate::policy::run(dir, policy);
    }
    if let McpCommand::Search { query, cursor, json } = &args.command {
        crate::open_store(dir)?;
        return search(query, cursor.as_deref(), *json);
    }
    if let McpCommand::List = args.command {
        let servers = ConfigStore::new(crate::open_store(dir)?).servers()?;
        servers.iter().for_each(|s| println!("{}", list_line(s)));
        return Ok(ExitCode::SUCCESS);
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async {
        let (host, _) = crate::open_host(dir)?;
        let servers = host.config().servers()?;
        let slowest = servers.iter().map(|s| s.timeouts.startup_secs).max().unwrap_or(0);
        let settle = Duration::from_secs(slowest + 5);
        let hooks = TerminalRequests::new(SamplingModel::default_for(host.store(), host.secrets().as_ref()));
        let terminal = hooks.terminal();
        host.configure(servers, Arc::new(hooks));
        host.share_roots().await?;
        let result = command(host.registry(), args.command, settle, &terminal).await;
        host.registry().shutdown().await;
        result
    })
}

/// Runs `command`; `terminal` is held while a server's request is asked there.
async fn command(
    registry: &McpRegistry,
    command: McpCommand,
    settle: Duration,
    terminal: &tokio::sync::Mutex<()>,
) -> anyhow::Result<ExitCode> {
    match command {
        McpCommand::List
        | McpCommand::Install(_)
        | McpCommand::InstallLink(_)
        | McpCommand::Configure(_)
        | McpCommand::Add(_)
        | McpCommand::Policy(_)
        | McpCommand::Search { .. } => {
            unreachable!("handled without the registry")
        }
        McpCommand::Status => {
            registry.start_all().await;
            registry.wait_settled(settle).await;
            for server in registry.snapshot() {
                match &server.status {
                    ServerStatus::Ready => println!("{}  ready  {}", server.name, crate::count(server.tools, "tool")),
                    _ if !server.enabled => println!("{}  disabled", server.name),
                    status => println!("{}  {status}", server.name),
                }
                println!("  policy: {}", server.policy);
                if server.status == ServerStatus::Ready {
                    // Its health, checked now: the answer is kept as the last check either way.
                    let _ = registry.ping(&server.name).await;
                    if let Some(health) = registry.health(&server.name) {
                        println!("  health: {}", health_line(&health));
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Ping { server } => {
            ready(registry, &server, settle).await?;
            let health = registry.ping(&server).await?;
            println!("{server}: {}", health_line(&health));
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Tools { server, schema, json } => {
            ready(registry, &server, settle).await?;
            let tools = registry.tools(&server)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&tools)?);
                return Ok(ExitCode::SUCCESS);
            }
            for tool in tools {
                let about = tool.description.as_deref().and_then(|d| d.lines().next()).unwrap_or("");
                let title = tool.title.as_deref().or(tool.annotations.as_ref().and_then(|a| a.title.as_deref()));
                let line = match title {
                    Some(title) if !about.is_empty() => format!("{}  {title}: {about}", tool.name),
                    Some(title) => format!("{}  {title}", tool.name),
                    None => format!("{}  {about}", tool.name),
                };
                // Its view (MCP Apps), which the window shows, and tools the model never sees.
                let view = apps::tool_view(&tool);
                let mut notes = Vec::new();
                if let Some(uri) = &view.resource_uri {
                    notes.push(format!("view {uri}"));
                }
                if !view.for_model {
                    notes.push("for its view only: the model does not see it".to_owned());
                }
                if registry.runs_as_task(&server, &tool.name) {
                    notes.push("runs as a task".to_owned());
                }
                match notes.is_empty() {
                    true => println!("{line}"),
                    false => println!("{line}  ({})", notes.join("; ")),
                }
                if schema {
                    let text = serde_json::to_string_pretty(&tool.input_schema)?;
                    println!("{}", text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n"));
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Call { server, tool, args } => {
            let arguments = match args {
                None => None,
                Some(json) => {
                    match serde_json::from_str::<serde_json::Value>(&json).context("--args is not valid JSON")? {
                        serde_json::Value::Object(map) => Some(map),
                        _ => bail!("--args must be a JSON object, like '{{\"message\": \"hi\"}}'"),
                    }
                }
            };
            ready(registry, &server, settle).await?;
            // Progress and log messages go to stderr as they come, held back while the
            // terminal asks the user something; Ctrl-C calls the call off.
            let (events, mut shown) = tokio::sync::mpsc::channel(64);
            let options = CallOptions { events: Some(events), ..CallOptions::default() };
            let call = registry.call_tool(&server, &tool, arguments, options, crate::cancelled_by_ctrl_c());
            tokio::pin!(call);
            let mut held = Vec::new();
            let mut show = |event: CallEvent| {
                held.push(event);
                if let Ok(_free) = terminal.try_lock() {
                    held.drain(..).for_each(show_event);
                }
            };
            let result = loop {
                tokio::select! {
                    biased;
                    Some(event) = shown.recv() => show(event),
                    result = &mut call => break result?,
                }
            };
            while let Ok(event) = shown.try_recv() {
                show(event);
            }
            // The call is over, and so is any question it asked.
            held.into_iter().for_each(show_event);
            let text = result_text(&result);
            if result.is_error == Some(true) {
                eprintln!("{text}");
                return Ok(ExitCode::FAILURE);
            }
            println!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Prompts { server } => {
            ready(registry, &server, settle).await?;
            for prompt in registry.prompts(&server)? {
                let args: Vec<String> = prompt
                    .arguments
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| if a.required == Some(true) { format!("{}*", a.name) } else { a.name })
                    .collect();
                let about = prompt.description.as_deref().and_then(|d| d.lines().next()).unwrap_or("");
                let args = if args.is_empty() { String::new() } else { format!(" ({})", args.join(", ")) };
                println!("{}{args}  {about}", prompt.name);
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Prompt { server, name, args } => {
            let arguments = pairs(&args)?.into_iter().map(|(k, v)| (k, serde_json::Value::String(v))).collect();
            ready(registry, &server, settle).await?;
            let result = registry.get_prompt(&server, &name, Some(arguments), CancellationToken::new()).await?;
            println!("{}", prompt_text(&result));
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Resources { server } => {
            ready(registry, &server, settle).await?;
            for resource in registry.resources(&server)? {
                println!("{}  {}", resource.uri, resource.name);
            }
            for template in registry.resource_templates(&server)? {
                println!("{}  {} (template)", template.uri_template, template.name);
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Read { server, uri, args } => {
            let uri = if args.is_empty() { uri } else { uri_template::expand(&uri, &pairs(&args)?)? };
            ready(registry, &server, settle).await?;
            let result = registry.read_resource(&server, &uri, CancellationToken::new()).await?;
            match resource_text(&result) {
                Some(text) => println!("{text}"),
                None => bail!("resource {uri} has no text (it is {})", kinds(&result)),
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Complete { server, prompt, template, argument, value, args } => {
            let reference = match (prompt, template) {
                (Some(prompt), _) => Reference::for_prompt(prompt),
                (None, Some(template)) => Reference::for_resource(template),
                (None, None) => unreachable!("clap requires --prompt or --template"),
            };
            let context = pairs(&args)?.into_iter().collect();
            ready(registry, &server, settle).await?;
            let argument = ArgumentInfo::new(argument, value);
            let completion = registry.complete(&server, reference, argument, context, CancellationToken::new()).await?;
            completion.values.iter().for_each(|v| println!("{v}"));
            if completion.has_more == Some(true) {
                let total = completion.total.map(|t| format!(" ({t} in all)")).unwrap_or_default();
                eprintln!("more values match{total}: type more to narrow them");
            }
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Info { server } => {
            ready(registry, &server, settle).await?;
            let about = registry.about(&server)?.context("the server stopped before it could be asked")?;
            print!("{}", about_text(&about));
            Ok(ExitCode::SUCCESS)
        }
        McpCommand::Doctor { server } => {
            registry.start(&server).await?;
            registry.wait_settled(settle).await;
            println!("status:    {}", registry.status(&server)?);
            match registry.doctor(&server).await? {
                Some(report) => print!("{report}"),
                None => println!("(not a stdio server: no launch to report)"),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `patchbay mcp info`: one `key: value` line per thing the server told, then its description.
fn about_text(about: &ServerAbout) -> String {
    let transport = serde_json::to_value(about.transport).ok().and_then(|v| v.as_str().map(str::to_owned));
    let mut lines: Vec<(&str, String)> = Vec::new();
    let mut add = |key, value: Option<String>| lines.extend(value.map(|v| (key, v)));
    add("name", about.name.clone());
    add("title", about.title.clone());
    add("version", about.version.clone());
    add("website", about.website.clone());
    add("protocol", Some(about.protocol_version.clone()));
    add("transport", transport);
    add("pid", about.pid.map(|p| p.to_string()));
    add("command", about.command.clone());
    add("offers", Some(if about.capabilities.is_empty() { "nothing".into() } else { about.capabilities.join(", ") }));
    let mut text: String =
        lines.into_iter().map(|(key, value)| format!("{:<10} {value}\n", format!("{key}:"))).collect();
    if let Some(description) = &about.description {
        text.push_str(&format!("\n{description}\n"));
    }
    text
}

/// Starts `server` and waits until it is ready; its failure reason otherwise.
/// A health check in one line: when, and the answer's time or why there was none.
fn health_line(health: &HealthCheck) -> String {
    let at = patchbay_core::clock::rfc3339_utc(u64::try_from(health.at_ms / 1000).unwrap_or(0));
    match &health.error {
        None => format!("checked {at}, answered a ping in {} ms", health.round_trip_ms),
        Some(error) => format!("checked {at}, no answer after {} ms: {error}", health.round_trip_ms),
    }
}

pub(crate) async fn ready(registry: &McpRegistry, server: &str, settle: Duration) -> anyhow::Result<()> {
    registry.start(server).await?;
    registry.wait_settled(settle).await;
    match registry.status(server)? {
        ServerStatus::Ready => Ok(()),
        status => bail!("MCP server {server:?} is not ready: {status} (see `patchbay mcp doctor {server}`)"),
    }
}

fn list_line(server: &McpServerConfig) -> String {
    let (kind, target) = match &server.transport {
        TransportConfig::Stdio { command, args, .. } => {
            ("stdio", std::iter::once(command).chain(args).cloned().collect::<Vec<_>>().join(" "))
        }
        TransportConfig::StreamableHttp { url, .. } => ("http", url.clone()),
        TransportConfig::Sse { url, .. } => ("sse", url.clone()),
        TransportConfig::Auto { url, .. } => ("auto", url.clone()),
        TransportConfig::InProcess => ("in-process", String::new()),
    };
    let enabled = if server.enabled { "enabled" } else { "disabled" };
    let shown = server.title.as_ref().map(|t| format!("  \"{t}\"")).unwrap_or_default();
    format!("{}  {kind}  {enabled}  {target}{shown}", server.name)
}

/// The result's text blocks; other blocks and structured content as JSON.
/// `--arg KEY=VALUE` pairs by key.
fn pairs(args: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    args.iter().map(|pair| crate::key_value("--arg", pair).map(|(k, v)| (k.to_owned(), v.to_owned()))).collect()
}

/// The MIME types of a resource without text, for the error that says so.
fn kinds(result: &rmcp::model::ReadResourceResult) -> String {
    let kinds: Vec<&str> = result
        .contents
        .iter()
        .map(|c| match c {
            rmcp::model::ResourceContents::TextResourceContents { mime_type, .. }
            | rmcp::model::ResourceContents::BlobResourceContents { mime_type, .. } => {
                mime_type.as_deref().unwrap_or("binary data")
            }
            _ => "an unknown kind of content",
        })
        .collect();
    if kinds.is_empty() { "empty".to_owned() } else { kinds.join(", ") }
}

/// A call's progress or log message, on stderr.
fn show_event(event: CallEvent) {
    match event {
        CallEvent::Progress { progress, total, message } => crate::show_progress(progress, total, message.as_deref()),
        CallEvent::Log(log) => {
            let text = log.data.as_str().map_or_else(|| log.data.to_string(), str::to_owned);
            eprintln!("  [{}] {text}", log.level);
        }
        _ => {}
    }
}

fn result_text(result: &rmcp::model::CallToolResult) -> String {
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|c| match c.as_text() {
            Some(t) => t.text.clone(),
            None => serde_json::to_string(c).unwrap_or_default(),
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    parts.join("\n")
}
