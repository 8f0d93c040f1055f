//! The network proxy the user chooses carries Patchbay's requests: a model
//! provider's chat (the real async-openai client) and a remote MCP server
//! (streamable HTTP, the official Python SDK) both reach their servers
//! through a recording proxy; the settings page's choice is checked, saved,
//! used at once and again at the next start. The choice is process-wide, so
//! this file holds one test: no other test in this binary sees a proxy.

mod common;
#[path = "mcp_common/mod.rs"]
mod mcp;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::{run, sample_request};
use patchbay_core::app::{App, AppEvents, ErrorKind};
use patchbay_core::config::{McpServerConfig, ProviderProfile, TransportConfig};
use patchbay_core::llm;
use patchbay_core::net::{self, ProxyChoice};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::proxy::RecordingProxy;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};

const SERVER: &str = r#"
import sys
from mcp.server.mcpserver import MCPServer
import uvicorn

mcp = MCPServer("behind-a-proxy")

@mcp.tool()
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b

uvicorn.run(mcp.streamable_http_app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
"#;

fn open_app(data: &std::path::Path) -> App {
    let store = Store::open(&DataDir::new(data)).unwrap();
    App::open(DataDir::new(data), store, Arc::new(MemoryStore::new()), AppEvents::unwatched()).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn providers_and_remote_servers_go_through_the_chosen_proxy() {
    let proxy = RecordingProxy::start().await.unwrap();
    let refused = net::set_proxy(ProxyChoice::Custom { url: "socks5://127.0.0.1:1".into() }).unwrap_err();
    assert!(refused.to_string().contains("only http:// and https:// proxies are supported"));
    assert_eq!(net::proxy(), ProxyChoice::Environment, "a refused proxy changes nothing");
    net::set_proxy(ProxyChoice::Custom { url: proxy.url() }).unwrap();

    // A provider's chat.
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Hello ", "through the proxy"])])
        .await
        .unwrap();
    let profile = ProviderProfile::openai_compatible("scripted", format!("{}/v1", model.url()), "m");
    let provider = llm::from_profile(&profile, &MemoryStore::new()).unwrap();
    let (summary, error) = run(provider.as_ref(), sample_request("m")).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(summary.text, "Hello through the proxy");
    let chat = format!("POST {}/v1/chat/completions HTTP/1.1", model.url());
    assert!(proxy.seen().contains(&chat), "{chat} not in {:?}", proxy.seen());

    // A remote MCP server.
    let server = mcp::PyServer::new(SERVER);
    let (_peer, port) = server.serve(&[]).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let registry = mcp::registry();
    let transport = TransportConfig::StreamableHttp { url: url.clone(), headers: BTreeMap::new() };
    registry.configure([McpServerConfig::with_transport("remote", transport)]);
    mcp::start_ready(&registry, "remote").await;
    let names: Vec<String> = registry.tools("remote").unwrap().iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, ["add"]);
    assert!(
        proxy.seen().iter().any(|line| line.starts_with("POST ") && line.contains(&url)),
        "no request to {url} in {:?}",
        proxy.seen()
    );
    registry.shutdown().await;

    // Off: the next client connects directly (the proxy sees nothing new).
    net::set_proxy(ProxyChoice::Off).unwrap();
    let before = proxy.seen().len();
    let direct = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["direct"])]).await.unwrap();
    let profile = ProviderProfile::openai_compatible("direct", format!("{}/v1", direct.url()), "m");
    let (summary, _) =
        run(llm::from_profile(&profile, &MemoryStore::new()).unwrap().as_ref(), sample_request("m")).await;
    assert_eq!(summary.text, "direct");
    assert_eq!(proxy.seen().len(), before);

    settings_choose_the_proxy(proxy.url()).await;
}

/// The settings page's proxy: checked, used at once, and again at the next start.
async fn settings_choose_the_proxy(proxy_url: String) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let app = open_app(&data);
    app.start().unwrap();
    let settings = app.get_settings().unwrap();
    assert_eq!(settings.proxy, ProxyChoice::Environment, "unset, the environment's proxy is used");
    let bad = patchbay_core::app::views::GeneralSettings {
        proxy: ProxyChoice::Custom { url: "proxy.example.com:3128".into() },
        ..settings.clone()
    };
    let error = app.save_settings(&bad).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(error.to_string().starts_with("proxy \"proxy.example.com:3128\": "), "{error}");
    let custom = ProxyChoice::Custom { url: proxy_url };
    app.save_settings(&patchbay_core::app::views::GeneralSettings { proxy: custom.clone(), ..settings }).unwrap();
    assert_eq!(net::proxy(), custom, "used at once");
    assert_eq!(app.get_settings().unwrap().proxy, custom);
    app.shutdown().await;

    net::set_proxy(ProxyChoice::Off).unwrap();
    let again = open_app(&data);
    assert_eq!(net::proxy(), custom, "the saved proxy is used at the next start");
    again.shutdown().await;
}
