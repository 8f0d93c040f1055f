//! A server's OAuth metadata decides where the browser goes and where codes,
//! secrets and registrations are posted: an endpoint that is neither `https`
//! nor `http` to this computer is refused before anything is opened or
//! posted, with the endpoint, scheme and host named.

use crate::oauth_common;

use std::sync::Arc;
use std::time::Duration;

use oauth_common::{Endpoints, Recording, Scripted, authorization_server};
use patchbay_core::config::{ClientCredentials, ClientKey, ValueSource};
use patchbay_core::mcp::oauth::{self, AuthorizeOptions, ClientGrant, Endpoint, OAuthError};
use patchbay_core::secrets::MemoryStore;
use tokio_util::sync::CancellationToken;

/// URLs no endpoint may have, with the scheme and host the error names.
const UNSAFE: &[(&str, &str, &str)] = &[
    ("file:///etc/passwd", "file", ""),
    ("smb://host/x", "smb", "host"),
    ("myapp://x", "myapp", "x"),
    ("http://example.com/oauth", "http", "example.com"),
];

/// Runs the sign-in against `server` through `ui` (a pre-registered client when `client`).
async fn sign_in(server: &Scripted, ui: &Recording, client: bool) -> Result<(), OAuthError> {
    let options = AuthorizeOptions {
        client: client.then(|| ("pre-registered".to_owned(), None)),
        wait: Some(Duration::from_secs(5)),
        ..AuthorizeOptions::default()
    };
    let secrets = Arc::new(MemoryStore::new());
    let (url, cancel) = (server.mcp_url(), CancellationToken::new());
    let run = oauth::authorize("remote", &url, secrets, ui, options, &cancel);
    tokio::time::timeout(Duration::from_secs(30), run).await.expect("the sign-in ends").map(drop)
}

/// Asserts `result` is the refusal of `endpoint` at `scheme`/`host`.
fn assert_refused(result: Result<(), OAuthError>, endpoint: Endpoint, scheme: &str, host: &str) {
    match result {
        Err(OAuthError::UnsafeEndpoint { endpoint: e, scheme: s, host: h, .. })
            if e == endpoint && s == scheme && h.as_deref().unwrap_or_default() == host => {}
        other => panic!("expected the {endpoint} at {scheme}://{host} to be refused, got {other:?}"),
    }
}

#[tokio::test]
async fn an_authorization_endpoint_elsewhere_than_https_is_never_opened() {
    for &(url, scheme, host) in UNSAFE {
        let server =
            authorization_server(Endpoints { authorization: Some(url.to_owned()), ..Endpoints::default() }).await;
        let ui = Recording::default();
        let result = sign_in(&server, &ui, false).await;
        let message = result.as_ref().err().map(ToString::to_string).unwrap_or_default();
        assert_refused(result, Endpoint::Authorization, scheme, host);
        assert!(message.contains("as its authorization endpoint"), "{message}");
        assert!(ui.opened.lock().unwrap().is_empty(), "{url} was opened");
        assert_eq!(server.seen().registrations, 0, "{url}: the client registered before the refusal");
    }
}

#[tokio::test]
async fn a_token_endpoint_elsewhere_than_https_is_refused_before_anything_is_opened_or_posted() {
    for &(url, scheme, host) in UNSAFE {
        let server = authorization_server(Endpoints { token: Some(url.to_owned()), ..Endpoints::default() }).await;
        let ui = Recording::default();
        assert_refused(sign_in(&server, &ui, false).await, Endpoint::Token, scheme, host);
        assert!(ui.opened.lock().unwrap().is_empty(), "{url}: the page was opened");
        assert_eq!(server.seen().registrations, 0, "{url}: the client registered");
    }
}

#[tokio::test]
async fn a_registration_endpoint_elsewhere_than_https_is_refused_before_anything_is_opened_or_posted() {
    for &(url, scheme, host) in UNSAFE {
        let server =
            authorization_server(Endpoints { registration: Some(url.to_owned()), ..Endpoints::default() }).await;
        let ui = Recording::default();
        assert_refused(sign_in(&server, &ui, false).await, Endpoint::Registration, scheme, host);
        assert!(ui.opened.lock().unwrap().is_empty(), "{url}: the page was opened");
    }
}

#[tokio::test]
async fn a_client_secret_is_not_posted_to_a_token_endpoint_elsewhere_than_https() {
    for &(url, scheme, host) in UNSAFE {
        let server = authorization_server(Endpoints { token: Some(url.to_owned()), ..Endpoints::default() }).await;
        let grant = ClientGrant {
            server: "remote".into(),
            url: server.mcp_url(),
            credentials: ClientCredentials {
                client_id: "machine".into(),
                key: ClientKey::Secret { secret: ValueSource::Secret("mcp/remote/client-secret".into()) },
                scopes: Vec::new(),
            },
            material: patchbay_core::secrets::SecretValue::new("client-secret-value"),
            cancel: CancellationToken::new(),
        };
        let result = tokio::time::timeout(Duration::from_secs(30), grant.grant(&[])).await.expect("the grant ends");
        assert_refused(result.map(drop), Endpoint::Token, scheme, host);
    }
}

#[tokio::test]
async fn https_endpoints_and_http_to_this_computer_are_used() {
    // Every endpoint on the scripted server itself: http://127.0.0.1.
    let server = authorization_server(Endpoints::default()).await;
    let ui = Recording::default();
    assert!(matches!(sign_in(&server, &ui, false).await, Err(OAuthError::Open { .. })));
    let opened = ui.opened.lock().unwrap().clone();
    assert_eq!(opened.len(), 1);
    assert!(opened[0].starts_with(&format!("{}/authorize?", server.base)), "{opened:?}");
    assert_eq!(server.seen().registrations, 1);

    // https everywhere (a client registered beforehand, so nothing is posted to the https hosts).
    let https = Endpoints {
        authorization: Some("https://auth.example.com/authorize".into()),
        token: Some("https://auth.example.com/token".into()),
        registration: Some("https://auth.example.com/register".into()),
    };
    let server = authorization_server(https).await;
    let ui = Recording::default();
    assert!(matches!(sign_in(&server, &ui, true).await, Err(OAuthError::Open { .. })));
    let opened = ui.opened.lock().unwrap().clone();
    assert_eq!(opened.len(), 1);
    assert!(opened[0].starts_with("https://auth.example.com/authorize?"), "{opened:?}");
}
