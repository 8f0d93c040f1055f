//! How a stdio server is launched: the environment it gets and where its command is found.
//!
//! A GUI app started from a desktop menu inherits a minimal `PATH`, so a command
//! such as `npx` or `uvx` that works in the user's terminal is "not found". The
//! [`LoginEnv`] asks the user's login shell for its `PATH` once (with a timeout),
//! adds the usual per-user tool locations (`~/.local/bin`, `~/.cargo/bin`, nvm,
//! volta, asdf, Homebrew) and resolves commands against that. The child's
//! environment is this process's environment with that `PATH`, plus the server's
//! configured variables: never a replacement of the whole environment.
//!
//! The launch floor of `mcp/`, beside the wire: [`stdio`] owns the server's
//! process, [`sandbox`] wraps it in its security policy and [`egress`] is the
//! filtering proxy of a server limited to some domains.

pub mod egress;
pub mod sandbox;
pub mod stdio;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::config::{PolicyOutline, ValueSource, env_refs};
use crate::mcp::error::McpError;
use crate::secrets::SecretStore;

/// How long the login shell may take to report its `PATH`.
const SHELL_TIMEOUT: Duration = Duration::from_secs(5);
/// Printed before the `PATH` so greetings from shell start-up files are ignored.
const MARKER: &str = "__PATCHBAY_PATH__=";

/// The environment stdio servers are started in.
#[derive(Debug, Clone)]
pub struct LoginEnv {
    vars: BTreeMap<OsString, OsString>,
    path: Vec<PathBuf>,
}

impl LoginEnv {
    /// This process's environment with the login shell's `PATH` and the usual tool directories.
    pub async fn detect() -> Self {
        let shell_path = login_shell_path().await;
        let vars: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
        let home = dirs::home_dir();
        Self::from_parts(vars, shell_path.as_deref(), home.as_deref())
    }

    /// Builds the environment from its parts (tests give them explicitly).
    pub fn from_parts(mut vars: BTreeMap<OsString, OsString>, shell_path: Option<&str>, home: Option<&Path>) -> Self {
        let mut path: Vec<PathBuf> = Vec::new();
        let mut push = |dir: PathBuf| {
            if !dir.as_os_str().is_empty() && !path.contains(&dir) {
                path.push(dir);
            }
        };
        if let Some(shell) = shell_path {
            std::env::split_paths(shell).for_each(&mut push);
        }
        if let Some(own) = vars.get(&OsString::from("PATH")) {
            std::env::split_paths(own).for_each(&mut push);
        }
        if let Some(home) = home {
            extra_dirs(home).into_iter().for_each(&mut push);
        }
        for dir in ["/opt/homebrew/bin", "/usr/local/bin", "/home/linuxbrew/.linuxbrew/bin", "/usr/bin", "/bin"] {
            push(PathBuf::from(dir));
        }
        if let Ok(joined) = std::env::join_paths(&path) {
            vars.insert("PATH".into(), joined);
        }
        Self { vars, path }
    }

    /// The directories searched for a command, in order.
    pub fn search_path(&self) -> &[PathBuf] {
        &self.path
    }

    /// Finds `command` the way the user's shell would: a path is taken as is
    /// (relative to `cwd`), a bare name is looked up in [`Self::search_path`].
    pub fn resolve(&self, command: &str, cwd: Option<&Path>) -> Result<PathBuf, McpError> {
        let as_path = Path::new(command);
        if as_path.components().count() > 1 || as_path.is_absolute() {
            let full = match cwd {
                Some(dir) if as_path.is_relative() => dir.join(as_path),
                _ => as_path.to_path_buf(),
            };
            return if is_executable(&full) {
                Ok(full)
            } else {
                Err(McpError::CommandNotFound { command: command.to_owned(), searched: vec![full] })
            };
        }
        for dir in &self.path {
            for name in candidate_names(command) {
                let full = dir.join(&name);
                if is_executable(&full) {
                    return Ok(full);
                }
            }
        }
        Err(McpError::CommandNotFound { command: command.to_owned(), searched: self.path.clone() })
    }

    /// The complete environment for a child with `added` on top.
    pub fn with(&self, added: &[(String, String)]) -> Vec<(OsString, OsString)> {
        let mut vars = self.vars.clone();
        for (k, v) in added {
            vars.insert(k.into(), v.into());
        }
        vars.into_iter().collect()
    }
}

/// Per-user tool locations that login shells usually add but GUI sessions lack.
fn extra_dirs(home: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![
        home.join(".local/bin"),
        home.join(".cargo/bin"),
        home.join(".volta/bin"),
        home.join(".asdf/shims"),
        home.join(".bun/bin"),
        home.join(".deno/bin"),
    ];
    // nvm: every installed Node, newest first.
    if let Ok(entries) = std::fs::read_dir(home.join(".nvm/versions/node")) {
        let mut versions: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
        versions.sort_by_key(|p| std::cmp::Reverse(node_version(p)));
        dirs.extend(versions.into_iter().map(|v| v.join("bin")));
    }
    dirs
}

/// `v20.11.1` → `(20, 11, 1)`, for ordering nvm's directories.
fn node_version(dir: &Path) -> (u64, u64, u64) {
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let mut parts = name.trim_start_matches('v').split('.').map(|p| p.parse::<u64>().unwrap_or(0));
    (parts.next().unwrap_or(0), parts.next().unwrap_or(0), parts.next().unwrap_or(0))
}

fn candidate_names(command: &str) -> Vec<String> {
    if cfg!(windows) {
        ["", ".exe", ".cmd", ".bat"].iter().map(|ext| format!("{command}{ext}")).collect()
    } else {
        vec![command.to_owned()]
    }
}

#[cfg(unix)]
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(path: &Path) -> bool {
    path.is_file()
}

/// Asks `$SHELL -lc` for its `PATH`; `None` when there is no shell, it fails or it hangs.
async fn login_shell_path() -> Option<String> {
    let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty())?;
    let mut cmd = tokio::process::Command::new(shell);
    cmd.arg("-lc")
        .arg(format!("printf '%s%s' '{MARKER}' \"$PATH\""))
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::time::timeout(SHELL_TIMEOUT, cmd.output()).await.ok()?.ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let (_, path) = text.rsplit_once(MARKER)?;
    (!path.is_empty()).then(|| path.to_owned())
}

/// Resolves configured values: plain text as is, secrets through `secrets`.
/// `place` names the field in errors (`env`, `headers`).
pub(crate) fn resolve_values(
    server: &str,
    place: &str,
    values: &BTreeMap<String, ValueSource>,
    secrets: &dyn SecretStore,
) -> Result<Vec<(String, String)>, McpError> {
    values
        .iter()
        .map(|(key, source)| Ok((key.clone(), resolve_value(server, &format!("{place}.{key}"), source, secrets)?)))
        .collect()
}

/// Resolves one configured value; `field` names it in errors (`env.TOKEN`).
/// An [`ValueSource::Env`] value's references are read from Patchbay's own
/// environment (see [`crate::config::env_refs`]); plain text is used as it is.
pub(crate) fn resolve_value(
    server: &str,
    field: &str,
    source: &ValueSource,
    secrets: &dyn SecretStore,
) -> Result<String, McpError> {
    match source {
        ValueSource::Plain(v) => Ok(v.clone()),
        ValueSource::Env(v) => env_refs::expand(v, |name| std::env::var(name).ok()).map_err(|variable| {
            McpError::MissingEnvVar { server: server.to_owned(), field: field.to_owned(), variable }
        }),
        ValueSource::Secret(name) => secrets.get(name)?.ok_or_else(|| McpError::MissingSecret {
            server: server.to_owned(),
            field: field.to_owned(),
            secret: name.clone(),
        }),
    }
}

/// What a user needs to see when a server does not start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct LaunchReport {
    /// The server's name.
    pub server: String,
    /// The command as configured.
    pub command: String,
    /// Where it was found, or `None` when it was not.
    pub resolved: Option<PathBuf>,
    /// The directories searched when it was not found.
    pub searched: Vec<PathBuf>,
    /// Environment variables added to the login environment (names only).
    pub env_added: Vec<String>,
    /// The security policy it runs under (its `Display` is the one-line summary).
    pub policy: Option<PolicyOutline>,
    /// The exit code, when the process ended (`None` if killed by a signal or still running).
    pub exit_code: Option<i32>,
    /// The signal that ended it (Unix).
    pub signal: Option<i32>,
    /// The last lines it wrote to stderr.
    pub stderr_tail: Vec<String>,
    /// Why the start failed, if it did.
    pub error: Option<String>,
}

impl std::fmt::Display for LaunchReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "server:    {}", self.server)?;
        match &self.resolved {
            Some(path) => writeln!(f, "command:   {} -> {}", self.command, path.display())?,
            None => {
                let dirs: Vec<String> = self.searched.iter().map(|d| d.display().to_string()).collect();
                writeln!(f, "command:   {} not found on PATH; looked in {}", self.command, dirs.join(":"))?;
            }
        }
        let env = if self.env_added.is_empty() { "(none)".to_owned() } else { self.env_added.join(", ") };
        writeln!(f, "env added: {env}")?;
        if let Some(policy) = &self.policy {
            writeln!(f, "policy:    {policy}")?;
        }
        match (self.exit_code, self.signal) {
            (Some(code), _) => writeln!(f, "exit code: {code}")?,
            (None, Some(sig)) => writeln!(f, "killed by: signal {sig}")?,
            (None, None) => {}
        }
        if let Some(error) = &self.error {
            writeln!(f, "error:     {error}")?;
        }
        if self.stderr_tail.is_empty() {
            writeln!(f, "stderr:    (empty)")
        } else {
            writeln!(f, "stderr (last {} lines):", self.stderr_tail.len())?;
            self.stderr_tail.iter().try_for_each(|line| writeln!(f, "  {line}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with_path(path: &str, home: &Path) -> LoginEnv {
        let vars = BTreeMap::from([(OsString::from("PATH"), OsString::from("/usr/bin")), ("HOME".into(), home.into())]);
        LoginEnv::from_parts(vars, Some(path), Some(home))
    }

    #[cfg(unix)]
    fn make_executable(path: &Path) {
        patchbay_test_support::processes::write_program(path, "#!/bin/sh\n").unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn login_path_comes_first_and_user_dirs_are_searched() {
        let tmp = tempfile::tempdir().unwrap();
        let shell_bin = tmp.path().join("shell-bin");
        let local_bin = tmp.path().join(".local/bin");
        std::fs::create_dir_all(&shell_bin).unwrap();
        std::fs::create_dir_all(&local_bin).unwrap();
        make_executable(&local_bin.join("only-local"));
        make_executable(&shell_bin.join("both"));
        make_executable(&local_bin.join("both"));
        let env = env_with_path(shell_bin.to_str().unwrap(), tmp.path());
        assert_eq!(env.search_path()[0], shell_bin);
        assert_eq!(env.resolve("both", None).unwrap(), shell_bin.join("both"));
        assert_eq!(env.resolve("only-local", None).unwrap(), local_bin.join("only-local"));
        let path = env.with(&[]).into_iter().find(|(k, _)| k == "PATH").unwrap().1;
        assert!(std::env::split_paths(&path).any(|p| p == local_bin));
    }

    #[test]
    fn a_missing_command_lists_where_it_looked() {
        let tmp = tempfile::tempdir().unwrap();
        let env = env_with_path("/nonexistent-a", tmp.path());
        match env.resolve("surely-not-a-command-xyz", None) {
            Err(McpError::CommandNotFound { command, searched }) => {
                assert_eq!(command, "surely-not-a-command-xyz");
                assert_eq!(searched[0], PathBuf::from("/nonexistent-a"));
                assert!(searched.contains(&tmp.path().join(".local/bin")));
            }
            other => panic!("expected CommandNotFound, got {other:?}"),
        }
    }

    #[test]
    fn configured_env_is_added_not_replacing() {
        let tmp = tempfile::tempdir().unwrap();
        let env = env_with_path("/x", tmp.path());
        let vars = env.with(&[("API_KEY".into(), "k".into())]);
        assert!(vars.iter().any(|(k, v)| k == "API_KEY" && v == "k"));
        assert!(vars.iter().any(|(k, _)| k == "HOME"));
    }

    #[test]
    fn secrets_are_resolved_and_a_missing_one_names_the_field() {
        let store = crate::secrets::MemoryStore::new();
        store.set("mcp/gh/token", "s3cret").unwrap();
        let values = BTreeMap::from([
            ("A".to_owned(), ValueSource::Plain("1".into())),
            ("TOKEN".to_owned(), ValueSource::Secret("mcp/gh/token".into())),
        ]);
        let got = resolve_values("gh", "env", &values, &store).unwrap();
        assert_eq!(got, vec![("A".into(), "1".into()), ("TOKEN".into(), "s3cret".into())]);
        let missing = BTreeMap::from([("X".to_owned(), ValueSource::Secret("nope".into()))]);
        match resolve_values("gh", "env", &missing, &store) {
            Err(McpError::MissingSecret { field, secret, .. }) => {
                assert_eq!((field.as_str(), secret.as_str()), ("env.X", "nope"))
            }
            other => panic!("expected MissingSecret, got {other:?}"),
        }
        // The environment the tests run in has a HOME and no such variable as the second.
        let home = std::env::var("HOME").unwrap();
        let referring = BTreeMap::from([
            ("DIR".to_owned(), ValueSource::Env("${env:HOME}/x".into())),
            ("LITERAL".to_owned(), ValueSource::Plain("${HOME}".into())),
        ]);
        let got = resolve_values("gh", "env", &referring, &store).unwrap();
        assert_eq!(got, vec![("DIR".into(), format!("{home}/x")), ("LITERAL".into(), "${HOME}".into())]);
        let unset = BTreeMap::from([("T".to_owned(), ValueSource::Env("${PATCHBAY_TEST_NEVER_SET_7Q}".into()))]);
        match resolve_values("gh", "headers", &unset, &store) {
            Err(e @ McpError::MissingEnvVar { .. }) => {
                assert!(
                    e.to_string().contains("headers.T refers to the environment variable PATCHBAY_TEST_NEVER_SET_7Q"),
                    "{e}"
                )
            }
            other => panic!("expected MissingEnvVar, got {other:?}"),
        }
    }
}
