//! The `manifest.json` of an MCP bundle, as far as a host needs it: what the
//! extension is, how its server runs and what the user configures.
//!
//! Unknown fields are ignored, so manifests of newer spec versions still load;
//! the settings (`user_config`) keep the order the manifest declares them in,
//! which is the order the install form asks for them.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The parts of `manifest.json` Patchbay reads.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Manifest {
    /// Machine-readable name.
    pub name: String,
    #[serde(default)]
    pub display_name: Option<String>,
    pub version: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub long_description: Option<String>,
    pub author: Author,
    #[serde(default)]
    pub homepage: Option<String>,
    /// A PNG in the bundle (or an `https://` URL, which is not fetched).
    #[serde(default)]
    pub icon: Option<String>,
    pub server: Server,
    #[serde(default)]
    pub tools: Vec<Declared>,
    #[serde(default)]
    pub tools_generated: bool,
    #[serde(default)]
    pub prompts: Vec<Declared>,
    #[serde(default)]
    pub compatibility: Compatibility,
    /// The settings, in declaration order.
    #[serde(default, deserialize_with = "in_order")]
    pub user_config: Vec<(String, UserOption)>,
    /// Where the strings in other languages are.
    #[serde(default)]
    pub localization: Option<Localization>,
}

/// The manifest's `localization`: both parts have defaults (see `localize.rs`).
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Localization {
    /// A path in the bundle with a `${locale}` placeholder.
    #[serde(default)]
    pub resources: Option<String>,
    /// The language of the manifest's own strings (BCP 47).
    #[serde(default)]
    pub default_locale: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Author {
    pub name: String,
}

/// How the server runs.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct Server {
    #[serde(rename = "type")]
    pub kind: ServerKind,
    #[serde(default)]
    pub entry_point: Option<String>,
    #[serde(default)]
    pub mcp_config: Option<McpConfig>,
}

/// The runtime a bundle's server needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum ServerKind {
    /// Node.js, with its dependencies in the bundle.
    Node,
    /// Python, with its dependencies in the bundle (`server/lib`).
    Python,
    /// A compiled executable in the bundle.
    Binary,
    /// Python run by `uv`, which installs the dependencies `pyproject.toml` names.
    Uv,
}

/// The command line and environment, before variables are substituted.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct McpConfig {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// By platform (`linux`, `darwin`, `win32`).
    #[serde(default)]
    pub platform_overrides: BTreeMap<String, Override>,
}

/// What one platform runs differently.
#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Override {
    #[serde(default)]
    pub command: Option<String>,
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Added to (and replacing entries of) the common `env`.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// A tool or prompt the manifest declares.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
pub struct Declared {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub(crate) struct Compatibility {
    /// `darwin`, `win32`, `linux`; none means every platform.
    #[serde(default)]
    pub platforms: Option<Vec<String>>,
    /// Version requirements by runtime (`node`, `python`).
    #[serde(default)]
    pub runtimes: BTreeMap<String, String>,
}

/// What kind of value a setting takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum OptionKind {
    String,
    Number,
    Boolean,
    Directory,
    File,
}

/// One setting the user fills in before the server can run.
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct UserOption {
    #[serde(rename = "type")]
    pub kind: OptionKind,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub default: Option<Value>,
    /// For directories and files: a list of them.
    #[serde(default)]
    pub multiple: bool,
    /// Masked when typed and kept in the keyring.
    #[serde(default)]
    pub sensitive: bool,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
}

/// Reads a JSON object into its entries, in the order they are written.
fn in_order<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<(String, UserOption)>, D::Error> {
    struct Entries;
    impl<'de> Visitor<'de> for Entries {
        type Value = Vec<(String, UserOption)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an object of settings")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = Vec::new();
            while let Some(entry) = map.next_entry::<String, UserOption>()? {
                entries.push(entry);
            }
            Ok(entries)
        }
    }
    deserializer.deserialize_map(Entries)
}
