//! Settings → Knowledge base → Share: the app serves its knowledge base over HTTP with the token
//! in the secret store; a second Patchbay imports the copied configuration and searches it; the
//! page's log shows who asked what and what was refused; a new token shuts the old one out; an
//! address other computers reach needs the user's word; a busy port is said on the page; sharing
//! resumes when the app starts again.

use crate::app_events::Recorder;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use patchbay_core::app::App;
use patchbay_core::app::views::{KbShareClient, KbShareSettings};
use patchbay_core::mcp::ServerStatus;
use patchbay_core::paths::DataDir;
use patchbay_core::rag::KnowledgeBase;
use patchbay_core::secrets::{MemoryStore, SecretStore};
use patchbay_core::store::Store;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn open(data: &DataDir, secrets: Arc<MemoryStore>) -> App {
    open_watched(data, secrets).0
}

/// The app, and what it reports.
fn open_watched(data: &DataDir, secrets: Arc<MemoryStore>) -> (App, Arc<Recorder>) {
    let (sender, events) = Recorder::new();
    (App::open(data.clone(), Store::open(data).unwrap(), secrets, sender).unwrap(), events)
}

/// A data dir whose knowledge base holds `birds.md`, indexed.
async fn indexed(root: &Path) -> DataDir {
    let data = DataDir::new(root.join("data"));
    let docs = root.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    std::fs::write(docs.join("birds.md"), "# Birds\n\nThe kakapo is a flightless nocturnal parrot.\n").unwrap();
    let kb = KnowledgeBase::open(&data, Store::open(&data).unwrap()).unwrap();
    kb.add_folder(&docs).unwrap();
    kb.index(Arc::new(|_| {}), &CancellationToken::new()).await.unwrap();
    data
}

fn settings(enabled: bool, address: &str, allow_remote: bool) -> KbShareSettings {
    KbShareSettings { enabled, address: address.into(), allow_remote }
}

/// The status of a POSTed `initialize` with `token`.
async fn initialize_status(url: &str, token: &str) -> u16 {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
    });
    reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("Accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

fn bearer(config: &str) -> String {
    let config: Value = serde_json::from_str(config).unwrap();
    let header = config["mcpServers"]["patchbay-knowledge"]["headers"]["Authorization"].as_str().unwrap().to_owned();
    header.strip_prefix("Bearer ").unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_knowledge_base_is_searched_by_a_second_patchbay_and_logged() {
    let temp = tempfile::tempdir().unwrap();
    let data = indexed(temp.path()).await;
    let secrets = Arc::new(MemoryStore::default());
    let (app, events) = open_watched(&data, secrets.clone());

    let off = app.kb_share().unwrap();
    assert_eq!(off.settings, settings(false, "127.0.0.1:8765", false));
    assert_eq!((off.url, off.error), (None, None));
    assert!(app.kb_share_config(KbShareClient::Cursor).unwrap_err().to_string().contains("turn sharing on"));

    // An address other computers reach needs the user's word; nothing is saved without it.
    let refused = app.kb_set_share(settings(true, "0.0.0.0:0", false)).await.unwrap_err();
    assert!(refused.to_string().contains("other computers"), "{refused}");
    let refused = app.kb_set_share(settings(true, "not an address", false)).await.unwrap_err();
    assert!(refused.to_string().contains("\"not an address\" is neither a port"), "{refused}");
    assert!(!app.kb_share().unwrap().settings.enabled);

    let on = app.kb_set_share(settings(true, "127.0.0.1:0", false)).await.unwrap();
    let url = on.url.clone().expect("serving");
    assert!(url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"), "{url}");
    assert_eq!(on.sse_url.unwrap(), url.replace("/mcp", "/sse"));
    let token = secrets.get("kb/serve-token").unwrap().expect("the token is kept in the secret store");

    // Each app's configuration carries the address and the token.
    let cursor: Value = serde_json::from_str(&app.kb_share_config(KbShareClient::Cursor).unwrap()).unwrap();
    assert_eq!(
        cursor["mcpServers"]["patchbay-knowledge"],
        json!({"url": url, "headers": {"Authorization": format!("Bearer {token}")}})
    );
    let claude: Value = serde_json::from_str(&app.kb_share_config(KbShareClient::ClaudeDesktop).unwrap()).unwrap();
    let entry = &claude["mcpServers"]["patchbay-knowledge"];
    assert_eq!(entry["command"], "npx");
    assert_eq!(entry["args"], json!(["-y", "mcp-remote", url, "--header", "Authorization:${PATCHBAY_KB_AUTH}"]));
    assert_eq!(entry["env"]["PATCHBAY_KB_AUTH"], format!("Bearer {token}"));

    // A second Patchbay imports its configuration (the token goes to its keyring) and searches.
    let other_temp = tempfile::tempdir().unwrap();
    let other_secrets = Arc::new(MemoryStore::default());
    let other = open(&DataDir::new(other_temp.path().join("data")), other_secrets.clone());
    let config = app.kb_share_config(KbShareClient::Patchbay).unwrap();
    let name = "patchbay-knowledge".to_owned();
    other.import_apply(&config, std::slice::from_ref(&name), false, BTreeMap::new(), BTreeMap::new()).await.unwrap();
    assert_eq!(other_secrets.get("mcp/patchbay-knowledge/Authorization").unwrap(), Some(format!("Bearer {token}")));
    for _ in 0..200 {
        if other.registry().status(&name).unwrap() == ServerStatus::Ready {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(other.registry().status(&name).unwrap(), ServerStatus::Ready);
    let result = other
        .call_tool(&name, "knowledge_search", json!({"query": "flightless parrot"}), None, CancellationToken::new())
        .await
        .unwrap();
    assert!(!result.is_error);
    let text = serde_json::to_string(&result.content).unwrap();
    assert!(text.contains("birds.md") && text.contains("kakapo"), "{text}");

    // The log names the client and what it asked, newest first; a wrong token is logged as refused.
    assert_eq!(initialize_status(&url, "wrong").await, 401);
    let log = app.kb_share().unwrap().log;
    assert_eq!(log[0].what, "refused");
    assert!(log[0].client.starts_with("127.0.0.1:") && log[0].detail.contains("bearer token"), "{log:?}");
    let search = &log[1];
    assert_eq!((search.what.as_str(), search.detail.as_str()), ("knowledge_search", "flightless parrot"));
    assert!(search.client.contains("patchbay"), "the client's name from its handshake: {search:?}");
    // Changes are told to the window (which reads the log again then, not on a timer), once
    // until it reads: a burst of refused requests is one event, and the next after a read another.
    events.until("a change told", |seen| seen.share_changes >= 1).await;
    // (Those told before the read above have all arrived by now: they come in-process.)
    tokio::time::sleep(Duration::from_millis(300)).await;
    let told = events.seen().share_changes;
    for _ in 0..5 {
        assert_eq!(initialize_status(&url, "wrong").await, 401);
    }
    events.until("the burst told", |seen| seen.share_changes == told + 1).await;
    assert_eq!(app.kb_share().unwrap().log.len(), log.len() + 5, "every request is logged");
    assert_eq!(events.seen().share_changes, told + 1, "five requests unread: one event");
    assert_eq!(initialize_status(&url, "wrong").await, 401);
    events.until("told again after a read", |seen| seen.share_changes == told + 2).await;

    // A new token shuts the old one out; the configuration copied now carries the new one.
    let renewed = app.kb_share_new_token().await.unwrap();
    let url = renewed.url.expect("serving again");
    let fresh = bearer(&app.kb_share_config(KbShareClient::Cursor).unwrap());
    assert_ne!(fresh, token);
    assert_eq!(initialize_status(&url, &token).await, 401);
    assert_eq!(initialize_status(&url, &fresh).await, 200);

    // A port another program holds: the settings are kept and the page says why nothing is served.
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let busy_at = busy.local_addr().unwrap().to_string();
    let failed = app.kb_set_share(settings(true, &busy_at, false)).await.unwrap();
    assert_eq!(failed.settings.address, busy_at);
    assert_eq!(failed.url, None);
    assert!(failed.error.as_deref().unwrap().contains(&format!("could not listen on {busy_at}")), "{failed:?}");
    drop(busy);

    // Sharing is a setting: an app opened later on this data dir shares again when it starts.
    app.shutdown().await;
    drop(app);
    let again = open(&data, secrets);
    again.start().unwrap();
    let mut resumed = None;
    for _ in 0..200 {
        resumed = again.kb_share().unwrap().url;
        if resumed.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(resumed.as_deref(), Some(format!("http://{busy_at}/mcp").as_str()));
    assert_eq!(initialize_status(&resumed.unwrap(), &fresh).await, 200);

    // Turned off, it serves no more.
    let stopped = again.kb_set_share(settings(false, &busy_at, false)).await.unwrap();
    assert_eq!(stopped.url, None);
    assert!(reqwest::Client::new().post(format!("http://{busy_at}/mcp")).send().await.is_err());
    again.shutdown().await;
    other.shutdown().await;
}

/// Whether something accepts connections at `addr`.
/// Listening on every address (other computers allowed), the copied configuration names this
/// computer's network address, one of its own (`hostname -I`), and answers there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listening_on_every_address_hands_out_this_computers_network_address() {
    let temp = tempfile::tempdir().unwrap();
    let app = open(&indexed(temp.path()).await, Arc::new(MemoryStore::default()));
    app.kb_set_share(settings(true, "0.0.0.0:0", true)).await.unwrap();
    let config: Value = serde_json::from_str(&app.kb_share_config(KbShareClient::Cursor).unwrap()).unwrap();
    let url = config["mcpServers"]["patchbay-knowledge"]["url"].as_str().unwrap().to_owned();
    let host = url.trim_start_matches("http://").rsplit_once(':').unwrap().0.to_owned();
    let output = std::process::Command::new("hostname").arg("-I").output().unwrap();
    let own: Vec<String> = String::from_utf8_lossy(&output.stdout).split_whitespace().map(str::to_owned).collect();
    if own.iter().any(|a| !a.contains(':')) {
        assert!(own.contains(&host), "{url} names none of this computer's addresses {own:?}");
    } else {
        assert_eq!(host, "127.0.0.1", "no network address: the loopback");
    }
    let token = bearer(&app.kb_share_config(KbShareClient::Cursor).unwrap());
    assert_eq!(initialize_status(&url, &token).await, 200, "{url} answers");
    let claude = app.kb_share_config(KbShareClient::ClaudeDesktop).unwrap();
    assert_eq!(claude.contains("--allow-http"), host != "127.0.0.1", "mcp-remote needs --allow-http off the loopback");
    app.kb_set_share(settings(false, "0.0.0.0:0", true)).await.unwrap();
}

fn listening(addr: &str) -> bool {
    std::net::TcpStream::connect_timeout(&addr.parse().unwrap(), Duration::from_secs(2)).is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharing_moves_and_stops_with_a_client_connected_and_never_runs_twice() {
    let temp = tempfile::tempdir().unwrap();
    let data = indexed(temp.path()).await;
    let secrets = Arc::new(MemoryStore::default());
    let app = open(&data, secrets.clone());
    let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().to_string();
    let (first, second) = (free(), free());

    // A legacy SSE client holds its stream open; turning sharing off still stops it at once, and
    // the port is free again for the next start.
    let on = app.kb_set_share(settings(true, &first, false)).await.unwrap();
    let token = secrets.get("kb/serve-token").unwrap().unwrap();
    let stream = reqwest::Client::new().get(on.sse_url.unwrap()).bearer_auth(&token).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    let started = std::time::Instant::now();
    let off = app.kb_set_share(settings(false, &first, false)).await.unwrap();
    // Under the 3 s a stopping server gives connections before it lets them go: the session ended.
    assert!(started.elapsed() < Duration::from_secs(2), "stopping waited on the open stream: {:?}", started.elapsed());
    assert_eq!(off.url, None);
    assert!(!listening(&first));
    let again = app.kb_set_share(settings(true, &first, false)).await.unwrap();
    assert_eq!((again.url.as_deref(), again.error), (Some(format!("http://{first}/mcp").as_str()), None));
    drop(stream);

    // Two changes at once: one server is left, where the settings say, serving the last token.
    let moved = app.clone();
    let (a, b) = tokio::join!(moved.kb_set_share(settings(true, &second, false)), app.kb_share_new_token());
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(app.kb_share().unwrap().url, Some(format!("http://{second}/mcp")), "{a:?} {b:?}");
    assert!(!listening(&first), "the first server was left running");
    let token = bearer(&app.kb_share_config(KbShareClient::Cursor).unwrap());
    assert_eq!(token, secrets.get("kb/serve-token").unwrap().unwrap());
    assert_eq!(initialize_status(&format!("http://{second}/mcp"), &token).await, 200);
    app.shutdown().await;
}
