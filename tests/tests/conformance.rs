//! The official MCP conformance suite (`@modelcontextprotocol/conformance`
//! 0.2.0-alpha.12, pinned in tests/peers, client mode) against
//! `conformance-client`, which connects through rmcp the way the core does
//! (the revision negotiated by `patchbay_core::mcp::protocol::revision`) and
//! authorizes with the core's OAuth flow. Three runs, each failing on any failed
//! check or warning not listed in tests/conformance-expected.yaml, and on any
//! listed one that now passes (the suite's own baseline rules): every scenario
//! 2026-07-28 requires (`--requirements`), every 2025-11-25 scenario
//! (`--spec-version`), and one by one the 2025-03-26 authorization fallbacks
//! and the extensions. docs/CONFORMANCE.md lists every scenario and why one is expected to fail.

use std::process::Command;

use anyhow::{Result, ensure};
use patchbay_test_support::peers;

/// Run one by one: the 2025-03-26 scenarios (removed from later revisions, still met by
/// servers in use), and the extensions, which a `--requirements` run does not judge.
const ONE_BY_ONE: &[&str] = &[
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
];

#[test]
fn the_client_passes_the_conformance_suite() -> Result<()> {
    let suite = peers::node_module("@modelcontextprotocol/conformance/dist/index.js");
    let expected = concat!(env!("CARGO_MANIFEST_DIR"), "/conformance-expected.yaml");
    let run = |selection: &[&str]| -> Result<(bool, String)> {
        let output = Command::new(peers::node22())
            .arg(&suite)
            .args(["client", "--command", env!("CARGO_BIN_EXE_conformance-client")])
            .args(selection)
            .args(["--expected-failures", expected, "--timeout", "30000"])
            .output()?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        Ok((output.status.success(), text))
    };
    let mut selections: Vec<Vec<&str>> =
        vec![vec!["--requirements", "2026-07-28"], vec!["--suite", "all", "--spec-version", "2025-11-25"]];
    selections.extend(ONE_BY_ONE.iter().map(|s| vec!["--scenario", *s]));
    let mut failures = Vec::new();
    for selection in &selections {
        let (mut passed, mut text) = run(selection)?;
        if !passed {
            // Once more, said aloud: on a loaded machine (the window's tests run beside these) a
            // scenario has failed whole within its 30 s; every check must still pass.
            eprintln!("{selection:?} failed, run again; its output:\n{text}");
            (passed, text) = run(selection)?;
        }
        if !passed {
            let tail: Vec<&str> = text.lines().rev().take(60).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            failures.push(format!("{selection:?}:\n{}", tail.join("\n")));
        }
    }
    ensure!(failures.is_empty(), "conformance runs failed:\n{}", failures.join("\n"));
    Ok(())
}
