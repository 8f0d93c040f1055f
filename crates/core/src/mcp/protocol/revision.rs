//! Which MCP revision a connection speaks: chosen with the server, never by the user.
//!
//! A streamable HTTP server is asked `server/discover` first; one that speaks 2026-07-28 gets
//! it (rmcp then sends the headers and per-request `_meta` it needs). One that answers with an
//! error, or not within [`DISCOVER_WAIT`] (at most half the start timeout), gets the 2025-11-25
//! handshake on a fresh connection: rmcp's own fallback would reuse the one a silent server
//! holds. A stdio server is [`probe`]d the same way on its pipe, and an older one gets the
//! handshake on the same pipe (a late answer to the probe kept from rmcp; if it, or the refusal
//! itself ([`refused_for_newer`]), shows a server of 2026-07-28, slow to start, that refused the
//! handshake, it is launched again and its discovery waited for within the start timeout); one
//! found older is not probed again while its command stays the same ([`Probed`]): the Python
//! SDK's older servers ignore a request before `initialize` (mcp 1.3 and 1.9 measured), which
//! would cost the wait at each start. One found to speak 2026-07-28 gets the whole start
//! timeout for its answer next time (one that went back to an older release fails that start
//! once, and is asked afresh).
//! Legacy SSE and in-process servers go straight to the handshake.
//!
//! What 2026-07-28 removed is done its way: liveness is a `server/discover` (no `ping`), the log
//! level rides each request's `_meta` (no `logging/setLevel`), and list changes and resource
//! updates come only on a `subscriptions/listen` stream ([`listen_filter`]).

use rmcp::ClientLifecycleMode;
use rmcp::model::{ClientConfig, ErrorCode, RequestId, RequestMetaObject};
use rmcp::model::{
    ClientRequest, DiscoverRequest, DiscoverRequestParams, PingRequest, ProtocolVersion, ServerCapabilities,
    SubscriptionFilter,
};
use rmcp::service::{ClientInitializeError, Peer, RoleClient};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::mcp::wire::answer::Answer;
use crate::mcp::wire::lane::Lane;

/// The revisions offered by `server/discover`, newest first.
pub const PREFERRED: &[ProtocolVersion] = &[ProtocolVersion::V_2026_07_28];

/// The revision offered by `initialize` to a server that has no `server/discover`.
pub const LEGACY: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

pub use crate::mcp::wire::DISCOVER_WAIT;

/// How a connection starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// `server/discover` with [`PREFERRED`]; no fallback on this connection.
    Discover,
    /// The `initialize` handshake with [`LEGACY`].
    Handshake,
}

impl Start {
    /// rmcp's lifecycle for this start.
    pub fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Start::Discover => ClientLifecycleMode::Discover { preferred_versions: PREFERRED.to_vec() },
            Start::Handshake => ClientLifecycleMode::Initialize,
        }
    }
}

/// Whether a failed discover start should be tried again with the handshake: anything but
/// a refusal for want of authorization, which the handshake would meet again.
pub fn falls_back(error: &ClientInitializeError) -> bool {
    !(error.is_authorization_required() || error.auth_challenge().is_some())
}

/// The revisions of [`PREFERRED`] that a refused handshake says the server speaks: `-32022`
/// (unsupported protocol version) with `data.supported`, as the SDKs refuse `initialize` from
/// 2026-07-28 on. Proof of such a server whatever the order of its answers (one that handles
/// requests side by side may refuse the handshake before it answers the probe).
pub(crate) fn refused_for_newer(error: &ClientInitializeError) -> Vec<ProtocolVersion> {
    let ClientInitializeError::JsonRpcError(error) = error else { return Vec::new() };
    if error.code != ErrorCode::UNSUPPORTED_PROTOCOL_VERSION {
        return Vec::new();
    }
    let supported = error.data.as_ref().and_then(|data| data.get("supported")).cloned();
    let supported: Vec<ProtocolVersion> = supported.and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default();
    PREFERRED.iter().filter(|v| supported.contains(v)).cloned().collect()
}

/// What a stdio server's [`probe`] found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Probe {
    /// It speaks a revision of [`PREFERRED`].
    Modern,
    /// It answered with an error or without a revision of ours, or its pipe closed (a server
    /// that exits on a request it does not know).
    Older,
    /// No answer in time: a server that ignores requests before `initialize`, or a slow start.
    Unanswered(RequestId),
}

impl Probe {
    /// How the server should start.
    pub(crate) fn start(&self) -> Start {
        if *self == Probe::Modern { Start::Discover } else { Start::Handshake }
    }

    /// What the probe found, as far as `lane` has heard by the end of the start (a slow server
    /// that answers in order sent its late answer before its answer to the handshake; one that
    /// does not is known by its refusal, [`refused_for_newer`]); still [`Probe::Unanswered`] if
    /// no answer came.
    pub(crate) fn settled(self, lane: &Lane) -> Probe {
        match self {
            Probe::Unanswered(id) => lane.late(&id).map_or(Probe::Unanswered(id), read),
            found => found,
        }
    }
}

/// Asks a stdio server `server/discover` with `client`'s context over its `lane` (before
/// rmcp's start on that pipe) and waits at most `wait` for the answer.
pub(crate) async fn probe(lane: &Lane, client: &ClientConfig, wait: Duration) -> Probe {
    let mut discover = DiscoverRequest::new(DiscoverRequestParams {});
    discover.extensions.insert(RequestMetaObject::with_client_context(
        PREFERRED[0].clone(),
        client.client_info.clone(),
        client.capabilities.clone(),
    ));
    let Ok(asked) = lane.request(ClientRequest::DiscoverRequest(discover)) else { return Probe::Older };
    let id = asked.id.clone();
    asked.answer_within(wait).await.map_or(Probe::Unanswered(id), read)
}

/// Modern if `answer` offers a revision of [`PREFERRED`].
fn read(answer: Answer) -> Probe {
    let offered = |result| serde_json::to_value(result).ok()?.get("supportedVersions").cloned();
    let versions: Vec<ProtocolVersion> = match answer {
        Ok(result) => offered(result).and_then(|v| serde_json::from_value(v).ok()).unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    if PREFERRED.iter().any(|v| versions.contains(v)) { Probe::Modern } else { Probe::Older }
}

/// What the last [`probe`] of a stdio server found, with its command line: an older server's
/// next starts skip the probe, a 2026-07-28 one's wait for its answer (a slow start is not
/// taken for an older server). Forgotten when a start fails that the knowledge shaped (a
/// server that changed is asked afresh).
#[derive(Debug, Default)]
pub(crate) struct Probed(Mutex<Option<(String, Probe)>>);

impl Probed {
    /// What the server launched as `command` was found to be, if known.
    pub(crate) fn known(&self, command: &str) -> Option<Probe> {
        let known = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        known.as_ref().filter(|(c, _)| c == command).map(|(_, found)| found.clone())
    }

    /// Remembers what the server launched as `command` was found to be ([`Probe::Modern`] or
    /// [`Probe::Older`]), or forgets it.
    pub(crate) fn learn(&self, command: &str, found: Option<Probe>) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = found.map(|found| (command.to_owned(), found));
    }
}

/// Whether the connection speaks a revision without `initialize` (2026-07-28 or later).
pub fn is_modern(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| !info.protocol_version.has_initialize())
}

/// The request that checks a server is alive: `ping`, which 2026-07-28 removed, or a
/// `server/discover` there.
pub fn liveness_request(modern: bool) -> ClientRequest {
    if modern {
        ClientRequest::DiscoverRequest(DiscoverRequest::new(DiscoverRequestParams {}))
    } else {
        ClientRequest::PingRequest(PingRequest::default())
    }
}

/// The notifications to listen for on a 2026-07-28 connection: each list the server says
/// changes, and the resources subscribed to. `None` when there is nothing to hear.
pub fn listen_filter(capabilities: &ServerCapabilities, resources: &[String]) -> Option<SubscriptionFilter> {
    let mut filter = SubscriptionFilter::builder();
    let mut any = false;
    if capabilities.tools.as_ref().and_then(|t| t.list_changed) == Some(true) {
        (filter, any) = (filter.tools_list_changed(), true);
    }
    if capabilities.prompts.as_ref().and_then(|p| p.list_changed) == Some(true) {
        (filter, any) = (filter.prompts_list_changed(), true);
    }
    let resource_caps = capabilities.resources.as_ref();
    if resource_caps.and_then(|r| r.list_changed) == Some(true) {
        (filter, any) = (filter.resources_list_changed(), true);
    }
    if !resources.is_empty() && resource_caps.and_then(|r| r.subscribe) == Some(true) {
        (filter, any) = (filter.resource_subscriptions(resources.iter().cloned()), true);
    }
    any.then(|| filter.build())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_offers_the_newest_revision_and_the_handshake_one_that_has_it() {
        let ClientLifecycleMode::Discover { preferred_versions } = Start::Discover.lifecycle() else {
            panic!("discovery probes with server/discover");
        };
        assert_eq!(preferred_versions.first(), Some(&ProtocolVersion::LATEST));
        assert!(!preferred_versions[0].has_initialize());
        assert!(LEGACY.has_initialize());
        assert_eq!(Start::Handshake.lifecycle(), ClientLifecycleMode::Initialize);
    }

    #[test]
    fn only_an_unsupported_version_refusal_naming_a_preferred_revision_shows_a_newer_server() {
        let refusal = |code: i32, supported: serde_json::Value| {
            let data = serde_json::json!({"requested": "2025-11-25", "supported": supported});
            ClientInitializeError::JsonRpcError(rmcp::ErrorData::new(ErrorCode(code), "refused", Some(data)))
        };
        assert_eq!(refused_for_newer(&refusal(-32022, serde_json::json!(["2026-07-28", "2099-01-01"]))), PREFERRED);
        assert!(refused_for_newer(&refusal(-32022, serde_json::json!(["2024-11-05"]))).is_empty());
        assert!(refused_for_newer(&refusal(-32022, serde_json::json!("2026-07-28"))).is_empty());
        assert!(refused_for_newer(&refusal(-32601, serde_json::json!(["2026-07-28"]))).is_empty());
        assert!(refused_for_newer(&ClientInitializeError::ConnectionClosed("gone".into())).is_empty());
    }

    #[test]
    fn a_listen_asks_for_what_the_server_offers_and_nothing_else() {
        let caps: ServerCapabilities = serde_json::from_value(serde_json::json!({
            "tools": {"listChanged": true}, "prompts": {}, "resources": {"subscribe": true}
        }))
        .unwrap();
        let filter = listen_filter(&caps, &["note://a".to_owned()]).unwrap();
        assert_eq!(filter.tools_list_changed, Some(true));
        assert_eq!(filter.prompts_list_changed, None);
        assert_eq!(filter.resources_list_changed, None);
        assert_eq!(filter.resource_subscriptions, Some(vec!["note://a".to_owned()]));
        assert!(listen_filter(&caps, &[]).is_some());
        let quiet: ServerCapabilities = serde_json::from_value(serde_json::json!({"tools": {}})).unwrap();
        assert!(listen_filter(&quiet, &["note://a".to_owned()]).is_none());
    }
}
