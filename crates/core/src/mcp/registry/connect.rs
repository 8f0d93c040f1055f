//! Opening one connection: the transport for a server's configuration, the MCP
//! handshake within the start timeout, and the first inventory.
//!
//! A stdio start that fails leaves a [`LaunchReport`] (resolved command, exit
//! code, env keys added, stderr tail) instead of an opaque "connection closed".

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpClientTransportConfig};
use rmcp::transport::{IntoTransport, StreamableHttpClientTransport};
use tokio_util::sync::CancellationToken;

use crate::config::{McpServerConfig, Resolved, TransportConfig, ValueSource};
use crate::mcp::error::McpError;
use crate::mcp::launch::egress::{BlockListener, Egress};
use crate::mcp::launch::sandbox::{self, Confined, SandboxContext};
use crate::mcp::launch::stdio::{self, ChildGuard, Launch, StderrLog};
use crate::mcp::launch::{LaunchReport, LoginEnv, resolve_value, resolve_values};
use crate::mcp::oauth;
use crate::mcp::protocol::client::HostHandler;
use crate::mcp::protocol::inventory::{Inventory, Listing};
use crate::mcp::protocol::revision::{self, Probe, Probed, Start};
use crate::mcp::wire::TransportKind;
use crate::mcp::wire::frame::{BoundedLines, MAX_MESSAGE_BYTES};
use crate::mcp::wire::http::{BoundedHttp, Lossless};
use crate::mcp::wire::in_process::{self, InProcessServer};
use crate::mcp::wire::lane::{self, Lane};
use crate::mcp::wire::pipe;
use crate::mcp::wire::sse::{self, DetectedTransport, SseClientTransport, SseConfig};
use crate::secrets::{SecretStore, SecretValue};

/// Lines of stderr put into a launch report.
const REPORT_LINES: usize = 40;
/// How long a failed child gets to report its exit code.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// A live, initialised connection.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, HostHandler>,
    /// Cancelling it ends the service, which closes the transport.
    pub(crate) ct: CancellationToken,
    pub(crate) child: Option<ChildGuard>,
    pub(crate) kind: TransportKind,
    pub(crate) inventory: Inventory,
    /// The direct lane for the registry's requests (stdio, in-process and
    /// streamable HTTP servers; see [`Lane::usable`]).
    pub(crate) lane: Option<Lane>,
    /// The filtering proxy of a server limited to some domains, for as long as it runs.
    pub(crate) egress: Option<Egress>,
}

/// A start that did not reach ready.
pub(crate) struct StartFailure {
    pub(crate) error: McpError,
    pub(crate) report: Option<Box<LaunchReport>>,
}

impl From<McpError> for StartFailure {
    fn from(error: McpError) -> Self {
        Self { error, report: None }
    }
}

/// Everything a start needs besides the configuration.
pub(crate) struct Context<'a> {
    pub(crate) env: &'a LoginEnv,
    pub(crate) secrets: &'a Arc<dyn SecretStore>,
    pub(crate) stderr: &'a StderrLog,
    pub(crate) handler: HostHandler,
    pub(crate) ct: CancellationToken,
    /// The server attached for this name, when it runs in process.
    pub(crate) in_process: Option<Arc<dyn InProcessServer>>,
    /// The policy in force (a stdio server runs inside it).
    pub(crate) policy: Resolved,
    /// Folders no sandboxed server sees (Patchbay's data folder).
    pub(crate) protected: &'a [PathBuf],
    /// Told each host the server's filtering proxy refused.
    pub(crate) on_block: BlockListener,
    /// Whether a stdio server was found older than 2026-07-28, or to speak it ([`revision::probe`]).
    pub(crate) probed: &'a Probed,
}

/// Plans a stdio launch: the resolved program and its environment.
pub(crate) fn plan_stdio(
    config: &McpServerConfig,
    env: &LoginEnv,
    secrets: &dyn SecretStore,
    policy: &Resolved,
) -> Result<(Launch, LaunchReport), StartFailure> {
    let TransportConfig::Stdio { command, args, env: configured, cwd } = &config.transport else {
        return Err(McpError::NotStdio { server: config.name.clone() }.into());
    };
    let mut report = LaunchReport {
        server: config.name.clone(),
        command: command.clone(),
        env_added: configured.keys().cloned().collect(),
        policy: Some(policy.outline()),
        ..LaunchReport::default()
    };
    let program = match env.resolve(command, cwd.as_deref()) {
        Ok(p) => p,
        Err(error) => {
            if let McpError::CommandNotFound { searched, .. } = &error {
                report.searched = searched.clone();
            }
            report.error = Some(error.to_string());
            return Err(StartFailure { error, report: Some(Box::new(report)) });
        }
    };
    report.resolved = Some(program.clone());
    let added = resolve_values(&config.name, "env", configured, secrets)
        .map_err(|error| StartFailure { report: Some(Box::new(failed(report.clone(), &error))), error })?;
    let launch = Launch { program, args: args.clone(), env: env.with(&added), cwd: cwd.clone() };
    Ok((launch, report))
}

fn failed(mut report: LaunchReport, error: &McpError) -> LaunchReport {
    report.error = Some(error.to_string());
    report
}

/// Connects to `config`'s server and lists what it offers, within its start timeout.
pub(crate) async fn connect(
    config: &McpServerConfig,
    cx: Context<'_>,
) -> Result<(Connection, Option<LaunchReport>), StartFailure> {
    let startup = Duration::from_secs(config.timeouts.startup_secs);
    let call = Duration::from_secs(config.timeouts.call_secs);
    match &config.transport {
        TransportConfig::Stdio { .. } => {
            let began = std::time::Instant::now();
            match start_stdio(config, &cx, began, false).await {
                Ok((conn, report)) => Ok((conn, Some(report))),
                // A slow server of 2026-07-28 answered the probe only after the handshake was
                // sent (or not yet), and refused it: it starts again, by discovery, if the time
                // left is as long as that took (else the next start waits for it: `Probed`).
                Err(StdioFailure { refused_by_newer: true, failure })
                    if startup.saturating_sub(began.elapsed()) >= began.elapsed() =>
                {
                    tracing::info!(server = %config.name, error = %failure.error, "a 2026-07-28 server refused the handshake; starting again by discovery");
                    let (conn, report) = start_stdio(config, &cx, began, true).await.map_err(|f| f.failure)?;
                    Ok((conn, Some(report)))
                }
                Err(StdioFailure { failure, .. }) => Err(failure),
            }
        }
        TransportConfig::StreamableHttp { url, headers } => {
            let (service, inventory, lane) = connect_http(config, cx.handler, &cx.ct, url, headers, cx.secrets).await?;
            let kind = TransportKind::StreamableHttp;
            let conn = Connection { service, ct: cx.ct, child: None, kind, inventory, lane, egress: None };
            Ok((conn, None))
        }
        TransportConfig::Sse { url, headers } => {
            let (service, inventory) =
                connect_sse(config, cx.handler, &cx.ct, url, headers, cx.secrets.as_ref(), startup, call).await?;
            let kind = TransportKind::Sse;
            Ok((Connection { service, ct: cx.ct, child: None, kind, inventory, lane: None, egress: None }, None))
        }
        TransportConfig::Auto { url, headers } => {
            // The spec's backwards-compatibility rule: streamable HTTP first, SSE on
            // 400/404/405; a 401/403 is an auth problem and never falls back.
            let parsed = parse_url(&config.name, url)?;
            let header_map = header_map(&config.name, headers, cx.secrets.as_ref())?;
            let detected = sse::detect(&crate::net::client(), &parsed, &header_map, startup, &cx.ct)
                .await
                .map_err(|source| McpError::Sse { server: config.name.clone(), source })?;
            let (service, inventory, kind, lane) = match detected {
                DetectedTransport::StreamableHttp => {
                    let (service, inventory, lane) =
                        connect_http(config, cx.handler, &cx.ct, url, headers, cx.secrets).await?;
                    (service, inventory, TransportKind::StreamableHttp, lane)
                }
                DetectedTransport::Sse => {
                    let (service, inventory) =
                        connect_sse(config, cx.handler, &cx.ct, url, headers, cx.secrets.as_ref(), startup, call)
                            .await?;
                    (service, inventory, TransportKind::Sse, None)
                }
            };
            Ok((Connection { service, ct: cx.ct, child: None, kind, inventory, lane, egress: None }, None))
        }
        TransportConfig::InProcess => {
            let server = cx.in_process.ok_or_else(|| McpError::NotAttached { server: config.name.clone() })?;
            let in_order = Arc::new(cx.handler.clone());
            let (transport, lane) = in_process::open(server.as_ref(), in_order, cx.ct.child_token());
            let (service, inventory, lane) =
                handshake(config, Start::Handshake, cx.handler, &cx.ct, transport, Listing::Lane(lane), startup, call)
                    .await?;
            let kind = TransportKind::InProcess;
            Ok((Connection { service, ct: cx.ct, child: None, kind, inventory, lane, egress: None }, None))
        }
    }
}

/// A stdio start that did not reach ready.
struct StdioFailure {
    failure: StartFailure,
    /// The handshake was refused by a server of 2026-07-28 (its answer to the probe came too
    /// late, or its refusal named that revision).
    refused_by_newer: bool,
}

impl From<StartFailure> for StdioFailure {
    fn from(failure: StartFailure) -> Self {
        Self { failure, refused_by_newer: false }
    }
}

/// Launches a stdio server and starts it as its [`revision::probe`] finds, within what is left
/// of its start timeout since `began`. The probe waits [`revision::DISCOVER_WAIT`] (at most half
/// the start timeout, so that the handshake fits in the rest), or all that is left for a server
/// known to speak 2026-07-28 or when `patient` (it just refused the handshake as one); a
/// server known older is not probed.
async fn start_stdio(
    config: &McpServerConfig,
    cx: &Context<'_>,
    began: std::time::Instant,
    patient: bool,
) -> Result<(Connection, LaunchReport), StdioFailure> {
    let startup = Duration::from_secs(config.timeouts.startup_secs);
    let call = Duration::from_secs(config.timeouts.call_secs);
    // Cancelled when this start fails, which ends its transport; a later start gets another.
    let ct = cx.ct.child_token();
    let (launch, mut report) = plan_stdio(config, cx.env, cx.secrets.as_ref(), &cx.policy)?;
    let command = format!("{} {:?}", launch.program.display(), launch.args);
    let configured: Vec<String> = report.env_added.clone();
    let sandbox = SandboxContext { env: cx.env, protected: cx.protected, on_block: cx.on_block.clone() };
    let Confined { launch, egress } = sandbox::confine(&config.name, launch, &configured, &cx.policy, sandbox)
        .await
        .map_err(|error| StartFailure { report: Some(Box::new(failed(report.clone(), &error))), error })?;
    let (mut child, stdout, stdin) = stdio::spawn(&launch, cx.stderr)
        .map_err(|error| StartFailure { report: Some(Box::new(failed(report.clone(), &error))), error })?;
    // BoundedLines enforces the limit (and answers the call); the codec's would drop silently.
    let bounded = BoundedLines::new(stdout, MAX_MESSAGE_BYTES);
    let (transport, end) = pipe::open(bounded, stdin, MAX_MESSAGE_BYTES + 1, Arc::new(cx.handler.clone()));
    let lane = Lane::pipe(end);
    let heard = lane.clone();
    let known = cx.probed.known(&command);
    let probe = if known == Some(Probe::Older) && !patient {
        None
    } else {
        let wait = if patient || known == Some(Probe::Modern) {
            startup.saturating_sub(began.elapsed())
        } else {
            revision::DISCOVER_WAIT.min(startup / 2)
        };
        Some(revision::probe(&lane, &rmcp::ClientHandler::get_info(&cx.handler), wait).await)
    };
    let start = probe.as_ref().map_or(Start::Handshake, revision::Probe::start);
    let left = startup.saturating_sub(began.elapsed());
    let handler = cx.handler.clone();
    // A probe that took the whole start timeout ends the start: a handshake given no time could
    // still finish before a busy runtime fires its timer, and a start would then depend on load.
    let started = if left.is_zero() {
        // Closes the server's stdin, as a failed handshake would.
        drop(transport);
        ct.cancel();
        Err(McpError::StartTimeout { server: config.name.clone(), after: startup })
    } else {
        handshake(config, start, handler, &ct, transport, Listing::Lane(lane), left, call).await.map_err(|e| match e {
            McpError::StartTimeout { server, .. } => McpError::StartTimeout { server, after: startup },
            other => other,
        })
    };
    // Remembered even if the start failed (an older server's next start has the whole start
    // timeout for the handshake). A server silent where it was known or just heard to speak
    // 2026-07-28, or known older and failing, is asked afresh next time.
    let found = match (&started, probe.map(|probe| probe.settled(&heard))) {
        // Said by the refusal itself, whether or not the probe's answer came first (a probe
        // answered with an error is believed over it).
        (Err(McpError::NewerRevisionOnly { .. }), None | Some(Probe::Unanswered(_))) => Some(Probe::Modern),
        (_, found) => found,
    };
    let learned = match found.clone() {
        None if started.is_ok() => known,
        None => None,
        Some(Probe::Unanswered(_)) if started.is_err() && (patient || known == Some(Probe::Modern)) => None,
        Some(Probe::Unanswered(_)) => Some(Probe::Older),
        Some(found) => Some(found),
    };
    cx.probed.learn(&command, learned);
    match started {
        Ok((service, inventory, lane)) => {
            let kind = TransportKind::Stdio;
            Ok((Connection { service, ct, child: Some(child), kind, inventory, lane, egress }, report))
        }
        Err(error) => {
            let status = child.wait_exit(EXIT_WAIT).await;
            (report.exit_code, report.signal) = stdio::describe(status);
            child.shutdown(Duration::ZERO).await;
            // The stderr reader may still hold the last lines: give it a moment.
            tokio::time::sleep(Duration::from_millis(50)).await;
            report.stderr_tail = cx.stderr.tail(REPORT_LINES);
            report.error = Some(error.to_string());
            let error = match error {
                McpError::Initialize { server, reason } if report.exit_code.is_some() || report.signal.is_some() => {
                    McpError::ServerExited {
                        server,
                        reason,
                        code: report.exit_code,
                        stderr_tail: report.stderr_tail.last().cloned().unwrap_or_default(),
                    }
                }
                other => other,
            };
            let refused_by_newer = start == Start::Handshake && found == Some(Probe::Modern);
            Err(StdioFailure { failure: StartFailure { error, report: Some(Box::new(report)) }, refused_by_newer })
        }
    }
}

/// The MCP handshake and first inventory over `transport`, within `startup`
/// (starting as `start` says; a discovery gets [`revision::DISCOVER_WAIT`], at most half of
/// `startup`, for its answer),
/// and the connection's lane if `listing` has one and the protocol allows it
/// ([`Lane::usable`]; else rmcp's own `tools/list` is used).
/// On failure the connection's token is cancelled, which closes the transport.
#[allow(clippy::too_many_arguments)]
async fn handshake<T, E, A>(
    config: &McpServerConfig,
    start: Start,
    handler: HostHandler,
    ct: &CancellationToken,
    transport: T,
    listing: Listing,
    startup: Duration,
    call: Duration,
) -> Result<(RunningService<RoleClient, HostHandler>, Inventory, Option<Lane>), McpError>
where
    T: IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let started = tokio::time::timeout(startup, async {
        let serving =
            rmcp::service::serve_client_with_lifecycle_and_ct(handler, transport, start.lifecycle(), ct.clone());
        let service = match start {
            Start::Handshake => serving.await,
            // At most half the start timeout: the handshake must still fit in the rest.
            Start::Discover => match tokio::time::timeout(revision::DISCOVER_WAIT.min(startup / 2), serving).await {
                Ok(service) => service,
                Err(_) => {
                    let reason = "no answer to server/discover".to_owned();
                    return Err(McpError::Initialize { server: config.name.clone(), reason });
                }
            },
        };
        let service = service.map_err(|e| {
            let server = config.name.clone();
            let newer = if start == Start::Handshake { revision::refused_for_newer(&e) } else { Vec::new() };
            if !newer.is_empty() {
                McpError::NewerRevisionOnly { server, supported: newer.iter().map(ToString::to_string).collect() }
            } else if revision::falls_back(&e) {
                McpError::Initialize { server, reason: e.to_string() }
            } else {
                McpError::SignInRequired { server }
            }
        })?;
        let listing = match listing {
            Listing::Lane(lane) => lane.usable(service.peer()).map_or(Listing::Typed, Listing::Lane),
            other => other,
        };
        let inventory = Inventory::fetch(&config.name, service.peer(), &listing, call).await?;
        let lane = match listing {
            Listing::Lane(lane) => Some(lane),
            _ => None,
        };
        Ok::<_, McpError>((service, inventory, lane))
    })
    .await
    .unwrap_or_else(|_| Err(McpError::StartTimeout { server: config.name.clone(), after: startup }));
    started.inspect_err(|_| ct.cancel())
}

/// Streamable HTTP, authorized by the server's client credentials when it has
/// them ([`oauth::ClientGrant`]: a fresh token now, another when the server
/// refuses it), else by the OAuth tokens stored when it signed in
/// ([`oauth::stored`]; rmcp refreshes them), else by the configured headers only.
/// A 401/403 challenge (at start or later) that no grant answers becomes
/// [`McpError::SignInRequired`]; an answer over the size limit fails its own
/// call ([`BoundedHttp`]).
async fn connect_http(
    config: &McpServerConfig,
    handler: HostHandler,
    ct: &CancellationToken,
    url: &str,
    headers: &BTreeMap<String, ValueSource>,
    secrets: &Arc<dyn SecretStore>,
) -> Result<(RunningService<RoleClient, HostHandler>, Inventory, Option<Lane>), McpError> {
    let startup = Duration::from_secs(config.timeouts.startup_secs);
    let call = Duration::from_secs(config.timeouts.call_secs);
    let transport_config = http_config(&config.name, url, headers, secrets.as_ref())?;
    let authorize = |e| McpError::Authorization { server: config.name.clone(), source: Box::new(e) };
    let authorized = match &config.client_credentials {
        Some(credentials) => {
            let (field, source) = credentials.key.material();
            let field = format!("client_credentials.{field}");
            let material = resolve_value(&config.name, &field, source, secrets.as_ref())?;
            let grant = oauth::ClientGrant {
                server: config.name.clone(),
                url: url.to_owned(),
                credentials: credentials.clone(),
                material: SecretValue::new(material),
                cancel: ct.child_token(),
            };
            let manager = tokio::time::timeout(startup, grant.grant(&[]))
                .await
                .map_err(|_| McpError::StartTimeout { server: config.name.clone(), after: startup })?
                .map_err(authorize)?;
            Some((manager, Some(Arc::new(grant) as Arc<dyn oauth::Reauthorize>)))
        }
        // No interactive step-up in a running session: a refusal marks the
        // server as needing sign-in (`McpError::SignInRequired`).
        None => oauth::stored(&config.name, url, secrets.clone()).await.map_err(authorize)?.map(|m| (m, None)),
    };
    let serve = HttpServe { config, handler, ct, transport_config, startup, call };
    match authorized {
        Some((manager, reauthorize)) => serve.run(oauth::StepUpClient::new(manager, reauthorize)).await,
        None => serve.run(Lossless::new(crate::net::client())).await,
    }
}

/// The handshake over streamable HTTP, whichever client posts.
struct HttpServe<'a> {
    config: &'a McpServerConfig,
    handler: HostHandler,
    ct: &'a CancellationToken,
    transport_config: StreamableHttpClientTransportConfig,
    startup: Duration,
    call: Duration,
}

impl HttpServe<'_> {
    /// Starts through `client` (bounded, [`BoundedHttp`]) with the lane beside rmcp: first by
    /// discovery on a connection of its own, then, for an older server, with the handshake
    /// on a fresh one ([`revision`]).
    async fn run<C: StreamableHttpClient + Sync + Clone>(
        self,
        client: C,
    ) -> Result<(RunningService<RoleClient, HostHandler>, Inventory, Option<Lane>), McpError> {
        let (probe, began) = (self.ct.child_token(), std::time::Instant::now());
        let probing = BoundedHttp::new(client.clone(), probe.clone());
        let discovery = match self.attempt(probing, Start::Discover, &probe, self.startup).await {
            Err(McpError::Initialize { reason, .. }) => {
                tracing::debug!(server = %self.config.name, %reason, "not 2026-07-28; starting with the handshake");
                reason
            }
            done => return done,
        };
        // Both starts share the start timeout.
        let left = self.startup.saturating_sub(began.elapsed());
        let client = BoundedHttp::new(client, self.ct.clone());
        self.attempt(client, Start::Handshake, self.ct, left).await.map_err(|e| match e {
            McpError::StartTimeout { server, .. } => McpError::StartTimeout { server, after: self.startup },
            // Both ways failed: say both.
            McpError::Initialize { server, reason } => {
                McpError::Initialize { server, reason: format!("{reason} (and server/discover: {discovery})") }
            }
            McpError::NewerRevisionOnly { server, supported } => {
                let speaks = supported.join(", ");
                let reason = format!(
                    "the handshake was refused: it speaks only MCP {speaks} (and server/discover: {discovery})"
                );
                McpError::Initialize { server, reason }
            }
            other => other,
        })
    }

    async fn attempt<C: StreamableHttpClient + Sync>(
        &self,
        client: BoundedHttp<C>,
        start: Start,
        ct: &CancellationToken,
        startup: Duration,
    ) -> Result<(RunningService<RoleClient, HostHandler>, Inventory, Option<Lane>), McpError> {
        let transport = StreamableHttpClientTransport::with_client(client.clone(), self.transport_config.clone());
        let in_order = Arc::new(self.handler.clone());
        let (transport, lane) = lane::open_http(transport, client, ct.clone(), in_order);
        let (config, listing, handler) = (self.config, Listing::Lane(lane), self.handler.clone());
        handshake(config, start, handler, ct, transport, listing, startup, self.call).await
    }
}

/// Opens the legacy SSE stream (waiting for its `endpoint` event) and shakes hands.
#[allow(clippy::too_many_arguments)]
async fn connect_sse(
    config: &McpServerConfig,
    handler: HostHandler,
    ct: &CancellationToken,
    url: &str,
    headers: &BTreeMap<String, ValueSource>,
    secrets: &dyn SecretStore,
    startup: Duration,
    call: Duration,
) -> Result<(RunningService<RoleClient, HostHandler>, Inventory), McpError> {
    let mut sse_config = SseConfig::new(parse_url(&config.name, url)?);
    sse_config.headers = header_map(&config.name, headers, secrets)?;
    sse_config.endpoint_timeout = startup;
    sse_config.post_timeout = call;
    let transport = SseClientTransport::connect(crate::net::client(), sse_config, ct.child_token())
        .await
        .map_err(|source| McpError::Sse { server: config.name.clone(), source })?;
    let transport = lane::ordered(transport, Arc::new(handler.clone()));
    let (service, inventory, _) =
        handshake(config, Start::Handshake, handler, ct, transport, Listing::Custom, startup, call).await?;
    Ok((service, inventory))
}

fn parse_url(server: &str, url: &str) -> Result<reqwest::Url, McpError> {
    reqwest::Url::parse(url).map_err(|e| McpError::InvalidUrl {
        server: server.to_owned(),
        url: url.to_owned(),
        reason: e.to_string(),
    })
}

/// The configured headers, secrets resolved, as sent on every SSE request.
/// An `Authorization` value that is a bare token is sent as `Bearer <token>`.
fn header_map(
    server: &str,
    headers: &BTreeMap<String, ValueSource>,
    secrets: &dyn SecretStore,
) -> Result<HeaderMap, McpError> {
    let mut map = HeaderMap::new();
    for (key, value) in resolve_values(server, "headers", headers, secrets)? {
        let invalid =
            |reason: String| McpError::InvalidHeader { server: server.to_owned(), header: key.clone(), reason };
        let value = if key.eq_ignore_ascii_case("authorization") && !value.trim().contains(' ') {
            format!("Bearer {}", value.trim())
        } else {
            value
        };
        let name = HeaderName::from_bytes(key.as_bytes()).map_err(|e| invalid(e.to_string()))?;
        map.insert(name, sensitive(&value).map_err(|e| invalid(e.to_string()))?);
    }
    Ok(map)
}

/// A header value that `Debug` does not show: any configured header may hold a secret.
fn sensitive(value: &str) -> Result<HeaderValue, reqwest::header::InvalidHeaderValue> {
    let mut value = HeaderValue::from_str(value)?;
    value.set_sensitive(true);
    Ok(value)
}

/// A streamable HTTP client configuration with the configured headers on every request.
/// An `Authorization` header whose value is a bare token is sent as `Bearer <token>`.
fn http_config(
    server: &str,
    url: &str,
    headers: &BTreeMap<String, ValueSource>,
    secrets: &dyn SecretStore,
) -> Result<StreamableHttpClientTransportConfig, McpError> {
    let mut custom = HashMap::new();
    let mut bearer = None;
    for (key, value) in resolve_values(server, "headers", headers, secrets)? {
        let invalid =
            |reason: String| McpError::InvalidHeader { server: server.to_owned(), header: key.clone(), reason };
        if key.eq_ignore_ascii_case("authorization") && !value.trim().contains(' ') {
            bearer = Some(value.trim().to_owned());
            continue;
        }
        let name = HeaderName::from_bytes(key.as_bytes()).map_err(|e| invalid(e.to_string()))?;
        custom.insert(name, sensitive(&value).map_err(|e| invalid(e.to_string()))?);
    }
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned())
        .custom_headers(custom)
        .reinit_on_expired_session(true);
    if let Some(token) = bearer {
        config = config.auth_header(token);
    }
    Ok(config)
}
