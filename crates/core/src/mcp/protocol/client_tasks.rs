//! Server-to-client tasks (2025-11-25, experimental): a server may ask for its
//! sampling or elicitation request to run as a task. Patchbay then answers at
//! once with a task, runs the request (the user's review, the model) in the
//! background, and answers the server's `tasks/get`, `tasks/result`,
//! `tasks/cancel` and `tasks/list` about it.
//!
//! rmcp 3.11 holds neither the client's `tasks` capability nor a request's
//! `task` field, so the wire renames such a request
//! ([`task_shapes`](crate::mcp::wire::task_shapes)) and the handler's custom
//! requests ([`super::client`]) create the task in the connection's [`ClientTasks`].
//!
//! A task lives as long as its connection (what still runs is cancelled when
//! the connection ends, [`ClientTasks::end_with_connection`]) and at most
//! [`KEPT`] are kept, the oldest ended one forgotten first.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ErrorData;
use serde_json::{Value, json};
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::clock::{now_secs, rfc3339_utc};

/// Tasks kept per connection.
const KEPT: usize = 64;

/// How often a server is told to poll a task's status, in milliseconds.
const POLL_INTERVAL_MS: u64 = 500;

/// The `_meta` key that ties a task's result to its task.
const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// A task's status, as the protocol names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Working,
    Completed,
    Failed,
    Cancelled,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Working => "working",
            Status::Completed => "completed",
            Status::Failed => "failed",
            Status::Cancelled => "cancelled",
        }
    }
}

/// The outcome of a task's request: its result, or the error it ended with.
type Outcome = Option<Result<Value, ErrorData>>;

struct Task {
    id: String,
    status: Status,
    status_message: Option<String>,
    created_at: String,
    last_updated_at: String,
    ttl: Option<u64>,
    outcome: watch::Sender<Outcome>,
    cancel: CancellationToken,
}

impl Task {
    fn state(&self) -> Value {
        let mut state = json!({
            "taskId": self.id,
            "status": self.status.name(),
            "createdAt": self.created_at,
            "lastUpdatedAt": self.last_updated_at,
            "ttl": self.ttl,
            "pollInterval": POLL_INTERVAL_MS,
        });
        if let Some(message) = &self.status_message {
            state["statusMessage"] = Value::String(message.clone());
        }
        state
    }
}

/// The tasks a connection's server asked Patchbay to run.
#[derive(Clone)]
pub(crate) struct ClientTasks {
    tasks: Arc<Mutex<VecDeque<Task>>>,
    /// Cancelled when the connection ends: every task still running stops.
    closed: CancellationToken,
}

impl Default for ClientTasks {
    fn default() -> Self {
        Self { tasks: Arc::default(), closed: CancellationToken::new() }
    }
}

fn now() -> String {
    rfc3339_utc(now_secs())
}

fn unknown(id: &str) -> ErrorData {
    ErrorData::invalid_params(format!("no task {id:?}"), None)
}

impl ClientTasks {
    /// A new working task, kept for `ttl` milliseconds as the server asked:
    /// its state (the answer to the creating request) and the token its work
    /// stops on.
    pub(crate) fn create(&self, ttl: Option<u64>) -> (String, Value, CancellationToken) {
        let at = now();
        let task = Task {
            id: uuid::Uuid::new_v4().simple().to_string(),
            status: Status::Working,
            status_message: None,
            created_at: at.clone(),
            last_updated_at: at,
            ttl,
            outcome: watch::channel(None).0,
            cancel: self.closed.child_token(),
        };
        let answer = (task.id.clone(), json!({ "task": task.state() }), task.cancel.clone());
        let mut tasks = self.lock();
        if tasks.len() >= KEPT {
            // The oldest ended task goes first; a store full of running ones drops the oldest.
            let at = tasks.iter().position(|t| t.status != Status::Working).unwrap_or(0);
            if let Some(gone) = tasks.remove(at) {
                gone.cancel.cancel();
            }
        }
        tasks.push_back(task);
        answer
    }

    /// Ends task `id` with `outcome`, unless it was cancelled meanwhile.
    pub(crate) fn finish(&self, id: &str, outcome: Result<Value, ErrorData>) {
        let mut tasks = self.lock();
        let Some(task) = tasks.iter_mut().find(|t| t.id == id) else { return };
        if task.status != Status::Working {
            return;
        }
        task.status = if outcome.is_ok() { Status::Completed } else { Status::Failed };
        task.status_message = outcome.as_ref().err().map(|e| e.message.to_string());
        task.last_updated_at = now();
        task.outcome.send_replace(Some(outcome));
    }

    /// The answer to the server's `tasks/*` request `method`; `None` for
    /// another method. `tasks/result` waits for the task's end (or `ct`).
    pub(crate) async fn answer(
        &self,
        method: &str,
        params: &Value,
        ct: &CancellationToken,
    ) -> Option<Result<Value, ErrorData>> {
        let id = params.get("taskId").and_then(Value::as_str).unwrap_or_default();
        Some(match method {
            "tasks/get" => self.with(id, |t| Ok(t.state())),
            "tasks/list" => Ok(json!({ "tasks": self.lock().iter().map(Task::state).collect::<Vec<_>>() })),
            "tasks/cancel" => self.with(id, |t| {
                if t.status != Status::Working {
                    return Err(ErrorData::invalid_params(
                        format!("task {id:?} has already ended ({})", t.status.name()),
                        None,
                    ));
                }
                t.status = Status::Cancelled;
                t.last_updated_at = now();
                t.cancel.cancel();
                t.outcome.send_replace(Some(Err(ErrorData::internal_error("the task was cancelled", None))));
                Ok(t.state())
            }),
            "tasks/result" => {
                let mut outcome = match self.with(id, |t| Ok(t.outcome.subscribe())) {
                    Ok(outcome) => outcome,
                    Err(e) => return Some(Err(e)),
                };
                let ended = tokio::select! {
                    () = ct.cancelled() => return Some(Err(ErrorData::internal_error("the request was cancelled", None))),
                    ended = outcome.wait_for(Option::is_some) => ended,
                };
                // A task forgotten meanwhile (the store keeps at most `KEPT`) has no outcome.
                let ended = ended.map_or(None, |outcome| outcome.clone());
                match ended {
                    Some(Ok(mut result)) => {
                        if let Some(result) = result.as_object_mut() {
                            let meta = result.entry("_meta").or_insert_with(|| json!({}));
                            meta[RELATED_TASK] = json!({ "taskId": id });
                        }
                        Ok(result)
                    }
                    Some(Err(error)) => Err(error),
                    None => Err(unknown(id)),
                }
            }
            _ => return None,
        })
    }

    /// A guard that, dropped when the connection ends, cancels every task still running.
    pub(crate) fn end_with_connection(&self) -> DropGuard {
        self.closed.clone().drop_guard()
    }

    fn with<T>(&self, id: &str, f: impl FnOnce(&mut Task) -> Result<T, ErrorData>) -> Result<T, ErrorData> {
        let mut tasks = self.lock();
        let task = tasks.iter_mut().find(|t| t.id == id).ok_or_else(|| unknown(id))?;
        f(task)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Task>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn ask(tasks: &ClientTasks, method: &str, id: &str) -> Result<Value, ErrorData> {
        tasks.answer(method, &json!({ "taskId": id }), &CancellationToken::new()).await.unwrap()
    }

    #[tokio::test]
    async fn a_task_is_working_until_it_ends_and_its_result_names_it() {
        let tasks = ClientTasks::default();
        let (id, created, _ct) = tasks.create(Some(60_000));
        assert_eq!(created["task"]["taskId"], id);
        assert_eq!(
            (created["task"]["status"].clone(), created["task"]["ttl"].clone()),
            (json!("working"), json!(60_000))
        );
        assert_eq!(ask(&tasks, "tasks/get", &id).await.unwrap()["status"], "working");

        // The result waits for the end.
        let waiting = tokio::spawn({
            let (tasks, id) = (tasks.clone(), id.clone());
            async move { ask(&tasks, "tasks/result", &id).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        tasks.finish(&id, Ok(json!({"action": "accept"})));
        let result = waiting.await.unwrap().unwrap();
        assert_eq!(result["action"], "accept");
        assert_eq!(result["_meta"][RELATED_TASK]["taskId"], id);
        assert_eq!(ask(&tasks, "tasks/get", &id).await.unwrap()["status"], "completed");
        let listed = tasks.answer("tasks/list", &json!({}), &CancellationToken::new()).await.unwrap().unwrap();
        assert_eq!(listed["tasks"][0]["taskId"], id);

        // A failed one answers with its error; an unknown one is refused; other methods are not these.
        let (failed, _, _) = tasks.create(None);
        tasks.finish(&failed, Err(ErrorData::new(rmcp::model::ErrorCode(-1), "the user said no", None)));
        assert_eq!(ask(&tasks, "tasks/result", &failed).await.unwrap_err().message, "the user said no");
        let state = ask(&tasks, "tasks/get", &failed).await.unwrap();
        assert_eq!(
            (state["status"].clone(), state["statusMessage"].clone()),
            (json!("failed"), json!("the user said no"))
        );
        assert!(ask(&tasks, "tasks/get", "nope").await.unwrap_err().message.contains("no task \"nope\""));
        assert!(tasks.answer("tools/list", &json!({}), &CancellationToken::new()).await.is_none());
    }

    #[tokio::test]
    async fn a_cancelled_task_stops_its_work_and_a_connections_end_stops_them_all() {
        let tasks = ClientTasks::default();
        let (id, _, work) = tasks.create(None);
        assert_eq!(ask(&tasks, "tasks/cancel", &id).await.unwrap()["status"], "cancelled");
        assert!(work.is_cancelled());
        // The work's late answer changes nothing; a second cancel is refused.
        tasks.finish(&id, Ok(json!({})));
        assert!(ask(&tasks, "tasks/result", &id).await.unwrap_err().message.contains("cancelled"));
        assert!(ask(&tasks, "tasks/cancel", &id).await.unwrap_err().message.contains("already ended (cancelled)"));

        let end = tasks.end_with_connection();
        let (_, _, running) = tasks.create(None);
        drop(end);
        assert!(running.is_cancelled());
    }

    #[test]
    fn at_most_kept_tasks_are_kept_the_oldest_ended_first() {
        let tasks = ClientTasks::default();
        let (first, _, _) = tasks.create(None);
        let (ended, _, _) = tasks.create(None);
        tasks.finish(&ended, Ok(json!({})));
        for _ in 2..KEPT {
            tasks.create(None);
        }
        tasks.create(None);
        let ids: Vec<String> = tasks.lock().iter().map(|t| t.id.clone()).collect();
        assert_eq!(ids.len(), KEPT);
        assert!(ids.contains(&first) && !ids.contains(&ended));
    }
}
