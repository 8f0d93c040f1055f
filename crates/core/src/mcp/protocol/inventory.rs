//! What a server offers: tools, resources, resource templates and prompts.
//!
//! Fetched page by page (`cursor`) after the handshake and again when the server
//! sends a `list_changed` notification. Lists a server does not declare in its
//! capabilities stay empty, and so does a declared list whose method the server
//! answers with "method not found" (many servers declare `resources` without
//! implementing `resources/templates/list`): that is logged, not fatal. A page
//! limit and a timeout bound a server that never stops paginating.
//!
//! Tools are listed as a custom request and read from the server's own JSON
//! where the connection reads such answers raw (its [`Lane`], or the legacy
//! SSE transport; [`Listing`]): rmcp's `Tool` does not hold
//! `execution.taskSupport`, which says which tools must be called as tasks
//! ([`super::tasks`]).

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{
    ClientRequest, CustomRequest, Icon, PaginatedRequestParams, Prompt, Resource, ResourceTemplate, ServerResult, Tool,
};
use rmcp::service::{Peer, RoleClient};

use super::client::ListChanged;
use super::tasks;
use crate::mcp::error::McpError;
use crate::mcp::wire::TransportKind;
use crate::mcp::wire::lane::Lane;

/// Pages fetched per list before giving up.
const MAX_PAGES: usize = 1000;

/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i32 = -32601;

/// A list the server declared but does not implement is empty.
fn or_empty<T: Default>(server: &str, list: &str, fetched: Result<T, McpError>) -> Result<T, McpError> {
    match fetched {
        Err(McpError::Server { code: METHOD_NOT_FOUND, message, .. }) => {
            tracing::warn!(server, list, %message, "the server declares this list but does not implement it");
            Ok(T::default())
        }
        other => other,
    }
}

/// One server's inventory.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub tools: Vec<Tool>,
    /// The tools that must be called as tasks (`execution.taskSupport` is
    /// `"required"`), as far as the listing showed it (see the module docs).
    pub task_tools: BTreeSet<String>,
    pub resources: Vec<Resource>,
    pub resource_templates: Vec<ResourceTemplate>,
    pub prompts: Vec<Prompt>,
    /// What the server's `initialize` answer says about using it, cut to
    /// [`MAX_INSTRUCTIONS`] characters.
    pub instructions: Option<String>,
    /// The icons the server gives itself in its `initialize` answer.
    pub icons: Vec<Icon>,
}

/// The most of a server's instructions kept (they go into every turn's system prompt).
pub const MAX_INSTRUCTIONS: usize = 8_000;

macro_rules! paginate {
    ($server:expr, $peer:expr, $method:ident, $field:ident) => {{
        let mut items = Vec::new();
        let mut cursor = None;
        for _ in 0..MAX_PAGES {
            let page = $peer
                .$method(Some(PaginatedRequestParams::default().with_cursor(cursor)))
                .await
                .map_err(|e| McpError::from_service($server, e))?;
            items.extend(page.$field);
            cursor = page.next_cursor;
            if cursor.is_none() {
                return Ok(items);
            }
        }
        Err(McpError::Protocol { server: $server.to_owned(), reason: format!("more than {MAX_PAGES} pages") })
    }};
}

async fn tools(server: &str, peer: &Peer<RoleClient>) -> Result<Vec<Tool>, McpError> {
    paginate!(server, peer, list_tools, tools)
}

/// How a server's tools are listed.
#[derive(Clone)]
pub(crate) enum Listing {
    /// Through the connection's lane, read raw.
    Lane(Lane),
    /// Through rmcp as a custom request, whose answer the transport reads raw (legacy SSE).
    Custom,
    /// rmcp's own `tools/list`: which tools must run as tasks is not known.
    Typed,
}

impl Listing {
    /// How the tools of a connection over `kind`, with `lane`, are listed.
    pub(crate) fn of(lane: Option<Lane>, kind: TransportKind) -> Self {
        match (lane, kind) {
            (Some(lane), _) => Listing::Lane(lane),
            (None, TransportKind::Sse) => Listing::Custom,
            (None, _) => Listing::Typed,
        }
    }

    /// The answer to `request`, sent this way.
    async fn answer(
        &self,
        server: &str,
        peer: &Peer<RoleClient>,
        request: ClientRequest,
    ) -> Result<ServerResult, McpError> {
        match self {
            Listing::Lane(lane) => {
                let sent = lane.request(request).map_err(|e| McpError::from_service(server, e))?;
                sent.answer().await.map_err(|e| e.for_server(server))
            }
            Listing::Custom | Listing::Typed => {
                peer.send_request(request).await.map_err(|e| McpError::from_service(server, e))
            }
        }
    }
}

/// The tools, listed as a custom request and read from the server's JSON, and
/// the names of those that must be called as tasks.
async fn raw_tools(
    server: &str,
    peer: &Peer<RoleClient>,
    listing: &Listing,
) -> Result<(Vec<Tool>, BTreeSet<String>), McpError> {
    let unreadable = |reason: String| McpError::Protocol { server: server.to_owned(), reason };
    let (mut tools, mut task_tools) = (Vec::new(), BTreeSet::new());
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let params = cursor.take().map(|cursor| serde_json::json!({ "cursor": cursor }));
        let request = ClientRequest::CustomRequest(CustomRequest::new("tools/list", params));
        let page = match listing.answer(server, peer, request).await? {
            ServerResult::CustomResult(raw) => raw.0,
            // Read by rmcp before the lane saw it (a JSON answer over streamable HTTP).
            ServerResult::ListToolsResult(page) => serde_json::to_value(page).map_err(|e| unreadable(e.to_string()))?,
            other => return Err(unreadable(format!("unexpected answer to tools/list: {other:?}"))),
        };
        for listed in page.get("tools").and_then(serde_json::Value::as_array).into_iter().flatten() {
            let tool: Tool = serde_json::from_value(listed.clone()).map_err(|e| {
                let name = listed.get("name").map_or_else(|| "a tool".to_owned(), |name| format!("tool {name}"));
                unreadable(format!("{name} in tools/list cannot be read: {e}"))
            })?;
            if tasks::required(listed) {
                task_tools.insert(tool.name.to_string());
            }
            tools.push(tool);
        }
        match page.get("nextCursor").and_then(serde_json::Value::as_str) {
            Some(next) => cursor = Some(next.to_owned()),
            None => return Ok((tools, task_tools)),
        }
    }
    Err(McpError::Protocol { server: server.to_owned(), reason: format!("more than {MAX_PAGES} pages") })
}

async fn resources(server: &str, peer: &Peer<RoleClient>) -> Result<Vec<Resource>, McpError> {
    paginate!(server, peer, list_resources, resources)
}

async fn templates(server: &str, peer: &Peer<RoleClient>) -> Result<Vec<ResourceTemplate>, McpError> {
    paginate!(server, peer, list_resource_templates, resource_templates)
}

async fn prompts(server: &str, peer: &Peer<RoleClient>) -> Result<Vec<Prompt>, McpError> {
    paginate!(server, peer, list_prompts, prompts)
}

impl Inventory {
    /// Fetches everything the server declares, within `timeout`.
    pub(crate) async fn fetch(
        server: &str,
        peer: &Peer<RoleClient>,
        listing: &Listing,
        timeout: Duration,
    ) -> Result<Self, McpError> {
        let icons = peer.peer_info().and_then(|info| info.server_info.as_ref()?.icons.clone()).unwrap_or_default();
        let mut inventory = Self { icons, ..Self::default() };
        let given = peer.peer_info().and_then(|info| info.instructions.clone());
        inventory.instructions = given.and_then(|text| {
            let text = text.trim();
            match text.char_indices().nth(MAX_INSTRUCTIONS) {
                _ if text.is_empty() => None,
                Some((cut, _)) => Some(format!("{}\n[… cut at {MAX_INSTRUCTIONS} characters]", &text[..cut])),
                None => Some(text.to_owned()),
            }
        });
        for list in [ListChanged::Tools, ListChanged::Resources, ListChanged::Prompts] {
            inventory.refresh(server, peer, listing, list, timeout).await?;
        }
        Ok(inventory)
    }

    /// Fetches one list again, within `timeout`.
    pub(crate) async fn refresh(
        &mut self,
        server: &str,
        peer: &Peer<RoleClient>,
        listing: &Listing,
        list: ListChanged,
        timeout: Duration,
    ) -> Result<(), McpError> {
        let caps = peer.peer_info().map(|info| info.capabilities.clone()).unwrap_or_default();
        let work = async {
            match list {
                ListChanged::Tools if caps.tools.is_some() => {
                    (self.tools, self.task_tools) = match listing {
                        Listing::Typed => (or_empty(server, "tools", tools(server, peer).await)?, BTreeSet::new()),
                        raw => or_empty(server, "tools", raw_tools(server, peer, raw).await)?,
                    }
                }
                ListChanged::Resources if caps.resources.is_some() => {
                    self.resources = or_empty(server, "resources", resources(server, peer).await)?;
                    self.resource_templates = or_empty(server, "resource templates", templates(server, peer).await)?;
                }
                ListChanged::Prompts if caps.prompts.is_some() => {
                    self.prompts = or_empty(server, "prompts", prompts(server, peer).await)?
                }
                _ => {}
            }
            Ok::<_, McpError>(())
        };
        tokio::time::timeout(timeout, work)
            .await
            .map_err(|_| McpError::Timeout { server: server.to_owned(), after: timeout })?
    }
}
