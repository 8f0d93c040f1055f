//! `conformance-client URL`: the client side of `@modelcontextprotocol/conformance`
//! client mode (`conformance client --command conformance-client --scenario NAME`).
//!
//! The suite starts a scenario server, runs this binary with the server's URL
//! as the last argument and the scenario name in `MCP_CONFORMANCE_SCENARIO`,
//! and grades what the server saw. This client connects over streamable HTTP
//! with rmcp, lists the tools and calls each one with arguments built from its
//! schema; elicitation requests are accepted with the schema's defaults.
//! OAuth scenarios (`auth/*`) and `sse-retry` are not handled yet: see
//! `docs/CONFORMANCE.md`.

use anyhow::{Context, Result};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, Implementation, JsonObject, ProtocolVersion,
};
use rmcp::service::RequestContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{Value, json};

/// Accepts every form elicitation with the defaults its schema declares.
struct Client;

impl ClientHandler for Client {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams { requested_schema, .. } = request else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or_default();
        let defaults: JsonObject = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props.iter().filter_map(|(name, prop)| prop.get("default").map(|d| (name.clone(), d.clone()))).collect()
            })
            .unwrap_or_default();
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(Value::Object(defaults)))
    }

    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.elicitation = Some(ElicitationCapability::new());
        // The newest released version that still has `initialize` (rmcp's LATEST is a draft).
        ClientConfig::new(capabilities, Implementation::new("patchbay-conformance-client", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// Arguments for a tool: a plausible value for every declared property.
fn arguments_for(schema: &JsonObject) -> JsonObject {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else { return JsonObject::new() };
    props
        .iter()
        .map(|(name, prop)| {
            let value =
                prop.get("default").cloned().unwrap_or_else(|| match prop.get("type").and_then(Value::as_str) {
                    Some("number" | "integer") => json!(1),
                    Some("boolean") => json!(true),
                    Some("array") => json!([]),
                    Some("object") => json!({}),
                    _ => json!("test"),
                });
            (name.clone(), value)
        })
        .collect()
}

#[tokio::main]
async fn main() -> Result<()> {
    let url = std::env::args().next_back().context("usage: conformance-client URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("conformance-client: scenario {scenario:?} against {url}");
    let client = Client.serve(StreamableHttpClientTransport::from_uri(url)).await?;
    for tool in client.list_all_tools().await? {
        let params = CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments_for(&tool.input_schema));
        let result = client.call_tool(params).await?;
        eprintln!("called {}: error={:?}", tool.name, result.is_error);
    }
    client.cancel().await?;
    Ok(())
}
