//! The loopback listener that receives the browser's answer to a sign-in:
//! any program on this computer can connect to it, so a request line of
//! megabytes is cut off, a client that sends nothing does not hold up the
//! browser, and only the callback that brings back the sign-in's `state`
//! ends the flow.

use crate::oauth_common;

use std::sync::Arc;
use std::time::Duration;

use oauth_common::{Endpoints, Scripted, authorization_server, redirect_and_state};
use patchbay_core::mcp::oauth::{self, AuthorizationUi, AuthorizeOptions};
use patchbay_core::secrets::MemoryStore;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

/// What other programs do to the listener before the browser's real answer.
#[derive(Clone, Copy)]
enum Before {
    /// Sends a request line of megabytes and never ends it.
    Megabytes,
    /// Connects and sends nothing, staying connected.
    Silent,
    /// Sends callbacks with a wrong or missing state, and other paths.
    WrongStates,
}

/// A browser that answers the sign-in at once (code `the-code`), after `before`.
struct Browser(Before);

/// The `host:port` and path of a redirect URI.
fn split(redirect: &str) -> (String, String) {
    let url = reqwest::Url::parse(redirect).unwrap();
    (format!("{}:{}", url.host_str().unwrap(), url.port().unwrap()), url.path().to_owned())
}

/// GETs `target` from the listener at `addr`; returns the status line.
async fn get(addr: &str, target: &str) -> String {
    let exchange = async {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        let request = format!("GET {target} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: test\r\nAccept: */*\r\n\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.unwrap();
        answer.lines().next().unwrap_or_default().to_owned()
    };
    tokio::time::timeout(Duration::from_secs(5), exchange)
        .await
        .unwrap_or_else(|_| panic!("the listener did not answer GET {target} within 5 s"))
}

#[async_trait::async_trait]
impl AuthorizationUi for Browser {
    async fn open(&self, _server: &str, url: &str) -> Result<(), String> {
        let (redirect, state) = redirect_and_state(url);
        let (addr, path) = split(&redirect);
        let mut silent = None;
        match self.0 {
            Before::Megabytes => {
                let (mut read, mut write) = TcpStream::connect(&addr).await.unwrap().into_split();
                // 4 MiB with no end of line; the write half stays open.
                let writer = tokio::spawn(async move {
                    let chunk = vec![b'A'; 64 * 1024];
                    for _ in 0..64 {
                        if write.write_all(&chunk).await.is_err() {
                            break;
                        }
                    }
                    write
                });
                let mut answer = Vec::new();
                let ended = tokio::time::timeout(Duration::from_secs(5), read.read_to_end(&mut answer)).await;
                assert!(ended.is_ok(), "the listener kept reading an endless request line");
                // The refusal, unless the reset of the unread bytes overtook it.
                if !answer.is_empty() {
                    assert!(answer.starts_with(b"HTTP/1.1 431 "), "{}", String::from_utf8_lossy(&answer));
                }
                writer.abort();
            }
            Before::Silent => silent = Some(TcpStream::connect(&addr).await.unwrap()),
            Before::WrongStates => {
                let wrong = [
                    (format!("{path}?code=stolen&state=wrong-{state}"), "400"),
                    (format!("{path}?code=stolen"), "400"),
                    (format!("{path}?code=stolen&state="), "400"),
                    (format!("{path}ish?code=stolen&state={state}"), "404"),
                    (format!("/favicon.ico?state={state}"), "404"),
                ];
                for (target, status) in wrong {
                    let line = get(&addr, &target).await;
                    assert!(line.starts_with(&format!("HTTP/1.1 {status} ")), "GET {target}: {line}");
                }
            }
        }
        let line = get(&addr, &format!("{path}?code=the-code&state={state}")).await;
        assert!(line.starts_with("HTTP/1.1 200 "), "the real callback: {line}");
        drop(silent);
        Ok(())
    }
}

/// Signs in through `browser` and checks the flow ended with the real code.
async fn sign_in(server: &Scripted, browser: Browser) {
    let options = AuthorizeOptions { wait: Some(Duration::from_secs(20)), ..AuthorizeOptions::default() };
    let secrets = Arc::new(MemoryStore::new());
    let (url, cancel) = (server.mcp_url(), CancellationToken::new());
    let run = oauth::authorize("remote", &url, secrets, &browser, options, &cancel);
    let manager = tokio::time::timeout(Duration::from_secs(30), run).await.expect("the sign-in ends").unwrap();
    assert_eq!(manager.get_access_token().await.unwrap(), "scripted-access-token");
    let tokens = server.seen().tokens;
    assert_eq!(tokens.len(), 1, "one code was exchanged: {tokens:?}");
    assert!(tokens[0].contains("code=the-code"), "{tokens:?}");
}

#[tokio::test]
async fn a_request_line_of_megabytes_is_cut_off_and_the_sign_in_goes_on() {
    sign_in(&authorization_server(Endpoints::default()).await, Browser(Before::Megabytes)).await;
}

#[tokio::test]
async fn a_client_that_sends_nothing_does_not_hold_up_the_real_callback() {
    sign_in(&authorization_server(Endpoints::default()).await, Browser(Before::Silent)).await;
}

#[tokio::test]
async fn only_the_callback_with_the_sign_ins_state_ends_the_flow() {
    sign_in(&authorization_server(Endpoints::default()).await, Browser(Before::WrongStates)).await;
}
