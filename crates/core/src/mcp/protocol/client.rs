//! The MCP client side of one connection: the rmcp [`ClientHandler`] that routes
//! what a server sends (progress, log messages, list changes, resource updates)
//! to whoever is waiting for it, and answers the server's requests: sampling
//! and elicitation through the registry's [`ServerRequests`] hook (bounded by
//! its timeout), roots from the registry's root list.
//!
//! Progress notifications carry the progress token of the call that caused them,
//! so they always reach that call (and push its deadline back). While a
//! sampling or elicitation request waits for the user it is counted
//! ([`CallRoutes::hooks_pending`]), and the connection's calls stop their clocks. `notifications/message` has no such field:
//! over streamable HTTP a log that arrives on a call's response stream goes to
//! that call; otherwise it goes to the only call in flight, if there is exactly
//! one. Every log also reaches the registry's event stream. A task's status
//! notification goes to the call that waits for the task ([`TaskWatch`]).

#![expect(deprecated, reason = "rmcp marks logging deprecated (SEP-2577); servers still send it")]

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientInfo, CreateMessageRequestParams, CreateMessageResult, CustomRequest, CustomResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationCapability, ErrorCode, ErrorData,
    FormElicitationCapability, Implementation, ListRootsResult, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, RequestId, ResourceUpdatedNotificationParam, Role, Root,
    RootsCapabilities, SamplingCapability, SamplingMessageContentBlock, ServerNotification, UrlElicitationCapability,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use serde::Serialize;
use tokio::sync::{Notify, broadcast, mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::client_tasks::ClientTasks;
use super::events::{CallEvent, LogMessage, McpEvent};
use super::requests::{
    ElicitationAnswer, ElicitationKind, ElicitationRequest, McpRoot, SamplingMessage, SamplingReply, SamplingRequest,
    SamplingRole, ServerRequests,
};
use super::tasks::{self, TaskState, TaskWatch};
use crate::llm::ContentPart;
use crate::mcp::wire::answer::InOrder;

/// Which inventory a `list_changed` notification invalidated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListChanged {
    Tools,
    Resources,
    Prompts,
}

/// One call in flight: where its events go and whom its progress wakes.
#[derive(Debug)]
struct Route {
    id: RequestId,
    events: Option<mpsc::Sender<CallEvent>>,
    progress: Arc<Notify>,
}

#[derive(Debug, Default)]
struct Routes {
    by_token: HashMap<ProgressToken, Route>,
    /// Finished calls whose routes stay open until the instant given
    /// ([`LATE_GRACE`] after the end), oldest first.
    retired: VecDeque<(Instant, ProgressToken)>,
    /// Whether a task is closing the retired routes ([`CallRoutes::close_retired`]).
    closing: bool,
    /// Notifications handled before their call's route existed, oldest first
    /// (at most [`EARLY_LIMIT`]).
    early: VecDeque<(Early, CallEvent)>,
    /// The tasks that calls wait for, by task id ([`super::tasks`]).
    tasks: HashMap<String, Arc<TaskWatch>>,
    /// Task statuses noticed before their call watched the task (a server
    /// may announce a status before its answer that created the task), oldest
    /// first, at most [`EARLY_LIMIT`].
    early_tasks: VecDeque<TaskState>,
}

/// What an early notification names: a progress token, or (a log on the
/// request's own HTTP stream) the request's id.
#[derive(Debug)]
enum Early {
    Token(ProgressToken),
    Id(RequestId),
}

/// How many early notifications are kept for routes still to come. rmcp hands
/// a request to the transport before its caller can register the route, and
/// handles notifications on their own tasks, so a fast server's first progress
/// can be handled first; a server may also send progress for requests that
/// have no route (the inventory's), and those must not grow memory.
const EARLY_LIMIT: usize = 64;

impl Routes {
    /// Keeps a notification for a route still to come.
    fn keep_early(&mut self, key: Early, event: CallEvent) {
        if self.early.len() == EARLY_LIMIT {
            self.early.pop_front();
        }
        self.early.push_back((key, event));
    }

    /// Closes the routes of calls that finished more than [`LATE_GRACE`] ago.
    fn prune(&mut self, now: Instant) {
        while let Some((until, token)) = self.retired.front() {
            if *until > now {
                break;
            }
            self.by_token.remove(token);
            self.retired.pop_front();
        }
    }
}

/// Calls in flight on one connection, by progress token, and how many of the
/// server's sampling or elicitation requests wait for the user (a call's
/// deadline stands still while one does).
#[derive(Debug, Clone)]
pub(crate) struct CallRoutes {
    routes: Arc<Mutex<Routes>>,
    hooks: Arc<watch::Sender<usize>>,
}

impl Default for CallRoutes {
    fn default() -> Self {
        Self { routes: Arc::default(), hooks: Arc::new(watch::channel(0).0) }
    }
}

impl CallRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes the call (`token`, `id`): its progress wakes
    /// [`RouteGuard::progress`] and its events go to `events`, until the guard drops.
    pub(crate) fn register(
        &self,
        token: ProgressToken,
        id: RequestId,
        events: Option<mpsc::Sender<CallEvent>>,
    ) -> RouteGuard {
        let progress = Arc::new(Notify::new());
        let mut routes = self.lock();
        routes.prune(Instant::now());
        let (mine, others) = std::mem::take(&mut routes.early).into_iter().partition(|(key, _)| match key {
            Early::Token(t) => *t == token,
            Early::Id(i) => *i == id,
        });
        routes.early = others;
        for (key, event) in mine {
            if matches!(key, Early::Token(_)) {
                progress.notify_one();
            }
            deliver(events.clone(), event);
        }
        routes.by_token.insert(token.clone(), Route { id, events, progress: progress.clone() });
        drop(routes);
        RouteGuard { routes: self.clone(), token, progress }
    }

    /// Closes retired routes once their grace is over, waking once per
    /// [`LATE_GRACE`] however many calls end meanwhile; ends when none is left.
    async fn close_retired(self) {
        loop {
            tokio::time::sleep(LATE_GRACE).await;
            let mut routes = self.lock();
            routes.prune(Instant::now());
            if routes.retired.is_empty() {
                routes.closing = false;
                return;
            }
        }
    }

    /// Progress for the call `token`: wakes its deadline and goes to its
    /// events, or waits for the route ([`EARLY_LIMIT`]).
    fn progressed(&self, token: &ProgressToken, event: CallEvent) {
        let mut routes = self.lock();
        match routes.by_token.get(token) {
            Some(route) => {
                route.progress.notify_one();
                deliver(route.events.clone(), event);
            }
            None => routes.keep_early(Early::Token(token.clone()), event),
        }
    }

    /// A log message, to the call it came with: the request whose HTTP stream
    /// carried it, else (stdio) the only call that listens.
    fn logged(&self, origin: Option<&InboundStreamOrigin>, event: CallEvent) {
        let mut routes = self.lock();
        let tx = match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => match routes.by_token.values().find(|r| r.id == *id) {
                Some(route) => route.events.clone(),
                None => return routes.keep_early(Early::Id(id.clone()), event),
            },
            Some(InboundStreamOrigin::Unassociated) => None,
            None => {
                let mut listening = routes.by_token.values().filter(|r| r.events.is_some());
                match (listening.next(), listening.next()) {
                    (Some(only), None) => only.events.clone(),
                    _ => None,
                }
            }
        };
        deliver(tx, event);
    }

    /// Hands the status of the task `id` to `watch` until the guard drops,
    /// starting with what was noticed before.
    pub(crate) fn watch_task(&self, id: String, watch: Arc<TaskWatch>) -> TaskGuard {
        let mut routes = self.lock();
        let (mine, others) = std::mem::take(&mut routes.early_tasks).into_iter().partition(|s| s.task_id == id);
        routes.early_tasks = others;
        for state in mine {
            watch.seen(state);
        }
        routes.tasks.insert(id.clone(), watch);
        TaskGuard { routes: self.clone(), id }
    }

    /// A task's status, from the server's notification.
    fn task_status(&self, state: TaskState) {
        let mut routes = self.lock();
        match routes.tasks.get(&state.task_id) {
            Some(watch) => watch.seen(state),
            None => {
                if routes.early_tasks.len() == EARLY_LIMIT {
                    routes.early_tasks.pop_front();
                }
                routes.early_tasks.push_back(state);
            }
        }
    }

    /// How many sampling or elicitation requests wait for the user now, and later.
    pub(crate) fn hooks_pending(&self) -> watch::Receiver<usize> {
        self.hooks.subscribe()
    }

    /// Counts a sampling or elicitation request as pending until the guard drops.
    fn hook_started(&self) -> HookGuard {
        self.hooks.send_modify(|n| *n += 1);
        HookGuard { hooks: self.hooks.clone() }
    }
}

/// Stops handing a task's status to its call.
pub(crate) struct TaskGuard {
    routes: CallRoutes,
    id: String,
}

impl Drop for TaskGuard {
    fn drop(&mut self) {
        self.routes.lock().tasks.remove(&self.id);
    }
}

/// A sampling or elicitation request waiting for the user.
struct HookGuard {
    hooks: Arc<watch::Sender<usize>>,
}

impl Drop for HookGuard {
    fn drop(&mut self) {
        self.hooks.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Unregisters a call's route when the call ends.
#[derive(Debug)]
pub(crate) struct RouteGuard {
    routes: CallRoutes,
    token: ProgressToken,
    /// Notified at each progress notification of the call.
    pub(crate) progress: Arc<Notify>,
}

/// A notification the server sent just before its answer can be handled just
/// after it (rmcp dispatches them on different tasks): a finished call's route
/// stays open this long so its last progress or log line still arrives.
const LATE_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

impl Drop for RouteGuard {
    /// The route is retired, not removed: [`CallRoutes::close_retired`] closes
    /// it after [`LATE_GRACE`]. One such task serves every call that ends
    /// while it runs: a task and a timer per call would each wake a runtime
    /// thread on the path of every tool call.
    fn drop(&mut self) {
        let mut routes = self.routes.lock();
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                routes.retired.push_back((Instant::now() + LATE_GRACE, self.token.clone()));
                if !routes.closing {
                    routes.closing = true;
                    runtime.spawn(self.routes.clone().close_retired());
                }
            }
            Err(_) => {
                routes.by_token.remove(&self.token);
            }
        }
    }
}

/// The roots every connection of a registry shares.
pub(crate) type SharedRoots = Arc<RwLock<Vec<McpRoot>>>;

/// The client handler of one server connection.
#[derive(Clone)]
pub(crate) struct HostHandler {
    pub(crate) server: String,
    pub(crate) routes: CallRoutes,
    pub(crate) events: broadcast::Sender<McpEvent>,
    pub(crate) changed: mpsc::UnboundedSender<ListChanged>,
    pub(crate) hooks: Arc<dyn ServerRequests>,
    pub(crate) hook_timeout: Duration,
    pub(crate) roots: SharedRoots,
    /// The server's `share_roots`: without it, `roots/list` is empty.
    pub(crate) share_roots: bool,
    /// The server's requests that run as tasks, on this connection.
    pub(crate) tasks: ClientTasks,
}

impl std::fmt::Debug for HostHandler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostHandler").field("server", &self.server).finish_non_exhaustive()
    }
}

/// The JSON-RPC error code for a request the user (or the host) turned down.
const USER_REJECTED: ErrorCode = ErrorCode(-1);

fn sampling_parts(block: SamplingMessageContentBlock) -> ContentPart {
    match block {
        SamplingMessageContentBlock::Text(t) => ContentPart::Text { text: t.text },
        SamplingMessageContentBlock::Image(i) => ContentPart::Image { mime_type: i.mime_type, data: i.data },
        SamplingMessageContentBlock::Audio(a) => ContentPart::Audio { mime_type: a.mime_type, data: a.data },
        other => ContentPart::text(serde_json::to_string(&other).unwrap_or_default()),
    }
}

fn sampling_request(server: &str, params: CreateMessageRequestParams) -> SamplingRequest {
    let messages = params
        .messages
        .into_iter()
        .map(|m| SamplingMessage {
            role: match m.role {
                Role::User => SamplingRole::User,
                Role::Assistant => SamplingRole::Assistant,
            },
            parts: m.content.into_vec().into_iter().map(sampling_parts).collect(),
        })
        .collect();
    let model_hints =
        params.model_preferences.and_then(|p| p.hints).unwrap_or_default().into_iter().filter_map(|h| h.name).collect();
    SamplingRequest {
        server: server.to_owned(),
        messages,
        system_prompt: params.system_prompt,
        max_tokens: params.max_tokens,
        temperature: params.temperature,
        stop_sequences: params.stop_sequences.unwrap_or_default(),
        model_hints,
    }
}

/// A sampling request sent as MCP `CreateMessageRequestParams` JSON (by a tool's view).
pub(crate) fn sampling_request_json(server: &str, params: serde_json::Value) -> Result<SamplingRequest, String> {
    let params: CreateMessageRequestParams = serde_json::from_value(params).map_err(|e| e.to_string())?;
    Ok(sampling_request(server, params))
}

/// The MCP `CreateMessageResult` JSON of a sampling request the model answered.
pub(crate) fn sampling_result_json(reply: SamplingReply) -> Result<serde_json::Value, String> {
    serde_json::to_value(sampling_result(reply)).map_err(|e| e.to_string())
}

/// The MCP answer to a sampling request the model answered.
fn sampling_result(reply: SamplingReply) -> CreateMessageResult {
    let message = rmcp::model::SamplingMessage::assistant_text(reply.text);
    let result = CreateMessageResult::new(message, reply.model);
    match reply.stop_reason {
        Some(reason) => result.with_stop_reason(reason),
        None => result,
    }
}

fn elicitation_request(server: &str, params: ElicitRequestParams) -> Result<ElicitationRequest, ErrorData> {
    match params {
        ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
            let schema = serde_json::to_value(requested_schema)
                .map_err(|e| ErrorData::invalid_params(format!("unusable requestedSchema: {e}"), None))?;
            Ok(ElicitationRequest { server: server.to_owned(), message, kind: ElicitationKind::Form { schema } })
        }
        ElicitRequestParams::UrlElicitationParams { message, url, elicitation_id, .. } => Ok(ElicitationRequest {
            server: server.to_owned(),
            message,
            kind: ElicitationKind::Url { url, elicitation_id },
        }),
        other => Err(ErrorData::invalid_params(format!("unsupported elicitation mode: {other:?}"), None)),
    }
}

/// A request's result as the JSON a task's `tasks/result` answers with.
fn as_json(result: impl Serialize) -> Result<serde_json::Value, ErrorData> {
    serde_json::to_value(result).map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn deliver(tx: Option<mpsc::Sender<CallEvent>>, event: CallEvent) {
    // A slow consumer loses events rather than growing memory or stalling the connection.
    if let Some(tx) = tx {
        let _ = tx.try_send(event);
    }
}

impl HostHandler {
    /// What a `subscriptions/listen` stream (2026-07-28) brought: the same as the
    /// notifications a server sends unasked to an older connection.
    pub(crate) fn heard(&self, notification: ServerNotification) {
        let list = match notification {
            ServerNotification::ToolListChangedNotification(_) => ListChanged::Tools,
            ServerNotification::ResourceListChangedNotification(_) => ListChanged::Resources,
            ServerNotification::PromptListChangedNotification(_) => ListChanged::Prompts,
            ServerNotification::ResourceUpdatedNotification(updated) => {
                let _ = self
                    .events
                    .send(McpEvent::ResourceUpdated { server: self.server.clone(), uri: updated.params.uri });
                return;
            }
            _ => return,
        };
        let _ = self.changed.send(list);
    }

    /// When the first `subscriptions/listen` stream opens, or one that ended is opened again:
    /// every list may have changed since it was read, so each is read again.
    pub(crate) fn missed(&self) {
        for list in [ListChanged::Tools, ListChanged::Resources, ListChanged::Prompts] {
            let _ = self.changed.send(list);
        }
    }

    /// Answers a sampling request through the hook (the user's review, then the model).
    async fn sample(
        &self,
        params: CreateMessageRequestParams,
        ct: CancellationToken,
    ) -> Result<CreateMessageResult, ErrorData> {
        if !self.hooks.supports().sampling {
            return Err(ErrorData::new(USER_REJECTED, "this host does not answer sampling requests", None));
        }
        let request = sampling_request(&self.server, params);
        let _pending = self.routes.hook_started();
        let answer = tokio::time::timeout(self.hook_timeout, self.hooks.sample(request, ct)).await;
        match answer {
            Ok(Ok(reply)) => Ok(sampling_result(reply)),
            Ok(Err(refusal)) => {
                Err(ErrorData::new(USER_REJECTED, format!("sampling request refused: {}", refusal.reason), None))
            }
            Err(_) => Err(ErrorData::new(
                USER_REJECTED,
                format!("sampling request not answered within {}s", self.hook_timeout.as_secs()),
                None,
            )),
        }
    }

    /// Answers an elicitation request through the hook (the user's form or page).
    async fn elicit(&self, params: ElicitRequestParams, ct: CancellationToken) -> Result<ElicitResult, ErrorData> {
        let request = elicitation_request(&self.server, params)?;
        let support = self.hooks.supports();
        let supported = match request.kind {
            ElicitationKind::Form { .. } => support.elicitation_form,
            ElicitationKind::Url { .. } => support.elicitation_url,
        };
        if !supported {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        }
        let _pending = self.routes.hook_started();
        let answer = tokio::time::timeout(self.hook_timeout, self.hooks.elicit(request, ct))
            .await
            .unwrap_or(ElicitationAnswer::Cancel);
        Ok(match answer {
            ElicitationAnswer::Accept { content } => {
                let result = ElicitResult::new(ElicitationAction::Accept);
                match content {
                    Some(content) => result.with_content(serde_json::Value::Object(content)),
                    None => result,
                }
            }
            ElicitationAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitationAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    /// Creates a task for the server's request `method` (its `params` with
    /// the `task` it asked for), answers with the task at once and runs the
    /// request in the background.
    fn start_task(&self, method: &str, mut params: serde_json::Value) -> Result<serde_json::Value, ErrorData> {
        enum Work {
            Sample(CreateMessageRequestParams),
            Elicit(ElicitRequestParams),
        }
        let ttl = params.pointer("/task/ttl").and_then(serde_json::Value::as_u64);
        if let Some(params) = params.as_object_mut() {
            params.remove("task");
        }
        let invalid =
            |e: serde_json::Error| ErrorData::invalid_params(format!("unreadable {method} request: {e}"), None);
        let work = match method {
            "sampling/createMessage" => Work::Sample(serde_json::from_value(params).map_err(invalid)?),
            "elicitation/create" => Work::Elicit(serde_json::from_value(params).map_err(invalid)?),
            other => return Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, other.to_owned(), None)),
        };
        let (id, task, ct) = self.tasks.create(ttl);
        let this = self.clone();
        tokio::spawn(async move {
            let outcome = match work {
                Work::Sample(params) => this.sample(params, ct).await.and_then(as_json),
                Work::Elicit(params) => this.elicit(params, ct).await.and_then(as_json),
            };
            this.tasks.finish(&id, outcome);
        });
        Ok(task)
    }

    fn progressed(&self, params: ProgressNotificationParam) {
        let event = CallEvent::Progress { progress: params.progress, total: params.total, message: params.message };
        self.routes.progressed(&params.progress_token, event);
    }

    fn logged(&self, params: LoggingMessageNotificationParam, origin: Option<&InboundStreamOrigin>) {
        let message = LogMessage::from(params);
        self.routes.logged(origin, CallEvent::Log(message.clone()));
        let _ = self.events.send(McpEvent::Log { server: self.server.clone(), message });
    }
}

/// Where a connection has a [`Lane`](crate::mcp::wire::lane::Lane), progress and logs are
/// handled as they are read, in the order the server sent them.
impl InOrder for HostHandler {
    fn handle(&self, notification: &ServerNotification, origin: Option<&InboundStreamOrigin>) -> bool {
        match notification {
            ServerNotification::ProgressNotification(progress) => self.progressed(progress.params.clone()),
            ServerNotification::LoggingMessageNotification(log) => self.logged(log.params.clone(), origin),
            ServerNotification::CustomNotification(notice) if notice.method == tasks::STATUS_NOTIFICATION => {
                match notice.params.clone().map(TaskState::from_json) {
                    Some(Ok(state)) => self.routes.task_status(state),
                    other => tracing::debug!(?other, "skipped a task status notification that cannot be read"),
                }
            }
            _ => return false,
        }
        true
    }
}

impl ClientHandler for HostHandler {
    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.sample(params, context.ct).await
    }

    async fn create_elicitation(
        &self,
        params: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        self.elicit(params, context.ct).await
    }

    /// A server's request that asked to run as a task ([`crate::mcp::wire::task_shapes::AS_TASK`]),
    /// and the server's questions about such tasks (`tasks/*`).
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.unwrap_or_default();
        if let Some(method) = request.method.strip_prefix(crate::mcp::wire::task_shapes::AS_TASK) {
            return self.start_task(method, params).map(CustomResult::new);
        }
        match self.tasks.answer(&request.method, &params, &context.ct).await {
            Some(answer) => answer.map(CustomResult::new),
            None => Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, request.method, None)),
        }
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        if !self.share_roots {
            return Ok(ListRootsResult::new(Vec::new()));
        }
        let roots = self.roots.read().unwrap_or_else(PoisonError::into_inner).clone();
        let roots = roots
            .into_iter()
            .map(|r| match r.name {
                Some(name) => Root::new(r.uri).with_name(name),
                None => Root::new(r.uri),
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.events.send(McpEvent::ResourceUpdated { server: self.server.clone(), uri: params.uri });
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progressed(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        self.logged(params, context.extensions.get::<InboundStreamOrigin>());
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(ListChanged::Tools);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(ListChanged::Resources);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changed.send(ListChanged::Prompts);
    }

    fn get_info(&self) -> ClientInfo {
        let implementation = Implementation::new("patchbay", env!("CARGO_PKG_VERSION"));
        // The version `initialize` offers; discovery offers its own (`revision::PREFERRED`).
        ClientInfo::new(capabilities(self.hooks.supports()), implementation)
            .with_protocol_version(super::revision::LEGACY)
    }
}

/// Roots always (an empty list is a valid answer); sampling and elicitation
/// only as far as the hook answers them; MCP Apps when the host shows views.
fn capabilities(support: super::requests::HookSupport) -> ClientCapabilities {
    let mut caps = ClientCapabilities::default();
    let mut roots = RootsCapabilities::default();
    roots.list_changed = Some(true);
    caps.roots = Some(roots);
    if support.sampling {
        caps.sampling = Some(SamplingCapability::default());
    }
    if support.elicitation_form || support.elicitation_url {
        let mut elicitation = ElicitationCapability::new();
        if support.elicitation_form {
            elicitation = elicitation.with_form(FormElicitationCapability::new());
        }
        if support.elicitation_url {
            elicitation = elicitation.with_url(UrlElicitationCapability::new());
        }
        caps.elicitation = Some(elicitation);
    }
    if support.views {
        let mut settings = rmcp::model::JsonObject::new();
        settings.insert("mimeTypes".into(), serde_json::json!([super::apps::MIME_TYPE]));
        caps.extensions = Some([(super::apps::EXTENSION.to_owned(), settings)].into());
    }
    caps
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::protocol::requests::HookSupport;

    #[test]
    fn only_what_the_hook_answers_is_advertised() {
        let none = serde_json::to_value(capabilities(HookSupport::default())).unwrap();
        assert_eq!(none, serde_json::json!({"roots": {"listChanged": true}}));
        let all = serde_json::to_value(capabilities(HookSupport::ALL)).unwrap();
        assert_eq!(
            all,
            serde_json::json!({
                "roots": {"listChanged": true}, "sampling": {}, "elicitation": {"form": {}, "url": {}},
                "extensions": {"io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}
            })
        );
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(rmcp::model::NumberOrString::Number(n))
    }

    #[tokio::test(start_paused = true)]
    async fn a_finished_calls_route_takes_late_news_then_closes_and_many_calls_share_one_closer() {
        let routes = CallRoutes::default();
        let (tx, mut rx) = mpsc::channel(4);
        drop(routes.register(token(1), RequestId::Number(1), Some(tx)));
        let late = CallEvent::Progress { progress: 1.0, total: None, message: None };
        routes.progressed(&token(1), late);
        assert!(rx.recv().await.is_some(), "progress sent just before the answer still arrives");
        for n in 2..50 {
            drop(routes.register(token(n), RequestId::Number(n), None));
        }
        assert!(routes.lock().closing);
        assert_eq!(routes.lock().retired.len(), 49);
        tokio::time::sleep(LATE_GRACE * 2 + Duration::from_millis(1)).await;
        assert!(rx.recv().await.is_none(), "the call's events end with its route");
        let left = routes.lock();
        assert!(left.by_token.is_empty() && left.retired.is_empty() && !left.closing);
    }

    #[tokio::test]
    async fn news_handled_before_its_call_is_routed_reaches_it_and_strays_stay_bounded() {
        let routes = CallRoutes::default();
        let step = |n: f64| CallEvent::Progress { progress: n, total: None, message: None };
        for n in 100..300 {
            routes.progressed(&token(n), step(0.0));
        }
        assert_eq!(routes.lock().early.len(), EARLY_LIMIT);
        routes.progressed(&token(7), step(1.0));
        let log = LogMessage { level: "info".into(), logger: None, data: serde_json::json!("first") };
        routes.logged(Some(&InboundStreamOrigin::OutboundRequest(RequestId::Number(7))), CallEvent::Log(log));
        let (tx, mut rx) = mpsc::channel(8);
        let guard = routes.register(token(7), RequestId::Number(7), Some(tx));
        assert_eq!(routes.lock().early.len(), EARLY_LIMIT - 2, "the call took its own");
        drop(guard.routes.lock().by_token.remove(&token(7)));
        let got: Vec<CallEvent> = [rx.recv().await, rx.recv().await].into_iter().flatten().collect();
        assert!(matches!(got.as_slice(), [CallEvent::Progress { .. }, CallEvent::Log(_)]), "{got:?}");
        // The deadline saw the early progress.
        tokio::time::timeout(Duration::from_secs(1), guard.progress.notified()).await.unwrap();
    }
}
