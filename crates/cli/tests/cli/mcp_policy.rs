//! `patchbay mcp policy SERVER`: changes and shows a server's security
//! policy, refuses bad values with the field and the reason, and the policy
//! is what `mcp status` and the launch doctor report and what the server runs
//! under (a strict server with network off cannot reach a local HTTP server).
#![cfg(target_os = "linux")]

use std::path::Path;
use std::process::{Command, Output};

use patchbay_core::config::{ConfigStore, McpServerConfig, Network, SecurityLevel};
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_test_support::peers;

fn store(dir: &Path) -> Store {
    Store::open(&DataDir::resolve(Some(dir.to_path_buf())).unwrap()).unwrap()
}

fn patchbay(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_patchbay")).arg("--data-dir").arg(dir).args(args).output().expect("run patchbay")
}

fn text(out: &Output) -> (String, String) {
    (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn policy_changes_are_saved_shown_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let folder = tmp.path().join("projects");
    std::fs::create_dir_all(&folder).unwrap();
    let everything =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    ConfigStore::new(store(&data)).replace_servers(&[everything]).unwrap();

    let out = patchbay(&data, &["mcp", "policy", "everything", "--show"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "normal: reads home (not its secrets) · writes nothing · network: any");

    let folder_arg = folder.to_str().unwrap();
    let out = patchbay(
        &data,
        &["mcp", "policy", "everything", "--level", "strict", "--read", folder_arg, "--allow-domain", "*.github.com"],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let canonical = folder.canonicalize().unwrap();
    assert_eq!(
        stdout.trim(),
        format!("strict: reads {} · writes nothing · network: *.github.com", canonical.display())
    );
    let out =
        patchbay(&data, &["mcp", "policy", "everything", "--rate", "30/min", "--allow-domain", "api.example.org"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(text(&out).0.trim().ends_with("network: *.github.com, api.example.org · 30 calls/min"), "{}", text(&out).0);
    let out = patchbay(&data, &["mcp", "policy", "everything", "--tool-rate", "5"]);
    assert!(text(&out).0.trim().ends_with(" · 30 calls/min (5 per tool)"), "{}", text(&out).0);

    let saved = ConfigStore::new(store(&data)).server("everything").unwrap().policy;
    assert_eq!(saved.level, Some(SecurityLevel::Strict));
    assert_eq!(saved.read, [canonical]);
    assert_eq!(saved.network, Some(Network::Domains(vec!["*.github.com".into(), "api.example.org".into()])));
    assert_eq!(saved.rate.per_server_per_min, Some(30));
    assert_eq!(saved.rate.per_tool_per_min, Some(5));

    // Bad values: nothing is saved, and the error says where and why.
    let out = patchbay(&data, &["mcp", "policy", "everything", "--allow-domain", "not a domain"]);
    assert!(!out.status.success());
    assert!(
        text(&out).1.contains("policy.network.domains[2]: \"not a domain\" is not a host name"),
        "{}",
        text(&out).1
    );
    for flag in ["--rate", "--tool-rate"] {
        let out = patchbay(&data, &["mcp", "policy", "everything", flag, "many"]);
        let expected = format!("{flag} \"many\": expected calls per minute, like 30/min");
        assert!(!out.status.success() && text(&out).1.contains(&expected), "{}", text(&out).1);
    }
    let out =
        patchbay(&data, &["mcp", "policy", "everything", "--write", tmp.path().join("missing").to_str().unwrap()]);
    assert!(!out.status.success() && text(&out).1.contains("missing"), "{}", text(&out).1);
    assert_eq!(ConfigStore::new(store(&data)).server("everything").unwrap().policy, saved);

    // The strict server still starts (its command's folder is readable), and status names the policy.
    let out = patchbay(&data, &["mcp", "policy", "everything", "--network", "off"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let out = patchbay(&data, &["mcp", "status"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("everything  ready  ")), "{stdout}");
    assert!(
        stdout.contains("  policy: strict: reads ") && stdout.contains("network: off · 30 calls/min (5 per tool)"),
        "{stdout}"
    );

    // Permissive is said plainly.
    let out = patchbay(&data, &["mcp", "policy", "everything", "--level", "permissive"]);
    assert!(text(&out).0.contains("Permissive: no sandbox"), "{}", text(&out).0);
    let out = patchbay(&data, &["mcp", "doctor", "everything"]);
    assert!(text(&out).0.contains("policy:    Permissive: no sandbox"), "{}", text(&out).0);
}
