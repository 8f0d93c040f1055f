//! `patchbay mcp install`: a bundle whose server is an executable (test-support's
//! `poker_bundle`: `hostile-mcp` packed without its mode bits) is shown by
//! `--dry-run`, installed with a setting from `--set` and a sensitive one from
//! stdin (into the real keyring), started once, and then called like any
//! configured server, and its settings changed later (`mcp configure`);
//! `--dry-run` speaks the terminal's language where the bundle does. Bundles signed by the real `mcpb` CLI say who signed
//! them, and one changed after signing is refused.

use std::path::Path;
use std::process::Output;

use patchbay_test_support::hostile::poker_bundle;
use patchbay_test_support::signing::{Key, authority, mcpb};

use crate::common::{command, feed, text};

/// Runs `patchbay --data-dir DIR ARGS…`, `stdin` typed in, in the C locale (English).
fn run(dir: &Path, args: &[&str], stdin: &str) -> Output {
    run_with(dir, args, stdin, &[])
}

/// [`run`] with `env` set on top: another language, another trust store.
fn run_with(dir: &Path, args: &[&str], stdin: &str, env: &[(&str, &Path)]) -> Output {
    // The bundle's strings follow the terminal's language: English unless a test asks.
    let mut english = command(dir);
    english.env_remove("LC_ALL").env_remove("LC_MESSAGES").env("LANG", "C.UTF-8");
    feed(english.envs(env.iter().copied()).args(args), stdin)
}

#[test]
fn install_shows_installs_starts_and_the_server_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("poker.mcpb");
    poker_bundle(&file, "0.9.1");
    let data = tmp.path().join("data");
    let bundle = file.to_str().unwrap();

    let out = run(&data, &["mcp", "install", bundle, "--dry-run"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.starts_with("Poker 0.9.1 by Patchbay tests (binary server, installs as poker)\n"), "{shown}");
    assert!(shown.contains("tool  poke  Pokes.\n"), "{shown}");
    assert!(shown.contains("setting  mode  Mode (string, required, default \"huge-result:1\")\n"), "{shown}");
    assert!(shown.contains("setting  token  Token (string, required, sensitive, asked for)\n"), "{shown}");
    assert!(!data.join("extensions").exists(), "a dry run installs nothing");
    let chinese = [("LANG", Path::new("zh_CN.UTF-8"))];
    let out = run_with(&data, &["mcp", "install", bundle, "--dry-run"], "", &chinese);
    let shown = text(&out.stdout);
    assert!(shown.starts_with("戳一戳 0.9.1 by Patchbay tests") && shown.contains("tool  poke  戳一下。\n"), "{shown}");

    let out = run(&data, &["mcp", "install", bundle, "--set", "token=abc"], "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--set token: Token is sensitive; leave it out"), "{}", text(&out.stderr));

    // huge-result answers a small poke with "poked".
    let out = run(&data, &["mcp", "install", bundle, "--set", "mode=huge-result:1"], "tok-42\n");
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout), "installed Poker 0.9.1 as server poker\npoker  ready  1 tool\n");

    let out = run(&data, &["mcp", "call", "poker", "poke", "--args", r#"{"small": true}"#], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "poked");

    let out = run(&data, &["secret", "list"], "");
    let secrets = text(&out.stdout);
    assert!(secrets.contains("mcp/poker/POKER_TOKEN\tset\tserver poker env.POKER_TOKEN"), "{secrets}");
    let out = run(&data, &["config", "export", "--format", "patchbay"], "");
    assert!(!text(&out.stdout).contains("tok-42"), "the token is only in the keyring");

    // Its settings later: shown with their values, one changed, the token kept.
    let out = run(&data, &["mcp", "configure", "poker", "--show"], "");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.contains("mode  Mode (string, required, default \"huge-result:1\", now \"huge-result:1\")\n"),
        "{shown}"
    );
    assert!(shown.contains("token  Token (string, required, sensitive, asked for, kept in the keyring)\n"), "{shown}");
    let out = run(&data, &["mcp", "configure", "poker", "--set", "mode=huge-result:2"], "\n");
    assert!(out.status.success(), "stdout: {}\nstderr: {}", text(&out.stdout), text(&out.stderr));
    assert_eq!(text(&out.stdout), "changed the settings of Poker (server poker)\npoker  ready  1 tool\n");
    let shown = text(&run(&data, &["mcp", "configure", "poker", "--show"], "").stdout);
    assert!(shown.contains("now \"huge-result:2\""), "{shown}");
    let out = run(&data, &["mcp", "call", "poker", "poke", "--args", r#"{"small": true}"#], "");
    assert_eq!(text(&out.stdout).trim(), "poked", "{}", text(&out.stderr));
    let out = run(&data, &["secret", "list"], "");
    assert!(text(&out.stdout).contains("mcp/poker/POKER_TOKEN\tset"), "the token was kept");
    let out = run(&data, &["mcp", "configure", "nope", "--show"], "");
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("nope"), "{}", text(&out.stderr));
}

#[test]
fn a_signed_bundle_says_who_signed_it_and_a_changed_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let data = dir.join("data");
    authority(dir, Key::Rsa);
    let dry_run = |file: &str, env: &[(&str, &Path)]| {
        let out = run_with(&data, &["mcp", "install", dir.join(file).to_str().unwrap(), "--dry-run"], "", env);
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout).lines().nth(1).unwrap_or_default().to_owned()
    };

    poker_bundle(&dir.join("plain.mcpb"), "1.0.0");
    assert_eq!(dry_run("plain.mcpb", &[]), "unsigned: nothing says who made it");

    poker_bundle(&dir.join("ada.mcpb"), "1.0.0");
    mcpb(dir, &["sign", "ada.mcpb", "--cert", "leaf.pem", "--key", "leaf.key", "--intermediate", "inter.pem"]);
    let root = dir.join("root.pem");
    let valid_to = dry_run("ada.mcpb", &[("SSL_CERT_FILE", &root)]);
    assert!(
        valid_to.starts_with("signed by Ada-Tools (certificate issued by Test-Intermediate, valid until 20"),
        "{valid_to}"
    );
    assert_eq!(
        dry_run("ada.mcpb", &[]),
        "signed by Ada-Tools, not verified: its certificate was not issued by an authority this computer trusts"
    );

    poker_bundle(&dir.join("self.mcpb"), "1.0.0");
    mcpb(dir, &["sign", "self.mcpb", "--self-signed"]);
    let self_signed = "self-signed by MCPB Self-Signed Certificate: nobody vouches for that name";
    assert_eq!(dry_run("self.mcpb", &[]), self_signed);
    let self_file = dir.join("self.mcpb");
    let out = run(&data, &["mcp", "install", self_file.to_str().unwrap(), "--set", "mode=huge-result:1"], "t\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).starts_with(&format!("note: {self_signed}\n")), "{}", text(&out.stderr));

    // An update signed with the same certificate (mcpb reuses the one it made) says nothing more;
    // an unsigned one warns.
    poker_bundle(&dir.join("self-2.mcpb"), "2.0.0");
    mcpb(dir, &["sign", "self-2.mcpb", "--self-signed"]);
    let update = |file: &str| {
        let out = run(&data, &["mcp", "install", dir.join(file).to_str().unwrap(), "--dry-run"], "");
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let same = update("self-2.mcpb");
    assert!(same.contains("replaces the installed version 1.0.0\n") && !same.contains("warning"), "{same}");
    let unsigned = update("plain.mcpb");
    assert!(
        unsigned.contains("warning: the installed version was signed by MCPB Self-Signed Certificate (certificate "),
        "{unsigned}"
    );

    // One byte of the first entry's header changed: the zip still reads, the signature does not match.
    let mut bytes = std::fs::read(dir.join("ada.mcpb")).unwrap();
    bytes[10] ^= 1;
    std::fs::write(dir.join("changed.mcpb"), bytes).unwrap();
    let changed = dir.join("changed.mcpb");
    let out = run(&data, &["mcp", "install", changed.to_str().unwrap(), "--set", "mode=huge-result:1"], "t\n");
    assert!(!out.status.success());
    let error = text(&out.stderr);
    assert!(
        error.contains(
            "changed.mcpb is refused: it was changed after it was signed (its contents do not match the signature)"
        ),
        "{error}"
    );
    let out = run(&data, &["mcp", "list"], "");
    assert_eq!(text(&out.stdout).lines().count(), 1, "only the self-signed install: {}", text(&out.stdout));
}
