//! MCP bundles (`.mcpb`, formerly `.dxt`): a zip of an MCP server's code and a `manifest.json` that
//! says how to run it and what the user sets up, installed from the servers page or with
//! `patchbay mcp install`.
//!
//! [`Bundle::open`] first copies the file to a private one it owns and reads, verifies and unpacks
//! only that copy (of a signed one, only the signed bytes), so what is shown is what is installed; it
//! checks the manifest without unpacking. [`Bundle::info`] is the install form,
//! [`Bundle::server_config`] the stdio entry (the spec's variables substituted, sensitive values as
//! keyring references), [`Bundle::unpack`] puts the files in place, [`Bundle::installed`] and
//! [`Bundle::record_values`] let its settings change later, [`Bundle::localized`] speaks the user's
//! language. A sensitive setting only ever goes in an environment variable: a manifest that puts one
//! on the command line is refused. A bundle changed after `mcpb sign` is refused ([`Signature`]).

mod extract;
mod localize;
mod manifest;
mod signature;
#[cfg(test)]
mod signature_tests;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{MAIN_SEPARATOR, Path, PathBuf};
use std::sync::Arc;

use rustls_pki_types::TrustAnchor;
use serde::Serialize;
use serde_json::Value;

use crate::config::import::secret_name;
use crate::config::{McpServerConfig, TransportConfig, ValueSource};
pub use manifest::{Declared, OptionKind, ServerKind};
use manifest::{Manifest, McpConfig, UserOption};
pub use signature::{Distrust, Signature, SignatureError, Signer};

/// The user's settings for a bundle, by key: text, a number, a boolean, or a
/// list of paths.
pub type BundleValues = BTreeMap<String, Value>;

/// The largest `manifest.json` read.
const MAX_MANIFEST: u64 = 1 << 20;
/// Why a required setting left empty is refused.
const REQUIRED: &str = "required; the server cannot start without it";
/// The largest icon shown.
const MAX_ICON: u64 = 512 << 10;
/// The longest server name made from a bundle's name.
const MAX_NAME: usize = 48;
/// The file in a bundle's folder that records who signed it.
const SIGNATURE_RECORD: &str = ".patchbay-signature.json";
/// The file in a bundle's folder that keeps the settings it was given (sensitive ones left out).
const SETTINGS_RECORD: &str = ".patchbay-settings.json";

/// Errors of reading and installing bundles; each names the file, entry or
/// setting and says why.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    #[error("cannot read {file}: {source}")]
    Read { file: PathBuf, source: io::Error },
    #[error("{file} is not an MCP bundle (a .mcpb file is a zip archive with manifest.json): {reason}")]
    NotABundle { file: PathBuf, reason: String },
    #[error("{file}: manifest.json: {reason}")]
    Manifest { file: PathBuf, reason: String },
    #[error("{file} is made for {platforms}; this computer runs {current}")]
    Platform { file: PathBuf, platforms: String, current: &'static str },
    #[error("{file} is too large to install: {what}")]
    TooLarge { file: PathBuf, what: String },
    #[error("the bundle's entry {entry:?} is not unpacked: {reason}")]
    UnsafeEntry { entry: String, reason: &'static str },
    #[error("{title} (user_config.{key}): {reason}")]
    Setting { key: String, title: String, reason: String },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("{file} is refused: {source}")]
    Signature { file: PathBuf, source: SignatureError },
}

/// What the install form shows about a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct BundleInfo {
    /// The name in the manifest.
    pub name: String,
    /// The server it installs as.
    pub server_name: String,
    /// What the user reads (the display name, or the name).
    pub title: String,
    pub version: String,
    pub description: String,
    pub long_description: Option<String>,
    pub author: String,
    pub homepage: Option<String>,
    /// The bundle's PNG icon as a `data:` URL, when it has one of at most 512 KiB.
    pub icon: Option<String>,
    pub kind: ServerKind,
    /// What must be installed to run it, e.g. `node >=18`.
    pub runtime: Option<String>,
    pub tools: Vec<Declared>,
    /// Whether the server offers more tools than it declares.
    pub tools_generated: bool,
    pub prompts: Vec<Declared>,
    /// The settings to fill in, in the manifest's order.
    pub settings: Vec<BundleSetting>,
    /// The version installed now, when this replaces it.
    pub installed_version: Option<String>,
    /// Who signed it.
    pub signature: Signature,
    /// Who signed the version installed now, when this replaces it (none for
    /// a version installed before Patchbay kept it).
    pub installed_signature: Option<Signature>,
    /// Whether the installed version was signed and this one is not signed
    /// by the same certificate: a warning sign for an update.
    pub signer_changed: bool,
    /// The id of the opened bundle this preview shows, to install exactly it
    /// (none for an installed bundle's settings).
    pub preview_id: Option<String>,
}

/// One setting on the install form.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct BundleSetting {
    pub key: String,
    pub kind: OptionKind,
    pub title: String,
    pub description: String,
    pub required: bool,
    /// Typed masked and kept in the keyring.
    pub sensitive: bool,
    /// Several folders or files.
    pub multiple: bool,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The default, its variables substituted.
    pub default: Option<Value>,
    /// A sensitive value the installed version already keeps in the keyring;
    /// left empty, it is kept.
    pub kept: bool,
    /// The value the installed version was given (never a sensitive one).
    pub value: Option<Value>,
}

/// A bundle whose manifest has been read and checked: a file, or the folder
/// it was unpacked in ([`Bundle::installed`]).
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The `.mcpb` file, or the unpacked folder's `manifest.json`: what errors name.
    file: PathBuf,
    /// Where its files are read from.
    files: Files,
    manifest: Manifest,
    signature: Signature,
}

/// Where a bundle's files are read from.
#[derive(Debug, Clone)]
enum Files {
    /// The private copy of the `.mcpb` file (deleted with the last clone of
    /// the bundle), read up to `len`: where its signature starts.
    Archive { copy: Arc<tempfile::TempPath>, len: u64 },
    /// The folder it was unpacked in.
    Folder(PathBuf),
}

/// A setting's value, ready to substitute.
#[derive(Debug, Clone)]
enum Resolved {
    Text(String),
    List(Vec<String>),
    /// Optional and not given.
    Unset,
    /// Sensitive, not given, and already in the keyring for the installed version.
    Kept,
}

impl Bundle {
    /// Copies `file` to a private file in `copies` (made `0700` when it is
    /// new), checks the copy's signature against the roots this computer
    /// trusts, then reads its manifest and checks it: the fields Patchbay
    /// needs, this platform, the entry point, and every `${user_config.…}`
    /// declared. The bundle reads only that copy from then on.
    pub fn open(file: &Path, copies: &Path) -> Result<Self, BundleError> {
        Self::open_trusting(file, copies, signature::system_roots())
    }

    /// [`Bundle::open`], trusting `roots` for signatures.
    pub fn open_trusting(file: &Path, copies: &Path, roots: &[TrustAnchor<'_>]) -> Result<Self, BundleError> {
        let copy = private_copy(file, copies)?;
        let (signature, len) = signature::verify(&copy, roots)
            .map_err(|source| BundleError::Signature { file: file.to_owned(), source })?;
        let mut zip = read_archive(file, &copy, len)?;
        let mut text = Vec::new();
        match zip.by_name("manifest.json") {
            Ok(entry) => entry.take(MAX_MANIFEST + 1).read_to_end(&mut text).map_err(|e| damaged(file, e))?,
            Err(zip::result::ZipError::FileNotFound) => {
                return Err(BundleError::NotABundle {
                    file: file.to_owned(),
                    reason: "it has no manifest.json".into(),
                });
            }
            Err(e) => return Err(damaged(file, e)),
        };
        let manifest = parse_manifest(file, &text)?;
        let files = Files::Archive { copy: Arc::new(copy), len };
        let bundle = Self { file: file.to_owned(), files, manifest, signature };
        bundle.check(|entry| zip.index_for_name(entry).is_some())?;
        Ok(bundle)
    }

    /// The bundle unpacked in `dir`, as it was installed: its manifest checked
    /// again, and who signed it as recorded then.
    pub fn installed(dir: &Path) -> Result<Self, BundleError> {
        let file = dir.join("manifest.json");
        let read = File::open(&file).and_then(|f| {
            let mut text = Vec::new();
            f.take(MAX_MANIFEST + 1).read_to_end(&mut text).map(|_| text)
        });
        let text = read.map_err(|source| BundleError::Read { file: file.clone(), source })?;
        let manifest = parse_manifest(&file, &text)?;
        let signature = installed_signature(dir).unwrap_or(Signature::Unsigned);
        let bundle = Self { file, files: Files::Folder(dir.to_owned()), manifest, signature };
        bundle.check(|entry| dir.join(entry).is_file())?;
        Ok(bundle)
    }

    /// Reads `entry` (a path inside the bundle), at most `limit` bytes of it.
    fn read_entry(&self, entry: &str, limit: u64) -> Result<Vec<u8>, String> {
        let entry = entry.trim_start_matches("./");
        let mut bytes = Vec::new();
        match &self.files {
            Files::Folder(dir) => File::open(dir.join(entry))
                .and_then(|f| f.take(limit).read_to_end(&mut bytes))
                .map_err(|e| e.to_string())?,
            Files::Archive { copy, len } => {
                let mut zip = read_archive(&self.file, copy, *len).map_err(|e| e.to_string())?;
                let file = zip.by_name(entry).map_err(|e| e.to_string())?;
                file.take(limit).read_to_end(&mut bytes).map_err(|e| e.to_string())?
            }
        };
        Ok(bytes)
    }

    /// The entries `prefix` + a tag + `suffix` in the bundle, the tag being
    /// one path segment: `(tag, entry)` each.
    fn entries_like(&self, prefix: &str, suffix: &str) -> Vec<(String, String)> {
        let tag_of = |name: &str| {
            let tag = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
            (!tag.is_empty() && !tag.contains('/')).then(|| (tag.to_owned(), name.to_owned()))
        };
        match &self.files {
            // The tag ends the first segment after the prefix's folder: list that folder.
            Files::Folder(root) => {
                let (dir, start) = prefix.rsplit_once('/').map_or(("", prefix), |(d, s)| (d, s));
                let segment_end = suffix.split('/').next().unwrap_or_default();
                std::fs::read_dir(root.join(dir))
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| {
                        let name = e.file_name().into_string().ok()?;
                        let tag = name.strip_prefix(start)?.strip_suffix(segment_end)?;
                        let entry = format!("{prefix}{tag}{suffix}");
                        root.join(&entry).is_file().then(|| tag_of(&entry)).flatten()
                    })
                    .collect()
            }
            Files::Archive { copy, len } => read_archive(&self.file, copy, *len)
                .map(|zip| zip.file_names().filter_map(tag_of).collect())
                .unwrap_or_default(),
        }
    }

    fn invalid(&self, reason: impl Into<String>) -> BundleError {
        BundleError::Manifest { file: self.file.clone(), reason: reason.into() }
    }

    /// Checks the manifest; `has_entry` says whether a path is in the bundle.
    fn check(&self, has_entry: impl Fn(&str) -> bool) -> Result<(), BundleError> {
        let m = &self.manifest;
        if m.name.trim().is_empty() {
            return Err(self.invalid("name is empty"));
        }
        if let Some(platforms) = &m.compatibility.platforms
            && !platforms.iter().any(|p| p == current_platform())
        {
            return Err(BundleError::Platform {
                file: self.file.clone(),
                platforms: platforms.join(", "),
                current: current_platform(),
            });
        }
        let needs_entry = m.server.mcp_config.is_none() || m.server.kind == ServerKind::Binary;
        match (&m.server.entry_point, needs_entry) {
            (None, true) => return Err(self.invalid("server.entry_point is missing")),
            (Some(entry), true) if !has_entry(entry.trim_start_matches("./")) => {
                return Err(self.invalid(format!("server.entry_point {entry:?} is not in the bundle")));
            }
            _ => {}
        }
        let config = self.launch_config();
        let declared: BTreeMap<&str, &UserOption> = m.user_config.iter().map(|(k, o)| (k.as_str(), o)).collect();
        let fields = std::iter::once(("command".to_owned(), &config.command))
            .chain(config.args.iter().enumerate().map(|(i, a)| (format!("args[{i}]"), a)))
            .chain(config.env.iter().map(|(k, v)| (format!("env.{k}"), v)));
        for (field, template) in fields {
            for key in user_keys(template) {
                let Some(option) = declared.get(key) else {
                    return Err(self.invalid(format!(
                        "server.mcp_config.{field} uses ${{user_config.{key}}}, which user_config does not declare"
                    )));
                };
                if option.sensitive && !field.starts_with("env.") {
                    return Err(self.invalid(format!(
                        "server.mcp_config.{field} passes the sensitive setting {key:?} on the command line, where \
                         other programs can read it; Patchbay passes secrets only in environment variables"
                    )));
                }
            }
        }
        Ok(())
    }

    /// The manifest's command line for this platform, or the one its server
    /// type implies when it gives none; variables not yet substituted.
    fn launch_config(&self) -> McpConfig {
        let server = &self.manifest.server;
        let entry = server.entry_point.clone().unwrap_or_default();
        let in_bundle = format!("${{__dirname}}/{entry}");
        let mut config = server.mcp_config.clone().unwrap_or_else(|| match server.kind {
            ServerKind::Node => McpConfig { command: "node".into(), args: vec![in_bundle], ..McpConfig::default() },
            ServerKind::Python => McpConfig {
                command: "python".into(),
                args: vec![in_bundle],
                env: BTreeMap::from([("PYTHONPATH".into(), "${__dirname}/server/lib".into())]),
                ..McpConfig::default()
            },
            ServerKind::Binary => McpConfig { command: in_bundle, ..McpConfig::default() },
            ServerKind::Uv => McpConfig {
                command: "uv".into(),
                args: vec!["run".into(), "--directory".into(), "${__dirname}".into(), entry],
                ..McpConfig::default()
            },
        });
        if let Some(over) = config.platform_overrides.remove(current_platform()) {
            config.command = over.command.unwrap_or(config.command);
            config.args = over.args.unwrap_or(config.args);
            config.env.extend(over.env);
        }
        config
    }

    /// The server name it installs as: the manifest's name with anything but
    /// letters, digits, `-` and `_` replaced.
    pub fn server_name(&self) -> String {
        let cleaned: String = self
            .manifest
            .name
            .trim()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '-' })
            .take(MAX_NAME)
            .collect();
        let trimmed = cleaned.trim_matches('-');
        if trimmed.is_empty() { "bundle".to_owned() } else { trimmed.to_owned() }
    }

    /// The manifest's version.
    pub fn version(&self) -> &str {
        &self.manifest.version
    }

    /// Who signed the bundle.
    pub fn signature(&self) -> &Signature {
        &self.signature
    }

    /// What the install form shows; `previous` is the installed version's
    /// server entry, whose secrets can be kept.
    pub fn info(&self, dir: &Path, previous: Option<&McpServerConfig>) -> BundleInfo {
        let m = &self.manifest;
        let kept = self.kept_secrets(previous);
        let given = if previous.is_some() { recorded_values(dir) } else { BundleValues::new() };
        let runtime = m.compatibility.runtimes.iter().map(|(name, req)| format!("{name} {req}")).collect::<Vec<_>>();
        BundleInfo {
            name: m.name.clone(),
            server_name: self.server_name(),
            title: m.display_name.clone().filter(|d| !d.trim().is_empty()).unwrap_or_else(|| m.name.clone()),
            version: m.version.clone(),
            description: m.description.clone(),
            long_description: m.long_description.clone(),
            author: m.author.name.clone(),
            homepage: m.homepage.clone(),
            icon: self.icon(),
            kind: m.server.kind,
            runtime: (!runtime.is_empty()).then(|| runtime.join(", ")),
            tools: m.tools.clone(),
            tools_generated: m.tools_generated,
            prompts: m.prompts.clone(),
            settings: m
                .user_config
                .iter()
                .map(|(key, o)| BundleSetting {
                    key: key.clone(),
                    kind: o.kind,
                    title: title(key, o),
                    description: o.description.clone(),
                    required: o.required,
                    sensitive: o.sensitive,
                    multiple: o.multiple,
                    min: o.min,
                    max: o.max,
                    default: o.default.as_ref().map(|d| substitute_default(d, dir)),
                    kept: kept.contains(key),
                    value: given.get(key).filter(|_| !o.sensitive).cloned(),
                })
                .collect(),
            installed_version: None,
            signature: self.signature.clone(),
            installed_signature: None,
            signer_changed: false,
            preview_id: None,
        }
    }

    /// Sensitive settings the installed version keeps in the keyring: every
    /// variable that uses them is a keyring reference in `previous`, and uses
    /// no other sensitive setting (that secret holds both values together, so
    /// neither can be kept while the other changes: both are asked again).
    fn kept_secrets(&self, previous: Option<&McpServerConfig>) -> BTreeSet<String> {
        let Some(TransportConfig::Stdio { env: old, .. }) = previous.map(|p| &p.transport) else {
            return BTreeSet::new();
        };
        let env = self.launch_config().env;
        self.manifest
            .user_config
            .iter()
            .filter(|(_, o)| o.sensitive)
            .filter(|(key, _)| {
                let mut using = env.iter().filter(|(_, t)| user_keys(t).any(|k| k == key)).peekable();
                using.peek().is_some()
                    && using.all(|(name, template)| {
                        matches!(old.get(name), Some(ValueSource::Secret(_)))
                            && user_keys(template).all(|k| k == key.as_str() || !self.is_sensitive(k))
                    })
            })
            .map(|(key, _)| key.clone())
            .collect()
    }

    /// The server entry for the bundle unpacked in `dir`, with the user's
    /// `values`, and the secrets to store (by keyring name). `previous` (the
    /// installed version's entry) keeps its policies and secrets left empty;
    /// `resolves` says whether a command is found, for `python` → `python3`.
    pub fn server_config(
        &self,
        dir: &Path,
        values: &BundleValues,
        previous: Option<&McpServerConfig>,
        resolves: impl Fn(&str) -> bool,
    ) -> Result<(McpServerConfig, BTreeMap<String, String>), BundleError> {
        let kept = self.kept_secrets(previous);
        let mut settings = BTreeMap::new();
        for (key, option) in &self.manifest.user_config {
            let value = if option.sensitive && kept.contains(key) && is_empty(values.get(key)) {
                Resolved::Kept
            } else {
                resolve(key, option, values.get(key), dir)?
            };
            settings.insert(key.as_str(), value);
        }
        let vars = Vars { dir, settings: &settings };
        let config = self.launch_config();
        let name = self.server_name();

        let mut command = vars.expand(&config.command);
        if Path::new(&command).is_relative() && Path::new(&command).components().count() > 1 {
            command = dir.join(&command).display().to_string();
        }
        if command == "python" && !resolves("python") && resolves("python3") {
            command = "python3".into();
        }
        let mut args = Vec::new();
        for arg in &config.args {
            match whole_setting(arg).and_then(|key| settings.get(key)) {
                Some(Resolved::List(items)) => args.extend(items.iter().cloned()),
                Some(Resolved::Unset) => {}
                _ => args.push(vars.expand(arg)),
            }
        }
        let old_env = match previous.map(|p| &p.transport) {
            Some(TransportConfig::Stdio { env, .. }) => Some(env),
            _ => None,
        };
        let mut env = BTreeMap::new();
        let mut secrets = BTreeMap::new();
        for (var, template) in &config.env {
            if let Some(Resolved::Unset) = whole_setting(template).and_then(|key| settings.get(key)) {
                continue;
            }
            let used: Vec<&Resolved> = user_keys(template).filter_map(|k| settings.get(k)).collect();
            let sensitive = user_keys(template).any(|k| self.is_sensitive(k));
            let value = if used.iter().any(|r| matches!(r, Resolved::Kept)) {
                old_env.and_then(|e| e.get(var)).cloned().expect("a kept secret is in the previous entry")
            } else if sensitive {
                let secret = secret_name(&name, var);
                secrets.insert(secret.clone(), vars.expand(template));
                ValueSource::Secret(secret)
            } else {
                ValueSource::Plain(vars.expand(template))
            };
            env.insert(var.clone(), value);
        }
        let transport = TransportConfig::Stdio { command, args, env, cwd: Some(dir.to_path_buf()) };
        let mut server = McpServerConfig::with_transport(name, transport);
        if let Some(previous) = previous {
            server.keep_user_settings(previous);
            server.enabled = previous.enabled;
        }
        Ok((server, secrets))
    }

    /// The manifest's icon, read from the bundle: a PNG of at most
    /// [`MAX_ICON`]; anything else (a URL, a missing or larger file) is none.
    fn icon(&self) -> Option<String> {
        use base64::Engine;
        let path = self.manifest.icon.as_deref().filter(|p| p.to_ascii_lowercase().ends_with(".png"))?;
        let png = self.read_entry(path, MAX_ICON + 1).ok()?;
        let is_png = png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() as u64 <= MAX_ICON;
        is_png.then(|| format!("data:image/png;base64,{}", base64::engine::general_purpose::STANDARD.encode(&png)))
    }

    fn is_sensitive(&self, key: &str) -> bool {
        self.manifest.user_config.iter().any(|(k, o)| k == key && o.sensitive)
    }

    /// Keeps the settings the bundle unpacked in `dir` was given, for its form
    /// the next time: all but the sensitive ones (those stay in the keyring).
    pub fn record_values(&self, dir: &Path, values: &BundleValues) -> Result<(), BundleError> {
        let kept: BundleValues =
            values.iter().filter(|(key, _)| !self.is_sensitive(key)).map(|(k, v)| (k.clone(), v.clone())).collect();
        let path = dir.join(SETTINGS_RECORD);
        let text = serde_json::to_vec_pretty(&kept).expect("settings serialise");
        std::fs::write(&path, text).map_err(|source| BundleError::Write { path, source })
    }

    /// Unpacks the bundle into `dir`, replacing what is there only once every
    /// file is written.
    pub fn unpack(&self, dir: &Path) -> Result<(), BundleError> {
        let executable = match self.manifest.server.kind {
            ServerKind::Binary => self.manifest.server.entry_point.as_deref(),
            _ => None,
        };
        let Files::Archive { copy, len } = &self.files else {
            return Err(BundleError::NotABundle { file: self.file.clone(), reason: "it is unpacked already".into() });
        };
        let record = serde_json::to_vec(&self.signature).expect("a signature serialises");
        extract::unpack(read_archive(&self.file, copy, *len)?, &self.file, dir, executable, (SIGNATURE_RECORD, &record))
    }
}

/// Who signed the bundle unpacked in `dir`, as recorded when it was installed.
pub fn installed_signature(dir: &Path) -> Option<Signature> {
    serde_json::from_slice(&std::fs::read(dir.join(SIGNATURE_RECORD)).ok()?).ok()
}

/// The manifest read from `file` (at most [`MAX_MANIFEST`] bytes and one more, to tell a larger one).
fn parse_manifest(file: &Path, text: &[u8]) -> Result<Manifest, BundleError> {
    if text.len() as u64 > MAX_MANIFEST {
        return Err(BundleError::TooLarge { file: file.to_owned(), what: "manifest.json is over 1 MiB".into() });
    }
    serde_json::from_slice(text).map_err(|e| BundleError::Manifest { file: file.to_owned(), reason: e.to_string() })
}

/// The settings the bundle unpacked in `dir` was last given (none sensitive).
fn recorded_values(dir: &Path) -> BundleValues {
    std::fs::read(dir.join(SETTINGS_RECORD))
        .ok()
        .and_then(|text| serde_json::from_slice(&text).ok())
        .unwrap_or_default()
}

/// Whether the server entry `config` runs from the bundle folder `dir`.
pub fn installed_in(config: &McpServerConfig, dir: &Path) -> bool {
    matches!(&config.transport, TransportConfig::Stdio { cwd: Some(cwd), .. } if cwd == dir)
}

/// The version of the bundle unpacked in `dir`, from its manifest.
pub fn installed_version(dir: &Path) -> Option<String> {
    let text = std::fs::read(dir.join("manifest.json")).ok()?;
    let manifest: Value = serde_json::from_slice(&text).ok()?;
    manifest.get("version")?.as_str().map(str::to_owned)
}

type Archive = zip::ZipArchive<BufReader<Prefix>>;

/// The archive in the first `len` bytes of `copy` (a copy of `file`, which errors name).
fn read_archive(file: &Path, copy: &Path, len: u64) -> Result<Archive, BundleError> {
    let opened = File::open(copy).map_err(|source| BundleError::Read { file: file.to_owned(), source })?;
    zip::ZipArchive::new(BufReader::new(Prefix { file: opened, len, pos: 0 })).map_err(|e| damaged(file, e))
}

/// The first `len` bytes of a file, read as if they were all of it: the zip
/// reader, which looks for the archive's end from the end, never sees the
/// signature block after them.
struct Prefix {
    file: File,
    len: u64,
    pos: u64,
}

impl Read for Prefix {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = usize::try_from(self.len.saturating_sub(self.pos)).unwrap_or(usize::MAX);
        let wanted = buf.len().min(room);
        let read = self.file.read(&mut buf[..wanted])?;
        self.pos += read as u64;
        Ok(read)
    }
}

impl Seek for Prefix {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(at) => Some(at),
            SeekFrom::End(by) => self.len.checked_add_signed(by),
            SeekFrom::Current(by) => self.pos.checked_add_signed(by),
        };
        let target = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a seek before the start"))?;
        self.pos = self.file.seek(SeekFrom::Start(target))?;
        Ok(self.pos)
    }
}

/// Copies `file` to a new private file in `dir` (only its owner may read it;
/// `dir` is made readable by its owner only when it is created here).
fn private_copy(file: &Path, dir: &Path) -> Result<tempfile::TempPath, BundleError> {
    let read = |source| BundleError::Read { file: file.to_owned(), source };
    let write = |source| BundleError::Write { path: dir.to_owned(), source };
    let mut from = File::open(file).map_err(read)?;
    let mut folder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    folder.recursive(true).create(dir).map_err(write)?;
    let mut copy = tempfile::Builder::new().prefix("bundle-").suffix(".mcpb").tempfile_in(dir).map_err(write)?;
    let mut buf = vec![0; 64 << 10];
    let mut copied: u64 = 0;
    loop {
        let n = from.read(&mut buf).map_err(read)?;
        if n == 0 {
            break;
        }
        copied += n as u64;
        if copied > extract::MAX_UNPACKED {
            let what = format!("the file is over {} GiB", extract::MAX_UNPACKED >> 30);
            return Err(BundleError::TooLarge { file: file.to_owned(), what });
        }
        copy.write_all(&buf[..n]).map_err(write)?;
    }
    copy.flush().map_err(write)?;
    Ok(copy.into_temp_path())
}

fn damaged(file: &Path, reason: impl std::fmt::Display) -> BundleError {
    BundleError::NotABundle { file: file.to_owned(), reason: reason.to_string() }
}

/// The platform name the manifest spec uses (Node's `process.platform`).
fn current_platform() -> &'static str {
    match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    }
}

fn title(key: &str, option: &UserOption) -> String {
    option.title.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| key.to_owned())
}

/// The `${…}` names in `template`, in order.
fn placeholders(template: &str) -> impl Iterator<Item = (std::ops::Range<usize>, &str)> {
    let mut from = 0;
    std::iter::from_fn(move || {
        let start = from + template[from..].find("${")?;
        let end = start + template[start..].find('}')?;
        from = end + 1;
        Some((start..end + 1, &template[start + 2..end]))
    })
}

/// The settings `template` uses.
fn user_keys(template: &str) -> impl Iterator<Item = &str> {
    placeholders(template).filter_map(|(_, name)| name.strip_prefix("user_config."))
}

/// The setting `template` consists of, if it is exactly one `${user_config.…}`.
fn whole_setting(template: &str) -> Option<&str> {
    template.strip_prefix("${user_config.")?.strip_suffix('}').filter(|k| !k.contains('}'))
}

fn is_empty(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.trim().is_empty(),
        Some(Value::Array(items)) => items.is_empty(),
        Some(_) => false,
    }
}

/// The spec's variables other than settings.
fn builtin(name: &str, dir: &Path) -> Option<String> {
    let home = dirs::home_dir().unwrap_or_default();
    let path = match name {
        "__dirname" => dir.to_path_buf(),
        "HOME" => home,
        "DESKTOP" => dirs::desktop_dir().unwrap_or_else(|| home.join("Desktop")),
        "DOCUMENTS" => dirs::document_dir().unwrap_or_else(|| home.join("Documents")),
        "DOWNLOADS" => dirs::download_dir().unwrap_or_else(|| home.join("Downloads")),
        "pathSeparator" | "/" => return Some(MAIN_SEPARATOR.to_string()),
        _ => return None,
    };
    Some(path.display().to_string())
}

/// A default with the spec's variables substituted (strings, and lists of them).
fn substitute_default(value: &Value, dir: &Path) -> Value {
    let no_settings = BTreeMap::new();
    let vars = Vars { dir, settings: &no_settings };
    match value {
        Value::String(s) => Value::String(vars.expand(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute_default(v, dir)).collect()),
        other => other.clone(),
    }
}

struct Vars<'a> {
    dir: &'a Path,
    settings: &'a BTreeMap<&'a str, Resolved>,
}

impl Vars<'_> {
    fn expand(&self, template: &str) -> String {
        let mut out = String::with_capacity(template.len());
        let mut last = 0;
        for (range, name) in placeholders(template) {
            let value = match name.strip_prefix("user_config.") {
                Some(key) => match self.settings.get(key) {
                    Some(Resolved::Text(t)) => Some(t.clone()),
                    Some(Resolved::List(items)) => Some(items.join(",")),
                    Some(Resolved::Unset | Resolved::Kept) => Some(String::new()),
                    None => None,
                },
                None => builtin(name, self.dir),
            };
            if let Some(value) = value {
                out.push_str(&template[last..range.start]);
                out.push_str(&value);
                last = range.end;
            }
        }
        out.push_str(&template[last..]);
        out
    }
}

/// Checks one setting's value against its declaration.
fn resolve(key: &str, option: &UserOption, given: Option<&Value>, dir: &Path) -> Result<Resolved, BundleError> {
    let fail = |reason: String| BundleError::Setting { key: key.to_owned(), title: title(key, option), reason };
    let default = option.default.as_ref().map(|d| substitute_default(d, dir));
    let value = match (is_empty(given), default) {
        (false, _) => given.cloned().expect("not empty"),
        (true, Some(default)) if !option.sensitive => default,
        (true, _) if option.required => return Err(fail(REQUIRED.into())),
        (true, _) => return Ok(Resolved::Unset),
    };
    match option.kind {
        OptionKind::String => match value {
            Value::String(s) => Ok(Resolved::Text(s)),
            other => Err(fail(format!("expected text, got {other}"))),
        },
        OptionKind::Number => {
            let number = match &value {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            }
            .filter(|n| n.is_finite())
            .ok_or_else(|| fail(format!("expected a number, got {value}")))?;
            if let Some(min) = option.min.filter(|min| number < *min) {
                return Err(fail(format!("{number} is less than the minimum, {min}")));
            }
            if let Some(max) = option.max.filter(|max| number > *max) {
                return Err(fail(format!("{number} is more than the maximum, {max}")));
            }
            Ok(Resolved::Text(if number.fract() == 0.0 && number.abs() < 1e15 {
                format!("{}", number as i64)
            } else {
                number.to_string()
            }))
        }
        OptionKind::Boolean => match value {
            Value::Bool(b) => Ok(Resolved::Text(b.to_string())),
            Value::String(s) if s == "true" || s == "false" => Ok(Resolved::Text(s)),
            other => Err(fail(format!("expected true or false, got {other}"))),
        },
        OptionKind::Directory | OptionKind::File => {
            let paths: Vec<String> = match value {
                Value::String(s) => vec![s],
                Value::Array(items) if option.multiple => items
                    .into_iter()
                    .map(|v| match v {
                        Value::String(s) => Ok(s),
                        other => Err(fail(format!("expected a path, got {other}"))),
                    })
                    .collect::<Result<_, _>>()?,
                other => return Err(fail(format!("expected a path, got {other}"))),
            };
            let paths: Vec<String> = paths.into_iter().map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()).collect();
            if paths.is_empty() {
                return if option.required { Err(fail(REQUIRED.into())) } else { Ok(Resolved::Unset) };
            }
            if let Some(relative) = paths.iter().find(|p| Path::new(p).is_relative()) {
                return Err(fail(format!("{relative:?} is not an absolute path")));
            }
            Ok(if option.multiple { Resolved::List(paths) } else { Resolved::Text(paths.concat()) })
        }
    }
}
