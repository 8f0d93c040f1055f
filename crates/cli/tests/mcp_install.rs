//! `patchbay mcp install`: a bundle whose server is an executable (test-support's
//! `poker_bundle`: `hostile-mcp` packed without its mode bits) is shown by
//! `--dry-run`, installed with a setting from `--set` and a sensitive one from
//! stdin (into the real keyring), started once, and then called like any
//! configured server.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use patchbay_test_support::hostile::poker_bundle;

fn patchbay(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_patchbay"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run patchbay");
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn install_shows_installs_starts_and_the_server_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("poker.mcpb");
    poker_bundle(&file, "0.9.1");
    let data = tmp.path().join("data");
    let bundle = file.to_str().unwrap();

    let out = patchbay(&data, &["mcp", "install", bundle, "--dry-run"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.starts_with("Poker 0.9.1 by Patchbay tests (binary server, installs as poker)\n"), "{shown}");
    assert!(shown.contains("tool  poke  Pokes.\n"), "{shown}");
    assert!(shown.contains("setting  mode  Mode (string, required, default \"huge-result:1\")\n"), "{shown}");
    assert!(shown.contains("setting  token  Token (string, required, sensitive, asked for)\n"), "{shown}");
    assert!(!data.join("extensions").exists(), "a dry run installs nothing");

    let out = patchbay(&data, &["mcp", "install", bundle, "--set", "token=abc"], "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--set token: Token is sensitive; leave it out"), "{}", text(&out.stderr));

    // huge-result answers a small poke with "poked".
    let out = patchbay(&data, &["mcp", "install", bundle, "--set", "mode=huge-result:1"], "tok-42\n");
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout), "installed Poker 0.9.1 as server poker\npoker  ready  1 tools\n");

    let out = patchbay(&data, &["mcp", "call", "poker", "poke", "--args", r#"{"small": true}"#], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "poked");

    let out = patchbay(&data, &["secret", "list"], "");
    let secrets = text(&out.stdout);
    assert!(secrets.contains("mcp/poker/POKER_TOKEN\tset\tserver poker env.POKER_TOKEN"), "{secrets}");
    let out = patchbay(&data, &["config", "export", "--format", "patchbay"], "");
    assert!(!text(&out.stdout).contains("tok-42"), "the token is only in the keyring");
}
