//! The `subscriptions/listen` stream of a 2026-07-28 connection, which brings what an older
//! server sends unasked: list changes and updates of the resources subscribed to.
//!
//! A stream is opened in a task of its own, so the supervisor never waits for a server's
//! acknowledgment; the new stream replaces the old one only once acknowledged (the old one's
//! queued notifications are read first, none is lost), and a refused one leaves the old one
//! running. A stream that ends is opened again after a pause, at most [`REOPENS`] times in a
//! row, and what it may have missed is read again. Resources the server did not acknowledge
//! are given up, said in the log.

use std::collections::VecDeque;
use std::time::Duration;

use futures::FutureExt;
use rmcp::model::ServerNotification;
use rmcp::service::{Peer, RoleClient, Subscription};
use tokio::sync::mpsc;

use crate::mcp::protocol::revision;

/// How many times in a row an ended stream is opened again.
const REOPENS: u32 = 3;
/// The pause before opening an ended stream again.
const REOPEN_AFTER: Duration = Duration::from_secs(2);

/// What the supervisor acts on.
pub(super) enum Heard {
    /// A notification of the stream.
    Notification(ServerNotification),
    /// A new stream was acknowledged and replaced the old one; `missed` when it follows one
    /// that ended (the lists must be read again). `refused` are the resources asked for that
    /// the server did not acknowledge.
    Opened { missed: bool, refused: Vec<String> },
}

/// One connection's listen stream, and the streams being opened for it.
pub(super) struct Listener {
    server: String,
    peer: Peer<RoleClient>,
    stream: Option<Subscription>,
    /// Read from a replaced stream, not yet handed on.
    held: VecDeque<ServerNotification>,
    opened: mpsc::Sender<Attempt>,
    arrivals: mpsc::Receiver<Attempt>,
    /// Ends in a row since the last acknowledged stream.
    ends: u32,
}

/// The outcome of one attempt to open a stream.
struct Attempt {
    subscription: Option<Subscription>,
    asked: Vec<String>,
    missed: bool,
}

impl Listener {
    pub(super) fn new(server: &str, peer: &Peer<RoleClient>) -> Self {
        let (opened, arrivals) = mpsc::channel(4);
        Listener {
            server: server.to_owned(),
            peer: peer.clone(),
            stream: None,
            held: VecDeque::new(),
            opened,
            arrivals,
            ends: 0,
        }
    }

    /// Asks the server for a stream of what it announces and of `resources`, in a task.
    pub(super) fn open(&self, resources: Vec<String>) {
        self.spawn(resources, Duration::ZERO, false);
    }

    fn spawn(&self, resources: Vec<String>, after: Duration, missed: bool) {
        let Some(info) = self.peer.peer_info() else { return };
        let Some(filter) = revision::listen_filter(&info.capabilities, &resources) else { return };
        let (peer, opened, server) = (self.peer.clone(), self.opened.clone(), self.server.clone());
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            let subscription = match tokio::time::timeout(revision::DISCOVER_WAIT, peer.listen(filter)).await {
                Ok(Ok(subscription)) => Some(subscription),
                Ok(Err(e)) => {
                    tracing::warn!(%server, error = %e, "the server refused to send its changes");
                    None
                }
                Err(_) => {
                    tracing::warn!(%server, "the server did not acknowledge the listen request");
                    None
                }
            };
            let _ = opened.send(Attempt { subscription, asked: resources, missed }).await;
        });
    }

    /// The next thing to act on; `resources` are those subscribed to now (for a reopening).
    pub(super) async fn next(&mut self, resources: impl Fn() -> Vec<String>) -> Heard {
        if let Some(notification) = self.held.pop_front() {
            return Heard::Notification(notification);
        }
        loop {
            tokio::select! {
                Some(attempt) = self.arrivals.recv() => {
                    let Some(new) = attempt.subscription else { continue };
                    let acknowledged = new.acknowledged().resource_subscriptions.clone().unwrap_or_default();
                    let refused = attempt.asked.into_iter().filter(|uri| !acknowledged.contains(uri)).collect();
                    let old = self.stream.replace(new);
                    self.ends = 0;
                    if let Some(mut old) = old {
                        // Read what the old stream still holds before it ends.
                        while let Some(Ok(Some(notification))) = old.next().now_or_never() {
                            self.held.push_back(notification);
                        }
                    }
                    return Heard::Opened { missed: attempt.missed, refused };
                }
                heard = next(&mut self.stream) => match heard {
                    Some(notification) => return Heard::Notification(notification),
                    None => {
                        self.stream = None;
                        self.ends += 1;
                        if self.ends <= REOPENS {
                            tracing::warn!(server = %self.server, "the server's stream of changes ended; opening it again");
                            self.spawn(resources(), REOPEN_AFTER * self.ends, true);
                        } else {
                            tracing::warn!(server = %self.server, "the server's stream of changes keeps ending; given up");
                        }
                    }
                },
            }
        }
    }
}

/// The next notification of `stream`; pending for ever without one, `None` when it ended.
async fn next(stream: &mut Option<Subscription>) -> Option<ServerNotification> {
    match stream {
        Some(stream) => stream.next().await.ok().flatten(),
        None => std::future::pending().await,
    }
}
