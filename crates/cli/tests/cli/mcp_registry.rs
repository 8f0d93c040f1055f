//! `patchbay mcp search` and `patchbay mcp add`: the registry
//! `PATCHBAY_MCP_REGISTRY` names (one served on 127.0.0.1 by test-support) is
//! searched through the real binary, which prints each server with the ways it
//! runs and the secrets it asks for; `add` adds a remote server (a real
//! server-everything), its secret typed on stdin into the real keyring, and
//! installs a bundle the registry lists.

use std::path::Path;
use std::process::{Output, Stdio};

use patchbay_test_support::discover::{serve, serve_with_files};
use patchbay_test_support::hostile::poker_bundle;
use patchbay_test_support::peers;
use serde_json::json;

use crate::common::{command, feed, text};

/// `patchbay mcp search ARGS…` against `registry`, on a fresh data directory.
fn search(registry: &str, args: &[&str]) -> Output {
    let data = tempfile::tempdir().unwrap();
    command(data.path()).args(["mcp", "search"]).args(args).env("PATCHBAY_MCP_REGISTRY", registry).output().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_prints_servers_their_launch_and_secrets_and_says_why_it_failed() {
    let notes = json!({"server": {
        "name": "io.github.ada/notes", "description": "Notes.", "version": "0.3.0",
        "packages": [{"registryType": "pypi", "identifier": "ada-notes", "version": "0.3.0",
                      "transport": {"type": "stdio"}, "environmentVariables": [{"name": "NOTES_TOKEN", "isSecret": true}]},
                     {"registryType": "mcpb", "identifier": "https://notes.example/notes.mcpb", "fileSha256": "ab".repeat(32)}],
        "remotes": [{"type": "streamable-http", "url": "https://{tenant}.notes.example/mcp",
                     "headers": [{"name": "Authorization", "value": "Bearer {token}", "isSecret": true}]}]
    }});
    let registry = serve(vec![notes]).await;

    let out = search(&registry, &["notes"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "io.github.ada/notes 0.3.0  Notes.\n\
         \x20 pypi             uvx ada-notes==0.3.0  (secret: NOTES_TOKEN)\n\
         \x20 mcpb             bundle https://notes.example/notes.mcpb (SHA-256 abababababababababababababababababababababababababababababababab)\n\
         \x20 streamable-http  https://{tenant}.notes.example/mcp  (fill in: token, tenant)\n\
         more: patchbay mcp search \"notes\" --cursor page-2\n"
    );

    let out = search(&registry, &["notes", "--cursor", "page-2", "--json"]);
    let page: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(page["next_cursor"], serde_json::Value::Null);
    assert_eq!(page["entries"][0]["config"]["transport"]["command"], "uvx");

    let out = search(&registry, &["weather"]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no server in the registry matches \"weather\"\n");

    let out = search(&registry, &["down"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("the MCP registry at {registry}/v0.1/servers answered 503: maintenance")),
        "{stderr}"
    );
}

/// Runs `patchbay` on `data` against `registry`, `stdin` typed in.
fn run(data: &Path, registry: &str, args: &[&str], stdin: &str) -> Output {
    feed(command(data).args(args).env("PATCHBAY_MCP_REGISTRY", registry), stdin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_starts_a_listed_server_with_its_secret_typed_and_installs_a_listed_bundle() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut everything = tokio::process::Command::new(peers::npm_bin("mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // `mcp add` starts the server once and reports; it must already listen.
    peers::wait_listening(port).await;
    let tmp = tempfile::tempdir().unwrap();
    poker_bundle(&tmp.path().join("poker.mcpb"), "1.0.0");
    let poker = std::fs::read(tmp.path().join("poker.mcpb")).unwrap();
    let listings = vec![
        json!({"server": {"name": "io.github.patchbay/everything", "version": "2026.8.31",
            "remotes": [{"type": "streamable-http", "url": "http://127.0.0.1:{port}/mcp",
                         "variables": {"port": {"description": "Where it listens"}},
                         "headers": [{"name": "X-Api-Key", "isSecret": true}, {"name": "X-Team", "value": "red"},
                                     {"name": "Authorization", "value": "Bearer {token}", "isSecret": true}]}]}}),
        json!({"server": {"name": "io.github.patchbay/two-ways", "version": "1.0.0",
            "packages": [{"registryType": "pypi", "identifier": "two-ways"}],
            "remotes": [{"type": "sse", "url": "https://two.example/sse"}]}}),
        json!({"server": {"name": "io.github.patchbay/poker", "version": "1.0.0",
            "packages": [{"registryType": "mcpb", "identifier": "{registry}/files/poker.mcpb",
                          "fileSha256": hex_sha256(&poker)}]}}),
    ];
    let registry = serve_with_files(listings, vec![("poker.mcpb".into(), poker)]).await;
    let data = tmp.path().join("data");

    let out = run(&data, &registry, &["mcp", "add", "io.github.patchbay/two-ways"], "");
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("io.github.patchbay/two-ways runs as pypi, sse: choose one with --via"),
        "{}",
        text(&out.stderr)
    );
    let out = run(&data, &registry, &["mcp", "add", "io.github.patchbay/nothing"], "");
    assert!(text(&out.stderr).contains("the MCP registry lists no server named \"io.github.patchbay/nothing\""));
    let args = ["mcp", "add", "io.github.patchbay/everything", "--name", "ev", "--set", "X-Api-Key=k"];
    let out = run(&data, &registry, &args, "");
    assert!(text(&out.stderr).contains("--set X-Api-Key: it is a secret"), "{}", text(&out.stderr));

    // The URL's port is left to the user: without it, the add says how to give it.
    let args = ["mcp", "add", "io.github.patchbay/everything", "--name", "ev", "--set", "X-Team=blue"];
    let out = run(&data, &registry, &args, "key-123\ntok-1\n");
    assert!(!out.status.success());
    let why = "port: required (Where it listens); give it with --set port=VALUE";
    assert!(text(&out.stderr).contains(why), "{}", text(&out.stderr));

    let port = format!("port={port}");
    let args = ["mcp", "add", "io.github.patchbay/everything", "--name", "ev", "--set", "X-Team=blue", "--set", &port];
    // The header's secret is read first, then the placeholder's (the token in "Bearer {token}").
    let out = run(&data, &registry, &args, "key-123\ntok-1\n");
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.starts_with("added io.github.patchbay/everything 2026.8.31 (streamable-http) as server ev\nev  ready  "),
        "{shown}"
    );
    let out = run(&data, &registry, &["config", "export", "--format", "claude"], "");
    let exported: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        exported["mcpServers"]["ev"]["headers"],
        json!({
            "Authorization": "${keyring:patchbay/ev/Authorization}",
            "X-Api-Key": "${keyring:patchbay/ev/X-Api-Key}",
            "X-Team": "blue"
        }),
        "the key and the token are in the keyring only"
    );
    let url = exported["mcpServers"]["ev"]["url"].as_str().unwrap_or_default().to_owned();
    assert!(url.starts_with("http://127.0.0.1:") && !url.contains('{'), "{url}");
    let out = run(&data, &registry, &["secret", "list"], "");
    assert!(text(&out.stdout).contains("mcp/ev/Authorization\tset"), "{}", text(&out.stdout));

    let out = run(&data, &registry, &["mcp", "add", "io.github.patchbay/poker"], "tok\n");
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert!(text(&out.stderr).contains("(SHA-256 checked)"), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "installed Poker 1.0.0 as server poker\npoker  ready  1 tool\n");
    everything.kill().await.unwrap();
}

fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}
