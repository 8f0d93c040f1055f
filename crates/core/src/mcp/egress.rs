//! The filtering proxy of a sandboxed server whose network is a list of
//! allowed domains.
//!
//! The server runs in its own network namespace (only loopback), so it cannot
//! reach anything by itself. Patchbay listens on a Unix socket in a private
//! folder that is bind-mounted into the sandbox, where `socat` forwards a
//! loopback port to it (`mcp::sandbox`); `HTTP_PROXY`, `HTTPS_PROXY` and
//! `ALL_PROXY` name that port. This proxy reads each connection's first
//! request: a `CONNECT host:port` (HTTPS, any TLS) or a plain HTTP request in
//! absolute form. A host the policy allows is connected to and the bytes are
//! copied both ways; any other host gets `403 Forbidden` and is reported
//! (`blocked a connection to HOST: not in the allowed domains`).

// The proxy listens on a Unix socket; elsewhere no level that needs it is offered.
#![cfg_attr(not(unix), allow(dead_code))]

use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(unix)]
use tokio::io::{AsyncReadExt, AsyncWriteExt};
#[cfg(unix)]
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::config::Network;

/// Longest request head read before the request is refused.
const MAX_HEAD: usize = 16 * 1024;

const SOCKET: &str = "proxy.sock";

/// Called with each host the proxy refused.
pub type BlockListener = Arc<dyn Fn(&str) + Send + Sync>;

/// A running proxy: its socket's folder is removed and its task stopped on drop.
pub struct Egress {
    dir: PathBuf,
    socket: PathBuf,
    _stop: DropGuard,
}

impl std::fmt::Debug for Egress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Egress").field("socket", &self.socket).finish_non_exhaustive()
    }
}

impl Egress {
    /// No proxy without Unix sockets.
    #[cfg(not(unix))]
    pub fn start(_network: Network, _on_block: BlockListener) -> std::io::Result<Self> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// Starts a proxy that lets through what `network` allows, listening on a
    /// Unix socket in a new private folder under the temp folder.
    #[cfg(unix)]
    pub fn start(network: Network, on_block: BlockListener) -> std::io::Result<Self> {
        let dir = std::env::temp_dir().join(format!("patchbay-egress-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir(&dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        }
        let socket = dir.join(SOCKET);
        let listener = match UnixListener::bind(&socket) {
            Ok(listener) => listener,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let stop = CancellationToken::new();
        tokio::spawn(serve(listener, Arc::new(network), on_block, stop.clone()));
        Ok(Self { dir, socket, _stop: stop.drop_guard() })
    }

    /// The folder holding the socket (mounted into the sandbox).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The socket's file name inside [`Self::dir`].
    pub fn socket_name(&self) -> &str {
        SOCKET
    }
}

impl Drop for Egress {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(unix)]
async fn serve(listener: UnixListener, network: Arc<Network>, on_block: BlockListener, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else { continue };
        let (network, on_block, stop) = (network.clone(), on_block.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = handle(stream, &network, &on_block) => {}
            }
        });
    }
}

/// What the first request asks for.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    /// `None` for `CONNECT`; else the request head rewritten to origin form.
    forward: Option<Vec<u8>>,
}

#[cfg(unix)]
async fn handle(mut client: UnixStream, network: &Network, on_block: &BlockListener) {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(end) = memchr::memmem::find(&head, b"\r\n\r\n") {
            break end + 4;
        }
        if head.len() > MAX_HEAD {
            let _ =
                respond(&mut client, "431 Request Header Fields Too Large", "the request head is too large\n").await;
            return;
        }
        match client.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    };
    let rest = head.split_off(end);
    let Some(target) = parse(&head) else {
        let _ = respond(&mut client, "400 Bad Request", "not a proxy request\n").await;
        return;
    };
    if !network.allows(&target.host) {
        on_block(&target.host);
        let body = format!("blocked by Patchbay: {} is not in this server's allowed domains\n", target.host);
        let _ = respond(&mut client, "403 Forbidden", &body).await;
        return;
    }
    let host = target.host.trim_start_matches('[').trim_end_matches(']');
    let Ok(mut upstream) = TcpStream::connect((host, target.port)).await else {
        let _ = respond(&mut client, "502 Bad Gateway", &format!("could not connect to {}\n", target.host)).await;
        return;
    };
    let sent = match &target.forward {
        None => client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await,
        Some(forward) => upstream.write_all(forward).await,
    };
    if sent.is_err() || upstream.write_all(&rest).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

#[cfg(unix)]
async fn respond(client: &mut UnixStream, status: &str, body: &str) -> std::io::Result<()> {
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(text.as_bytes()).await?;
    client.shutdown().await
}

/// Reads a request head: `CONNECT host:port`, or `METHOD http://host[:port]/path`
/// (rewritten to `METHOD /path`, without `Proxy-*` headers).
fn parse(head: &[u8]) -> Option<Target> {
    let text = std::str::from_utf8(head).ok()?;
    let (line, headers) = text.split_once("\r\n")?;
    let mut parts = line.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_port(target, None)?;
        return Some(Target { host, port, forward: None });
    }
    let rest = target.strip_prefix("http://").or_else(|| target.strip_prefix("HTTP://"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = split_port(authority, Some(80))?;
    let mut forward = format!("{method} {path} {version}\r\n");
    let kept = headers.split("\r\n").filter(|h| !h.is_empty() && !h.to_ascii_lowercase().starts_with("proxy-"));
    for header in kept {
        forward.push_str(header);
        forward.push_str("\r\n");
    }
    forward.push_str("\r\n");
    Some(Target { host, port, forward: Some(forward.into_bytes()) })
}

/// `host:port`, `[v6]:port`, or a bare host when `default` gives the port.
fn split_port(authority: &str, default: Option<u16>) -> Option<(String, u16)> {
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (addr, after) = v6.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None => default?,
        };
        (format!("[{addr}]"), port)
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host.to_owned(), port.parse().ok()?),
            None => (authority.to_owned(), default?),
        }
    };
    (!host.is_empty()).then(|| (host.to_ascii_lowercase(), port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_and_absolute_requests_are_read_and_rewritten() {
        let connect = parse(b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n").unwrap();
        assert_eq!((connect.host.as_str(), connect.port, connect.forward), ("api.github.com", 443, None));
        let get = parse(
            b"GET http://Example.org:8080/a?b HTTP/1.1\r\nHost: example.org\r\nProxy-Connection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert_eq!((get.host.as_str(), get.port), ("example.org", 8080));
        assert_eq!(get.forward.unwrap(), b"GET /a?b HTTP/1.1\r\nHost: example.org\r\n\r\n");
        let bare = parse(b"GET http://[::1]/ HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((bare.host.as_str(), bare.port), ("[::1]", 80));
        assert!(parse(b"GET /relative HTTP/1.1\r\n\r\n").is_none());
    }
}
