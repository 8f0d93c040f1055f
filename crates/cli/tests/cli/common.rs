//! What the CLI tests share: the `patchbay` command on a data directory, its
//! output as text, and data directories seeded with MCP servers or with the
//! scripted model, so that each test module keeps only what it checks.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use patchbay_core::config::{ConfigStore, McpServerConfig, ProviderProfile};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::ScriptedServer;

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_patchbay");

/// `patchbay --data-dir DIR`, ready for its arguments. The model keys of the
/// environment the tests run in are left out: a test that wants a model from
/// the environment says so with [`env_model`].
pub fn command(dir: &Path) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg("--data-dir").arg(dir).env_remove("OPENAI_API_KEY").env_remove("ARK_API_KEY");
    cmd
}

/// Runs `patchbay --data-dir DIR ARGS…` to its end, with no stdin.
pub fn patchbay(dir: &Path, args: &[&str]) -> Output {
    command(dir).args(args).output().expect("run patchbay")
}

/// Runs `patchbay --data-dir DIR ARGS…` to its end, `stdin` typed in.
pub fn patchbay_stdin(dir: &Path, args: &[&str], stdin: &str) -> Output {
    feed(command(dir).args(args), stdin)
}

/// Runs `cmd` to its end, `stdin` typed in.
pub fn feed(cmd: &mut Command, stdin: &str) -> Output {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run patchbay");
    // A command that refuses its arguments exits before reading: its output says why.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

/// Points `cmd` at `model` the way a user's environment would, with no saved provider.
pub fn env_model<'a>(cmd: &'a mut Command, model: &ScriptedServer) -> &'a mut Command {
    cmd.env("OPENAI_API_KEY", "sk-test").env("OPENAI_BASE_URL", format!("{}/v1", model.url()))
}

/// Bytes a command printed, as text.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

pub fn stdout(out: &Output) -> String {
    text(&out.stdout)
}

pub fn stderr(out: &Output) -> String {
    text(&out.stderr)
}

/// The stdout of a run that must have succeeded (else its stderr is the failure).
pub fn ok(out: &Output) -> String {
    assert!(out.status.success(), "stderr: {}", stderr(out));
    stdout(out)
}

/// A file in `tests/cli/fixtures`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cli/fixtures").join(name)
}

/// The database of the data directory `dir`, created if new.
pub fn store(dir: &Path) -> Store {
    Store::open(&DataDir::new(dir)).unwrap()
}

/// Configures exactly `servers` in the data directory `dir`.
pub fn seed_servers(dir: &Path, servers: &[McpServerConfig]) {
    ConfigStore::new(store(dir)).replace_servers(servers).unwrap();
}

/// The real server-everything over stdio, named `name`.
pub fn everything(name: &str) -> McpServerConfig {
    McpServerConfig::stdio(name, peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"])
}

/// Saves the provider `scripted` in `dir`: the scripted server at `url`, model `scripted-model`.
pub fn seed_scripted_provider(dir: &Path, url: &str) {
    ConfigStore::new(store(dir))
        .save_provider(&ProviderProfile::openai_compatible("scripted", format!("{url}/v1"), "scripted-model"))
        .unwrap();
}

/// The names of the tools offered in a chat request the scripted model recorded.
pub fn offered(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| tools.iter().filter_map(|t| t["function"]["name"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}
