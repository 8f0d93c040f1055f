//! The window's side of the security policy, without a window: a connection
//! the filtering proxy refused reaches the app's events and its server's view;
//! "allow this domain" adds the host to the server's domains (a network that
//! is off becomes a list, `any` is left alone), saves and restarts it, and the
//! host is reached; the global defaults are checked, saved and used.
//! The server is `hostile-mcp escape` in the real sandbox (bubblewrap).
#![cfg(target_os = "linux")]

use crate::app_events::Recorder;
use crate::mcp_common;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use patchbay_core::app::views::ServerView;
use patchbay_core::app::{App, ErrorKind};
use patchbay_core::config::{McpServerConfig, Network, PolicyDefaults, PolicyOutline, SecurityLevel};
use patchbay_core::mcp::LoginEnv;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::hostile::hostile_mcp;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// An app on a data folder in `dir` whose servers start with a home in `dir`.
fn open(dir: &Path) -> (App, Arc<Recorder>) {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let vars: BTreeMap<OsString, OsString> =
        [("PATH", std::env::var("PATH").unwrap_or_default()), ("HOME", home.display().to_string())]
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
    let data = DataDir::new(dir.join("data"));
    let (sender, events) = Recorder::new();
    let app = App::open(data.clone(), Store::open(&data).unwrap(), Arc::new(MemoryStore::default()), sender)
        .unwrap()
        .with_env(|_| None)
        .with_login_env(LoginEnv::from_parts(vars, None, Some(&home)));
    app.start().unwrap();
    (app, events)
}

fn view(app: &App, name: &str) -> ServerView {
    app.list_servers().unwrap().into_iter().find(|v| v.config.name == name).unwrap()
}

/// The level a local server's policy line names.
fn level(outline: &PolicyOutline) -> Option<SecurityLevel> {
    match outline {
        PolicyOutline::Local { level, .. } => Some(*level),
        _ => None,
    }
}

async fn wait_ready(app: &App, name: &str) {
    for _ in 0..300 {
        if view(app, name).status.state == "ready" {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} is not ready: {:?}", view(app, name).status);
}

/// What the server's attempt to reach the local HTTP server as 127.0.0.1 through its proxy got.
async fn through_proxy(app: &App, port: u16) -> String {
    let args = json!({ "http_port": port }).as_object().cloned();
    let result = app
        .registry()
        .call_tool("hostile", "escape", args, Default::default(), CancellationToken::new())
        .await
        .unwrap();
    let report: BTreeMap<String, String> = serde_json::from_str(&mcp_common::text(&result)).unwrap();
    report["proxy_denied"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_host_reaches_the_window_and_one_click_lets_the_server_reach_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (app, events) = open(tmp.path());
    let port = mcp_common::ok_http_server();
    let mut config = McpServerConfig::stdio("hostile", hostile_mcp().to_str().unwrap(), &["escape"]);
    config.policy.level = Some(SecurityLevel::Strict);
    config.policy.network = Some(Network::Domains(vec!["localhost".into()]));
    app.save_server(config, &BTreeMap::new()).await.unwrap();
    wait_ready(&app, "hostile").await;
    let line = view(&app, "hostile").policy.to_string();
    assert!(line.contains("network: localhost"), "{line}");

    let denied = through_proxy(&app, port).await;
    assert!(denied.starts_with("blocked:"), "{denied}");
    // The event goes out from the app's own task: wait for it a moment.
    for _ in 0..50 {
        if !events.seen().blocked.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let blocked = events.seen().blocked.clone();
    assert!(
        blocked.iter().any(|b| b.server == "hostile" && b.host == "127.0.0.1"),
        "the refusal did not reach the window: {blocked:?}"
    );
    assert_eq!(view(&app, "hostile").blocked, ["127.0.0.1"]);

    app.allow_domain("hostile", "127.0.0.1").await.unwrap();
    let allowed = view(&app, "hostile");
    assert_eq!(allowed.config.policy.network, Some(Network::Domains(vec!["localhost".into(), "127.0.0.1".into()])));
    assert!(allowed.policy.to_string().contains("network: localhost, 127.0.0.1"), "{}", allowed.policy);
    assert!(allowed.blocked.is_empty(), "{:?}", allowed.blocked);
    // Restarted with the host allowed, the server reaches it through its proxy.
    wait_ready(&app, "hostile").await;
    let reached = through_proxy(&app, port).await;
    assert!(reached.starts_with("allowed:"), "{reached}");
    app.shutdown().await;
}

#[tokio::test]
async fn allowing_a_domain_turns_off_into_a_list_and_leaves_any_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let (app, _) = open(tmp.path());
    let stopped = |name: &str, level: SecurityLevel| {
        let mut config = McpServerConfig::stdio(name, hostile_mcp().to_str().unwrap(), &["escape"]);
        config.enabled = false;
        config.policy.level = Some(level);
        config
    };
    // Strict with no network set: off, which becomes a list with the host.
    app.save_server(stopped("strict", SecurityLevel::Strict), &BTreeMap::new()).await.unwrap();
    app.allow_domain("strict", "API.GitHub.com.").await.unwrap();
    assert_eq!(view(&app, "strict").config.policy.network, Some(Network::Domains(vec!["api.github.com".into()])));
    // Normal reaches any host already: nothing changes.
    app.save_server(stopped("normal", SecurityLevel::Normal), &BTreeMap::new()).await.unwrap();
    app.allow_domain("normal", "api.github.com").await.unwrap();
    assert_eq!(view(&app, "normal").config.policy.network, None);
    // A host that is no name, and a server that does not exist, keep their kinds.
    let bad = app.allow_domain("strict", "not a host").await.unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::InvalidInput, "{bad}");
    assert!(bad.to_string().contains("policy.network.domains[1]"), "{bad}");
    assert_eq!(app.allow_domain("nobody", "example.org").await.unwrap_err().kind(), ErrorKind::NotFound);
    // The editor's preview names what saving would refuse.
    let mut config = stopped("draft", SecurityLevel::Strict);
    config.policy.read = vec!["relative/path".into()];
    let preview = app.policy_preview(&config);
    assert_eq!(preview.problems.iter().map(|p| p.field.as_str()).collect::<Vec<_>>(), ["policy.read[0]"]);
    // In parts, for the window to word in its language.
    let PolicyOutline::Local { level, read, network, .. } = &preview.summary else { panic!("{:?}", preview.summary) };
    assert_eq!(
        (*level, read.as_slice(), network),
        (SecurityLevel::Strict, &["relative/path".to_owned()][..], &Network::Off)
    );
    assert!(preview.summary.to_string().starts_with("strict: reads relative/path"), "{}", preview.summary);
    app.shutdown().await;
}

#[tokio::test]
async fn the_global_defaults_are_checked_saved_and_used() {
    let tmp = tempfile::tempdir().unwrap();
    let (app, _) = open(tmp.path());
    let settings = app.policy_settings();
    assert_eq!(settings.defaults, PolicyDefaults::default());
    assert_eq!(settings.offered, SecurityLevel::offered());
    let mut config = McpServerConfig::stdio("follows", hostile_mcp().to_str().unwrap(), &["escape"]);
    config.enabled = false;
    app.save_server(config, &BTreeMap::new()).await.unwrap();
    assert_eq!(level(&view(&app, "follows").policy), Some(SecurityLevel::Normal));

    let zero = PolicyDefaults { level: SecurityLevel::Strict, turn_tool_calls: 0 };
    assert_eq!(app.set_policy_defaults(zero).await.unwrap_err().kind(), ErrorKind::InvalidInput);
    let strict = PolicyDefaults { level: SecurityLevel::Strict, turn_tool_calls: 12 };
    app.set_policy_defaults(strict).await.unwrap();
    assert_eq!(app.registry().policy_defaults(), strict);
    assert_eq!(level(&view(&app, "follows").policy), Some(SecurityLevel::Strict));
    app.shutdown().await;
    drop(app);
    // Patchbay started again keeps them.
    let (again, _) = open(tmp.path());
    assert_eq!(again.policy_settings().defaults, strict);
    again.shutdown().await;
}
