//! `conformance-client URL`: the client side of `@modelcontextprotocol/conformance`
//! client mode (`conformance client --command conformance-client --scenario NAME`).
//!
//! The suite starts a scenario server, runs this binary with the server's URL
//! as the last argument and the scenario name in `MCP_CONFORMANCE_SCENARIO`,
//! and grades what the server saw. This client connects over streamable HTTP
//! with rmcp, lists the tools and calls each one with arguments built from its
//! schema; elicitation requests are accepted with the schema's defaults.
//! When the server answers 401, it authorizes with the core's OAuth flow
//! (`patchbay_core::mcp::oauth`: discovery, registration, PKCE, loopback
//! redirect) and connects again with the token; its "browser" follows the
//! authorization server's redirect to the loopback listener. A later request
//! that is refused (401, or 403 `insufficient_scope`) is authorized again for
//! the union of the scopes and retried by the core's `StepUpClient`, at most
//! `MAX_AUTHORIZATIONS` times.
//!
//! The suite's context (`MCP_CONFORMANCE_CONTEXT`) stands for what a user
//! configures. The client-credentials scenarios become a server entry with
//! `client_credentials` (secret or private key in the secret store), started
//! and called through the app's `McpRegistry`; the cross-app-access scenario
//! hands the identity provider's ID token to `oauth::enterprise_token`. See
//! `docs/CONFORMANCE.md`.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use patchbay_core::config::{ClientCredentials, ClientKey, McpServerConfig, TransportConfig, ValueSource};
use patchbay_core::mcp::oauth::{self, AuthorizationUi, EnterpriseGrant, Interactive, StepUpClient};
use patchbay_core::mcp::protocol::revision::{self, Start};
use patchbay_core::mcp::{CallOptions, McpRegistry, RegistryOptions, ServerStatus};
use patchbay_core::secrets::{MemoryStore, SecretStore, SecretValue};
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, ErrorData, Implementation, JsonObject, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{AuthorizationManager, StreamableHttpClientTransport};
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// The client ID metadata document conformance-client names itself by.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

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
        // What `initialize` offers; discovery offers the newest (`revision::PREFERRED`).
        ClientConfig::new(capabilities, Implementation::new("patchbay-conformance-client", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(revision::LEGACY)
    }
}

/// The arguments a model would choose for `tool`: those the suite's context names for it
/// (`toolCalls`), the schema another tool received for an echo tool that asks for one
/// (json-schema-2020-12-preservation: the core keeps a schema as rmcp read it; the
/// providers' requests are tested in the core's llm tests), else a
/// plausible value for every declared property.
fn arguments(tool: &Tool, tools: &[Tool]) -> JsonObject {
    let context = context();
    let named = context["toolCalls"].as_array().into_iter().flatten().find(|c| c["name"] == tool.name.as_ref());
    if let Some(Value::Object(arguments)) = named.map(|c| c["arguments"].clone()) {
        return arguments;
    }
    if tool.name.ends_with("_echo")
        && let Some(focal) = tools.iter().find(|t| t.name != tool.name)
    {
        return JsonObject::from_iter([("schema".to_owned(), Value::Object((*focal.input_schema).clone()))]);
    }
    arguments_for(&tool.input_schema)
}

/// A plausible value for every declared property.
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

/// A "browser" for the suite's authorization server: it approves at once, so
/// following its redirect (to our loopback listener) completes the flow.
struct FollowRedirect;

#[async_trait::async_trait]
impl AuthorizationUi for FollowRedirect {
    async fn open(&self, _server: &str, url: &str) -> Result<(), String> {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::limited(5)).build();
        let response = http.map_err(|e| e.to_string())?.get(url).send().await.map_err(|e| e.to_string())?;
        if !response.status().is_success() {
            return Err(format!("the authorization page answered {}", response.status()));
        }
        Ok(())
    }
}

/// The suite's context for the scenario (empty when it gives none).
fn context() -> Value {
    std::env::var("MCP_CONFORMANCE_CONTEXT").ok().and_then(|c| serde_json::from_str(&c).ok()).unwrap_or_default()
}

/// A string field of the context.
fn field(context: &Value, name: &str) -> Result<String> {
    context.get(name).and_then(Value::as_str).map(str::to_owned).with_context(|| format!("the context has no {name}"))
}

/// A client registered beforehand, from the suite's context (pre-registration scenarios).
fn preregistered() -> Option<(String, Option<SecretValue>)> {
    let context = context();
    let id = context.get("client_id")?.as_str()?.to_owned();
    Some((id, context.get("client_secret").and_then(Value::as_str).map(SecretValue::new)))
}

/// The client-credentials scenarios, the way the app runs them: a server entry
/// with `client_credentials` whose key material is in the secret store,
/// started by the registry (which gets the token), then every tool called.
async fn with_client_credentials(url: &str) -> Result<()> {
    const NAME: &str = "conformance";
    let context = context();
    let secrets = Arc::new(MemoryStore::new());
    let (mut key, material) = match field(&context, "private_key_pem") {
        Ok(pem) => {
            let algorithm = serde_json::from_value(context["signing_algorithm"].clone()).unwrap_or_default();
            (ClientKey::PrivateKey { pem: ValueSource::Secret(String::new()), algorithm }, pem)
        }
        Err(_) => (ClientKey::Secret { secret: ValueSource::Secret(String::new()) }, field(&context, "client_secret")?),
    };
    let secret_name = format!("mcp/{NAME}/{}", key.secret_key());
    *key.material_mut().1 = ValueSource::Secret(secret_name.clone());
    secrets.set(&secret_name, &material)?;
    let transport = TransportConfig::StreamableHttp { url: url.to_owned(), headers: BTreeMap::new() };
    let mut config = McpServerConfig::with_transport(NAME, transport);
    config.client_credentials =
        Some(ClientCredentials { client_id: field(&context, "client_id")?, key, scopes: Vec::new() });

    let registry = McpRegistry::new(secrets, RegistryOptions::default());
    registry.configure([config]);
    registry.start(NAME).await?;
    let status = registry.wait_server_settled(NAME, Duration::from_secs(20)).await?;
    if status != ServerStatus::Ready {
        bail!("the server did not become ready: {status}");
    }
    for tool in registry.tools(NAME)? {
        let arguments = arguments_for(&tool.input_schema);
        let result = registry
            .call_tool(NAME, &tool.name, Some(arguments), CallOptions::default(), CancellationToken::new())
            .await?;
        eprintln!("called {}: error={:?}", tool.name, result.is_error);
    }
    registry.shutdown().await;
    Ok(())
}

/// The cross-app-access scenario: the identity provider's ID token becomes an
/// access token for the server through `oauth::enterprise_token`.
async fn with_enterprise_token(url: &str) -> Result<()> {
    let context = context();
    let grant = EnterpriseGrant {
        idp_issuer: field(&context, "idp_issuer")?,
        idp_token_endpoint: field(&context, "idp_token_endpoint")?,
        idp_client_id: field(&context, "idp_client_id")?,
        id_token: field(&context, "idp_id_token")?,
        client_id: field(&context, "client_id")?,
        client_secret: field(&context, "client_secret")?,
    };
    let token = oauth::enterprise_token("conformance", url, &grant, &CancellationToken::new()).await?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
    run(|| StreamableHttpClientTransport::with_client(reqwest::Client::new(), config.clone())).await
}

/// Connects as the core does ([`revision`]): `server/discover` first, then, for an older
/// server, the handshake on a fresh transport from `open`; then lists and calls every tool.
async fn run<T, E, A>(open: impl Fn() -> T) -> Result<()>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let discover = rmcp::serve_client_with_lifecycle(Client, open(), Start::Discover.lifecycle());
    let client = match tokio::time::timeout(revision::DISCOVER_WAIT, discover).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) if !revision::falls_back(&e) => return Err(e.into()),
        _ => rmcp::serve_client_with_lifecycle(Client, open(), Start::Handshake.lifecycle()).await?,
    };
    let tools = client.list_all_tools().await?;
    for tool in &tools {
        let params = CallToolRequestParams::new(tool.name.clone()).with_arguments(arguments(tool, &tools));
        let result = client.call_tool(params).await?;
        eprintln!("called {}: error={:?}", tool.name, result.is_error);
    }
    client.cancel().await?;
    Ok(())
}

#[tokio::main]
async fn main() -> Result<()> {
    let url = std::env::args().next_back().context("usage: conformance-client URL")?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    eprintln!("conformance-client: scenario {scenario:?} against {url}");
    match scenario.as_str() {
        "auth/client-credentials-basic" | "auth/client-credentials-jwt" => return with_client_credentials(&url).await,
        // Named cross-app-access-complete-flow up to suite 0.1.
        "auth/enterprise-managed-authorization" | "auth/cross-app-access-complete-flow" => {
            return with_enterprise_token(&url).await;
        }
        _ => {}
    }
    let secrets: Arc<dyn SecretStore> = Arc::new(MemoryStore::new());
    let cancel = CancellationToken::new();
    let reauthorize = Interactive {
        server: "conformance".into(),
        url: url.clone(),
        secrets: secrets.clone(),
        ui: Arc::new(FollowRedirect),
        client: preregistered(),
        // The document the suite's authorization server expects (auth/basic-cimd), as a user
        // would set it in Settings; servers that do not support such documents ignore it.
        client_metadata_url: Some(CLIENT_METADATA_URL.to_owned()),
        cancel: cancel.clone(),
    };
    // Unauthorized at first: a 401 or 403 at any request (the first included) is answered
    // by the core's step-up client through the flow above, then the request is sent again.
    let manager = AuthorizationManager::new_allowing_private_addresses(url.as_str()).await?;
    let client = StepUpClient::new(manager, Some(Arc::new(reauthorize)));
    let config = StreamableHttpClientTransportConfig::with_uri(url);
    run(|| StreamableHttpClientTransport::with_client(client.clone(), config.clone())).await
}
