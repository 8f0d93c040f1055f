//! The security policy enforced on a real server in the real sandbox
//! (bubblewrap): `hostile-mcp escape` tries to read a canary in `~/.ssh`,
//! Patchbay's database and a host secret from the environment, to write
//! outside its folders, to list home, to reach a local HTTP server directly
//! and through the filtering proxy under a refused and an allowed name, and
//! to connect to an abstract Unix socket of the host (as X11 and D-Bus
//! listen on), and has a forked child try the same. At strict and normal every escape fails
//! and every allowed action succeeds; at permissive everything succeeds.
//! The figures are printed (`cargo test -- --nocapture`) for docs/SECURITY.md.
#![cfg(target_os = "linux")]

use crate::mcp_common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::linux::net::SocketAddrExt;
use std::os::unix::net::{SocketAddr, UnixListener};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use patchbay_core::config::{McpServerConfig, Network, SecurityLevel};
use patchbay_core::mcp::{LoginEnv, McpEvent, McpRegistry, RegistryOptions};
use patchbay_core::secrets::MemoryStore;
use patchbay_test_support::hostile::hostile_mcp;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const SECRET: &str = "PATCHBAY_TEST_HOST_SECRET";

/// A fake home with secrets in it, Patchbay's data folder inside it, and a
/// local HTTP server; the registry's login environment points at it.
struct World {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    data: PathBuf,
    own: PathBuf,
    port: u16,
    /// An abstract Unix socket of the host, as X11 and D-Bus listen on.
    desktop: (String, UnixListener),
}

fn world() -> World {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_canary"), "CANARY-SSH-KEY").unwrap();
    std::fs::write(home.join(".netrc"), "machine example.org password p").unwrap();
    std::fs::write(home.join("visible.txt"), "hello").unwrap();
    let data = home.join(".local/share/patchbay");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("patchbay.db"), "SQLite format 3\0 the user's conversations").unwrap();
    let own = tmp.path().join("work");
    std::fs::create_dir_all(&own).unwrap();
    let port = mcp_common::ok_http_server();
    let name = format!("patchbay-test-desktop{}", tmp.path().display()).replace('/', "-");
    let desktop = UnixListener::bind_addr(&SocketAddr::from_abstract_name(name.as_bytes()).unwrap()).unwrap();
    World { _tmp: tmp, home, data, own, port, desktop: (name, desktop) }
}

impl World {
    fn registry(&self) -> McpRegistry {
        let vars: BTreeMap<OsString, OsString> = [
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("HOME", self.home.display().to_string()),
            (SECRET, "host-secret-value".to_owned()),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        let env = LoginEnv::from_parts(vars, None, Some(&self.home));
        let options = RegistryOptions { protected: vec![self.data.clone()], ..mcp_common::options() };
        McpRegistry::new(Arc::new(MemoryStore::new()), options).with_login_env(env)
    }

    fn server(&self, level: SecurityLevel) -> McpServerConfig {
        let mut config = McpServerConfig::stdio("hostile", hostile_mcp().to_str().unwrap(), &["escape"]);
        config.policy.level = Some(level);
        config.policy.write = vec![self.own.clone()];
        config.policy.network = Some(Network::Domains(vec!["localhost".into()]));
        config
    }

    fn targets(&self) -> Value {
        json!({
            "home": self.home,
            "db": self.data.join("patchbay.db"),
            "outside": self.home.join("escaped.txt"),
            "own": self.own.join("own.txt"),
            "http_port": self.port,
            "secret_env": SECRET,
            "abstract": self.desktop.0,
        })
    }
}

/// Runs the escape attempts at `level`; returns each attempt's outcome and the hosts the proxy refused.
async fn attempts(world: &World, level: SecurityLevel) -> (BTreeMap<String, String>, Vec<String>) {
    let registry = world.registry();
    let mut events = registry.subscribe();
    registry.configure([world.server(level)]);
    mcp_common::start_ready(&registry, "hostile").await;
    let args = world.targets().as_object().cloned();
    let result =
        registry.call_tool("hostile", "escape", args, Default::default(), CancellationToken::new()).await.unwrap();
    let report: BTreeMap<String, String> = serde_json::from_str(&mcp_common::text(&result)).unwrap();
    let mut blocked = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let McpEvent::ConnectionBlocked { host, .. } = event {
            blocked.push(host);
        }
    }
    registry.shutdown().await;
    (report, blocked)
}

/// What each attempt should get below permissive: the escapes fail, the allowed actions work.
fn allowed_below_permissive(level: SecurityLevel, attempt: &str) -> bool {
    let name = attempt.trim_start_matches("child_");
    match name {
        "write_own" | "proxy_allowed" => true,
        // Normal reads home (its secret places masked); strict sees an empty home.
        "list_home" => level == SecurityLevel::Normal,
        _ => false,
    }
}

fn check(level: SecurityLevel, report: &BTreeMap<String, String>, outside: &Path) {
    let mut tried = 0;
    let mut blocked = 0;
    for (attempt, outcome) in report {
        let allowed = outcome.starts_with("allowed:");
        let expected = level == SecurityLevel::Permissive || allowed_below_permissive(level, attempt);
        assert_eq!(allowed, expected, "{level}: {attempt} → {outcome}");
        // An escape is what no level below permissive allows.
        if !allowed_below_permissive(SecurityLevel::Normal, attempt) && !allowed_below_permissive(level, attempt) {
            tried += 1;
            blocked += usize::from(!allowed);
        }
    }
    assert_eq!(report.len(), 20, "ten attempts in the server and ten in its child: {report:?}");
    if level != SecurityLevel::Permissive {
        assert!(!outside.exists(), "{level}: a file appeared outside the server's folders");
    }
    println!(
        "figures: level={level} escape_attempts={tried} blocked={blocked} (allowed actions: write_own, proxy_allowed)"
    );
}

#[tokio::test]
async fn strict_blocks_every_escape_and_allows_its_folders_and_domains() {
    let world = world();
    let (report, blocked) = attempts(&world, SecurityLevel::Strict).await;
    println!("strict: {report:#?}");
    check(SecurityLevel::Strict, &report, &world.home.join("escaped.txt"));
    assert!(report["read_ssh"].starts_with("blocked"), "{report:?}");
    assert!(std::fs::read_to_string(world.own.join("own.txt")).unwrap().starts_with("written by"));
    assert_eq!(blocked, ["127.0.0.1", "127.0.0.1"], "the proxy reports each refusal (server and child)");
}

#[tokio::test]
async fn normal_reads_home_but_not_its_secrets_nor_the_database() {
    let world = world();
    let (report, _) = attempts(&world, SecurityLevel::Normal).await;
    println!("normal: {report:#?}");
    check(SecurityLevel::Normal, &report, &world.home.join("escaped.txt"));
}

#[tokio::test]
async fn normal_with_any_network_keeps_the_desktops_abstract_sockets_out_of_reach() {
    let world = world();
    let mut config = world.server(SecurityLevel::Normal);
    config.policy.network = Some(Network::Any);
    let registry = world.registry();
    registry.configure([config]);
    mcp_common::start_ready(&registry, "hostile").await;
    let args = world.targets().as_object().cloned();
    let result =
        registry.call_tool("hostile", "escape", args, Default::default(), CancellationToken::new()).await.unwrap();
    let report: BTreeMap<String, String> = serde_json::from_str(&mcp_common::text(&result)).unwrap();
    registry.shutdown().await;
    // The host's network namespace (the local page is reached directly), yet
    // not the host's abstract sockets, nor from a child.
    assert!(report["connect_direct"].starts_with("allowed"), "{report:?}");
    for attempt in ["abstract_socket", "child_abstract_socket"] {
        assert_eq!(report[attempt], "blocked: Operation not permitted (os error 1)", "{report:?}");
    }
    assert!(report["read_ssh"].starts_with("blocked"), "{report:?}");
}

#[tokio::test]
async fn permissive_runs_unconfined_as_the_user_chose() {
    let world = world();
    let (report, blocked) = attempts(&world, SecurityLevel::Permissive).await;
    println!("permissive: {report:#?}");
    check(SecurityLevel::Permissive, &report, &world.home.join("escaped.txt"));
    assert!(report["read_ssh"].contains("CANARY-SSH-KEY"));
    assert!(blocked.is_empty());
}
