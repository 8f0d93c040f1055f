//! `notifications/{tools,resources,prompts}/list_changed` from a real server
//! refresh the registry's inventory (and say so with
//! `McpEvent::InventoryChanged`), over legacy SSE, stdio and streamable HTTP: a
//! Python `MCPServer` whose `grow` tool adds a tool, a resource and a prompt,
//! removes a tool, and announces each list change: unasked over SSE
//! (2025-11-25), on the `subscriptions/listen` stream over stdio and HTTP
//! (2026-07-28), where a resource subscribed to later has its updates on that
//! stream too. A tool added after the first listing, before a stream could say
//! so, is found when the first stream opens.

use crate::mcp_common as common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use patchbay_core::config::{McpServerConfig, TransportConfig};
use patchbay_core::mcp::{CallOptions, McpEvent, McpRegistry};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// `python server.py stdio [late]`, or `python server.py sse|http PORT`.
const SERVER: &str = r#"
import sys
from mcp.server.mcpserver import MCPServer, Context
import uvicorn

class Growing(MCPServer):
    listed = 0

    async def list_tools(self):
        tools = await super().list_tools()
        Growing.listed += 1
        if Growing.listed == 1 and "late" in sys.argv:
            def late() -> str:
                """Added just after the first listing, unannounced."""
                return "late"
            self.add_tool(late)
        return tools

mcp = Growing("growing")

@mcp.tool()
def shrinking() -> str:
    """Removed by grow."""
    return "still here"

@mcp.tool()
async def grow(ctx: Context) -> str:
    """Adds a tool, a resource and a prompt, removes `shrinking`, and announces it."""
    def added(word: str) -> str:
        """Added at run time."""
        return f"added says {word}"
    mcp.add_tool(added)
    mcp.remove_tool("shrinking")
    def grown_note() -> str:
        """Added at run time."""
        return "grown note"
    mcp.resource("note://grown")(grown_note)
    def welcome(name: str) -> str:
        """Added at run time."""
        return f"Welcome {name}."
    mcp.prompt()(welcome)
    if sys.argv[1] == "sse":  # unasked, as before 2026-07-28
        await ctx.session.send_tool_list_changed()
        await ctx.session.send_resource_list_changed()
        await ctx.session.send_prompt_list_changed()
    else:  # on the subscriptions/listen stream only (2026-07-28)
        await ctx.notify_tools_changed()
        await ctx.notify_resources_changed()
        await ctx.notify_prompts_changed()
    return "grown"

@mcp.tool()
async def touch(ctx: Context) -> str:
    """Says the grown note changed (to listeners of 2026-07-28)."""
    await ctx.notify_resource_updated("note://grown")
    return "touched"

if sys.argv[1] == "stdio":
    mcp.run("stdio")
else:
    app = mcp.sse_app() if sys.argv[1] == "sse" else mcp.streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning")
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changed_notifications_refresh_tools_resources_and_prompts() {
    let server = PyServer::new(SERVER);
    let (_http_server, port) = server.serve(&["http"]).await;
    let (_sse_server, sse_port) = server.serve(&["sse"]).await;

    let registry = registry();
    registry.configure([
        McpServerConfig::with_transport(
            "sse",
            TransportConfig::Sse { url: format!("http://127.0.0.1:{sse_port}/sse"), headers: BTreeMap::new() },
        ),
        server.stdio("stdio", &["stdio"]),
        McpServerConfig::with_transport(
            "http",
            TransportConfig::StreamableHttp { url: format!("http://127.0.0.1:{port}/mcp"), headers: BTreeMap::new() },
        ),
    ]);
    registry.start_all().await;
    for (server, revision) in [("sse", "2025-11-25"), ("stdio", "2026-07-28"), ("http", "2026-07-28")] {
        start_ready(&registry, server).await;
        assert_eq!(registry.about(server).unwrap().unwrap().protocol_version, revision);
        grows(&registry, server).await;
    }
    updates_come_on_the_listen_stream(&registry).await;
    registry.shutdown().await;
}

/// On a 2026-07-28 connection nothing is announced before the first listen stream opens: the
/// lists are read again then, and find the tool added after the first listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_before_the_first_listen_stream_is_found_when_it_opens() {
    let server = PyServer::new(SERVER);
    let registry = registry();
    registry.configure([server.stdio("late", &["stdio", "late"])]);
    let mut events = registry.subscribe();
    start_ready(&registry, "late").await;
    assert_eq!(registry.about("late").unwrap().unwrap().protocol_version, "2026-07-28");
    let found = async {
        while !tools(&registry, "late").contains(&"late".to_owned()) {
            match events.recv().await {
                Ok(_) => {}
                Err(e) => panic!("event stream ended: {e}"),
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), found)
        .await
        .unwrap_or_else(|_| panic!("the late tool was never listed: {:?}", tools(&registry, "late")));
    registry.shutdown().await;
}

async fn grows(registry: &McpRegistry, server: &str) {
    assert_eq!(tools(registry, server), ["grow", "shrinking", "touch"]);
    assert!(registry.resources(server).unwrap().is_empty());
    assert!(registry.prompts(server).unwrap().is_empty());

    let mut events = registry.subscribe();
    let grown =
        registry.call_tool(server, "grow", None, CallOptions::default(), CancellationToken::new()).await.unwrap();
    assert_eq!(text(&grown), "grown");

    // Each notification refreshes its list; wait until all three have landed.
    let refreshed = async {
        loop {
            match events.recv().await {
                Ok(McpEvent::InventoryChanged { server: s }) if s == server => {
                    let resources = registry.resources(server).unwrap();
                    let prompts = registry.prompts(server).unwrap();
                    if tools(registry, server) == ["added", "grow", "touch"]
                        && resources.len() == 1
                        && prompts.len() == 1
                    {
                        return (resources, prompts);
                    }
                }
                Ok(_) => {}
                Err(e) => panic!("{server}: event stream ended: {e}"),
            }
        }
    };
    let (resources, prompts) = tokio::time::timeout(Duration::from_secs(20), refreshed)
        .await
        .unwrap_or_else(|_| panic!("{server}: inventory not refreshed: tools {:?}", tools(registry, server)));
    assert_eq!(resources[0].uri, "note://grown");
    assert_eq!(prompts[0].name, "welcome");

    // The new entries work; the removed tool is gone for the server too.
    let added = registry
        .call_tool(
            server,
            "added",
            json!({"word": "hi"}).as_object().cloned(),
            CallOptions::default(),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(text(&added), "added says hi");
    let note = registry.read_resource(server, "note://grown", CancellationToken::new()).await.unwrap();
    assert!(serde_json::to_string(&note).unwrap().contains("grown note"));
    let prompt = registry
        .get_prompt(server, "welcome", json!({"name": "Ada"}).as_object().cloned(), CancellationToken::new())
        .await
        .unwrap();
    assert!(serde_json::to_string(&prompt).unwrap().contains("Welcome Ada."));
}

/// A resource subscribed to on a 2026-07-28 connection: the stream is opened again with it
/// (in the background), and its updates arrive as events.
async fn updates_come_on_the_listen_stream(registry: &McpRegistry) {
    let uri = "note://grown";
    registry.subscribe_resource("http", uri, CancellationToken::new()).await.unwrap();
    let mut events = registry.subscribe();
    let updated = async {
        loop {
            let touched =
                registry.call_tool("http", "touch", None, CallOptions::default(), CancellationToken::new()).await;
            assert_eq!(text(&touched.unwrap()), "touched");
            let heard = tokio::time::timeout(Duration::from_millis(500), async {
                loop {
                    if let Ok(McpEvent::ResourceUpdated { server, uri: u }) = events.recv().await
                        && server == "http"
                    {
                        return u;
                    }
                }
            });
            if let Ok(u) = heard.await {
                return u;
            }
        }
    };
    let heard = tokio::time::timeout(Duration::from_secs(20), updated).await.expect("no update on the listen stream");
    assert_eq!(heard, uri);
    assert_eq!(registry.subscriptions("http").unwrap(), [uri], "acknowledged, so kept");
}

fn tools(registry: &McpRegistry, server: &str) -> Vec<String> {
    let mut names: Vec<String> = registry.tools(server).unwrap().into_iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}
