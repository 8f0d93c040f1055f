//! Task-augmented tool calls (2025-11-25, experimental): a tool whose `execution.taskSupport` is
//! `"required"` is called with a `task` field, the server answers at once with a task, and the result
//! comes from `tasks/result` once the task ends.
//!
//! rmcp 3.11 speaks a later draft (SEP-2663) and its types hold neither `execution` nor these tasks, so
//! the requests are custom requests on the [`Lane`](crate::mcp::wire::lane::Lane), their answers read
//! as the server's own JSON ([`Reads::Raw`](crate::mcp::wire::answer::Reads)). The task's status comes
//! from `notifications/tasks/status` ([`super::client`]) and from `tasks/get` polled at the server's
//! interval; each newer status reaches the call as progress and restarts its clock ([`TaskWatch`]). The
//! registry ([`super::registry`]) runs the call; one given up sends `tasks/cancel`.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{CallToolResult, ClientRequest, CustomRequest, JsonObject, ServerResult};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{Notify, mpsc};

use super::events::CallEvent;
use crate::mcp::error::TaskError;

/// The server's notice of a task's new status (2025-11-25).
pub(crate) const STATUS_NOTIFICATION: &str = "notifications/tasks/status";

/// How long the server is asked to keep a task and its result.
const TTL: Duration = Duration::from_secs(15 * 60);

/// The status poll's interval when the server suggests none, and its bounds.
const POLL_DEFAULT: Duration = Duration::from_secs(1);
const POLL_MIN: Duration = Duration::from_millis(100);
const POLL_MAX: Duration = Duration::from_secs(10);

/// What a tool's `execution.taskSupport` says, as a tool in a `tools/list`
/// answer gives it: whether the tool must be called as a task.
pub(crate) fn required(tool: &Value) -> bool {
    tool.pointer("/execution/taskSupport").and_then(Value::as_str) == Some("required")
}

/// The `task` field of a `tools/call` that runs as a task (as the trace shows it too).
pub(crate) fn task_field() -> Value {
    json!({ "ttl": TTL.as_millis() as u64 })
}

/// The `tools/call` that runs `tool` as a task.
pub(crate) fn create(tool: &str, arguments: Option<JsonObject>) -> ClientRequest {
    let mut params = json!({ "name": tool, "task": task_field() });
    if let Some(arguments) = arguments {
        params["arguments"] = Value::Object(arguments);
    }
    custom("tools/call", params)
}

/// `tasks/get`, `tasks/result` or `tasks/cancel` for the task `id`.
pub(crate) fn about(method: &'static str, id: &str) -> ClientRequest {
    custom(method, json!({ "taskId": id }))
}

fn custom(method: &str, params: Value) -> ClientRequest {
    ClientRequest::CustomRequest(CustomRequest::new(method, Some(params)))
}

/// A task as the server last described it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskState {
    pub(crate) task_id: String,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub(crate) status: String,
    #[serde(default)]
    pub(crate) status_message: Option<String>,
    /// ISO 8601, as the server writes it: orders two states of one task.
    #[serde(default)]
    last_updated_at: Option<String>,
    /// The server's suggested poll interval, in milliseconds.
    #[serde(default)]
    poll_interval: Option<u64>,
}

impl TaskState {
    /// The task as a `tasks/get` answer gives it.
    pub(crate) fn read(answer: ServerResult) -> Result<Self, TaskError> {
        Self::from_json(json_of(answer))
    }

    /// The task as a status notification's params (or any task JSON) give it.
    pub(crate) fn from_json(value: Value) -> Result<Self, TaskError> {
        serde_json::from_value(value).map_err(|e| TaskError::Status(e.to_string()))
    }

    /// Whether the task has ended (its result, or its error, is ready).
    fn is_terminal(&self) -> bool {
        matches!(self.status.as_str(), "completed" | "failed" | "cancelled")
    }

    /// How long to wait before asking for the status again.
    fn poll(&self) -> Duration {
        self.poll_interval.map_or(POLL_DEFAULT, Duration::from_millis).clamp(POLL_MIN, POLL_MAX)
    }

    /// What the user is shown: the server's message while the task runs,
    /// the status (with a failure's message) once it ended.
    fn describe(&self) -> String {
        let status = self.status.replace('_', " ");
        match self.status_message.as_deref().map(str::trim).filter(|m| !m.is_empty()) {
            Some(message) if self.status == "failed" => format!("{status}: {message}"),
            Some(message) if !self.is_terminal() => message.to_owned(),
            _ => status,
        }
    }
}

/// What a call knows of its task's status: states from notifications and
/// from polls are taken in the server's order (a state older than the last
/// one is ignored: over HTTP the two come on different streams), and each
/// change goes to the call's events as progress, numbered from 1, and wakes
/// `news` (the call's clock restarts).
#[derive(Debug)]
pub(crate) struct TaskWatch {
    seen: Mutex<Seen>,
    events: Option<mpsc::Sender<CallEvent>>,
    news: Arc<Notify>,
}

#[derive(Debug, Default)]
struct Seen {
    last: Option<TaskState>,
    reported: u32,
}

impl TaskWatch {
    pub(crate) fn new(events: Option<mpsc::Sender<CallEvent>>, news: Arc<Notify>) -> Self {
        Self { seen: Mutex::default(), events, news }
    }

    /// Takes `state` in, if it is not older than the last one.
    pub(crate) fn seen(&self, state: TaskState) {
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let changed = match &seen.last {
            None => true,
            Some(last) => {
                if let (Some(new), Some(old)) = (&state.last_updated_at, &last.last_updated_at)
                    && new < old
                {
                    return;
                }
                (&state.status, &state.status_message) != (&last.status, &last.status_message)
            }
        };
        if changed {
            seen.reported += 1;
            self.news.notify_one();
            if let Some(events) = &self.events {
                let message = Some(state.describe());
                let _ =
                    events.try_send(CallEvent::Progress { progress: f64::from(seen.reported), total: None, message });
            }
        }
        seen.last = Some(state);
    }

    /// How long until the status is asked for again (the server's interval);
    /// `None` once the task ended: its result is on its way.
    pub(crate) fn next_poll(&self) -> Option<Duration> {
        match &self.seen.lock().unwrap_or_else(PoisonError::into_inner).last {
            Some(state) if state.is_terminal() => None,
            Some(state) => Some(state.poll()),
            None => Some(POLL_DEFAULT),
        }
    }
}

/// What the task-creating `tools/call` got.
#[derive(Debug)]
pub(crate) enum Created {
    /// A task to follow.
    Task(TaskState),
    /// The server ran the call at once (it may: the task was asked for, not ordered).
    Done(CallToolResult),
}

impl Created {
    pub(crate) fn read(answer: ServerResult) -> Result<Self, TaskError> {
        #[derive(Deserialize)]
        struct CreateTaskResult {
            task: TaskState,
        }
        let answer = json_of(answer);
        if answer.get("task").is_some() {
            let created: CreateTaskResult =
                serde_json::from_value(answer).map_err(|e| TaskError::NotATask(e.to_string()))?;
            return Ok(Created::Task(created.task));
        }
        serde_json::from_value(answer).map(Created::Done).map_err(|e| TaskError::NotATask(e.to_string()))
    }
}

/// The tool's result, from a `tasks/result` answer.
pub(crate) fn result(answer: ServerResult) -> Result<CallToolResult, TaskError> {
    match answer {
        ServerResult::CallToolResult(result) => Ok(result),
        other => serde_json::from_value(json_of(other)).map_err(|e| TaskError::Result(e.to_string())),
    }
}

/// An answer as JSON: a raw answer as the server sent it, another as rmcp
/// would write it (a JSON answer over streamable HTTP is read by rmcp before
/// the lane sees it).
fn json_of(answer: ServerResult) -> Value {
    match answer {
        ServerResult::CustomResult(raw) => raw.0,
        other => serde_json::to_value(other).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::CustomResult;

    use super::*;

    fn raw(value: Value) -> ServerResult {
        ServerResult::CustomResult(CustomResult::new(value))
    }

    fn state(status: &str, message: &str, at: &str) -> TaskState {
        TaskState::from_json(json!({"taskId": "t1", "status": status, "statusMessage": message, "lastUpdatedAt": at}))
            .unwrap()
    }

    #[tokio::test]
    async fn a_watch_reports_each_newer_change_once_in_the_servers_order() {
        let (tx, mut rx) = mpsc::channel(16);
        let news = Arc::new(Notify::new());
        let watch = TaskWatch::new(Some(tx), news.clone());
        watch.seen(state("working", "one", "2026-11-26T10:00:00.100Z"));
        // A poll's answer and a notification of the same state: one report.
        watch.seen(state("working", "one", "2026-11-26T10:00:00.100Z"));
        watch.seen(state("working", "two", "2026-11-26T10:00:01.000Z"));
        // An older state read late (another stream) changes nothing.
        watch.seen(state("working", "one", "2026-11-26T10:00:00.100Z"));
        watch.seen(state("completed", "two", "2026-11-26T10:00:02.000Z"));
        drop(watch);
        let mut got = Vec::new();
        while let Some(CallEvent::Progress { progress, message, .. }) = rx.recv().await {
            got.push((progress, message.unwrap()));
        }
        assert_eq!(got, [(1.0, "one".to_owned()), (2.0, "two".to_owned()), (3.0, "completed".to_owned())]);
        // Each change woke the call's clock (a permit is kept for it).
        tokio::time::timeout(Duration::from_millis(100), news.notified()).await.unwrap();
    }

    #[test]
    fn a_tool_must_be_a_task_only_when_it_says_required() {
        assert!(required(&json!({"name": "t", "execution": {"taskSupport": "required"}})));
        assert!(!required(&json!({"name": "t", "execution": {"taskSupport": "optional"}})));
        assert!(!required(&json!({"name": "t"})));
    }

    #[test]
    fn the_creating_call_asks_for_a_task_with_the_arguments() {
        let ClientRequest::CustomRequest(request) = create("research", json!({"topic": "rust"}).as_object().cloned())
        else {
            panic!("a custom request")
        };
        assert_eq!(request.method, "tools/call");
        let params = request.params.unwrap();
        assert_eq!(params["name"], "research");
        assert_eq!(params["arguments"], json!({"topic": "rust"}));
        assert_eq!(params["task"]["ttl"], 900_000);
    }

    #[test]
    fn a_created_task_its_status_and_its_result_are_read_from_the_servers_json() {
        let task = json!({"taskId": "t1", "status": "working", "statusMessage": "Gathering sources...",
            "createdAt": "2026-11-26T00:00:00Z", "lastUpdatedAt": "2026-11-26T00:00:00Z", "ttl": 300000, "pollInterval": 250});
        let Created::Task(state) = Created::read(raw(json!({ "task": task }))).unwrap() else { panic!("a task") };
        assert_eq!((state.task_id.as_str(), state.status.as_str()), ("t1", "working"));
        assert_eq!(state.describe(), "Gathering sources...");
        assert_eq!(state.poll(), Duration::from_millis(250));
        assert!(!state.is_terminal());

        let mut waiting = task.clone();
        waiting["status"] = json!("input_required");
        waiting.as_object_mut().unwrap().remove("statusMessage");
        waiting.as_object_mut().unwrap().remove("pollInterval");
        let state = TaskState::read(raw(waiting)).unwrap();
        assert_eq!(state.describe(), "input required");
        assert_eq!(state.poll(), POLL_DEFAULT);
        // Once ended, the status says it; a failure keeps its reason.
        for (status, shown) in [("completed", "completed"), ("failed", "failed: Gathering sources...")] {
            let mut ended = task.clone();
            ended["status"] = json!(status);
            let state = TaskState::read(raw(ended)).unwrap();
            assert!(state.is_terminal());
            assert_eq!(state.describe(), shown);
        }

        // A server that ran the call at once answers with its result.
        let at_once = raw(json!({"content": [{"type": "text", "text": "done"}]}));
        assert!(matches!(Created::read(at_once).unwrap(), Created::Done(r) if r.content.len() == 1));
        let result = result(raw(json!({"content": [{"type": "text", "text": "report"}], "isError": false}))).unwrap();
        assert_eq!(result.is_error, Some(false));
        assert!(matches!(Created::read(raw(json!({"task": {"status": 3}}))), Err(TaskError::NotATask(_))));
        assert!(matches!(TaskState::read(raw(json!({"nothing": true}))), Err(TaskError::Status(_))));
    }
}
