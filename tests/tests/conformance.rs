//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, client
//! mode) against `conformance-client`, which connects through rmcp and
//! authorizes with the core's OAuth flow. Every scenario listed here must pass
//! every check; the ones that do not yet are listed, with the reason, in
//! docs/CONFORMANCE.md.

use std::process::Command;

use anyhow::{Result, ensure};
use patchbay_test_support::peers;

const PASSING: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/cross-app-access-complete-flow",
];

#[test]
fn the_client_passes_the_conformance_scenarios() -> Result<()> {
    let suite = peers::node_module("@modelcontextprotocol/conformance/dist/index.js");
    let run = |scenario: &str| -> Result<(String, String)> {
        let output = Command::new(peers::node22())
            .arg(&suite)
            .args(["client", "--command", env!("CARGO_BIN_EXE_conformance-client"), "--scenario", scenario])
            .args(["--timeout", "30000"])
            .output()?;
        let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
        let summary = text.lines().find(|l| l.starts_with("Passed:")).unwrap_or("no summary").to_owned();
        Ok((summary, text))
    };
    let mut failures = Vec::new();
    for scenario in PASSING {
        // Warnings are advice (basic-cimd: the client registers dynamically instead of by metadata document).
        let (mut summary, mut text) = run(scenario)?;
        if !summary.contains(" 0 failed") {
            // Once more, said aloud: on a loaded machine (the window's tests run beside these) a
            // scenario has failed whole within its 30 s; every check must still pass.
            eprintln!("{scenario} failed ({summary}), run again; its output:\n{text}");
            (summary, text) = run(scenario)?;
        }
        if !summary.contains(" 0 failed") {
            let tail: Vec<&str> = text.lines().rev().take(40).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            failures.push(format!("{scenario}: {summary}\n{}", tail.join("\n")));
        }
    }
    ensure!(failures.is_empty(), "conformance scenarios failed:\n{}", failures.join("\n"));
    Ok(())
}
