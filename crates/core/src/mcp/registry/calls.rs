//! Calls to a ready server: tool calls (as tasks too), resource reads, prompt
//! gets and completions, each with its deadline and its cancellation.
//!
//! A request's time limit is kept here rather than by rmcp ([`Deadline`]): it
//! restarts with each progress notification and stands still while one of the
//! server's sampling or elicitation requests waits for the user, so a dialog
//! left open does not time out the call that caused it. A call abandoned
//! (cancelled, timed out, dropped) is cancelled at the server.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ArgumentInfo, CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotification,
    CancelledNotificationParam, ClientNotification, ClientRequest, CompleteRequest, CompleteRequestParams,
    CompletionContext, CompletionInfo, GetPromptRequest, GetPromptRequestParams, GetPromptResult, JsonObject,
    ProgressToken, ReadResourceRequest, ReadResourceRequestParams, ReadResourceResult, Reference, RequestId,
    RequestMetaObject, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RequestHandle, RoleClient, ServiceError};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::{CallOptions, Live, LogLevel, McpRegistry, WireIds, lock, logging_level, read};
use crate::mcp::error::McpError;
use crate::mcp::protocol::client::RouteGuard;
use crate::mcp::protocol::tasks;
use crate::mcp::status::ServerStatus;
use crate::mcp::wire::lane::LaneRequest;

impl McpRegistry {
    /// Calls `tool` on `server`. The timeout (per call, else the server's
    /// `call_secs`) restarts with each progress notification and stands still
    /// while the server's sampling or elicitation requests wait for the user;
    /// cancelling `ct` or running out of time sends `notifications/cancelled`. An `isError` result is a result, not an error.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: CallOptions,
        ct: CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let slot = self.slot(server)?;
        let limits = lock(&slot.config).policy.rate;
        lock(&slot.calls).admit(server, tool, limits)?;
        if self.runs_as_task(server, tool) {
            return self.call_task(server, tool, arguments, options, ct).await;
        }
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        match self.request(server, request, options, ct).await? {
            ServerResult::CallToolResult(result) => Ok(result),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Whether `tool` of `server` must run as a task (its
    /// `execution.taskSupport` is `"required"`, as far as the listing showed
    /// it: see [`Inventory::task_tools`]); [`Self::call_tool`] runs it as one.
    pub fn runs_as_task(&self, server: &str, tool: &str) -> bool {
        self.slot(server).is_ok_and(|slot| read(&slot.inventory).task_tools.contains(tool))
    }

    /// Calls a tool that must run as a task ([`tasks`]): the `tools/call` that
    /// creates the task, then `tasks/result`, while the task's status is
    /// polled. The call's clock restarts with each new status (and the
    /// server's progress); giving the call up sends `tasks/cancel`.
    async fn call_task(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<JsonObject>,
        options: CallOptions,
        ct: CancellationToken,
    ) -> Result<CallToolResult, McpError> {
        let (live, call_timeout) = self.live(server)?;
        let timeout = options.timeout.unwrap_or(call_timeout);
        let task_error = |source| McpError::Task { server: server.to_owned(), source };
        // The creating call's route stays open for the task's life: the server's progress names its token.
        let (created, route) =
            self.exchange(server, &live, tasks::create(tool, arguments), timeout, &options, &ct).await?;
        let task = match tasks::Created::read(created).map_err(task_error)? {
            tasks::Created::Done(result) => return Ok(result),
            tasks::Created::Task(task) => task,
        };
        let mut abandon = CancelTask { live: Some(live.clone()), server: server.to_owned(), id: task.task_id.clone() };
        let watch = Arc::new(tasks::TaskWatch::new(options.events, route.progress.clone()));
        let id = task.task_id.clone();
        watch.seen(task);
        let _watching = live.routes.watch_task(id.clone(), watch.clone());
        let level = self.request_level(server, &live);
        let result = live.send(tasks::about("tasks/result", &id), level).await;
        let result = result.map_err(|e| McpError::from_service(server, e))?;
        let status = poll_status(live.clone(), server, id, watch);
        let deadline = Deadline { timeout, progress: route.progress.clone(), hooks: live.routes.hooks_pending() };
        let answer = tokio::select! {
            answer = result.answer(server) => answer,
            never = status => match never {},
            () = deadline.expired() => return Err(McpError::Timeout { server: server.to_owned(), after: timeout }),
            () = ct.cancelled() => return Err(McpError::Cancelled { server: server.to_owned() }),
        };
        // The task ended, with its result or its error.
        abandon.live = None;
        tasks::result(answer?).map_err(task_error)
    }

    /// Reads a resource.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        ct: CancellationToken,
    ) -> Result<ReadResourceResult, McpError> {
        let request = ClientRequest::ReadResourceRequest(ReadResourceRequest::new(ReadResourceRequestParams::new(uri)));
        match self.request(server, request, CallOptions::default(), ct).await? {
            ServerResult::ReadResourceResult(result) => Ok(result),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Gets a prompt with its arguments.
    pub async fn get_prompt(
        &self,
        server: &str,
        prompt: &str,
        arguments: Option<JsonObject>,
        ct: CancellationToken,
    ) -> Result<GetPromptResult, McpError> {
        let mut params = GetPromptRequestParams::new(prompt);
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::GetPromptRequest(GetPromptRequest::new(params));
        match self.request(server, request, CallOptions::default(), ct).await? {
            ServerResult::GetPromptResult(result) => Ok(result),
            other => Err(unexpected(server, &other)),
        }
    }

    /// Suggestions for one argument of a prompt or resource template
    /// (`completion/complete`), given what is typed so far and the values of
    /// the other arguments. A server that does not offer completions suggests
    /// nothing, without a request; one that takes longer than 10 s is asked no
    /// more (suggestions are for typing); at most 100 values are kept, as the
    /// protocol allows.
    pub async fn complete(
        &self,
        server: &str,
        reference: Reference,
        argument: ArgumentInfo,
        context: HashMap<String, String>,
        ct: CancellationToken,
    ) -> Result<CompletionInfo, McpError> {
        let (live, _) = self.live(server)?;
        if live.peer.peer_info().is_none_or(|info| info.capabilities.completions.is_none()) {
            return Ok(CompletionInfo::default());
        }
        let mut params = CompleteRequestParams::new(reference, argument);
        if !context.is_empty() {
            params.context = Some(CompletionContext::with_arguments(context));
        }
        let request = ClientRequest::CompleteRequest(CompleteRequest::new(params));
        let options = CallOptions { timeout: Some(Duration::from_secs(10)), ..CallOptions::default() };
        match self.request(server, request, options, ct).await? {
            ServerResult::CompleteResult(mut result) => {
                let more = result.completion.values.len() > CompletionInfo::MAX_VALUES;
                result.completion.values.truncate(CompletionInfo::MAX_VALUES);
                if more {
                    result.completion.has_more = Some(true);
                }
                Ok(result.completion)
            }
            other => Err(unexpected(server, &other)),
        }
    }

    pub(super) async fn request(
        &self,
        server: &str,
        request: ClientRequest,
        options: CallOptions,
        ct: CancellationToken,
    ) -> Result<ServerResult, McpError> {
        let (live, call_timeout) = self.live(server)?;
        let timeout = options.timeout.unwrap_or(call_timeout);
        let (answer, _route) = self.exchange(server, &live, request, timeout, &options, &ct).await?;
        Ok(answer)
    }

    /// Sends `request` to `server` and waits for its answer within `timeout`
    /// (see [`Deadline`]), cancelling it at the server when `ct` fires or the
    /// time is up. The answer comes with the request's route, open while the
    /// caller holds it: the server's later progress (a task's) still reaches
    /// the call's events and restarts its clock.
    async fn exchange(
        &self,
        server: &str,
        live: &Live,
        request: ClientRequest,
        timeout: Duration,
        options: &CallOptions,
        ct: &CancellationToken,
    ) -> Result<(ServerResult, RouteGuard), McpError> {
        // The deadline is kept here, not by rmcp: it must stand still while the user answers.
        let sent = live
            .send(request, self.request_level(server, live))
            .await
            .map_err(|e| McpError::from_service(server, e))?;
        let (token, id) = sent.ids();
        if let Some(cell) = &options.sent_as {
            let _ = cell.set(WireIds { id: id.clone(), progress_token: token.clone() });
        }
        let route = live.routes.register(token, id.clone(), options.events.clone());
        let mut cancel = CancelOnDrop { peer: Some(live.peer.clone()), id, reason: CANCELLED };
        let deadline = Deadline { timeout, progress: route.progress.clone(), hooks: live.routes.hooks_pending() };
        let outcome = tokio::select! {
            response = sent.answer(server) => response,
            () = deadline.expired() => {
                cancel.reason = TIMED_OUT;
                return Err(McpError::Timeout { server: server.to_owned(), after: timeout });
            }
            () = ct.cancelled() => return Err(McpError::Cancelled { server: server.to_owned() }),
        };
        // Answered: nothing to cancel.
        cancel.peer = None;
        if let Err(error @ McpError::SignInRequired { .. }) = &outcome {
            self.sign_in_needed(server, error.to_string()).await;
        }
        outcome.map(|answer| (answer, route))
    }

    /// The log level a request to a 2026-07-28 server carries in its `_meta` (the server's,
    /// else the registry's default); `None` for an older one, which was told with `logging/setLevel`.
    fn request_level(&self, server: &str, live: &Live) -> Option<LogLevel> {
        if !live.modern {
            return None;
        }
        self.shared().log_level(self.slot(server).ok()?.as_ref())
    }

    /// A remote server that refused a request for want of authorization stops
    /// and shows as failed with the reason, where the window offers Sign in
    /// (which restarts it with the new tokens).
    async fn sign_in_needed(&self, server: &str, reason: String) {
        tracing::warn!(%server, "the server asks for a new sign-in; stopping it");
        if self.stop(server).await.is_ok()
            && let Ok(slot) = self.slot(server)
        {
            self.shared().set_status(&slot, ServerStatus::Failed { reason });
        }
    }
}

impl Live {
    /// Sends `request` through the lane when the connection has one, else through rmcp,
    /// with the log level in its `_meta` when given (2026-07-28 has no `logging/setLevel`).
    async fn send(&self, request: ClientRequest, level: Option<LogLevel>) -> Result<Sent, ServiceError> {
        if let Some(lane) = &self.lane {
            return lane.request(request).map(Sent::Lane);
        }
        let mut options = PeerRequestOptions::no_options();
        if let Some(level) = level {
            let mut meta = RequestMetaObject::new();
            meta.set_log_level(logging_level(level));
            options.meta = Some(meta);
        }
        self.peer.send_request_with_option(request, options).await.map(Sent::Rmcp)
    }
}

pub(super) fn unexpected(server: &str, result: &ServerResult) -> McpError {
    McpError::Protocol { server: server.to_owned(), reason: format!("unexpected response {result:?}") }
}

/// Why a request was abandoned, as `notifications/cancelled` tells the server.
const CANCELLED: &str = "cancelled by the user";
const TIMED_OUT: &str = "timed out";

/// A request on its way, by rmcp's service loop or by the connection's [`Lane`].
enum Sent {
    Rmcp(RequestHandle<RoleClient>),
    Lane(LaneRequest),
}

impl Sent {
    /// The request's progress token and id.
    fn ids(&self) -> (ProgressToken, RequestId) {
        match self {
            Sent::Rmcp(handle) => (handle.progress_token.clone(), handle.id.clone()),
            Sent::Lane(request) => (request.progress_token.clone(), request.id.clone()),
        }
    }

    async fn answer(self, server: &str) -> Result<ServerResult, McpError> {
        match self {
            Sent::Rmcp(handle) => handle.await_response().await.map_err(|e| McpError::from_service(server, e)),
            Sent::Lane(request) => request.answer().await.map_err(|e| e.for_server(server)),
        }
    }
}

/// Sends `notifications/cancelled` for a request abandoned before its answer.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
    reason: &'static str,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(peer) = self.peer.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let params = CancelledNotificationParam::new(Some(self.id.clone()), Some(self.reason.into()));
            let notification = ClientNotification::CancelledNotification(CancelledNotification::new(params));
            runtime.spawn(async move {
                let _ = peer.send_notification(notification).await;
            });
        }
    }
}

/// Sends `tasks/cancel` for a task given up before its result.
struct CancelTask {
    live: Option<Live>,
    server: String,
    id: String,
}

/// How long a `tasks/cancel` is waited for (its answer changes nothing).
const CANCEL_WAIT: Duration = Duration::from_secs(5);

impl Drop for CancelTask {
    fn drop(&mut self) {
        if let Some(live) = self.live.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            let request = tasks::about("tasks/cancel", &self.id);
            let (server, id) = (std::mem::take(&mut self.server), std::mem::take(&mut self.id));
            runtime.spawn(async move {
                let cancelled = tokio::time::timeout(CANCEL_WAIT, async {
                    live.send(request, None)
                        .await
                        .map_err(|e| McpError::from_service(&server, e))?
                        .answer(&server)
                        .await
                })
                .await;
                if let Ok(Err(error)) = cancelled {
                    tracing::debug!(%server, task = %id, %error, "the server did not take a task's cancellation");
                }
            });
        }
    }
}

/// Polls the task `id`'s status (`tasks/get`) at `server`'s interval, into
/// `watch`. Never ends: the caller stops it when the result comes.
async fn poll_status(live: Live, server: &str, id: String, watch: Arc<tasks::TaskWatch>) -> std::convert::Infallible {
    loop {
        let Some(wait) = watch.next_poll() else { return std::future::pending().await };
        tokio::time::sleep(wait).await;
        let answer = match live.send(tasks::about("tasks/get", &id), None).await {
            Ok(sent) => sent.answer(server).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match answer.and_then(|answer| tasks::TaskState::read(answer).map_err(|e| e.to_string())) {
            Ok(state) => watch.seen(state),
            Err(error) => tracing::debug!(task = %id, %error, "polling a task's status failed"),
        }
    }
}

/// A request's time limit: `timeout` without news, restarted by each progress
/// notification of the request and standing still while a sampling or
/// elicitation request of the same server waits for the user (the time left
/// is kept and runs on once every such request is answered).
struct Deadline {
    timeout: Duration,
    progress: Arc<tokio::sync::Notify>,
    hooks: watch::Receiver<usize>,
}

impl Deadline {
    /// Resolves when the time is up.
    async fn expired(mut self) {
        let mut left = self.timeout;
        loop {
            if *self.hooks.borrow_and_update() > 0 {
                // The registry holds the sender as long as the connection's routes live.
                if self.hooks.changed().await.is_err() {
                    std::future::pending::<()>().await;
                }
                continue;
            }
            let started = tokio::time::Instant::now();
            tokio::select! {
                () = tokio::time::sleep(left) => return,
                () = self.progress.notified() => left = self.timeout,
                changed = self.hooks.changed() => {
                    left = left.saturating_sub(started.elapsed());
                    if changed.is_err() {
                        tokio::time::sleep(left).await;
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::task::JoinHandle;

    use super::*;

    /// Runs a [`Deadline`] of `timeout`; the task ends when it expires.
    fn deadline(timeout: Duration) -> (Arc<tokio::sync::Notify>, watch::Sender<usize>, JoinHandle<()>) {
        let progress = Arc::new(tokio::sync::Notify::new());
        let (hooks, rx) = watch::channel(0);
        let deadline = Deadline { timeout, progress: progress.clone(), hooks: rx };
        (progress, hooks, tokio::spawn(deadline.expired()))
    }

    // On tokio's paused clock: the sleeps below take no real time.
    #[tokio::test(start_paused = true)]
    async fn a_deadline_restarts_with_progress_and_stands_still_while_the_user_answers() {
        let limit = Duration::from_millis(300);
        let (progress, _hooks, expired) = deadline(limit);
        for _ in 0..4 {
            tokio::time::sleep(Duration::from_millis(150)).await;
            progress.notify_one();
        }
        assert!(!expired.is_finished(), "progress every 150 ms keeps a 300 ms limit from firing");
        tokio::time::timeout(Duration::from_secs(5), expired).await.unwrap().unwrap();

        let (_, hooks, expired) = deadline(limit);
        hooks.send_modify(|n| *n += 1);
        tokio::time::sleep(Duration::from_millis(900)).await;
        assert!(!expired.is_finished(), "a pending request stops the clock");
        hooks.send_modify(|n| *n -= 1);
        tokio::time::timeout(Duration::from_secs(5), expired).await.unwrap().unwrap();
    }
}
