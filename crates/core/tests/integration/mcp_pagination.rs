//! A inventory that comes in pages: a Python low-level `Server` (the official
//! SDK) that answers `tools/list`, `resources/list` and `prompts/list` a few
//! entries at a time with `nextCursor`. The registry follows every cursor and
//! keeps the server's order. The server declares resources but has no
//! `resources/templates/list` (as many real servers do): that list is empty and
//! the server is still ready.

use crate::mcp_common as common;

use common::*;

const SERVER: &str = r#"
import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

def page(items, params, size):
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)

TOOLS = [types.Tool(name=f"tool-{i:02}", description=f"Tool {i}", input_schema={"type": "object"}) for i in range(25)]
RESOURCES = [types.Resource(uri=f"page://r/{i:02}", name=f"r{i:02}") for i in range(23)]
PROMPTS = [types.Prompt(name=f"prompt-{i:02}") for i in range(12)]

async def list_tools(ctx, params):
    items, nxt = page(TOOLS, params, 10)
    return types.ListToolsResult(tools=items, next_cursor=nxt)

async def list_resources(ctx, params):
    items, nxt = page(RESOURCES, params, 10)
    return types.ListResourcesResult(resources=items, next_cursor=nxt)

async def list_prompts(ctx, params):
    items, nxt = page(PROMPTS, params, 5)
    return types.ListPromptsResult(prompts=items, next_cursor=nxt)

server = Server("paged", on_list_tools=list_tools, on_list_resources=list_resources, on_list_prompts=list_prompts)

async def main():
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())

anyio.run(main)
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_registry_follows_every_cursor_of_a_paged_inventory() {
    let server = PyServer::new(SERVER);
    let registry = registry();
    registry.configure([server.stdio("paged", &[])]);
    start_ready(&registry, "paged").await;

    let tools: Vec<String> = registry.tools("paged").unwrap().into_iter().map(|t| t.name.to_string()).collect();
    let expected: Vec<String> = (0..25).map(|i| format!("tool-{i:02}")).collect();
    assert_eq!(tools, expected, "3 pages of 10, 10 and 5");
    let resources: Vec<String> = registry.resources("paged").unwrap().into_iter().map(|r| r.uri.clone()).collect();
    let expected: Vec<String> = (0..23).map(|i| format!("page://r/{i:02}")).collect();
    assert_eq!(resources, expected);
    assert!(registry.resource_templates("paged").unwrap().is_empty());
    let prompts: Vec<String> = registry.prompts("paged").unwrap().into_iter().map(|p| p.name).collect();
    let expected: Vec<String> = (0..12).map(|i| format!("prompt-{i:02}")).collect();
    assert_eq!(prompts, expected);
    registry.shutdown().await;
}
