//! The `subscriptions/listen` stream of a 2026-07-28 connection, which brings what an older
//! server sends unasked: list changes and updates of the resources subscribed to.
//!
//! A stream is opened in a task of its own (ended with the listener), so the supervisor never
//! waits for a server's acknowledgment. Each opening is numbered: a new stream replaces the
//! current one only if it was asked for later (the old one's queued notifications are read
//! first), and a refused one leaves the current one running. With nothing left to hear, the
//! stream is closed. A stream that ends, or a reopening that fails, is tried again after a
//! pause with the resources subscribed to then, at most [`REOPENS`] times until a stream
//! brings a notification or lasts [`LASTED`] (a quiet server, or a proxy that cuts idle
//! streams, is not given up); the supervisor then reads again what it may have missed. So it
//! does at the first stream: the lists were read before it, and may have changed since.
//! Resources the server did not acknowledge are reported as refused.

use std::collections::VecDeque;
use std::time::Duration;

use futures::FutureExt;
use rmcp::model::ServerNotification;
use rmcp::service::{Peer, RoleClient, Subscription};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::mcp::protocol::revision;

/// How many times in a row a lost stream is opened again.
const REOPENS: u32 = 3;
/// The pause before the first reopening (doubled for each further one).
const REOPEN_AFTER: Duration = Duration::from_secs(2);
/// A stream lost after this long counts as the first loss in a row.
/// Well under the idle timeouts of common proxies (nginx's and AWS's 60 s).
const LASTED: Duration = Duration::from_secs(30);

/// What the supervisor acts on.
pub(super) enum Heard {
    /// A notification of the stream.
    Notification(ServerNotification),
    /// A new stream was acknowledged and replaced the old one; `missed` when it is the first or
    /// follows one that was lost (what may have changed must be read again). Of the resources asked
    /// for, the server `acknowledged` some and `refused` the others.
    Opened { missed: bool, acknowledged: Vec<String>, refused: Vec<String> },
    /// An opening asking for these resources was refused or not acknowledged in time; the
    /// stream in use, if any, goes on.
    Refused { asked: Vec<String> },
}

/// One connection's listen stream, and the streams being opened for it.
pub(super) struct Listener {
    server: String,
    peer: Peer<RoleClient>,
    stream: Option<Subscription>,
    /// The number of the opening `stream` came from.
    current: u64,
    /// The number the next opening gets.
    next_number: u64,
    /// Read from a replaced stream, not yet handed on.
    held: VecDeque<ServerNotification>,
    opened: mpsc::Sender<Attempt>,
    arrivals: mpsc::Receiver<Attempt>,
    /// The openings under way; aborted with the listener.
    tasks: JoinSet<()>,
    /// Streams lost in a row since one last brought a notification or lasted [`LASTED`].
    lost: u32,
    /// When the stream in use was acknowledged.
    since: Instant,
    /// When to open a lost stream again.
    reopen_at: Option<Instant>,
    /// No stream has been acknowledged since the first inventory, or since one was lost.
    missed: bool,
    /// Opening failures are losses only after a stream was lost (not before the first one).
    was_lost: bool,
}

/// The outcome of one opening.
struct Attempt {
    number: u64,
    subscription: Option<Subscription>,
    asked: Vec<String>,
}

impl Listener {
    pub(super) fn new(server: &str, peer: &Peer<RoleClient>) -> Self {
        let (opened, arrivals) = mpsc::channel(4);
        Listener {
            server: server.to_owned(),
            peer: peer.clone(),
            stream: None,
            current: 0,
            next_number: 1,
            held: VecDeque::new(),
            opened,
            arrivals,
            tasks: JoinSet::new(),
            lost: 0,
            since: Instant::now(),
            reopen_at: None,
            missed: true,
            was_lost: false,
        }
    }

    /// Asks the server, in a task, for a stream of what it announces and of `resources`;
    /// closes the current stream when there is nothing to hear.
    pub(super) fn open(&mut self, resources: Vec<String>) {
        let Some(info) = self.peer.peer_info() else { return };
        let Some(filter) = revision::listen_filter(&info.capabilities, &resources) else {
            // Nothing to hear: no stream, and none of the openings under way is wanted.
            self.stream = None;
            self.current = self.next_number;
            self.next_number += 1;
            return;
        };
        let number = self.next_number;
        self.next_number += 1;
        let (peer, opened, server) = (self.peer.clone(), self.opened.clone(), self.server.clone());
        while self.tasks.try_join_next().is_some() {}
        self.tasks.spawn(async move {
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
            let _ = opened.send(Attempt { number, subscription, asked: resources }).await;
        });
    }

    /// A stream was lost (it ended, or opening it again failed): open it again after a pause.
    fn lose(&mut self) {
        let lasted = self.stream.take().map(|_| self.since.elapsed());
        (self.missed, self.was_lost) = (true, true);
        self.lost = in_a_row(self.lost, lasted);
        if self.lost <= REOPENS {
            tracing::warn!(server = %self.server, "the server's stream of changes was lost; opening it again");
            self.reopen_at = Some(Instant::now() + REOPEN_AFTER * 2u32.pow(self.lost - 1));
        } else {
            tracing::warn!(server = %self.server, "the server's stream of changes keeps being lost; given up");
        }
    }

    /// The next thing to act on; `resources` are those subscribed to now (for a reopening).
    pub(super) async fn next(&mut self, resources: impl Fn() -> Vec<String>) -> Heard {
        if let Some(notification) = self.held.pop_front() {
            return Heard::Notification(notification);
        }
        loop {
            let reopen_at = self.reopen_at;
            let reopen = async move {
                match reopen_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = reopen => {
                    self.reopen_at = None;
                    self.open(resources());
                }
                Some(attempt) = self.arrivals.recv() => {
                    if attempt.number < self.current {
                        continue; // Asked for before the stream in use.
                    }
                    let Some(new) = attempt.subscription else {
                        if self.stream.is_none() && self.was_lost {
                            self.lose();
                        }
                        return Heard::Refused { asked: attempt.asked };
                    };
                    let taken = new.acknowledged().resource_subscriptions.clone().unwrap_or_default();
                    let (acknowledged, refused) = attempt.asked.into_iter().partition(|uri| taken.contains(uri));
                    (self.current, self.since, self.was_lost) = (attempt.number, Instant::now(), false);
                    if let Some(mut old) = self.stream.replace(new) {
                        // Read what the old stream still holds before it ends.
                        while let Some(Ok(Some(notification))) = old.next().now_or_never() {
                            self.held.push_back(notification);
                        }
                    }
                    return Heard::Opened { missed: std::mem::take(&mut self.missed), acknowledged, refused };
                }
                heard = next(&mut self.stream) => match heard {
                    Some(notification) => {
                        self.lost = 0;
                        return Heard::Notification(notification);
                    }
                    None => self.lose(),
                },
            }
        }
    }
}

/// Streams lost in a row once one more is lost, after `lost`; `lasted` is how long the stream
/// that ended had been open (`None`: an opening failed). One that lasted [`LASTED`] starts the
/// count again.
fn in_a_row(lost: u32, lasted: Option<Duration>) -> u32 {
    if lasted.is_some_and(|lasted| lasted >= LASTED) { 1 } else { lost + 1 }
}

/// The next notification of `stream`; pending for ever without one, `None` when it ended.
async fn next(stream: &mut Option<Subscription>) -> Option<ServerNotification> {
    match stream {
        Some(stream) => stream.next().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_that_lasted_starts_the_count_of_losses_again() {
        // A quiet server whose streams a proxy cuts every few minutes is never given up.
        let mut lost = 0;
        for _ in 0..10 {
            lost = in_a_row(lost, Some(LASTED * 3));
        }
        assert_eq!(lost, 1);
        // Streams that end at once, and failed openings, count up to the limit.
        let quick = in_a_row(in_a_row(lost, Some(Duration::from_secs(1))), None);
        assert_eq!(quick, 3);
        assert!(in_a_row(quick, Some(LASTED - Duration::from_millis(1))) > REOPENS);
    }
}
