//! Commands the window can call off. Such a command takes a [`Request`]
//! argument: the optional `request` id the window sends, registered under a
//! token for as long as the command runs. `cancel_request` cancels that token,
//! and the core stops the work (a tool call sends `notifications/cancelled`
//! to its server) and answers `cancelled`.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use tauri::ipc::{CommandArg, CommandItem, InvokeError};
use tauri::{Manager, Runtime};
use tokio_util::sync::CancellationToken;

/// How many ids cancelled before their command began are remembered.
const EARLY_CANCELS: usize = 64;

/// The tokens of the cancellable commands that are running, by request id.
#[derive(Clone, Default)]
pub struct Requests(Arc<Mutex<Tokens>>);

#[derive(Default)]
struct Tokens {
    running: HashMap<String, CancellationToken>,
    /// Cancelled before they began: a command's invoke and its cancel may be
    /// handled in either order.
    early: VecDeque<String>,
}

/// One running command's token; its id is forgotten when this is dropped.
pub struct Request {
    requests: Requests,
    id: Option<String>,
    token: CancellationToken,
}

impl Requests {
    /// Registers a command under `id` (none: it cannot be cancelled).
    pub fn begin(&self, id: Option<String>) -> Request {
        let token = CancellationToken::new();
        if let Some(id) = &id {
            let mut tokens = self.lock();
            if let Some(at) = tokens.early.iter().position(|early| early == id) {
                tokens.early.remove(at);
                token.cancel();
            }
            tokens.running.insert(id.clone(), token.clone());
        }
        Request { requests: self.clone(), id, token }
    }

    /// Cancels the command running under `id`, or the one that begins under it next.
    pub fn cancel(&self, id: &str) {
        let mut tokens = self.lock();
        match tokens.running.get(id) {
            Some(token) => token.cancel(),
            None => {
                if tokens.early.len() == EARLY_CANCELS {
                    tokens.early.pop_front();
                }
                tokens.early.push_back(id.to_owned());
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Tokens> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Request {
    /// The token the command's work runs under.
    pub fn token(&self) -> CancellationToken {
        self.token.clone()
    }
}

impl Drop for Request {
    fn drop(&mut self) {
        if let Some(id) = &self.id {
            self.requests.lock().running.remove(id);
        }
    }
}

/// A command's `request` argument: the id the window sent (if any), begun in
/// the app's [`Requests`].
impl<'de, R: Runtime> CommandArg<'de, R> for Request {
    fn from_command(command: CommandItem<'de, R>) -> Result<Self, InvokeError> {
        let requests = command.message.webview_ref().try_state::<Requests>().map(|r| r.inner().clone());
        let requests = requests.ok_or_else(|| InvokeError::from("the app keeps no cancellable requests"))?;
        let id = Option::<String>::from_command(command)?;
        Ok(requests.begin(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_running_request_is_cancelled_by_its_id_only() {
        let requests = Requests::default();
        let one = requests.begin(Some("one".into()));
        let two = requests.begin(Some("two".into()));
        requests.cancel("one");
        assert!(one.token().is_cancelled());
        assert!(!two.token().is_cancelled());
    }

    #[test]
    fn a_cancel_that_arrives_first_cancels_the_request_when_it_begins() {
        let requests = Requests::default();
        requests.cancel("soon");
        assert!(requests.begin(Some("soon".into())).token().is_cancelled());
        // It was used up: the same id begins afresh.
        assert!(!requests.begin(Some("soon".into())).token().is_cancelled());
    }

    #[test]
    fn an_ended_request_is_forgotten_and_early_cancels_are_bounded() {
        let requests = Requests::default();
        drop(requests.begin(Some("done".into())));
        assert!(requests.lock().running.is_empty());
        for n in 0..EARLY_CANCELS + 10 {
            requests.cancel(&format!("gone-{n}"));
        }
        assert_eq!(requests.lock().early.len(), EARLY_CANCELS);
        // The oldest were dropped, the newest kept.
        assert!(!requests.begin(Some("gone-0".into())).token().is_cancelled());
        assert!(requests.begin(Some(format!("gone-{}", EARLY_CANCELS + 9))).token().is_cancelled());
    }

    #[test]
    fn a_request_without_an_id_runs_uncancellable() {
        let requests = Requests::default();
        let request = requests.begin(None);
        assert!(!request.token().is_cancelled());
        assert!(requests.lock().running.is_empty());
    }
}
