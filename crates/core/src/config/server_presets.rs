//! MCP server presets: the servers people add first (the reference servers,
//! a browser, GitHub, library docs), each as the entry a user would otherwise
//! copy from a README, so adding one is a pick on the settings page.
//!
//! A preset only fills in the server editor: the user sees and can change every
//! field before saving. Secrets a preset needs are `ValueSource::Secret` with an
//! empty name, which the editor shows as a secret still to be typed. Local
//! servers run through `npx` or `uvx`, as their READMEs say; the launch doctor
//! reports a missing one. The settings page reads what each does from its
//! locale files (`serverPresets.<id>`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::model::{McpServerConfig, TransportConfig, ValueSource};
use super::policy::Network;

/// A server as its README sets it up.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct ServerPreset {
    /// Stable identifier, also the suggested server name.
    pub id: &'static str,
    /// What the user reads.
    pub label: &'static str,
    /// The program that must be installed for it to start (`npx`, `uvx`), if any.
    pub needs: Option<&'static str>,
    /// The entry the editor starts from.
    pub config: McpServerConfig,
}

fn npx(id: &'static str, label: &'static str, package: &str) -> ServerPreset {
    ServerPreset { id, label, needs: Some("npx"), config: McpServerConfig::stdio(id, "npx", &["-y", package]) }
}

fn uvx(id: &'static str, label: &'static str, package: &str) -> ServerPreset {
    ServerPreset { id, label, needs: Some("uvx"), config: McpServerConfig::stdio(id, "uvx", &[package]) }
}

fn remote(id: &'static str, label: &'static str, url: &str, secret_headers: &[&str]) -> ServerPreset {
    let headers: BTreeMap<String, ValueSource> =
        secret_headers.iter().map(|h| ((*h).to_owned(), ValueSource::Secret(String::new()))).collect();
    let transport = TransportConfig::StreamableHttp { url: url.to_owned(), headers };
    ServerPreset { id, label, needs: None, config: McpServerConfig::with_transport(id, transport) }
}

/// Every preset, in the order the settings page offers them.
pub fn server_presets() -> Vec<ServerPreset> {
    let mut filesystem = npx("filesystem", "Filesystem", "@modelcontextprotocol/server-filesystem");
    // With no folder on its command line it works in the roots Patchbay shares.
    filesystem.config.share_roots = true;
    let mut git = uvx("git", "Git", "mcp-server-git");
    git.config.share_roots = true;
    // Fetching pages is its whole job: it keeps the network even at strict.
    let mut fetch = uvx("fetch", "Fetch", "mcp-server-fetch");
    fetch.config.policy.network = Some(Network::Any);
    vec![
        filesystem,
        fetch,
        uvx("time", "Time", "mcp-server-time"),
        npx("memory", "Memory (knowledge graph)", "@modelcontextprotocol/server-memory"),
        git,
        npx("sequential-thinking", "Sequential thinking", "@modelcontextprotocol/server-sequential-thinking"),
        npx("playwright", "Playwright (browser)", "@playwright/mcp@latest"),
        remote("context7", "Context7 (library docs)", "https://mcp.context7.com/mcp", &[]),
        remote("github", "GitHub", "https://api.githubcopilot.com/mcp/", &["Authorization"]),
        npx("everything", "Everything (MCP test server)", "@modelcontextprotocol/server-everything"),
    ]
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn ids_are_unique_server_names_and_each_entry_is_named_after_its_id() {
        let mut seen = HashSet::new();
        for p in server_presets() {
            assert!(seen.insert(p.id), "{} twice", p.id);
            assert!(p.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'), "{}", p.id);
            assert_eq!(p.config.name, p.id);
            assert!(p.config.enabled);
        }
    }

    #[test]
    fn local_presets_run_their_package_through_the_program_they_need() {
        for p in server_presets() {
            match (&p.config.transport, p.needs) {
                (TransportConfig::Stdio { command, args, env, .. }, Some(needs)) => {
                    assert_eq!(command, needs, "{}", p.id);
                    assert!(!args.is_empty() && env.is_empty(), "{}", p.id);
                }
                (TransportConfig::StreamableHttp { url, .. }, None) => {
                    assert_eq!(url::Url::parse(url).unwrap().scheme(), "https", "{}", p.id);
                }
                other => panic!("{}: {other:?}", p.id),
            }
        }
    }

    #[test]
    fn a_secret_a_preset_needs_is_left_for_the_user_to_type() {
        let github = server_presets().into_iter().find(|p| p.id == "github").unwrap();
        assert_eq!(
            github.config.secret_fields(),
            [("headers.Authorization".to_owned(), &ValueSource::Secret(String::new()))]
        );
        let json = serde_json::to_value(&github).unwrap();
        assert_eq!(json["config"]["transport"]["headers"]["Authorization"], serde_json::json!({"secret": ""}));
    }

    #[test]
    fn every_preset_is_described_in_every_locale() {
        for locale in ["en", "zh"] {
            let path = format!("{}/../../ui/src/locales/{locale}.json", env!("CARGO_MANIFEST_DIR"));
            let strings: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for p in server_presets() {
                let key = format!("serverPresets.{}", p.id);
                assert!(strings.get(&key).and_then(|v| v.as_str()).is_some_and(|s| !s.is_empty()), "{locale}: {key}");
            }
        }
    }
}
