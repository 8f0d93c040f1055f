//! The MCP Registry (`registry.modelcontextprotocol.io`, or `PATCHBAY_MCP_REGISTRY`): search it and
//! turn what it lists into server entries the editor starts from, as a preset would.
//!
//! [`HttpRegistry::search`] reads one page of `GET /v0.1/servers?search=…`; each server becomes one
//! [`RegistryEntry`] per way of running it: npm (`npx -y`), PyPI (`uvx`), OCI (`docker run -i
//! --rm`), a remote, or an MCPB package ([`BundleSource`], which [`download_bundle`] fetches and
//! checks against its SHA-256). NuGet is left out. Secret variables and headers are left empty, to
//! be typed into the keyring like a preset's.
//!
//! What the registry leaves to the user inside a value (`Bearer {token}`, a URL's `{tenant}`, a
//! `<hint>` argument) is a placeholder setting that [`fill`] completes; a secret is kept in the
//! keyring whole and never put on a command line or in a URL.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::config::import::secret_name;
use crate::config::{McpServerConfig, TransportConfig, ValueSource};

/// The official registry.
pub const OFFICIAL: &str = "https://registry.modelcontextprotocol.io";
/// How many servers one page asks for.
const PAGE: usize = 30;
/// How long a search may take.
const TIMEOUT: Duration = Duration::from_secs(20);
/// The most of a registry's answer read.
const MAX_BODY: usize = 8 << 20;

/// Why a search, a download or filling in an entry failed; each names the
/// registry's address, the bundle's or the setting.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("cannot reach the MCP registry at {url}: {reason}")]
    Request { url: String, reason: String },
    #[error("the MCP registry at {url} answered {status}: {body}")]
    Status { url: String, status: u16, body: String },
    #[error("the MCP registry at {url} sent something that is not a server list: {reason}")]
    Invalid { url: String, reason: String },
    #[error("cannot download the bundle {url}: {reason}")]
    Download { url: String, reason: String },
    #[error("{name}: {reason}")]
    Setting { name: String, reason: String },
    #[error("cancelled")]
    Cancelled,
}

/// One page of search results.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct RegistryPage {
    pub entries: Vec<RegistryEntry>,
    /// Passed back to read the next page; none on the last one.
    pub next_cursor: Option<String>,
}

/// One way of running a listed server, ready for the server editor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct RegistryEntry {
    /// The suggested server name (the last part of the registry name).
    pub id: String,
    /// What the user reads: the title (or name) and how it runs.
    pub label: String,
    /// The registry name, e.g. `io.github.acme/weather`.
    pub name: String,
    pub description: String,
    pub version: String,
    pub website: Option<String>,
    /// `npm`, `pypi`, `oci`, `mcpb`, `streamable-http` or `sse`.
    pub via: String,
    /// The program that must be installed for it to start (`npx`, `uvx`, `docker`).
    pub needs: Option<String>,
    /// The entry the editor starts from; secrets to type are named `""`.
    /// For a bundle, a placeholder: the bundle's manifest says how it runs.
    pub config: McpServerConfig,
    /// Where the bundle of an `mcpb` entry is downloaded from.
    pub bundle: Option<BundleSource>,
    /// What the entry asks the user for: each environment variable or header
    /// it sets (shown beside them in the editor), then each placeholder in its
    /// values (filled in by [`fill`] first).
    pub settings: Vec<RegistrySetting>,
}

/// Something a listed server asks the user for: an environment variable (or,
/// for a remote, a header) it reads, or a placeholder in its values.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct RegistrySetting {
    pub name: String,
    pub description: String,
    pub required: bool,
    pub secret: bool,
    /// `{name}` in the entry's arguments, variables, headers or URL (or the
    /// argument `<name>`), filled in by [`fill`]; otherwise the variable or
    /// header of this name, set in the editor.
    #[serde(default)]
    pub placeholder: bool,
    #[serde(default)]
    pub default: Option<String>,
    /// The values it may take, when the registry lists them.
    #[serde(default)]
    pub choices: Vec<String>,
}

/// A `.mcpb` file the registry lists: its URL and the SHA-256 it must have.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct BundleSource {
    pub url: String,
    /// Lowercase hex.
    pub sha256: String,
}

/// A registry of MCP servers.
#[async_trait::async_trait]
pub trait Registry: Send + Sync {
    /// The servers whose name contains `query`, latest versions only, from
    /// `cursor` on.
    async fn search(
        &self,
        query: &str,
        cursor: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<RegistryPage, RegistryError>;
}

/// A registry reached over HTTP.
#[derive(Debug, Clone)]
pub struct HttpRegistry {
    base: String,
}

impl HttpRegistry {
    /// The registry at `base` (e.g. [`OFFICIAL`]).
    pub fn new(base: impl Into<String>) -> Self {
        Self { base: base.into().trim_end_matches('/').to_owned() }
    }

    /// The registry `PATCHBAY_MCP_REGISTRY` names, else the official one.
    pub fn configured() -> Self {
        Self::new(
            std::env::var("PATCHBAY_MCP_REGISTRY").ok().filter(|u| !u.trim().is_empty()).unwrap_or(OFFICIAL.into()),
        )
    }
}

#[async_trait::async_trait]
impl Registry for HttpRegistry {
    async fn search(
        &self,
        query: &str,
        cursor: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<RegistryPage, RegistryError> {
        let url = format!("{}/v0.1/servers", self.base);
        let request = |reason: String| RegistryError::Request { url: url.clone(), reason };
        let client = crate::net::public_client();
        let limit = PAGE.to_string();
        let mut params = vec![("search", query.trim()), ("version", "latest"), ("limit", limit.as_str())];
        if let Some(cursor) = cursor {
            params.push(("cursor", cursor));
        }
        let send = async {
            let mut response = client.get(&url).query(&params).send().await.map_err(|e| request(e.to_string()))?;
            let status = response.status();
            // Read up to the cap, whatever the server sends.
            let mut body = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(|e| request(e.to_string()))? {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(RegistryError::Invalid { url: url.clone(), reason: "the answer is over 8 MiB".into() });
                }
                body.extend_from_slice(&chunk);
            }
            if !status.is_success() {
                let text = String::from_utf8_lossy(&body[..body.len().min(300)]).trim().to_owned();
                return Err(RegistryError::Status { url: url.clone(), status: status.as_u16(), body: text });
            }
            let list: wire::List = serde_json::from_slice(&body)
                .map_err(|e| RegistryError::Invalid { url: url.clone(), reason: e.to_string() })?;
            Ok(page(list))
        };
        tokio::select! {
            _ = cancel.cancelled() => Err(RegistryError::Cancelled),
            r = tokio::time::timeout(TIMEOUT, send) => r.unwrap_or_else(|_| Err(request(format!("no answer in {} s", TIMEOUT.as_secs())))),
        }
    }
}

/// The registry's JSON, read leniently: unknown fields are ignored and
/// missing ones are empty.
mod wire {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct List {
        pub servers: Vec<Listed>,
        pub metadata: Metadata,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    pub struct Metadata {
        pub next_cursor: Option<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Listed {
        pub server: Server,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    pub struct Server {
        pub name: String,
        pub title: Option<String>,
        pub description: String,
        pub version: String,
        pub website_url: Option<String>,
        pub packages: Vec<Package>,
        pub remotes: Vec<Remote>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    pub struct Package {
        pub registry_type: String,
        pub identifier: String,
        pub version: Option<String>,
        pub file_sha256: Option<String>,
        pub transport: Transport,
        pub package_arguments: Vec<Argument>,
        pub environment_variables: Vec<Variable>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Transport {
        #[serde(rename = "type")]
        pub kind: String,
    }

    /// What the user may be asked for: a value, a variable inside one.
    #[derive(Debug, Default, Clone, Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    pub struct Input {
        pub description: Option<String>,
        pub value: Option<String>,
        pub default: Option<String>,
        pub is_required: bool,
        pub is_secret: bool,
        pub choices: Vec<String>,
        /// The `{name}`s its value holds.
        pub variables: BTreeMap<String, Input>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    pub struct Argument {
        #[serde(rename = "type")]
        pub kind: String,
        pub name: Option<String>,
        pub value_hint: Option<String>,
        #[serde(flatten)]
        pub input: Input,
    }

    /// An environment variable or a header.
    #[derive(Debug, Default, Deserialize)]
    #[serde(default, rename_all = "camelCase")]
    pub struct Variable {
        pub name: String,
        #[serde(flatten)]
        pub input: Input,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    pub struct Remote {
        #[serde(rename = "type")]
        pub kind: String,
        pub url: String,
        pub headers: Vec<Variable>,
        /// The `{name}`s its URL holds.
        pub variables: BTreeMap<String, Input>,
    }
}

/// The largest bundle downloaded.
const MAX_BUNDLE: u64 = 512 << 20;

/// Downloads the bundle `source` names into `dir` (as `<sha256>.mcpb`) and
/// checks its SHA-256; returns its path. Only `https` URLs are fetched, and
/// `http` ones on this computer (a registry of one's own). A file whose
/// digest differs is deleted, never opened.
pub async fn download_bundle(
    source: &BundleSource,
    dir: &std::path::Path,
    cancel: &CancellationToken,
) -> Result<std::path::PathBuf, RegistryError> {
    use sha2::Digest;
    use tokio::io::AsyncWriteExt;
    let fail = |reason: String| RegistryError::Download { url: source.url.clone(), reason };
    let url = url::Url::parse(&source.url).map_err(|e| fail(e.to_string()))?;
    let local = matches!(url.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"));
    if url.scheme() != "https" && !(url.scheme() == "http" && local) {
        return Err(fail("only https URLs are downloaded".into()));
    }
    if source.sha256.len() != 64 || !source.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(fail("the registry gives no valid SHA-256 for it".into()));
    }
    tokio::fs::create_dir_all(dir).await.map_err(|e| fail(format!("{}: {e}", dir.display())))?;
    let path = dir.join(format!("{}.mcpb", source.sha256.to_ascii_lowercase()));
    let partial = path.with_extension("mcpb.part");
    let fetch = async {
        let mut response = crate::net::public_client().get(url).send().await.map_err(|e| fail(e.to_string()))?;
        if !response.status().is_success() {
            return Err(fail(format!("the server answered {}", response.status())));
        }
        let mut file =
            tokio::fs::File::create(&partial).await.map_err(|e| fail(format!("{}: {e}", partial.display())))?;
        let (mut digest, mut size) = (sha2::Sha256::new(), 0u64);
        while let Some(chunk) = response.chunk().await.map_err(|e| fail(e.to_string()))? {
            size += chunk.len() as u64;
            if size > MAX_BUNDLE {
                return Err(fail(format!("it is over {} MiB", MAX_BUNDLE >> 20)));
            }
            digest.update(&chunk);
            file.write_all(&chunk).await.map_err(|e| fail(format!("{}: {e}", partial.display())))?;
        }
        file.sync_all().await.map_err(|e| fail(format!("{}: {e}", partial.display())))?;
        let got = hex::encode(digest.finalize());
        if !got.eq_ignore_ascii_case(&source.sha256) {
            return Err(fail(format!("its SHA-256 is {got}, not the {} the registry lists", source.sha256)));
        }
        tokio::fs::rename(&partial, &path).await.map_err(|e| fail(format!("{}: {e}", path.display())))
    };
    let result = tokio::select! {
        _ = cancel.cancelled() => Err(RegistryError::Cancelled),
        r = tokio::time::timeout(Duration::from_secs(600), fetch) => r.unwrap_or_else(|_| Err(fail("it took over 10 minutes".into()))),
    };
    if result.is_err() {
        let _ = tokio::fs::remove_file(&partial).await;
    }
    result.map(|()| path)
}

fn page(list: wire::List) -> RegistryPage {
    let entries = list.servers.iter().flat_map(|l| entries(&l.server)).collect();
    RegistryPage { entries, next_cursor: list.metadata.next_cursor.filter(|c| !c.is_empty()) }
}

/// Every way `server` can run here.
fn entries(server: &wire::Server) -> Vec<RegistryEntry> {
    let id = server_id(&server.name);
    let title = server.title.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| server.name.clone());
    let entry = |via: &str, needs: Option<&str>, transport: TransportConfig| RegistryEntry {
        id: id.clone(),
        label: format!("{title} ({via})"),
        name: server.name.clone(),
        description: server.description.clone(),
        version: server.version.clone(),
        website: server.website_url.clone(),
        via: via.to_owned(),
        needs: needs.map(str::to_owned),
        config: McpServerConfig::with_transport(id.clone(), transport),
        bundle: None,
        settings: Vec::new(),
    };
    let packages = server.packages.iter().filter(|p| p.transport.kind.is_empty() || p.transport.kind == "stdio");
    let bundles = packages.clone().filter(|p| p.registry_type == "mcpb").filter_map(|p| {
        let sha256 = p.file_sha256.clone().filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))?;
        let source = BundleSource { url: p.identifier.clone(), sha256: sha256.to_ascii_lowercase() };
        let placeholder =
            TransportConfig::Stdio { command: String::new(), args: vec![], env: BTreeMap::new(), cwd: None };
        Some(RegistryEntry { bundle: Some(source), ..entry("mcpb", None, placeholder) })
    });
    let local = packages.filter_map(|p| {
        let (program, mut args) = launch(p)?;
        let mut asks = Asks::default();
        let env = variables(&p.environment_variables, &mut asks);
        if program == "docker" {
            // The container sees only the variables passed into it; their values come from the server's env.
            let image = args.pop().expect("docker's arguments end with the image");
            args.extend(env.keys().flat_map(|k| ["-e".to_owned(), k.clone()]));
            args.push(image);
        }
        args.extend(arguments(&p.package_arguments, &mut asks));
        let transport = TransportConfig::Stdio { command: program.to_owned(), args, env, cwd: None };
        Some(RegistryEntry { settings: asks.0, ..entry(&p.registry_type, Some(program), transport) })
    });
    let remotes = server.remotes.iter().filter_map(|r| {
        let mut asks = Asks::default();
        let headers = variables(&r.headers, &mut asks);
        let url = r.url.clone();
        asks.placeholders_in(&url, &wire::Input { variables: r.variables.clone(), ..wire::Input::default() });
        let transport = match r.kind.as_str() {
            "streamable-http" => TransportConfig::StreamableHttp { url, headers },
            "sse" => TransportConfig::Sse { url, headers },
            _ => return None,
        };
        Some(RegistryEntry { settings: asks.0, ..entry(&r.kind, None, transport) })
    });
    local.chain(bundles).chain(remotes).collect()
}

/// The program and arguments that run package `p`, for the package types a
/// desktop host runs.
fn launch(p: &wire::Package) -> Option<(&'static str, Vec<String>)> {
    let versioned = |sep: &str| match &p.version {
        Some(v) if !v.is_empty() => format!("{}{sep}{v}", p.identifier),
        _ => p.identifier.clone(),
    };
    match p.registry_type.as_str() {
        "npm" => Some(("npx", vec!["-y".into(), versioned("@")])),
        "pypi" => Some(("uvx", vec![versioned("==")])),
        "oci" => Some(("docker", vec!["run".into(), "-i".into(), "--rm".into(), versioned(":")])),
        _ => None,
    }
}

/// The settings an entry asks for, in order: its variables and headers, then
/// its placeholders, each once.
#[derive(Default)]
struct Asks(Vec<RegistrySetting>);

impl Asks {
    fn add(&mut self, setting: RegistrySetting) {
        if !self.0.iter().any(|s| s.name == setting.name && s.placeholder == setting.placeholder) {
            self.0.push(setting);
        }
    }

    /// Each `{name}` in `text`: described by `input`'s own variable of that
    /// name, else by `input` (a secret value makes its placeholders secret);
    /// required unless it has a default.
    fn placeholders_in(&mut self, text: &str, input: &wire::Input) {
        for name in placeholder_names(text) {
            let own = input.variables.get(name);
            self.add(RegistrySetting {
                name: name.to_owned(),
                description: own.unwrap_or(input).description.clone().unwrap_or_default(),
                // A part of a value left empty rarely leaves a value that works.
                required: own.is_none_or(|v| v.is_required || v.default.is_none()),
                secret: input.is_secret || own.is_some_and(|v| v.is_secret),
                placeholder: true,
                default: own.and_then(|v| v.default.clone()),
                choices: own.map(|v| v.choices.clone()).unwrap_or_default(),
            });
        }
    }

    /// An argument the registry only hints at, written `<hint>`.
    fn hinted(&mut self, hint: &str, input: &wire::Input, required: bool) -> String {
        self.add(RegistrySetting {
            name: hint.to_owned(),
            description: input.description.clone().unwrap_or_default(),
            required,
            secret: input.is_secret,
            placeholder: true,
            default: None,
            choices: input.choices.clone(),
        });
        format!("<{hint}>")
    }
}

/// The `{name}`s in `text`, in order (a name is a letter or `_`, then
/// letters, digits, `_`, `-` and `.`).
fn placeholder_names(text: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        rest = &rest[open + 1..];
        let Some(close) = rest.find('}') else { break };
        let name = &rest[..close];
        let mut chars = name.chars();
        let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if valid && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

fn arguments(args: &[wire::Argument], asks: &mut Asks) -> Vec<String> {
    let mut out = Vec::new();
    for a in args {
        let value = a.input.value.clone().or_else(|| a.input.default.clone());
        if let Some(value) = &value {
            asks.placeholders_in(value, &a.input);
        }
        match (a.kind.as_str(), &a.name) {
            ("named", Some(name)) => {
                out.push(name.clone());
                out.extend(value.or_else(|| {
                    let hint = a.value_hint.as_deref()?;
                    Some(asks.hinted(hint, &a.input, a.input.is_required))
                }));
            }
            // A positional argument left out would shift the ones after it.
            _ => out.extend(value.or_else(|| Some(asks.hinted(a.value_hint.as_deref()?, &a.input, true)))),
        }
    }
    out
}

/// The variables (or headers) an entry sets: a secret is left to type, a
/// value with `{placeholders}` kept to fill in; each described in `asks`.
fn variables(vars: &[wire::Variable], asks: &mut Asks) -> BTreeMap<String, ValueSource> {
    let mut out = BTreeMap::new();
    let mut templates = Vec::new();
    for v in vars.iter().filter(|v| !v.name.is_empty()) {
        let given = v.input.value.clone().or_else(|| v.input.default.clone()).unwrap_or_default();
        let value = if !placeholder_names(&given).is_empty() {
            templates.push((given.clone(), &v.input));
            ValueSource::Plain(given)
        } else {
            asks.add(RegistrySetting {
                name: v.name.clone(),
                description: v.input.description.clone().unwrap_or_default(),
                required: v.input.is_required,
                secret: v.input.is_secret,
                placeholder: false,
                default: v.input.default.clone(),
                choices: v.input.choices.clone(),
            });
            if v.input.is_secret { ValueSource::Secret(String::new()) } else { ValueSource::Plain(given) }
        };
        out.insert(v.name.clone(), value);
    }
    for (template, input) in templates {
        asks.placeholders_in(&template, input);
    }
    out
}

/// `entry` as server `server`, its placeholders filled in from `values` (by
/// setting name; a setting left out takes its default), and the secrets to
/// store, by keyring name. A variable or header a secret goes into is kept in
/// the keyring whole; a secret placed on the command line or in the URL is
/// refused, as is a required setting left empty or a value not among its choices.
pub fn fill(
    entry: &RegistryEntry,
    server: &str,
    values: &BTreeMap<String, String>,
) -> Result<(McpServerConfig, BTreeMap<String, String>), RegistryError> {
    let refuse = |name: &str, reason: String| RegistryError::Setting { name: name.to_owned(), reason };
    let asked: Vec<&RegistrySetting> = entry.settings.iter().filter(|s| s.placeholder).collect();
    if let Some(unknown) = values.keys().find(|k| !asked.iter().any(|s| &s.name == *k)) {
        let names: Vec<&str> = asked.iter().map(|s| s.name.as_str()).collect();
        let takes = if names.is_empty() { "nothing".to_owned() } else { names.join(", ") };
        return Err(refuse(unknown, format!("{} takes no such setting; it takes {takes}", entry.name)));
    }
    let mut resolved = BTreeMap::new();
    for s in &asked {
        let value = values.get(&s.name).filter(|v| !v.is_empty()).or(s.default.as_ref());
        match value {
            None if s.required => {
                let about = if s.description.is_empty() { String::new() } else { format!(" ({})", s.description) };
                return Err(refuse(&s.name, format!("required{about}")));
            }
            Some(v) if !s.choices.is_empty() && !s.choices.contains(v) => {
                return Err(refuse(&s.name, format!("{v:?} is not one of {}", s.choices.join(", "))));
            }
            _ => {}
        }
        resolved.insert(s.name.as_str(), (value.cloned().unwrap_or_default(), s.secret));
    }
    // Fills `text`; the secret that went into it, if one did.
    let put = |text: &str| {
        let mut out = text.to_owned();
        let mut secret = None;
        for name in placeholder_names(text) {
            if let Some((value, is_secret)) = resolved.get(name) {
                out = out.replace(&format!("{{{name}}}"), value);
                if *is_secret && !value.is_empty() {
                    secret = Some(name.to_owned());
                }
            }
        }
        (out, secret)
    };
    let in_the_open = |secret: String, place: &str| {
        let reason = format!(
            "a secret would go into the {place}, which the server's settings keep in plain text; add the server by \
             hand with the secret in an environment variable or header"
        );
        refuse(&secret, reason)
    };
    let mut config = entry.config.clone();
    config.name = server.to_owned();
    let mut secrets = BTreeMap::new();
    let mut keep = |map: &mut BTreeMap<String, ValueSource>| {
        for (key, value) in map.iter_mut() {
            let ValueSource::Plain(text) = value else { continue };
            match put(text) {
                (filled, Some(_)) => {
                    let name = secret_name(server, key);
                    secrets.insert(name.clone(), filled);
                    *value = ValueSource::Secret(name);
                }
                (filled, None) => *text = filled,
            }
        }
    };
    match &mut config.transport {
        TransportConfig::Stdio { args, env, .. } => {
            keep(env);
            let mut filled = Vec::new();
            for arg in args.iter() {
                let hint = arg.strip_prefix('<').and_then(|a| a.strip_suffix('>')).filter(|h| resolved.contains_key(h));
                let (text, secret) = match hint.and_then(|h| Some((h, resolved.get(h)?))) {
                    Some((hint, (value, secret))) => {
                        (value.clone(), (*secret && !value.is_empty()).then(|| hint.to_owned()))
                    }
                    None => put(arg),
                };
                if let Some(secret) = secret {
                    return Err(in_the_open(secret, "command line"));
                }
                // An optional argument left empty is left out, and the flag it is the value of.
                if hint.is_some() && text.is_empty() {
                    if filled.last().is_some_and(|f: &String| f.starts_with('-')) {
                        filled.pop();
                    }
                    continue;
                }
                filled.push(text);
            }
            *args = filled;
        }
        TransportConfig::StreamableHttp { url, headers } | TransportConfig::Sse { url, headers } => {
            keep(headers);
            let (filled, secret) = put(url);
            if let Some(secret) = secret {
                return Err(in_the_open(secret, "URL"));
            }
            *url = filled;
        }
        _ => {}
    }
    Ok((config, secrets))
}

/// A server name from a registry name: its last part, with anything but
/// letters, digits, `-` and `_` replaced.
fn server_id(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    let id: String =
        last.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' }).collect();
    let id = id.trim_matches('-');
    if id.is_empty() { "server".into() } else { id.to_owned() }
}

#[cfg(test)]
mod tests;
