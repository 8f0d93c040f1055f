//! The MCP client side of one connection: the rmcp [`ClientHandler`] that routes
//! what a server sends (progress, log messages, list changes) to whoever is
//! waiting for it.
//!
//! Progress notifications carry the progress token of the call that caused them,
//! so they always reach that call. `notifications/message` has no such field:
//! over streamable HTTP a log that arrives on a call's response stream goes to
//! that call; otherwise it goes to the only call in flight, if there is exactly
//! one. Every log also reaches the registry's event stream.

#![expect(deprecated, reason = "rmcp marks logging deprecated (SEP-2577); servers still send it")]

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientInfo, Implementation, LoggingMessageNotificationParam, ProgressNotificationParam,
    ProgressToken, RequestId,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RoleClient};
use serde::Serialize;
use tokio::sync::{broadcast, mpsc};

use super::registry::McpEvent;

/// Something a server reported while a tool call ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CallEvent {
    /// `notifications/progress` for this call.
    Progress { progress: f64, total: Option<f64>, message: Option<String> },
    /// `notifications/message` attributed to this call.
    Log(LogMessage),
}

/// A `notifications/message` from a server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogMessage {
    /// `debug` … `emergency`.
    pub level: String,
    pub logger: Option<String>,
    pub data: serde_json::Value,
}

impl From<LoggingMessageNotificationParam> for LogMessage {
    fn from(p: LoggingMessageNotificationParam) -> Self {
        let level = serde_json::to_value(p.level).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        Self { level, logger: p.logger, data: p.data }
    }
}

/// Which catalogue a `list_changed` notification invalidated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListChanged {
    Tools,
    Resources,
    Prompts,
}

#[derive(Debug, Default)]
struct Routes {
    by_token: HashMap<ProgressToken, (RequestId, mpsc::Sender<CallEvent>)>,
}

/// Calls in flight on one connection, by progress token.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallRoutes(Arc<Mutex<Routes>>);

impl CallRoutes {
    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Routes events for the call (`token`, `id`) to `tx` until the guard drops.
    pub(crate) fn register(&self, token: ProgressToken, id: RequestId, tx: mpsc::Sender<CallEvent>) -> RouteGuard {
        self.lock().by_token.insert(token.clone(), (id, tx));
        RouteGuard { routes: self.clone(), token }
    }

    fn by_token(&self, token: &ProgressToken) -> Option<mpsc::Sender<CallEvent>> {
        self.lock().by_token.get(token).map(|(_, tx)| tx.clone())
    }

    fn for_log(&self, origin: Option<&InboundStreamOrigin>) -> Option<mpsc::Sender<CallEvent>> {
        let routes = self.lock();
        match origin {
            Some(InboundStreamOrigin::OutboundRequest(id)) => {
                routes.by_token.values().find(|(rid, _)| rid == id).map(|(_, tx)| tx.clone())
            }
            Some(InboundStreamOrigin::Unassociated) => None,
            None if routes.by_token.len() == 1 => routes.by_token.values().next().map(|(_, tx)| tx.clone()),
            None => None,
        }
    }
}

/// Unregisters a call's route when the call ends.
#[derive(Debug)]
pub(crate) struct RouteGuard {
    routes: CallRoutes,
    token: ProgressToken,
}

/// A notification the server sent just before its answer can be handled just
/// after it (rmcp dispatches them on different tasks): a finished call's route
/// stays open this long so its last progress or log line still arrives.
const LATE_GRACE: std::time::Duration = std::time::Duration::from_millis(250);

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let (routes, token) = (self.routes.clone(), self.token.clone());
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(LATE_GRACE).await;
                    routes.lock().by_token.remove(&token);
                });
            }
            Err(_) => {
                routes.lock().by_token.remove(&token);
            }
        }
    }
}

/// The client handler of one server connection.
#[derive(Debug, Clone)]
pub(crate) struct HostHandler {
    pub(crate) server: String,
    pub(crate) routes: CallRoutes,
    pub(crate) events: broadcast::Sender<McpEvent>,
    pub(crate) changed: mpsc::UnboundedSender<ListChanged>,
}

fn deliver(tx: Option<mpsc::Sender<CallEvent>>, event: CallEvent) {
    // A slow consumer loses events rather than growing memory or stalling the connection.
    if let Some(tx) = tx {
        let _ = tx.try_send(event);
    }
}

impl ClientHandler for HostHandler {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let event = CallEvent::Progress { progress: params.progress, total: params.total, message: params.message };
        deliver(self.routes.by_token(&params.progress_token), event);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        context: NotificationContext<RoleClient>,
    ) {
        let message = LogMessage::from(params);
        let origin = context.extensions.get::<InboundStreamOrigin>();
        deliver(self.routes.for_log(origin), CallEvent::Log(message.clone()));
        let _ = self.events.send(McpEvent::Log { server: self.server.clone(), message });
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
        ClientInfo::new(ClientCapabilities::default(), Implementation::new("patchbay", env!("CARGO_PKG_VERSION")))
    }
}
