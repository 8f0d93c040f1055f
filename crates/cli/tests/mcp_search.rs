//! `patchbay mcp search`: the registry `PATCHBAY_MCP_REGISTRY` names (one
//! served on 127.0.0.1 by test-support) is searched through the real binary,
//! which prints each server with the ways it runs and the secrets it asks for.

use std::process::Output;

use patchbay_test_support::catalog::serve;
use serde_json::json;

async fn search(registry: &str, args: &[&str]) -> Output {
    let data = tempfile::tempdir().unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_patchbay"))
        .arg("--data-dir")
        .arg(data.path())
        .args(["mcp", "search"])
        .args(args)
        .env("PATCHBAY_MCP_REGISTRY", registry)
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_prints_servers_their_launch_and_secrets_and_says_why_it_failed() {
    let notes = json!({"server": {
        "name": "io.github.ada/notes", "description": "Notes.", "version": "0.3.0",
        "packages": [{"registryType": "pypi", "identifier": "ada-notes", "version": "0.3.0",
                      "transport": {"type": "stdio"}, "environmentVariables": [{"name": "NOTES_TOKEN", "isSecret": true}]},
                     {"registryType": "mcpb", "identifier": "https://notes.example/notes.mcpb", "fileSha256": "ab".repeat(32)}],
        "remotes": [{"type": "streamable-http", "url": "https://notes.example/mcp"}]
    }});
    let registry = serve(vec![notes]).await;

    let out = search(&registry, &["notes"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "io.github.ada/notes 0.3.0  Notes.\n\
         \x20 pypi             uvx ada-notes==0.3.0  (secret: NOTES_TOKEN)\n\
         \x20 mcpb             bundle https://notes.example/notes.mcpb (SHA-256 abababababababababababababababababababababababababababababababab)\n\
         \x20 streamable-http  https://notes.example/mcp\n\
         more: patchbay mcp search \"notes\" --cursor page-2\n"
    );

    let out = search(&registry, &["notes", "--cursor", "page-2", "--json"]).await;
    let page: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(page["next_cursor"], serde_json::Value::Null);
    assert_eq!(page["entries"][0]["config"]["transport"]["command"], "uvx");

    let out = search(&registry, &["weather"]).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no server in the registry matches \"weather\"\n");

    let out = search(&registry, &["down"]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("the MCP registry at {registry}/v0.1/servers answered 503: maintenance")),
        "{stderr}"
    );
}
