//! The app's own events as the tests see them: read from the app's stream on
//! a thread of their own and kept by kind, as the window would show them.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use patchbay_core::app::views::{
    ConnectionBlocked, ConversationRenamed, KbModelProgress, KbProgress, ResourceUpdated, ServerLogLine,
    ServerStatusView,
};
use patchbay_core::app::{AppEvent, AppEvents, ServerRequestView};

/// What the app has reported so far, by kind.
#[derive(Debug, Default)]
pub struct Seen {
    pub statuses: Vec<ServerStatusView>,
    pub logs: Vec<ServerLogLine>,
    pub progress: Vec<KbProgress>,
    pub model_progress: Vec<KbModelProgress>,
    pub requests: Vec<ServerRequestView>,
    /// The ids of server requests that wait no more.
    pub ended: Vec<String>,
    pub renamed: Vec<ConversationRenamed>,
    pub updated: Vec<ResourceUpdated>,
    pub blocked: Vec<ConnectionBlocked>,
    /// How many times the shared knowledge base changed (a request answered or refused).
    pub share_changes: usize,
}

/// Records an app's events.
pub struct Recorder {
    seen: Mutex<Seen>,
}

impl Recorder {
    /// Events to open an app with, and the recorder of what it reports.
    pub fn new() -> (AppEvents, Arc<Self>) {
        let (events, mut stream) = AppEvents::channel();
        let recorder = Arc::new(Self { seen: Mutex::default() });
        let keeper = recorder.clone();
        // The stream ends when the app is gone.
        std::thread::spawn(move || {
            while let Some(event) = stream.blocking_recv() {
                keeper.keep(event);
            }
        });
        (events, recorder)
    }

    fn keep(&self, event: AppEvent) {
        let mut seen = self.seen();
        match event {
            AppEvent::ServerStatus(s) => seen.statuses.push(s),
            AppEvent::ServerLog(l) => seen.logs.push(l),
            AppEvent::KbProgress(p) => seen.progress.push(p),
            AppEvent::KbModelProgress(p) => seen.model_progress.push(p),
            AppEvent::ServerRequest(r) => seen.requests.push(r),
            AppEvent::ServerRequestEnded(id) => seen.ended.push(id),
            AppEvent::ConversationRenamed(r) => seen.renamed.push(r),
            AppEvent::ResourceUpdated(u) => seen.updated.push(u),
            AppEvent::ConnectionBlocked(b) => seen.blocked.push(b),
            AppEvent::KbShareChanged => seen.share_changes += 1,
        }
    }

    /// What has arrived so far.
    pub fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap()
    }

    /// Waits up to 10 s until `done` holds of what has arrived.
    pub async fn until(&self, what: &str, done: impl Fn(&Seen) -> bool) {
        for _ in 0..200 {
            if done(&self.seen()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("{what}: {:?}", self.seen());
    }
}
