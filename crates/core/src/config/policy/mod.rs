//! A server's security policy: the folders it may read and write, the network
//! it may reach, the environment it sees, how often it may be called, and the
//! level (strict / normal / permissive) these start from.
//!
//! The policy is stored with the server ([`McpServerConfig::policy`](crate::config::McpServerConfig::policy)); what it
//! leaves open is filled in by [`Policy::resolve`] from the server's own
//! configuration, so an imported config keeps working: the folders named in
//! its arguments and its shared roots are writable, its working folder is
//! readable. `mcp::launch::sandbox` enforces the result on Linux; the registry
//! enforces the rate limits for every transport.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod resolve;

/// How much a server is trusted; the presets of a [`Policy`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum SecurityLevel {
    /// Reads and writes only its declared folders (plus its command and the
    /// system's folders); network off unless domains are listed; every call asked.
    Strict,
    /// Reads home except the secret places, writes only its folders, any network, environment filtered.
    Normal,
    /// No sandbox: the server runs with the user's full rights.
    Permissive,
}

impl SecurityLevel {
    /// The levels this build can enforce on this OS: the sandbox exists on
    /// Linux only, so elsewhere only permissive is offered.
    pub fn offered() -> &'static [SecurityLevel] {
        if cfg!(target_os = "linux") { &[Self::Strict, Self::Normal, Self::Permissive] } else { &[Self::Permissive] }
    }

    /// The level new servers get: normal where it can be enforced.
    pub fn platform_default() -> Self {
        if cfg!(target_os = "linux") { Self::Normal } else { Self::Permissive }
    }

    /// Whether the server runs in the sandbox.
    pub fn sandboxed(self) -> bool {
        self != Self::Permissive
    }

    /// Its name as the CLI and the UI write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Strict => "strict",
            Self::Normal => "normal",
            Self::Permissive => "permissive",
        }
    }
}

impl std::fmt::Display for SecurityLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a server may reach on the network. Serialised as `"off"`, `"any"` or
/// `{"domains": ["api.github.com", "*.example.org"]}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Network {
    /// Its own network namespace with only loopback.
    Off,
    /// Only these hosts, through Patchbay's filtering proxy. `*.example.org`
    /// matches every name below `example.org` (not `example.org` itself).
    Domains(Vec<String>),
    /// The network as the user has it.
    Any,
}

impl Network {
    /// Whether `host` may be reached: always under `Any`, never under `Off`,
    /// else when a listed name matches it (case and a trailing dot ignored).
    pub fn allows(&self, host: &str) -> bool {
        match self {
            Self::Off => false,
            Self::Any => true,
            Self::Domains(domains) => {
                let host = host.trim_end_matches('.').to_ascii_lowercase();
                domains.iter().any(|pattern| {
                    let pattern = pattern.trim_end_matches('.').to_ascii_lowercase();
                    match pattern.strip_prefix("*.") {
                        Some(parent) => {
                            host.strip_suffix(parent).is_some_and(|sub| sub.len() > 1 && sub.ends_with('.'))
                        }
                        None => host == pattern,
                    }
                })
            }
        }
    }
}

/// Calls per minute a server accepts; `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct RateLimits {
    /// Calls of one tool per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_tool_per_min: Option<u32>,
    /// Calls of all its tools together per minute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_server_per_min: Option<u32>,
}

/// A server's policy as the user set it; what is left out comes from the
/// global default and the server's configuration ([`Policy::resolve`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct Policy {
    /// `None`: the global default ([`PolicyDefaults::level`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<SecurityLevel>,
    /// Folders it may read, besides those the level gives.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read: Vec<PathBuf>,
    /// Folders (or files) it may write, besides those its arguments name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write: Vec<PathBuf>,
    /// `None`: the level's default (off at strict, any otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Network>,
    /// Names of further variables of Patchbay's environment passed through.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    #[serde(default, skip_serializing_if = "RateLimits::is_unlimited")]
    pub rate: RateLimits,
}

impl RateLimits {
    fn is_unlimited(&self) -> bool {
        *self == Self::default()
    }

    /// "30 calls/min (5 per tool)", or `None` without limits.
    pub fn describe(&self) -> Option<String> {
        match (self.per_server_per_min, self.per_tool_per_min) {
            (Some(s), Some(t)) => Some(format!("{s} calls/min ({t} per tool)")),
            (Some(s), None) => Some(format!("{s} calls/min")),
            (None, Some(t)) => Some(format!("{t} calls/min per tool")),
            (None, None) => None,
        }
    }
}

impl Policy {
    /// Whether nothing was set (the policy is then left out of the stored document).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// What is wrong with it, as (field, reason): paths must be absolute,
    /// domains host names (or `*.` and one), limits above zero, and the level
    /// one this OS can enforce.
    pub fn problems(&self) -> Vec<(String, String)> {
        let mut problems = Vec::new();
        if let Some(level) = self.level
            && !SecurityLevel::offered().contains(&level)
        {
            problems.push(("policy.level".into(), format!("the {level} level cannot be enforced on this system")));
        }
        for (field, paths) in [("read", &self.read), ("write", &self.write)] {
            for (i, path) in paths.iter().enumerate() {
                if !path.is_absolute() {
                    problems
                        .push((format!("policy.{field}[{i}]"), format!("{} is not an absolute path", path.display())));
                }
            }
        }
        if let Some(Network::Domains(domains)) = &self.network {
            for (i, domain) in domains.iter().enumerate() {
                if !valid_domain(domain) {
                    problems.push((
                        format!("policy.network.domains[{i}]"),
                        format!("{domain:?} is not a host name or a wildcard like *.example.org"),
                    ));
                }
            }
        }
        for (field, value) in
            [("per_tool_per_min", self.rate.per_tool_per_min), ("per_server_per_min", self.rate.per_server_per_min)]
        {
            if value == Some(0) {
                problems.push((format!("policy.rate.{field}"), "must be at least 1 call per minute".into()));
            }
        }
        for (i, name) in self.env.iter().enumerate() {
            if name.is_empty() || name.contains('=') {
                problems.push((format!("policy.env[{i}]"), format!("{name:?} is not a variable name")));
            }
        }
        problems
    }
}

fn valid_domain(domain: &str) -> bool {
    let name = domain.strip_prefix("*.").unwrap_or(domain).trim_end_matches('.');
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty() && label.len() <= 63 && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// The policy in force for one server, every choice made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Resolved {
    pub level: SecurityLevel,
    pub read: Vec<PathBuf>,
    pub write: Vec<PathBuf>,
    pub network: Network,
    pub env: Vec<String>,
    pub rate: RateLimits,
}

impl Resolved {
    /// The policy in one line: "normal: reads home (not its secrets) · writes ~/Projects · network: any · 30 calls/min".
    pub fn summary(&self) -> String {
        self.outline().to_string()
    }

    /// The parts of [`Resolved::summary`], for a local process.
    pub fn outline(&self) -> PolicyOutline {
        let home = dirs::home_dir();
        let show = |paths: &[PathBuf]| paths.iter().map(|p| tilde(p, home.as_deref())).collect();
        PolicyOutline::Local {
            level: self.level,
            read: show(&self.read),
            write: show(&self.write),
            network: self.network.clone(),
            rate: self.rate,
        }
    }
}

/// A server's policy as its one-line summary shows it, in parts, so that a
/// front end words it in its own language (the window does, in English and
/// Chinese); its `Display` is the English line the CLI prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PolicyOutline {
    /// A local process in the sandbox (none at permissive), paths as the user
    /// writes them (`~/Projects`). At normal it also reads home, less its secrets.
    Local { level: SecurityLevel, read: Vec<String>, write: Vec<String>, network: Network, rate: RateLimits },
    /// Patchbay's own tools, run inside it.
    InProcess,
    /// A remote server: folders and network do not apply, rate limits do.
    Remote { rate: RateLimits },
}

impl std::fmt::Display for PolicyOutline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (level, read, write, network, rate) = match self {
            Self::InProcess => return f.write_str("inside Patchbay"),
            Self::Remote { rate } => {
                let rate = rate.describe().unwrap_or_else(|| "no rate limit".to_owned());
                return write!(f, "remote: folders and network do not apply · {rate}");
            }
            Self::Local { level: SecurityLevel::Permissive, .. } => {
                return f.write_str("Permissive: no sandbox, the server runs with your full rights");
            }
            Self::Local { level, read, write, network, rate } => (level, read, write, network, rate),
        };
        let reads = match (level, read.is_empty()) {
            (SecurityLevel::Normal, true) => "home (not its secrets)".to_owned(),
            (SecurityLevel::Normal, false) => format!("home (not its secrets), {}", read.join(", ")),
            (_, true) => "only its own files".to_owned(),
            (_, false) => read.join(", "),
        };
        let writes = if write.is_empty() { "nothing".to_owned() } else { write.join(", ") };
        let network = match network {
            Network::Off => "off".to_owned(),
            Network::Any => "any".to_owned(),
            Network::Domains(d) => d.join(", "),
        };
        write!(f, "{level}: reads {reads} · writes {writes} · network: {network}")?;
        match rate.describe() {
            Some(rate) => write!(f, " · {rate}"),
            None => Ok(()),
        }
    }
}

fn tilde(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", rest.display()),
        None => path.display().to_string(),
    }
}

/// The global part of the policy: the level of servers that set none, and the
/// tool calls one turn may make. Kept in the `policy.defaults` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
pub struct PolicyDefaults {
    #[serde(default = "SecurityLevel::platform_default")]
    pub level: SecurityLevel,
    /// Tool calls per turn; the calls past it are refused and the model must answer.
    #[serde(default = "default_turn_calls")]
    pub turn_tool_calls: u32,
}

/// The setting that holds [`PolicyDefaults`].
pub const DEFAULTS_SETTING: &str = "policy.defaults";

fn default_turn_calls() -> u32 {
    50
}

impl Default for PolicyDefaults {
    fn default() -> Self {
        Self { level: SecurityLevel::platform_default(), turn_tool_calls: default_turn_calls() }
    }
}

#[cfg(test)]
mod tests {
    use super::resolve::{named_path, shared_place};
    use super::*;
    use crate::config::model::McpServerConfig;

    #[test]
    fn an_outline_reads_as_the_summary_line_and_travels_in_parts() {
        // The window words the same parts (ui/src/lib/policyLine.test.ts holds these lines too).
        let outline = PolicyOutline::Local {
            level: SecurityLevel::Normal,
            read: vec!["~/Notes".into()],
            write: vec!["~/Projects".into()],
            network: Network::Domains(vec!["api.github.com".into()]),
            rate: RateLimits { per_tool_per_min: Some(5), per_server_per_min: Some(30) },
        };
        assert_eq!(
            outline.to_string(),
            "normal: reads home (not its secrets), ~/Notes · writes ~/Projects · network: api.github.com · \
             30 calls/min (5 per tool)"
        );
        assert_eq!(
            serde_json::to_value(&outline).unwrap(),
            serde_json::json!({
                "kind": "local", "level": "normal", "read": ["~/Notes"], "write": ["~/Projects"],
                "network": {"domains": ["api.github.com"]}, "rate": {"per_tool_per_min": 5, "per_server_per_min": 30},
            })
        );
        let strict = PolicyOutline::Local {
            level: SecurityLevel::Strict,
            read: vec![],
            write: vec![],
            network: Network::Off,
            rate: RateLimits::default(),
        };
        assert_eq!(strict.to_string(), "strict: reads only its own files · writes nothing · network: off");
        let remote =
            PolicyOutline::Remote { rate: RateLimits { per_tool_per_min: Some(10), per_server_per_min: None } };
        assert_eq!(remote.to_string(), "remote: folders and network do not apply · 10 calls/min per tool");
        assert_eq!(serde_json::to_value(PolicyOutline::InProcess).unwrap(), serde_json::json!({"kind": "in_process"}));
    }

    #[test]
    fn wildcards_match_names_below_the_domain_only() {
        let net = Network::Domains(vec!["*.github.com".into(), "Example.org.".into()]);
        assert!(net.allows("api.github.com"));
        assert!(net.allows("a.b.GitHub.com."));
        assert!(!net.allows("github.com"));
        assert!(!net.allows("evilgithub.com"));
        assert!(net.allows("example.org"));
        assert!(!net.allows("www.example.org"));
        assert!(!Network::Off.allows("example.org"));
        assert!(Network::Any.allows("anything"));
    }

    #[test]
    fn folders_in_arguments_and_shared_roots_are_writable_and_the_level_comes_from_the_default() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().canonicalize().unwrap();
        let file = dir.join("memory.json");
        std::fs::write(&file, "{}").unwrap();
        let script = dir.join("main.py");
        std::fs::write(&script, "print()").unwrap();
        let root = PathBuf::from("/srv/shared");
        let mut config = McpServerConfig::stdio(
            "fs",
            "npx",
            &[
                script.to_str().unwrap(),
                dir.to_str().unwrap(),
                &format!("--db={}", file.display()),
                "/nonexistent-x",
                "relative",
            ],
        );
        let strict = PolicyDefaults { level: SecurityLevel::Strict, ..PolicyDefaults::default() };
        let resolved = Policy::resolve(&config, &strict, std::slice::from_ref(&root));
        assert_eq!(resolved.level, SecurityLevel::Strict);
        assert_eq!(resolved.write, vec![dir.clone(), file.clone()]);
        assert_eq!(resolved.read, vec![script]);
        assert_eq!(resolved.network, Network::Off);
        config.share_roots = true;
        config.policy.level = Some(SecurityLevel::Normal);
        let resolved = Policy::resolve(&config, &strict, std::slice::from_ref(&root));
        assert_eq!(resolved.level, SecurityLevel::Normal);
        assert_eq!(resolved.write, vec![dir, file, root]);
        assert_eq!(resolved.network, Network::Any);
    }

    #[test]
    fn arguments_never_open_shared_places_to_a_server() {
        let home = Path::new("/home/ann");
        for shared in ["/", "/tmp", "/var/tmp", "/home", "/run/user/1000", "/proc/1", "/dev/shm", "/tmp/.X11-unix"] {
            assert!(shared_place(Path::new(shared), Some(home)), "{shared}");
        }
        assert!(shared_place(Path::new("/tmp/ssh-XYZ"), Some(home)) && shared_place(Path::new("/tmp/tmux-0"), None));
        for own in ["/home/ann", "/home/ann/Projects", "/tmp/.tmpAbc/shared", "/srv/data"] {
            assert!(!shared_place(Path::new(own), Some(home)), "{own}");
        }
        assert_eq!(named_path("/tmp", Some(home)), None);
    }

    #[test]
    fn a_stored_policy_round_trips_and_an_empty_one_is_left_out() {
        let config = McpServerConfig::stdio("s", "x", &[]);
        let json = serde_json::to_value(&config).unwrap();
        assert!(json.get("policy").is_none());
        let mut config = config;
        config.policy = Policy {
            level: Some(SecurityLevel::Strict),
            read: vec!["/data".into()],
            write: vec![],
            network: Some(Network::Domains(vec!["*.github.com".into()])),
            env: vec!["GITHUB_HOST".into()],
            rate: RateLimits { per_tool_per_min: Some(5), per_server_per_min: Some(30) },
        };
        let json = serde_json::to_value(&config).unwrap();
        assert_eq!(
            json["policy"],
            serde_json::json!({"level": "strict", "read": ["/data"], "network": {"domains": ["*.github.com"]},
                               "env": ["GITHUB_HOST"], "rate": {"per_tool_per_min": 5, "per_server_per_min": 30}})
        );
        assert_eq!(serde_json::from_value::<McpServerConfig>(json).unwrap(), config);
    }

    #[test]
    fn bad_paths_domains_and_limits_are_named() {
        let policy = Policy {
            read: vec!["relative".into()],
            network: Some(Network::Domains(vec!["ok.example".into(), "bad domain".into(), "*.".into()])),
            rate: RateLimits { per_tool_per_min: Some(0), per_server_per_min: None },
            ..Policy::default()
        };
        let fields: Vec<String> = policy.problems().into_iter().map(|(f, _)| f).collect();
        assert_eq!(
            fields,
            [
                "policy.read[0]",
                "policy.network.domains[1]",
                "policy.network.domains[2]",
                "policy.rate.per_tool_per_min"
            ]
        );
    }

    #[test]
    fn the_summary_reads_in_one_glance() {
        let resolved = Resolved {
            level: SecurityLevel::Strict,
            read: vec!["/data".into()],
            write: vec![],
            network: Network::Domains(vec!["api.github.com".into()]),
            env: vec![],
            rate: RateLimits { per_tool_per_min: None, per_server_per_min: Some(30) },
        };
        assert_eq!(resolved.summary(), "strict: reads /data · writes nothing · network: api.github.com · 30 calls/min");
    }
}
