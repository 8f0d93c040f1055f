//! The settings page's services without a window: providers with keys in the
//! secret store, import preview and apply with real servers starting, tool
//! policies, the doctor, export with placeholders, assistants, general
//! settings, the knowledge base indexing in the background, and choosing
//! its embeddings (a provider's endpoint or a local model folder).

use crate::app_events::{Recorder, Seen};
use crate::mcp_common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use patchbay_core::app::views::{AssistantView, GeneralSettings, KbEmbeddingsChoice, KbMode};
use patchbay_core::app::{App, ErrorKind};
use patchbay_core::assistants::KnowledgeLimits;
use patchbay_core::config::{
    ApprovalMode, ExportFormat, McpServerConfig, ProviderKind, ProviderProfile, TransportConfig, ValueSource,
};
use patchbay_core::llm::{ReasoningEffort, Sampling};
use patchbay_core::mcp::{LogLevel, TransportKind};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{MemoryStore, SecretStore};
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use serde_json::json;
use tokio_util::sync::CancellationToken;

struct Fixture {
    app: App,
    secrets: Arc<MemoryStore>,
    events: Arc<Recorder>,
    dir: tempfile::TempDir,
}

fn open() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path().join("data"));
    let store = Store::open(&data).unwrap();
    let secrets = Arc::new(MemoryStore::default());
    let (sender, events) = Recorder::new();
    let app = App::open(data, store, secrets.clone(), sender).unwrap().with_env(|_| None);
    app.start().unwrap();
    Fixture { app, secrets, events, dir }
}

/// A second app on the fixture's data folder, started: Patchbay after a restart.
fn reopen(f: &Fixture) -> (App, Arc<Recorder>) {
    let data = DataDir::new(f.dir.path().join("data"));
    let (sender, seen) = Recorder::new();
    let app =
        App::open(data.clone(), Store::open(&data).unwrap(), f.secrets.clone(), sender).unwrap().with_env(|_| None);
    app.start().unwrap();
    (app, seen)
}

async fn wait_state(app: &App, name: &str, state: &str) {
    for _ in 0..600 {
        let servers = app.list_servers().unwrap();
        if servers.iter().any(|s| s.config.name == name && s.status.state == state) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} did not become {state}: {:?}", app.list_servers().unwrap());
}

fn profile(name: &str) -> ProviderProfile {
    ProviderProfile {
        name: name.into(),
        kind: ProviderKind::OpenAi,
        base_url: "https://api.deepseek.com/v1".into(),
        default_model: "deepseek-chat".into(),
        models: vec![],
        headers: Default::default(),
        api_key: None,
        native_tools: true,
        context_window: None,
        listed_windows: Default::default(),
        thinking: Default::default(),
        prompt_tool_format: Default::default(),
    }
}

#[tokio::test]
async fn provider_keys_go_to_the_secret_store_and_are_never_listed() {
    let f = open();
    f.app.save_provider(profile("deepseek"), Some("sk-secret-1")).unwrap();
    let listed = f.app.list_providers().unwrap();
    assert_eq!(listed.len(), 1);
    assert!(listed[0].api_key_set);
    let secret = listed[0].profile.api_key.clone().unwrap();
    assert_eq!(f.secrets.get(&secret).unwrap().as_deref(), Some("sk-secret-1"));
    assert!(!serde_json::to_string(&listed).unwrap().contains("sk-secret-1"));

    // Saving without a key keeps the stored one; with a key replaces it.
    f.app.save_provider(profile("deepseek"), None).unwrap();
    assert!(f.app.list_providers().unwrap()[0].api_key_set);
    f.app.save_provider(profile("deepseek"), Some("sk-secret-2")).unwrap();
    assert_eq!(f.secrets.get(&secret).unwrap().as_deref(), Some("sk-secret-2"));

    let mut bad = profile("broken");
    bad.base_url = "not a url".into();
    assert_eq!(f.app.save_provider(bad, None).unwrap_err().kind(), ErrorKind::InvalidInput);

    // Patchbay's form carries providers with key references; the preview names them.
    let exported = f.app.export_config(ExportFormat::Patchbay, false).unwrap();
    assert!(!exported.contains("sk-secret-2"), "{exported}");
    assert_eq!(f.app.import_preview(&exported).unwrap().providers, ["deepseek"]);

    f.app.delete_provider("deepseek").unwrap();
    assert!(f.app.list_providers().unwrap().is_empty());
    assert_eq!(f.secrets.get(&secret).unwrap(), None, "the key is deleted with its provider");
    // A provider that answers nothing is a provider error with the reason.
    let mut offline = profile("offline");
    offline.base_url = "http://127.0.0.1:9/v1".into();
    f.app.save_provider(offline, None).unwrap();
    let err = f.app.test_provider("offline", CancellationToken::new()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Provider, "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_vscode_import_takes_typed_inputs_and_replace_all_removes_the_rest() {
    let f = open();
    // A value the importer cannot tell is a secret, marked by the user under the name the
    // preview shows ("Old DB" is stored as "Old-DB").
    let first = json!({"mcpServers": {"Old DB": {"command": "/nonexistent/patchbay-old",
                                                 "env": {"DSN": "postgres://u:pw@h/db", "MODE": "fast"}}}})
    .to_string();
    let marked = BTreeMap::from([("Old-DB".to_owned(), BTreeSet::from(["DSN".to_owned()]))]);
    f.app.import_apply(&first, &["Old-DB".into()], false, BTreeMap::new(), marked).await.unwrap();
    assert_eq!(f.secrets.get("mcp/Old-DB/DSN").unwrap().as_deref(), Some("postgres://u:pw@h/db"));
    let stored = serde_json::to_string(&f.app.list_servers().unwrap()).unwrap();
    assert!(!stored.contains("u:pw@h") && stored.contains("fast"), "only the marked field moved: {stored}");
    // VS Code's shape, with a comment and a trailing comma, and two input prompts.
    let text = r#"{
      // typed in by the user, never written in the file
      "inputs": [
        {"type": "promptString", "id": "gh-token", "description": "GitHub token", "password": true},
        {"type": "promptString", "id": "lint-key", "description": "Lint key", "password": true},
      ],
      "servers": {
        "github": {"command": "/nonexistent/patchbay-github", "env": {"GITHUB_TOKEN": "${input:gh-token}"}},
        "lint": {"command": "/nonexistent/patchbay-lint", "env": {"LINT_KEY": "${input:lint-key}"}},
      },
    }"#;
    let preview = f.app.import_preview(text).unwrap();
    assert_eq!(preview.format, "vscode");
    assert_eq!(preview.removed_on_replace, ["Old-DB"], "replace all would delete the server the text does not name");
    let ids: Vec<(&str, Option<&str>, &[String], bool)> =
        preview.inputs.iter().map(|i| (i.id.as_str(), i.description.as_deref(), i.servers.as_slice(), i.set)).collect();
    assert_eq!(
        ids,
        [
            ("gh-token", Some("GitHub token"), &["github".to_owned()][..], false),
            ("lint-key", Some("Lint key"), &["lint".to_owned()][..], false)
        ]
    );

    // The user types the GitHub token, leaves the lint key empty, and replaces all.
    let answers =
        BTreeMap::from([("gh-token".to_owned(), "ghp-typed".to_owned()), ("lint-key".to_owned(), String::new())]);
    let report =
        f.app.import_apply(text, &["github".into(), "lint".into()], true, answers, BTreeMap::new()).await.unwrap();
    assert_eq!(report.added, ["github", "lint"]);
    assert_eq!(report.removed, ["Old-DB"]);
    assert_eq!(report.secrets_not_set, ["mcp/lint/LINT_KEY"]);
    let names: Vec<String> = f.app.list_servers().unwrap().into_iter().map(|s| s.config.name).collect();
    assert_eq!(names, ["github", "lint"]);
    assert_eq!(f.secrets.get("mcp/github/GITHUB_TOKEN").unwrap().as_deref(), Some("ghp-typed"));
    assert_eq!(f.secrets.get("mcp/lint/LINT_KEY").unwrap(), None);
    let stored = serde_json::to_string(&f.app.list_servers().unwrap()).unwrap();
    assert!(!stored.contains("ghp-typed"), "the typed value stays out of the config: {stored}");
    // A second preview knows the token is set now.
    let again = f.app.import_preview(text).unwrap();
    assert!(again.inputs.iter().any(|i| i.id == "gh-token" && i.set), "{:?}", again.inputs);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_config_starts_its_servers_and_tools_follow_their_policy() {
    let f = open();
    let text = json!({"mcpServers": {
        "everything": {"command": peers::npm_bin("mcp-server-everything"), "args": ["stdio"],
                       "env": {"API_TOKEN": "tok-123"}},
        "missing": {"command": "/nonexistent/patchbay-no-such-server"},
    }})
    .to_string();
    let preview = f.app.import_preview(&text).unwrap();
    assert_eq!(preview.format, "claude_desktop");
    let statuses: Vec<(&str, &str)> = preview.entries.iter().map(|e| (e.name.as_str(), e.status)).collect();
    assert_eq!(statuses, [("everything", "new"), ("missing", "new")]);

    let accept = ["everything".into(), "missing".into()];
    let report = f.app.import_apply(&text, &accept, false, BTreeMap::new(), BTreeMap::new()).await.unwrap();
    assert_eq!(report.added, ["everything", "missing"]);
    wait_state(&f.app, "everything", "ready").await;
    wait_state(&f.app, "missing", "failed").await;
    let ready = |seen: &Seen| seen.statuses.iter().any(|s| s.server == "everything" && s.state == "ready");
    f.events.until("the window was not told the server is ready", ready).await;
    // Its stderr reaches the window live, and the tail is kept.
    let live = |seen: &Seen| seen.logs.iter().any(|l| l.server == "everything" && l.line.contains("Starting"));
    f.events.until("the server's stderr did not reach the window", live).await;
    assert!(f.app.server_logs("everything").unwrap().iter().any(|l| l.contains("Starting")));
    // The token went to the secret store; the config holds its name.
    let stored = f.app.list_servers().unwrap().into_iter().find(|s| s.config.name == "everything").unwrap();
    assert!(!serde_json::to_string(&stored.config).unwrap().contains("tok-123"));
    // Who it says it is, and how it is reached.
    let about = stored.about.expect("a ready server's identity");
    assert_eq!(about.name.as_deref(), Some("mcp-servers/everything"));
    assert_eq!(about.title.as_deref(), Some("Everything Reference Server"));
    assert_eq!(about.version.as_deref(), Some("2.0.0"));
    assert_eq!(about.transport, TransportKind::Stdio);
    assert!(about.pid.is_some_and(|pid| pid > 1), "{about:?}");
    assert!(about.command.as_deref().is_some_and(|c| c.ends_with("mcp-server-everything")), "{about:?}");
    assert!(!about.protocol_version.is_empty());
    for declared in ["tools", "tools.list_changed", "prompts", "resources", "resources.subscribe", "logging"] {
        assert!(about.capabilities.iter().any(|c| c == declared), "{declared} is missing from {about:?}");
    }
    let missing = f.app.list_servers().unwrap().into_iter().find(|s| s.config.name == "missing").unwrap();
    assert_eq!(missing.about, None, "a failed server has no identity");

    // A changed entry is previewed with a line diff.
    let changed = json!({"mcpServers": {"everything": {
        "command": peers::npm_bin("mcp-server-everything"), "args": ["stdio", "--extra"]}}})
    .to_string();
    let preview = f.app.import_preview(&changed).unwrap();
    assert_eq!(preview.entries[0].status, "changed");
    assert!(preview.entries[0].diff.iter().any(|d| d.op == "add" && d.text.contains("--extra")));
    assert!(preview.entries[0].diff.iter().any(|d| d.op == "same"));

    // The doctor says why "missing" failed.
    let doctor = f.app.server_doctor("missing").await.unwrap();
    let command = doctor.checks.iter().find(|c| c.name == "command").expect("a command check");
    assert!(!command.ok && command.detail.contains("patchbay-no-such-server"), "{doctor:?}");
    // Said once: neither the status nor a start check repeats the command's reason.
    let saying = doctor.checks.iter().filter(|c| c.detail.contains("not found on PATH")).count();
    assert_eq!(saying, 1, "{doctor:?}");
    let status = doctor.checks.iter().find(|c| c.name == "status").expect("a status check");
    assert_eq!(status.detail, "failed", "{doctor:?}");

    // Tools: enable switch, approval policy, a direct call.
    let tools = f.app.list_tools(Some("everything")).unwrap();
    assert!(tools.iter().any(|t| t.name == "echo" && t.enabled && t.schema_tokens > 0));
    // The names to show, where the server gives them.
    let title = |name: &str| tools.iter().find(|t| t.name == name).unwrap().title.clone();
    assert_eq!(title("echo").as_deref(), Some("Echo Tool"));
    let prompts = f.app.list_prompts().unwrap();
    let args = prompts.iter().find(|p| p.name == "args-prompt").expect("args-prompt");
    assert_eq!(args.title.as_deref(), Some("Arguments Prompt"));
    assert_eq!(args.arguments.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["city", "state"]);
    // What the server says each tool does, as it says it.
    let hints = |name: &str| tools.iter().find(|t| t.name == name).unwrap().hints.clone();
    assert_eq!(hints("echo"), ["read_only"]);
    assert_eq!(hints("gzip-file-as-resource"), ["additive", "idempotent", "open_world"]);
    assert_eq!(hints("toggle-simulated-logging"), ["additive"]);
    assert_eq!(hints("simulate-research-query"), ["additive", "task"]);
    f.app.set_tool_enabled("everything", "echo", false).unwrap();
    f.app.set_tool_approval("everything", "get-sum", ApprovalMode::Deny).unwrap();
    let tools = f.app.list_tools(Some("everything")).unwrap();
    assert!(tools.iter().any(|t| t.name == "echo" && !t.enabled));
    assert!(tools.iter().any(|t| t.name == "get-sum" && t.approval == ApprovalMode::Deny));
    let result = f
        .app
        .call_tool("everything", "echo", json!({"message": "direct"}), None, CancellationToken::new())
        .await
        .unwrap();
    assert!(!result.is_error);
    assert!(serde_json::to_string(&result.content).unwrap().contains("direct"));
    let err = f.app.call_tool("everything", "echo", json!([1]), None, CancellationToken::new()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    // A tested tool's progress reaches the page as it comes.
    let (tx, mut rx) = tokio::sync::mpsc::channel(16);
    let args = json!({"duration": 0.3, "steps": 3});
    f.app
        .call_tool("everything", "trigger-long-running-operation", args, Some(tx), CancellationToken::new())
        .await
        .unwrap();
    let mut steps = Vec::new();
    while let Ok(event) = rx.try_recv() {
        if let patchbay_core::mcp::CallEvent::Progress { progress, total, .. } = event {
            steps.push((progress, total));
        }
    }
    assert_eq!(steps, [(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))]);
    assert!(!f.app.list_prompts().unwrap().is_empty());

    // A watched resource reports its changes (server-everything sends them every 5 s once asked to).
    let resources = f.app.list_resources().unwrap();
    let watched = resources.iter().find(|r| r.server == "everything").expect("a resource");
    assert!(watched.watchable && !watched.watched, "{watched:?}");
    let uri = watched.uri.clone();
    f.app.watch_resource("everything", &uri, true, CancellationToken::new()).await.unwrap();
    let listed = f.app.list_resources().unwrap();
    assert!(listed.iter().any(|r| r.uri == uri && r.watched));
    f.app
        .call_tool("everything", "toggle-subscriber-updates", json!({}), None, CancellationToken::new())
        .await
        .unwrap();
    for _ in 0..200 {
        if f.events.seen().updated.iter().any(|u| u.server == "everything" && u.uri == uri) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        f.events.seen().updated.iter().any(|u| u.server == "everything" && u.uri == uri),
        "no change of {uri} was reported"
    );
    f.app.watch_resource("everything", &uri, false, CancellationToken::new()).await.unwrap();
    assert!(f.app.list_resources().unwrap().iter().all(|r| !r.watched));
    let refused = f.app.watch_resource("missing", "x://y", true, CancellationToken::new()).await.unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidInput, "{refused}");

    // Export: placeholders, never the value.
    let exported = f.app.export_config(ExportFormat::Claude, false).unwrap();
    assert!(exported.contains("mcpServers") && exported.contains("${keyring:"), "{exported}");
    assert!(!exported.contains("tok-123"));
    // Only when the user asks for them (the window warns first) are the values written.
    let with_values = f.app.export_config(ExportFormat::Claude, true).unwrap();
    assert!(with_values.contains("tok-123") && !with_values.contains("${keyring:"), "{with_values}");

    // The level of the messages it sends: shown for a ready server that logs, kept for the next start.
    let level = |app: &App, name: &str| {
        app.list_servers().unwrap().into_iter().find(|s| s.config.name == name).unwrap().log_level
    };
    assert_eq!(level(&f.app, "everything"), Some(LogLevel::Info));
    assert_eq!(level(&f.app, "missing"), None, "not ready");
    f.app.set_server_log_level("everything", LogLevel::Error).await.unwrap();
    assert_eq!(level(&f.app, "everything"), Some(LogLevel::Error));
    f.app.set_server_log_level("missing", LogLevel::Debug).await.unwrap();
    let unknown = f.app.set_server_log_level("nope", LogLevel::Debug).await.unwrap_err();
    assert_eq!(unknown.kind(), ErrorKind::NotFound, "{unknown}");
    f.app.watch_resource("everything", &uri, true, CancellationToken::new()).await.unwrap();
    let (again, seen) = reopen(&f);
    wait_state(&again, "everything", "ready").await;
    assert_eq!(level(&again, "everything"), Some(LogLevel::Error), "kept across a restart");
    let watched = again.list_resources().unwrap();
    assert!(watched.iter().any(|r| r.uri == uri && r.watched), "the watched resource is watched again after a restart");
    again
        .call_tool("everything", "toggle-subscriber-updates", json!({}), None, CancellationToken::new())
        .await
        .unwrap();
    for _ in 0..200 {
        if seen.seen().updated.iter().any(|u| u.uri == uri) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(seen.seen().updated.iter().any(|u| u.uri == uri), "the server was subscribed to again");
    again.shutdown().await;

    // Disable stops it; delete forgets it.
    f.app.set_server_enabled("everything", false).await.unwrap();
    wait_state(&f.app, "everything", "stopped").await;
    f.app.delete_server("missing").await.unwrap();
    let names: Vec<String> = f.app.list_servers().unwrap().into_iter().map(|s| s.config.name).collect();
    assert_eq!(names, ["everything"]);
    // A server added again under a deleted one's name does not inherit its level, even after a restart.
    let fresh =
        McpServerConfig::stdio("missing", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    f.app.save_server(fresh, &BTreeMap::new()).await.unwrap();
    let (again, _) = reopen(&f);
    wait_state(&again, "missing", "ready").await;
    assert_eq!(level(&again, "missing"), Some(LogLevel::Info));
    again.shutdown().await;
    f.app.shutdown().await;
}

#[tokio::test]
async fn a_saved_server_keeps_only_secret_names() {
    let f = open();
    let mut config = McpServerConfig::stdio("off", "/bin/true", &[]);
    config.enabled = false;
    let secrets = [("mcp/off/env/TOKEN".to_owned(), "v-42".to_owned())].into_iter().collect();
    f.app.save_server(config, &secrets).await.unwrap();
    assert_eq!(f.secrets.get("mcp/off/env/TOKEN").unwrap().as_deref(), Some("v-42"));
    let listed = f.app.list_servers().unwrap();
    assert_eq!(listed[0].status.state, "stopped");
    let err = f.app.save_server(McpServerConfig::stdio(" ", "x", &[]), &Default::default()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    // Only remote servers sign in with OAuth.
    let err = f.app.authorize_server("off", &NeverOpens, CancellationToken::new()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
}

/// A registry entry's secrets are named after its suggested name; saved under
/// another name, the server keeps them under its own, so its export imports again.
#[tokio::test]
async fn a_renamed_server_files_its_new_secrets_under_its_own_name() {
    use patchbay_core::config::{TransportConfig, ValueSource};
    let f = open();
    let mut config = McpServerConfig::stdio("my-weather", "/bin/true", &[]);
    config.enabled = false;
    if let TransportConfig::Stdio { env, .. } = &mut config.transport {
        env.insert("API_KEY".into(), ValueSource::Secret("mcp/weather/API_KEY".into()));
    }
    let secrets = [("mcp/weather/API_KEY".to_owned(), "k-1".to_owned())].into_iter().collect();
    f.app.save_server(config, &secrets).await.unwrap();
    let saved = f.app.list_servers().unwrap().remove(0).config;
    let TransportConfig::Stdio { env, .. } = &saved.transport else { panic!("{saved:?}") };
    assert_eq!(env["API_KEY"], ValueSource::Secret("mcp/my-weather/API_KEY".into()));
    assert_eq!(f.secrets.get("mcp/my-weather/API_KEY").unwrap().as_deref(), Some("k-1"));
    assert_eq!(f.secrets.get("mcp/weather/API_KEY").unwrap(), None);
    for format in [ExportFormat::Claude, ExportFormat::Patchbay] {
        let text = f.app.export_config(format, false).unwrap();
        assert_eq!(f.app.import_preview(&text).unwrap().warnings, Vec::<String>::new(), "{text}");
    }
}

#[tokio::test]
async fn a_server_preset_is_saved_once_the_secret_it_needs_is_typed() {
    let f = open();
    let presets = f.app.server_presets();
    let ids: Vec<&str> = presets.iter().map(|p| p.id).collect();
    assert!(ids.contains(&"filesystem") && ids.contains(&"fetch") && ids.contains(&"github"), "{ids:?}");
    let mut github = presets.into_iter().find(|p| p.id == "github").unwrap().config;
    github.enabled = false;

    let err = f.app.save_server(github.clone(), &Default::default()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert_eq!(err.to_string(), "github.headers.Authorization: type the secret's value; it is not set");
    assert!(f.app.list_servers().unwrap().is_empty(), "nothing was saved");

    // The editor names the secret and sends its value, as for any header.
    let name = "mcp/github/header/Authorization";
    if let patchbay_core::config::TransportConfig::StreamableHttp { headers, .. } = &mut github.transport {
        headers.insert("Authorization".into(), patchbay_core::config::ValueSource::Secret(name.into()));
    }
    let secrets = [(name.to_owned(), "Bearer ghp-test".to_owned())].into_iter().collect();
    f.app.save_server(github, &secrets).await.unwrap();
    assert_eq!(f.secrets.get(name).unwrap().as_deref(), Some("Bearer ghp-test"));
    assert_eq!(f.app.list_servers().unwrap()[0].config.name, "github");
}

/// An authorization page that must not be needed.
struct NeverOpens;

#[async_trait::async_trait]
impl patchbay_core::mcp::oauth::AuthorizationUi for NeverOpens {
    async fn open(&self, _server: &str, url: &str) -> Result<(), String> {
        panic!("the authorization page {url} was opened")
    }
}

/// An authorization server (with the MCP server's protected-resource
/// metadata) that refuses every client at its token endpoint; returns its
/// base URL and the `Authorization` headers its token endpoint received.
async fn refusing_authorization_server() -> (String, Arc<Mutex<Vec<String>>>) {
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::{get, post};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (prm, asm) = (
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [base.clone()]}),
        json!({"issuer": base.clone(), "authorization_endpoint": format!("{base}/authorize"),
               "token_endpoint": format!("{base}/token"), "response_types_supported": ["code"],
               "grant_types_supported": ["client_credentials"],
               "token_endpoint_auth_methods_supported": ["client_secret_basic"]}),
    );
    let record = seen.clone();
    let router = axum::Router::new()
        .route("/.well-known/oauth-protected-resource/mcp", get(move || async move { axum::Json(prm) }))
        .route("/.well-known/oauth-authorization-server", get(move || async move { axum::Json(asm) }))
        .route(
            "/token",
            post(move |headers: HeaderMap| async move {
                let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default();
                record.lock().unwrap().push(auth.to_owned());
                (
                    StatusCode::UNAUTHORIZED,
                    axum::Json(json!({"error": "invalid_client", "error_description": "unknown client"})),
                )
            }),
        );
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (base, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_credentials_are_checked_on_save_and_a_refused_client_fails_with_the_reason() {
    use base64::Engine;
    use patchbay_core::config::{ClientCredentials, ClientKey, TransportConfig, ValueSource};
    let f = open();
    let (base, seen) = refusing_authorization_server().await;
    let transport = TransportConfig::StreamableHttp { url: format!("{base}/mcp"), headers: BTreeMap::new() };
    let mut remote = McpServerConfig::with_transport("remote", transport);
    let credentials = |secret| ClientCredentials {
        client_id: "ci-bot".into(),
        key: ClientKey::Secret { secret },
        scopes: Vec::new(),
    };
    // Key material as plain text would land in SQLite: refused, nothing saved.
    remote.client_credentials = Some(credentials(ValueSource::Plain("cc-s3cret".into())));
    let err = f.app.save_server(remote.clone(), &Default::default()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("remote.client_credentials.key.secret must name a keyring entry"), "{err}");
    // A stdio server has no sign-in.
    let mut local = McpServerConfig::stdio("local", "/bin/true", &[]);
    local.client_credentials = remote.client_credentials.clone();
    let err = f.app.save_server(local, &Default::default()).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("local.client_credentials: client credentials are for remote servers"), "{err}");
    assert!(f.app.list_servers().unwrap().is_empty());

    // Saved properly, the grant runs at start with the secret from the keyring,
    // and the authorization server's refusal is the server's failure reason.
    remote.client_credentials = Some(credentials(ValueSource::Secret("mcp/remote/oauth_client_secret".into())));
    let secrets = [("mcp/remote/oauth_client_secret".to_owned(), "cc-s3cret".to_owned())].into_iter().collect();
    f.app.save_server(remote, &secrets).await.unwrap();
    wait_state(&f.app, "remote", "failed").await;
    let status = f.app.list_servers().unwrap().remove(0).status;
    let error = status.error.unwrap_or_default();
    assert!(error.contains("remote") && error.contains("invalid_client"), "{error}");
    assert!(!error.contains("cc-s3cret"), "{error}");
    // client_secret_basic: form-encoded id and secret, then Base64.
    let basic = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode("ci-bot:cc-s3cret"));
    assert!(seen.lock().unwrap().contains(&basic), "{:?}", seen.lock().unwrap());
    f.app.shutdown().await;
}

#[tokio::test]
async fn assistants_and_general_settings_round_trip() {
    let f = open();
    let assistants = f.app.list_assistants().unwrap();
    assert!(assistants.iter().any(|a| a.name == "Default"));
    let mut view = AssistantView {
        id: String::new(),
        name: "Researcher".into(),
        system_prompt: "Cite sources.".into(),
        provider: None,
        model: Some("deepseek-chat".into()),
        sampling: Sampling {
            temperature: Some(0.3),
            top_p: None,
            max_tokens: Some(2000),
            reasoning: Some(ReasoningEffort::High),
        },
        servers: Some(vec!["fetch".into()]),
        disabled_tools: vec![],
        kb_mode: KbMode::Always,
        knowledge: KnowledgeLimits { top_k: 3, min_relevance: 0.6, max_tokens: 800 },
    };
    let saved = f.app.save_assistant(&view).unwrap();
    assert_eq!(saved.knowledge, view.knowledge);
    assert_eq!(saved.id, "Researcher");
    assert_eq!((saved.kb_mode, saved.servers.clone()), (KbMode::Always, Some(vec!["fetch".to_owned()])));
    assert_eq!(saved.sampling.reasoning, Some(ReasoningEffort::High));
    let listed = f.app.list_assistants().unwrap().into_iter().find(|a| a.name == "Researcher").unwrap();
    assert_eq!(listed.sampling.reasoning, Some(ReasoningEffort::High), "the effort is stored with the assistant");
    view.id = saved.id.clone();
    view.name = "Scholar".into();
    f.app.save_assistant(&view).unwrap();
    let names: Vec<String> = f.app.list_assistants().unwrap().into_iter().map(|a| a.name).collect();
    assert!(names.contains(&"Scholar".to_owned()) && !names.contains(&"Researcher".to_owned()), "{names:?}");
    let no_passages = AssistantView { knowledge: KnowledgeLimits { top_k: 0, ..view.knowledge }, ..view.clone() };
    let refused = f.app.save_assistant(&no_passages).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidInput);
    assert!(refused.to_string().contains("knowledge passages: 0 is outside 1 to 50"), "{refused}");
    view.sampling.temperature = Some(9.0);
    assert_eq!(f.app.save_assistant(&view).unwrap_err().kind(), ErrorKind::InvalidInput);
    let c = f.app.create_conversation(Some("Scholar")).unwrap();
    assert_eq!(f.app.get_conversation(&c.id, None).unwrap().settings.assistant_id.as_deref(), Some("Scholar"));
    f.app.delete_assistant("Scholar").unwrap();

    let settings = f.app.get_settings().unwrap();
    assert_eq!((settings.theme.as_str(), settings.language.as_str()), ("system", "en"));
    assert_eq!(settings.data_dir, f.dir.path().join("data").display().to_string());
    assert!(!settings.keep_in_tray);
    assert_eq!(settings.quick_ask_shortcut, "Ctrl+Alt+Space");
    assert!(settings.check_updates, "updates are looked for unless switched off");
    let chosen = GeneralSettings {
        check_updates: false,
        theme: "dark".into(),
        language: "zh".into(),
        keep_in_tray: true,
        quick_ask_shortcut: "Super+Shift+K".into(),
        ..settings.clone()
    };
    f.app.save_settings(&chosen).unwrap();
    assert_eq!(f.app.get_settings().unwrap(), chosen);
    // No shortcut is a choice too, kept as such (not the default again).
    f.app.save_settings(&GeneralSettings { quick_ask_shortcut: " ".into(), ..chosen.clone() }).unwrap();
    assert_eq!(f.app.get_settings().unwrap().quick_ask_shortcut, "");
    f.app.save_settings(&chosen).unwrap();
    let bad = GeneralSettings { language: "fr".into(), ..settings.clone() };
    assert_eq!(f.app.save_settings(&bad).unwrap_err().kind(), ErrorKind::InvalidInput);
    // A client ID metadata document is an https URL with a path, kept trimmed; anything else is refused.
    let url = "https://example.com/patchbay/client.json";
    let with_document = GeneralSettings { client_metadata_url: format!(" {url} "), ..chosen.clone() };
    f.app.save_settings(&with_document).unwrap();
    assert_eq!(f.app.get_settings().unwrap().client_metadata_url, url);
    for wrong in
        ["http://example.com/client.json", "https://example.com/", "https://example.com/c.json#x", "client.json"]
    {
        let refused = GeneralSettings { client_metadata_url: wrong.into(), ..chosen.clone() };
        let error = f.app.save_settings(&refused).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{wrong}");
        assert!(error.to_string().contains("client ID metadata document"), "{error}");
        assert_eq!(f.app.get_settings().unwrap().client_metadata_url, url, "nothing saved from a refused form");
    }

    // A backup, and a restore staged for the next start; what cannot be restored is refused.
    let backup = f.dir.path().join("backup.db");
    assert!(f.app.backup(&backup, false).unwrap().bytes > 0);
    assert_eq!(f.app.backup(&backup, false).unwrap_err().kind(), ErrorKind::InvalidInput, "never overwritten");
    let notes = f.dir.path().join("notes.txt");
    std::fs::write(&notes, "no database here, only words to fill the header of a file").unwrap();
    let data = patchbay_core::paths::DataDir::new(f.dir.path().join("data"));
    let refused = patchbay_core::app::restore_backup(&data, &notes).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::InvalidInput);
    assert!(refused.to_string().contains("not a usable Patchbay database"), "{refused}");
    assert!(!f.app.get_settings().unwrap().restore_pending);
    patchbay_core::app::restore_backup(&data, &backup).unwrap();
    assert!(f.app.get_settings().unwrap().restore_pending);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_up_loads_the_search_index_before_the_first_query() {
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path().join("data"));
    let store = Store::open(&data).unwrap();
    let events = patchbay_core::app::AppEvents::unwatched();
    let app = App::open(data, store, Arc::new(MemoryStore::default()), events).unwrap().with_env(|_| None);
    assert!(!app.kb_search_ready(), "nothing is loaded before start");
    app.start().unwrap();
    // The shipped samples are indexed, then the index is loaded: no search is made.
    for _ in 0..600 {
        if app.kb_search_ready() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(app.kb_search_ready(), "the search index was not loaded after start-up");
    assert!(app.kb_status().unwrap().iter().any(|f| f.documents > 0), "the samples were indexed first");
    app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_is_indexed_in_the_background_and_searchable() {
    let f = open();
    let folder = f.dir.path().join("notes");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("tides.md"), "# Tides\n\nThe moon's gravity raises two tidal bulges.\n").unwrap();
    std::fs::write(folder.join("潮汐.md"), "# 潮汐\n\n月球引力形成潮汐，大多数海岸每天有两次涨潮。\n").unwrap();
    // From a plain thread, as the desktop's synchronous commands call it.
    let (app, path) = (f.app.clone(), folder.to_str().unwrap().to_owned());
    std::thread::spawn(move || app.kb_add_folder(&path)).join().unwrap().unwrap();
    let folder_name = folder.display().to_string();
    for _ in 0..300 {
        let finished =
            f.events.seen().progress.iter().any(|p| p.folder == folder_name && p.done == p.total && p.total > 0);
        if finished {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let status = f.app.kb_status().unwrap();
    let ours = status.iter().find(|s| s.path == folder_name).expect("the folder is listed");
    assert_eq!((ours.documents, ours.state), (2, "idle"), "{ours:?}");
    assert!(ours.chunks >= 2);
    let documents = f.app.kb_documents(&folder_name).unwrap();
    assert_eq!(documents.len(), 2);
    assert!(documents.iter().all(|d| d.chunks >= 1));
    // Each hit says where the query's words are (UTF-16 units), to mark them.
    let marked = |hit: &patchbay_core::app::views::KbHit| -> Vec<String> {
        let units: Vec<u16> = hit.text.encode_utf16().collect();
        hit.marks.iter().map(|[s, e]| String::from_utf16(&units[*s..*e]).unwrap().to_lowercase()).collect()
    };
    let hits = f.app.kb_search("tidal bulges", 5).await.unwrap();
    assert_eq!(hits[0].document, "tides.md");
    let words = marked(&hits[0]);
    assert!(!words.is_empty() && words.iter().all(|w| w.starts_with("tidal") || w.starts_with("bulge")), "{words:?}");
    let hits = f.app.kb_search("涨潮", 5).await.unwrap();
    assert_eq!(hits[0].document, "潮汐.md");
    assert!(marked(&hits[0]).iter().all(|w| w == "涨潮") && !hits[0].marks.is_empty(), "{:?}", marked(&hits[0]));
    assert_eq!(f.app.kb_search("  ", 5).await.unwrap_err().kind(), ErrorKind::InvalidInput);
    assert_eq!(f.app.kb_reindex(Some("/nowhere")).unwrap_err().kind(), ErrorKind::NotFound);
    f.app.kb_remove_folder(&folder_name).unwrap();
    assert!(!f.app.kb_status().unwrap().iter().any(|s| s.path == folder_name));
}

/// A scripted OpenAI-compatible `/v1/embeddings` on 127.0.0.1: each text gets a
/// vector of letter counts. Records (authorization header, model, inputs) per request.
type Requests = Arc<Mutex<Vec<(String, String, Vec<String>)>>>;

async fn letter_count_endpoint() -> (String, Requests) {
    use axum::extract::State;
    use axum::http::HeaderMap;
    async fn embed(
        State(seen): State<Requests>,
        headers: HeaderMap,
        axum::Json(body): axum::Json<serde_json::Value>,
    ) -> axum::Json<serde_json::Value> {
        let auth = headers.get("authorization").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
        let inputs: Vec<String> = serde_json::from_value(body["input"].clone()).unwrap();
        let data: Vec<_> = inputs
            .iter()
            .enumerate()
            .map(|(i, text)| {
                let mut v = vec![0.0f32; 26];
                for b in text.to_ascii_lowercase().bytes().filter(u8::is_ascii_lowercase) {
                    v[usize::from(b - b'a')] += 1.0;
                }
                v[0] += 0.5; // never all zero (Chinese text)
                json!({"object": "embedding", "index": i, "embedding": v})
            })
            .collect();
        seen.lock().unwrap().push((auth, body["model"].as_str().unwrap_or_default().to_owned(), inputs));
        axum::Json(
            json!({"object": "list", "model": body["model"], "data": data, "usage": {"prompt_tokens": 1, "total_tokens": 1}}),
        )
    }
    let seen = Requests::default();
    let router = axum::Router::new().route("/v1/embeddings", axum::routing::post(embed)).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    (url, seen)
}

/// Waits until no folder is indexing (after `started` says a run began).
async fn wait_indexed(app: &App, started: impl Fn() -> bool) {
    for _ in 0..600 {
        if started() && app.kb_status().unwrap().iter().all(|f| f.state != "indexing") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("indexing did not finish: {:?}", app.kb_status().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embeddings_come_from_a_provider_endpoint_or_a_local_model_folder() {
    let f = open();
    let off = f.app.kb_embeddings().unwrap();
    assert_eq!((off.kind, off.english_only), ("off", false));
    let (url, seen) = letter_count_endpoint().await;
    f.app.save_provider(ProviderProfile { base_url: url.clone(), ..profile("ollama") }, Some("sk-embed")).unwrap();
    f.app
        .save_provider(ProviderProfile { kind: ProviderKind::Anthropic, ..profile("claude") }, Some("sk-ant"))
        .unwrap();

    // Refused choices say why and change nothing.
    let provider = |p: &str, m: &str| KbEmbeddingsChoice::Provider { provider: p.into(), model: m.into() };
    let err = f.app.kb_set_embeddings(provider("nobody", "bge-m3")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound, "{err}");
    let err = f.app.kb_set_embeddings(provider("claude", "bge-m3")).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("OpenAI"), "{err}");
    assert_eq!(f.app.kb_set_embeddings(provider("ollama", "  ")).unwrap_err().kind(), ErrorKind::InvalidInput);
    let empty = f.dir.path().join("not-a-model");
    std::fs::create_dir_all(&empty).unwrap();
    let err =
        f.app.kb_set_embeddings(KbEmbeddingsChoice::Local { model_dir: empty.display().to_string() }).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidInput);
    assert!(err.to_string().contains("config.json"), "{err}");
    assert_eq!(f.app.kb_embeddings().unwrap(), off);

    // A provider's endpoint: saved, in use at once, the documents embedded with the provider's key.
    let view = f.app.kb_set_embeddings(provider("ollama", "bge-m3")).unwrap();
    assert_eq!(
        (view.kind, view.provider.as_deref(), view.base_url.as_deref(), view.model.as_deref(), view.english_only),
        ("endpoint", Some("ollama"), Some(url.as_str()), Some("bge-m3"), false)
    );
    assert_eq!(f.app.kb_embeddings().unwrap(), view);
    wait_indexed(&f.app, || !seen.lock().unwrap().is_empty()).await;
    let hits = f.app.kb_search("zebra quokka", 5).await.unwrap();
    assert!(!hits.is_empty(), "hybrid search finds passages by vector even without a keyword match");
    let requests = seen.lock().unwrap().clone();
    assert!(requests.iter().all(|(auth, model, _)| auth == "Bearer sk-embed" && model == "bge-m3"), "{requests:?}");
    assert!(requests.iter().any(|(_, _, inputs)| inputs == &["zebra quokka".to_owned()]), "the query was embedded");
    assert!(requests.iter().any(|(_, _, inputs)| inputs.len() > 1 || inputs[0] != "zebra quokka"), "documents were");

    // A local model folder: all-MiniLM is English-only, and the view says so.
    let minilm = peers::minilm_dir();
    let view = f.app.kb_set_embeddings(KbEmbeddingsChoice::Local { model_dir: minilm.display().to_string() }).unwrap();
    assert_eq!((view.kind, view.english_only), ("local", true));
    assert_eq!(view.model_dir, Some(std::fs::canonicalize(&minilm).unwrap().display().to_string()));
    assert_eq!(f.app.kb_embeddings().unwrap(), view);

    assert_eq!(f.app.kb_set_embeddings(KbEmbeddingsChoice::Off).unwrap(), off);
    assert_eq!(f.app.kb_embeddings().unwrap(), off);
}

/// A streamable HTTP server (official Python SDK) with icons: its own, served
/// from its origin; a tool's inline one; and tools whose icons must not be
/// fetched (another origin, a redirect, a page that is not an image).
const ICON_SERVER: &str = r#"
import asyncio, base64, sys
from mcp.server.mcpserver import MCPServer
from mcp_types import Icon
from starlette.responses import RedirectResponse, Response
import uvicorn

other, port = int(sys.argv[1]), int(sys.argv[2])
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
own = f"http://127.0.0.1:{port}"
mcp = MCPServer("iconic", icons=[Icon(src=f"{own}/icon.png", mime_type="image/png", sizes=["32x32"])])

@mcp.custom_route("/icon.png", methods=["GET"])
async def icon(request):
    await asyncio.sleep(1)
    return Response(base64.b64decode(PNG), media_type="image/png")

@mcp.custom_route("/moved.png", methods=["GET"])
async def moved(request):
    return RedirectResponse(f"{own}/icon.png")

@mcp.custom_route("/page.png", methods=["GET"])
async def page(request):
    return Response("<script>alert(1)</script>", media_type="text/html")

@mcp.tool(icons=[Icon(src="data:image/png;base64," + PNG, theme="dark"), Icon(src="data:image/gif;base64,R0lGODlhAQABAAAAACw=", theme="light")])
def lit() -> str:
    """Has an icon per theme."""
    return "lit"

@mcp.tool(icons=[Icon(src=f"http://127.0.0.1:{other}/track.png")])
def tracked() -> str:
    """Its icon is elsewhere."""
    return "tracked"

@mcp.tool(icons=[Icon(src=f"{own}/moved.png"), Icon(src=f"{own}/page.png", theme="dark")])
def unshown() -> str:
    """Its icons redirect or are not pictures."""
    return "unshown"

@mcp.prompt(icons=[Icon(src="data:image/png;base64," + PNG)])
def hello() -> str:
    """Says hello."""
    return "Say hello."

@mcp.resource("note://iconic", icons=[Icon(src=f"{own}/icon.png")])
def note() -> str:
    """A note."""
    return "a note"

uvicorn.run(mcp.streamable_http_app(stateless_http=True), host="127.0.0.1", port=port, log_level="warning")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_and_tools_show_their_icons_and_none_from_where_they_may_not_come() {
    // Another origin: any request to it would be a way to follow the user.
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let elsewhere_port = elsewhere.local_addr().unwrap().port().to_string();
    let python = mcp_common::PyServer::new(ICON_SERVER);
    let (_server, port) = python.serve(&[&elsewhere_port]).await;
    let f = open();
    let config = McpServerConfig::with_transport(
        "iconic",
        patchbay_core::config::TransportConfig::StreamableHttp {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: BTreeMap::new(),
        },
    );
    f.app.save_server(config, &BTreeMap::new()).await.unwrap();
    wait_state(&f.app, "iconic", "ready").await;

    let tools = f.app.list_tools(Some("iconic")).unwrap();
    let icons = |name: &str| tools.iter().find(|t| t.name == name).unwrap().icons.clone();
    let lit = icons("lit");
    let themes: Vec<_> = lit.iter().map(|i| (i.theme.as_deref(), i.src.split(';').next().unwrap())).collect();
    assert_eq!(themes, [(Some("light"), "data:image/gif"), (Some("dark"), "data:image/png")]);
    assert_eq!(icons("tracked"), []);

    // The server's own icon is fetched from its origin (which takes a second to send it), and
    // arrives with a status event: one recorded after a look that still found no icon (the
    // events counted before that look came before the icon was stored).
    let (mut before, mut own) = (0, Vec::new());
    for _ in 0..200 {
        let recorded = f.events.seen().statuses.len();
        own = f.app.list_servers().unwrap().into_iter().find(|s| s.config.name == "iconic").unwrap().icons;
        let _ = f.app.list_tools(Some("iconic")).unwrap();
        if !own.is_empty() {
            break;
        }
        before = recorded;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let png = own.first().expect("the server's icon was fetched");
    assert_eq!(png.theme, None);
    let data = png.src.strip_prefix("data:image/png;base64,").expect("a PNG data URL");
    assert!(data.starts_with("iVBORw0KGgo"), "{data}");
    let told = |seen: &Seen| seen.statuses[before..].iter().any(|s| s.server == "iconic");
    f.events.until("the window is told to read the list again", told).await;
    // Prompts and resources show theirs too (the resource's, at the URL already fetched, at once).
    let prompts = f.app.list_prompts().unwrap();
    let hello = prompts.iter().find(|p| p.name == "hello").unwrap();
    assert!(hello.icons[0].src.starts_with("data:image/png;base64,iVBORw0KGgo"), "{:?}", hello.icons);
    let resources = f.app.list_resources().unwrap();
    let note = resources.iter().find(|r| r.uri == "note://iconic").unwrap();
    assert_eq!(note.icons, own);
    // A redirect and a page that is not a picture are not shown, now or later.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(f.app.list_tools(Some("iconic")).unwrap().iter().find(|t| t.name == "unshown").unwrap().icons, []);
    assert!(
        matches!(elsewhere.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "an icon of another origin was asked for"
    );
}

/// Testing a provider keeps the context windows its model list states (OpenRouter's
/// `context_length`, Groq's `context_window`, vLLM's `max_model_len`), which then size its
/// models' turns; the user's own setting still wins, and the next test replaces them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn testing_a_provider_keeps_the_context_windows_its_model_list_states() {
    use patchbay_test_support::scripted::{Format, Reply, ScriptedServer};
    let first = json!({"object": "list", "data": [
        {"id": "m1", "object": "model", "created": 0, "owned_by": "x", "context_length": 131_072},
        {"id": "m2", "object": "model", "created": 0, "owned_by": "x", "context_window": 32_768},
        {"id": "m3", "object": "model", "created": 0, "owned_by": "x", "max_model_len": 8_192},
        {"id": "m4", "object": "model", "created": 0, "owned_by": "x"}
    ]});
    let second = json!({"object": "list", "data": [{"id": "m1", "object": "model", "context_length": 65_536}]});
    let server = ScriptedServer::start(Format::OpenAi, vec![Reply::status(200, first), Reply::status(200, second)])
        .await
        .unwrap();
    let f = open();
    let mut router = ProviderProfile::openai_compatible("router", format!("{}/v1", server.url()), "m1");
    router.models = vec!["m2".into(), "m3".into(), "m4".into(), "gpt-4o".into()];
    f.app.save_provider(router, None).unwrap();

    let models = f.app.test_provider("router", CancellationToken::new()).await.unwrap();
    assert_eq!(models, ["m1", "m2", "m3", "m4"]);
    let view = f.app.list_providers().unwrap().remove(0);
    let expected = [("m1", 131_072), ("m2", 32_768), ("m3", 8_192), ("gpt-4o", 128_000)];
    assert_eq!(view.windows, expected.iter().map(|(m, w)| (m.to_string(), *w)).collect::<BTreeMap<_, _>>());

    // The next test's list replaces what the last one stated.
    f.app.test_provider("router", CancellationToken::new()).await.unwrap();
    let view = f.app.list_providers().unwrap().remove(0);
    assert_eq!(view.profile.listed_windows, BTreeMap::from([("m1".to_owned(), 65_536)]));
    assert_eq!(view.windows.get("m2"), None);

    // The user's setting wins over the list.
    let mut own = view.profile;
    own.context_window = Some(16_000);
    f.app.save_provider(own, None).unwrap();
    assert_eq!(f.app.list_providers().unwrap()[0].windows.get("m1"), Some(&16_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_knowledge_base_page_downloads_a_model_with_progress_and_puts_it_to_use() {
    use patchbay_core::rag::models::ModelState;
    use patchbay_test_support::hub::{Fault, TestHub};
    let hub = TestHub::serve("sentence-transformers/all-MiniLM-L6-v2", &peers::minilm_dir()).await;
    let f = open();
    let listed = f.app.kb_models().unwrap();
    assert_eq!(listed.models.len(), 3);
    assert!(listed.models.iter().all(|m| m.state == ModelState::Absent && !m.in_use && m.download.is_none()));
    // The window in Chinese suggests the multilingual model.
    let zh = GeneralSettings { language: "zh".into(), ..f.app.get_settings().unwrap() };
    f.app.save_settings(&zh).unwrap();
    let suggested: Vec<_> = f.app.kb_models().unwrap().models.into_iter().filter(|m| m.suggested).collect();
    assert_eq!((suggested.len(), suggested[0].multilingual), (1, true));

    assert_eq!(f.app.kb_set_model_hub(Some("not a url")).unwrap_err().kind(), ErrorKind::InvalidInput);
    assert_eq!(f.app.kb_set_model_hub(Some(&hub.url)).unwrap().hub, hub.url);
    assert_eq!(f.app.kb_get_model("gpt-embed").unwrap_err().kind(), ErrorKind::InvalidInput);

    // A download that stops says why on the page, and what arrived is kept.
    hub.set_fault(Fault::Truncate(3_000_000));
    f.app.kb_get_model("all-MiniLM-L6-v2").unwrap();
    f.events.until("the failed download", |s| s.model_progress.iter().any(|p| p.finished)).await;
    let minilm =
        |app: &App| app.kb_models().unwrap().models.into_iter().find(|m| m.name == "all-MiniLM-L6-v2").unwrap();
    let failed = minilm(&f.app);
    assert_eq!(failed.state, ModelState::Partial);
    assert!(failed.download.unwrap().error.unwrap().contains("the server ended the file early"));

    hub.set_fault(Fault::None);
    f.app.kb_get_model("all-MiniLM-L6-v2").unwrap();
    f.events.until("the download", |s| s.model_progress.iter().filter(|p| p.finished).count() == 2).await;
    let events = f.events.seen().model_progress.clone();
    let last = events.last().unwrap();
    assert!(last.error.is_none() && last.done_bytes == last.total_bytes, "{last:?}");
    assert!(events.len() < 400, "progress is reported a megabyte at a time, not a chunk: {}", events.len());
    let ready = minilm(&f.app);
    assert_eq!((ready.state, ready.download.is_none()), (ModelState::Ready, true));

    let embeddings = f.app.kb_set_embeddings(KbEmbeddingsChoice::Local { model_dir: ready.folder.clone() }).unwrap();
    assert_eq!(embeddings.model_dir.as_deref(), Some(ready.folder.as_str()));
    assert!(minilm(&f.app).in_use);
    f.app.shutdown().await;
}

/// A deleted server takes its secrets and sign-in with it; a link that adds a
/// server of that name later finds none of them, also when they were left by
/// an older Patchbay (the prompt it leaves empty is not filled from the keyring).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_never_picks_up_a_deleted_servers_secrets_or_sign_in() {
    use base64::Engine;
    let f = open();
    let mut gh = McpServerConfig::with_transport(
        "gh",
        TransportConfig::StreamableHttp {
            url: "https://api.example.com/mcp".into(),
            headers: [("Authorization".to_owned(), ValueSource::Secret("mcp/gh/Authorization".into()))].into(),
        },
    );
    gh.enabled = false;
    f.app.save_server(gh, &[("mcp/gh/Authorization".to_owned(), "Bearer real".to_owned())].into()).await.unwrap();
    f.secrets.set("mcp/gh/oauth", "{\"access_token\": \"real\"}").unwrap();
    f.app.delete_server("gh").await.unwrap();
    assert_eq!(f.secrets.get("mcp/gh/Authorization").unwrap(), None, "the key went with the server");
    assert_eq!(f.secrets.get("mcp/gh/oauth").unwrap(), None, "the sign-in went with the server");

    // Left behind by an older Patchbay, then a link for a server of that name, pointing elsewhere.
    f.secrets.set("mcp/gh/GITHUB_TOKEN", "left-over").unwrap();
    f.secrets.set("mcp/gh/oauth", "{\"access_token\": \"left-over\"}").unwrap();
    let server =
        serde_json::json!({"url": "https://evil.example/mcp", "headers": {"GITHUB_TOKEN": ""}, "enabled": false});
    let config = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(server.to_string());
    let link = format!("patchbay://mcp/install?name=gh&config={config}");
    let preview = f.app.import_preview(&link).unwrap();
    assert!(preview.warnings.is_empty(), "{:?}", preview.warnings);
    f.app.import_apply(&link, &["gh".to_owned()], false, Default::default(), Default::default()).await.unwrap();
    assert_eq!(f.secrets.get("mcp/gh/GITHUB_TOKEN").unwrap(), None, "an empty prompt is not filled from the keyring");
    assert_eq!(f.secrets.get("mcp/gh/oauth").unwrap(), None, "nor is the sign-in kept");
}
