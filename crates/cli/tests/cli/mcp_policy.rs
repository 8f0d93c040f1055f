//! `patchbay mcp policy SERVER`: changes and shows a server's security
//! policy, refuses bad values with the field and the reason, and the policy
//! is what `mcp status` and the launch doctor report and what the server runs
//! under (a strict server with network off cannot reach a local HTTP server).
#![cfg(target_os = "linux")]

use std::process::Output;

use patchbay_core::config::{ConfigStore, Network, SecurityLevel};

use crate::common::{everything, patchbay, seed_servers, stderr, stdout, store};

/// (stdout, stderr) of a run.
fn streams(out: &Output) -> (String, String) {
    (stdout(out), stderr(out))
}

#[test]
fn policy_changes_are_saved_shown_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let folder = tmp.path().join("projects");
    std::fs::create_dir_all(&folder).unwrap();
    seed_servers(&data, &[everything("everything")]);

    let out = patchbay(&data, &["mcp", "policy", "everything", "--show"]);
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "normal: reads home (not its secrets) · writes nothing · network: any");

    let folder_arg = folder.to_str().unwrap();
    let out = patchbay(
        &data,
        &["mcp", "policy", "everything", "--level", "strict", "--read", folder_arg, "--allow-domain", "*.github.com"],
    );
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    let canonical = folder.canonicalize().unwrap();
    assert_eq!(
        stdout.trim(),
        format!("strict: reads {} · writes nothing · network: *.github.com", canonical.display())
    );
    let out =
        patchbay(&data, &["mcp", "policy", "everything", "--rate", "30/min", "--allow-domain", "api.example.org"]);
    assert!(out.status.success(), "{}", streams(&out).1);
    assert!(
        streams(&out).0.trim().ends_with("network: *.github.com, api.example.org · 30 calls/min"),
        "{}",
        streams(&out).0
    );
    let out = patchbay(&data, &["mcp", "policy", "everything", "--tool-rate", "5"]);
    assert!(streams(&out).0.trim().ends_with(" · 30 calls/min (5 per tool)"), "{}", streams(&out).0);

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
        streams(&out).1.contains("policy.network.domains[2]: \"not a domain\" is not a host name"),
        "{}",
        streams(&out).1
    );
    for flag in ["--rate", "--tool-rate"] {
        let out = patchbay(&data, &["mcp", "policy", "everything", flag, "many"]);
        let expected = format!("{flag} \"many\": expected calls per minute, like 30/min");
        assert!(!out.status.success() && streams(&out).1.contains(&expected), "{}", streams(&out).1);
    }
    let out =
        patchbay(&data, &["mcp", "policy", "everything", "--write", tmp.path().join("missing").to_str().unwrap()]);
    assert!(!out.status.success() && streams(&out).1.contains("missing"), "{}", streams(&out).1);
    assert_eq!(ConfigStore::new(store(&data)).server("everything").unwrap().policy, saved);

    // The strict server still starts (its command's folder is readable), and status names the policy.
    let out = patchbay(&data, &["mcp", "policy", "everything", "--network", "off"]);
    assert!(out.status.success(), "{}", streams(&out).1);
    let out = patchbay(&data, &["mcp", "status"]);
    let (stdout, stderr) = streams(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("everything  ready  ")), "{stdout}");
    assert!(
        stdout.contains("  policy: strict: reads ") && stdout.contains("network: off · 30 calls/min (5 per tool)"),
        "{stdout}"
    );

    // Permissive is said plainly.
    let out = patchbay(&data, &["mcp", "policy", "everything", "--level", "permissive"]);
    assert!(streams(&out).0.contains("Permissive: no sandbox"), "{}", streams(&out).0);
    let out = patchbay(&data, &["mcp", "doctor", "everything"]);
    assert!(streams(&out).0.contains("policy:    Permissive: no sandbox"), "{}", streams(&out).0);
}
