//! The policy in force for a server ([`Policy::resolve`]): its stored policy,
//! completed from its own configuration (the folders its arguments name, its
//! working folder, the shared roots), and the outline of it the window shows.

use std::path::{Path, PathBuf};

use super::{Network, Policy, PolicyDefaults, PolicyOutline, Resolved, SecurityLevel};
use crate::config::model::{McpServerConfig, TransportConfig, ValueSource};

impl Policy {
    /// The policy in force for `config`: the level from `defaults` where none
    /// is set; writable, the folders (and files) its arguments and plain
    /// environment values name and, when it sees them, the shared `roots`;
    /// readable, its working folder and the code files its arguments name
    /// (a script to run is not the server's to rewrite).
    pub fn resolve(config: &McpServerConfig, defaults: &PolicyDefaults, roots: &[PathBuf]) -> Resolved {
        let policy = &config.policy;
        let level = policy.level.unwrap_or(defaults.level);
        let mut read = policy.read.clone();
        let mut write = policy.write.clone();
        if let TransportConfig::Stdio { args, env, cwd, .. } = &config.transport {
            let home = dirs::home_dir();
            let plain = env.values().filter_map(|v| match v {
                ValueSource::Plain(text) => Some(text.as_str()),
                // Read from the environment at start: no folder the user can see here.
                ValueSource::Secret(_) | ValueSource::Env(_) => None,
            });
            for text in args.iter().map(String::as_str).chain(plain) {
                match named_path(text, home.as_deref()) {
                    // The server's own code (a bundle's `server/main.py`) is run, never rewritten.
                    Some(path) if is_code(&path) => push_new(&mut read, path),
                    Some(path) => push_new(&mut write, path),
                    None => {}
                }
            }
            if let Some(cwd) = cwd {
                push_new(&mut read, cwd.clone());
            }
        }
        if config.share_roots {
            roots.iter().for_each(|root| push_new(&mut write, root.clone()));
        }
        let network = policy.network.clone().unwrap_or(match level {
            SecurityLevel::Strict => Network::Off,
            SecurityLevel::Normal | SecurityLevel::Permissive => Network::Any,
        });
        Resolved { level, read, write, network, env: policy.env.clone(), rate: policy.rate }
    }
}

impl PolicyOutline {
    /// The outline of `policy`, the policy in force for `config`.
    pub fn of(config: &McpServerConfig, policy: &Resolved) -> Self {
        match config.transport {
            TransportConfig::Stdio { .. } => policy.outline(),
            TransportConfig::InProcess => Self::InProcess,
            _ => Self::Remote { rate: policy.rate },
        }
    }
}

fn push_new(paths: &mut Vec<PathBuf>, path: PathBuf) {
    if !paths.contains(&path) {
        paths.push(path);
    }
}

/// The existing folder or file an argument names: an absolute path, `~/…`,
/// or the value of `--flag=/path`.
pub(super) fn named_path(text: &str, home: Option<&Path>) -> Option<PathBuf> {
    let value = match text.split_once('=') {
        Some((flag, value)) if flag.starts_with('-') => value,
        _ => text,
    };
    let path = match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(value),
    };
    if !path.is_absolute() {
        return None;
    }
    let path = path.canonicalize().ok()?;
    (!shared_place(&path, home)).then_some(path)
}

/// Places no argument opens to a server: the root, home's parents, the
/// shared temporary folders, the sockets of the session (`/run`, X11, ssh
/// agents, tmux) and the kernel's (`/proc`, `/sys`, `/dev`). The sandbox
/// gives a server a private `/tmp` instead.
pub(super) fn shared_place(path: &Path, home: Option<&Path>) -> bool {
    const WHOLE: &[&str] = &["/", "/tmp", "/var/tmp", "/home"];
    const UNDER: &[&str] = &["/run", "/proc", "/sys", "/dev", "/tmp/.X11-unix", "/tmp/.ICE-unix"];
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    WHOLE.iter().any(|w| path == Path::new(w))
        || UNDER.iter().any(|u| path.starts_with(u))
        || (path.parent() == Some(Path::new("/tmp")) && (name.starts_with("ssh-") || name.starts_with("tmux-")))
        || home.is_some_and(|home| home.starts_with(path) && home != path)
}

/// A file of program code, by its extension: what an interpreter is given to run.
fn is_code(path: &Path) -> bool {
    const CODE: &[&str] = &["py", "js", "mjs", "cjs", "ts", "mts", "sh", "rb", "pl", "php", "jar", "lua"];
    path.is_file() && path.extension().and_then(|e| e.to_str()).is_some_and(|e| CODE.contains(&e))
}
