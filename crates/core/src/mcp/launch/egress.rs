//! The filtering proxy of a sandboxed server whose network is a list of
//! allowed domains.
//!
//! The server runs in its own network namespace (only loopback), so it cannot
//! reach anything by itself. Before the server starts, `patchbay-sandbox-init`
//! listens on a loopback port there and hands the listening socket over to
//! Patchbay through a Unix socket in a private folder that is bind-mounted into
//! the sandbox (`mcp::launch::sandbox`); `HTTP_PROXY` and `HTTPS_PROXY` name
//! that port. So Patchbay accepts the server's connections itself, no
//! process in between, and only the first hand-over counts (it comes before
//! the server runs). This proxy reads each connection's first request: a
//! `CONNECT host:port` (HTTPS, any TLS), or a plain HTTP request in absolute
//! form, which gets the connection to its host alone ([`parse`], [`answer`]).
//! A host the policy allows is connected to and the bytes are
//! copied both ways; any other host gets `403 Forbidden` and is reported
//! (`blocked a connection to HOST: not in the allowed domains`).

// The hand-over is Linux's; elsewhere no level that needs the proxy is offered.
#![cfg_attr(not(target_os = "linux"), allow(dead_code))]

use std::path::{Path, PathBuf};
use std::sync::Arc;

#[cfg(target_os = "linux")]
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
#[cfg(target_os = "linux")]
use tokio::net::{TcpStream, UnixListener};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::config::Network;

/// Longest request or answer head read before it is refused.
const MAX_HEAD: usize = 16 * 1024;
/// How long a connection may take to send its request head.
const HEAD_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
/// Connections one server may hold open through its proxy at once: more wait,
/// so a server cannot use up Patchbay's file descriptors.
const MAX_CONNECTIONS: usize = 256;

const SOCKET: &str = "proxy.sock";
/// A proxy's folder is `egress-PID-ID`, PID the Patchbay process that made it.
const DIR_PREFIX: &str = "egress-";

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
    /// No proxy without the hand-over.
    #[cfg(not(target_os = "linux"))]
    pub fn start(_network: Network, _on_block: BlockListener, _under: &Path) -> std::io::Result<Self> {
        Err(std::io::ErrorKind::Unsupported.into())
    }

    /// Starts a proxy that lets through what `network` allows, on the first
    /// listening TCP socket handed over on a Unix socket in a new private
    /// folder under `under`: a folder no sandbox sees (Patchbay's data folder,
    /// masked in each), so no other server can be first to hand one over.
    #[cfg(target_os = "linux")]
    pub fn start(network: Network, on_block: BlockListener, under: &Path) -> std::io::Result<Self> {
        sweep(under);
        let id = uuid::Uuid::new_v4().simple().to_string();
        let dir = under.join(format!("{DIR_PREFIX}{}-{}", std::process::id(), &id[..16]));
        std::fs::create_dir(&dir)?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        let socket = dir.join(SOCKET);
        let handover = match UnixListener::bind(&socket) {
            Ok(listener) => listener,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        let stop = CancellationToken::new();
        tokio::spawn(serve(handover, socket.clone(), Arc::new(network), on_block, stop.clone()));
        Ok(Self { dir, socket, _stop: stop.drop_guard() })
    }

    /// The folder holding the hand-over socket (mounted into the sandbox).
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

/// Removes the folders of proxies whose Patchbay is gone (killed before it
/// could remove them): each folder's name holds its process's id.
#[cfg(target_os = "linux")]
fn sweep(under: &Path) {
    let Ok(entries) = std::fs::read_dir(under) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(DIR_PREFIX)).and_then(|rest| rest.split_once('-'))
        else {
            continue;
        };
        if pid.0.parse::<u32>().is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Takes the listener handed over, then serves every connection to it.
#[cfg(target_os = "linux")]
async fn serve(
    handover: UnixListener,
    socket: PathBuf,
    network: Arc<Network>,
    on_block: BlockListener,
    stop: CancellationToken,
) {
    let taken = tokio::select! {
        () = stop.cancelled() => return,
        taken = handover::take(handover) => taken,
    };
    // Nothing more is taken: the socket goes.
    let _ = std::fs::remove_file(&socket);
    let listener = match taken {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!("the filtering proxy got no listener from the sandbox: {e}");
            return;
        }
    };
    let open = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            () = stop.cancelled() => return,
            accepted = async {
                let permit = open.clone().acquire_owned().await.expect("the semaphore is never closed");
                (listener.accept().await, permit)
            } => accepted,
        };
        let (Ok((stream, _)), permit) = accepted else {
            // Out of descriptors, say: the next connection may fare better.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let (network, on_block, stop) = (network.clone(), on_block.clone(), stop.clone());
        tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = handle(stream, &network, &on_block) => {}
            }
            drop(permit);
        });
    }
}

/// Receiving the listening socket that `patchbay-sandbox-init` made in the
/// sandbox's network namespace (`SCM_RIGHTS` over the Unix socket).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
mod handover {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

    use tokio::io::Interest;
    use tokio::net::{TcpListener, UnixListener};

    /// The first connection's descriptor, once checked to be a listening TCP socket.
    pub(super) async fn take(handover: UnixListener) -> io::Result<TcpListener> {
        let (stream, _) = handover.accept().await?;
        drop(handover);
        let fd = loop {
            stream.readable().await?;
            match stream.try_io(Interest::READABLE, || receive(stream.as_raw_fd())) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                received => break received?,
            }
        };
        checked(fd)
    }

    /// One byte and the descriptors beside it: the first is kept, others closed.
    fn receive(socket: RawFd) -> io::Result<OwnedFd> {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
        let mut control = [0u64; 16];
        // SAFETY: msghdr is plain data; every pointer in it outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control);
        // SAFETY: as above; the kernel writes at most msg_controllen bytes of control.
        let received = unsafe { libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if received < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut fds = Vec::new();
        // SAFETY: the CMSG macros walk the control buffer the kernel filled in.
        unsafe {
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while !cmsg.is_null() {
                if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let data = libc::CMSG_DATA(cmsg).cast::<libc::c_int>();
                    let count = ((*cmsg).cmsg_len - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<libc::c_int>();
                    fds.extend((0..count).map(|i| OwnedFd::from_raw_fd(data.add(i).read_unaligned())));
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
        }
        fds.into_iter().next().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no socket was handed over"))
    }

    /// Only a listening TCP socket on the loopback is served (never one that
    /// would take connections from other computers).
    pub(super) fn checked(fd: OwnedFd) -> io::Result<TcpListener> {
        let option = |name| {
            let mut value: libc::c_int = 0;
            let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
            // SAFETY: value and len are valid for the size given.
            let r =
                unsafe { libc::getsockopt(fd.as_raw_fd(), libc::SOL_SOCKET, name, (&raw mut value).cast(), &mut len) };
            if r == 0 { Ok(value) } else { Err(io::Error::last_os_error()) }
        };
        let tcp = option(libc::SO_DOMAIN)? == libc::AF_INET
            && option(libc::SO_TYPE)? == libc::SOCK_STREAM
            && option(libc::SO_PROTOCOL)? == libc::IPPROTO_TCP
            && option(libc::SO_ACCEPTCONN)? == 1;
        let refused = |why: &str| io::Error::new(io::ErrorKind::InvalidData, why.to_owned());
        if !tcp {
            return Err(refused("what was handed over is not a listening TCP socket"));
        }
        let listener = std::net::TcpListener::from(fd);
        if !listener.local_addr()?.ip().is_loopback() {
            return Err(refused("the listener handed over is not on the loopback"));
        }
        listener.set_nonblocking(true)?;
        TcpListener::from_std(listener)
    }
}

/// What the first request asks for.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    /// `None` for `CONNECT`; else the request head rewritten to origin form.
    forward: Option<Vec<u8>>,
    /// A plain request that asks to switch protocols (a WebSocket over `ws://`).
    upgrade: bool,
}

#[cfg(target_os = "linux")]
async fn handle(mut client: TcpStream, network: &Network, on_block: &BlockListener) {
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
        match tokio::time::timeout(HEAD_TIMEOUT, client.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) | Err(_) => return,
            Ok(Ok(n)) => head.extend_from_slice(&buf[..n]),
        }
    };
    let rest = head.split_off(end);
    let target = match parse(&head) {
        Ok(target) => target,
        Err(why) => {
            let _ =
                respond(&mut client, "400 Bad Request", &format!("not a proxy request Patchbay takes: {why}\n")).await;
            return;
        }
    };
    if !network.allows(&target.host) {
        on_block(&target.host);
        let body = format!("blocked by Patchbay: {} is not in this server's allowed domains\n", target.host);
        let _ = respond(&mut client, "403 Forbidden", &body).await;
        return;
    }
    let mut upstream = match connect(&target.host, target.port).await {
        Ok(upstream) => upstream,
        Err(e) => {
            let _ =
                respond(&mut client, "502 Bad Gateway", &format!("could not connect to {}: {e}\n", target.host)).await;
            return;
        }
    };
    let tunnel = target.forward.is_none();
    // What the server sent after the head goes with it, in one write.
    let (onward, told) = match target.forward {
        None => (rest, client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await),
        Some(mut forward) => {
            forward.extend_from_slice(&rest);
            (forward, Ok(()))
        }
    };
    if told.is_err() || (!onward.is_empty() && upstream.write_all(&onward).await.is_err()) {
        return;
    }
    if tunnel {
        let _ = tokio::io::copy_bidirectional_with_sizes(&mut client, &mut upstream, COPY, COPY).await;
    } else {
        relay(client, upstream, target.upgrade).await;
    }
}

/// Bytes a copy moves at once (a 16 KiB page in one read and one write a hop).
const COPY: usize = 32 * 1024;

/// Relays a plain request's body to its host, and the host's answer back
/// ([`answer`]), until the host ends its side.
#[cfg(target_os = "linux")]
async fn relay(mut client: TcpStream, mut upstream: TcpStream, upgrade: bool) {
    let (mut client_in, mut client_out) = client.split();
    let (mut upstream_in, mut upstream_out) = upstream.split();
    let onward = async {
        let mut body = vec![0; COPY];
        loop {
            match client_in.read(&mut body).await {
                // A client gone mid-body ends the relay.
                Err(_) => return,
                Ok(0) => {
                    let _ = upstream_out.shutdown().await;
                    break;
                }
                // A host that stopped reading may still be answering (a 413, say).
                Ok(n) if upstream_out.write_all(&body[..n]).await.is_err() => break,
                Ok(_) => {}
            }
        }
        std::future::pending::<()>().await
    };
    tokio::select! {
        _ = answer(&mut upstream_in, &mut client_out, upgrade) => {}
        () = onward => {}
    }
}

/// Passes a host's answer on: every head with `Connection: close` in place
/// of its own hop-by-hop headers (informational ones too: a client may take a
/// 103 for the answer), then the rest as it comes; a switch of protocols (101)
/// as it is, when `upgrade` asked for one (then the connection is a tunnel to
/// this host), else `502`. So a client never sends its next request, for
/// whatever host, on this connection, even when the host kept it open against
/// the request's `Connection: close` or declined an upgrade.
#[cfg(target_os = "linux")]
async fn answer(
    upstream: &mut (impl AsyncRead + Unpin),
    client: &mut (impl AsyncWrite + Unpin),
    upgrade: bool,
) -> std::io::Result<()> {
    let bad = "502 Bad Gateway";
    let mut buf = Vec::with_capacity(COPY);
    loop {
        let end = loop {
            let found = memchr::memmem::find(&buf, b"\r\n\r\n");
            if found.unwrap_or(buf.len()) > MAX_HEAD {
                return respond(client, bad, "the host's answer head is too large\n").await;
            }
            if let Some(end) = found {
                break end + 4;
            }
            if upstream.read_buf(&mut buf).await? == 0 {
                return respond(client, bad, "the host closed the connection without an answer\n").await;
            }
        };
        let Some(code) = status(&buf[..end]) else {
            return respond(client, bad, "the host's answer is not HTTP/1\n").await;
        };
        match code {
            101 if upgrade => break,
            101 => return respond(client, bad, "the host switched protocols unasked\n").await,
            _ => {}
        }
        let Some((head, _)) = rewritten(&buf[..end], None) else {
            return respond(client, bad, "the host's answer head is folded\n").await;
        };
        client.write_all(&head).await?;
        buf.drain(..end);
        if code >= 200 {
            break;
        }
    }
    client.write_all(&buf).await?;
    tokio::io::copy_buf(&mut tokio::io::BufReader::with_capacity(COPY, upstream), client).await?;
    client.shutdown().await
}

/// The status code of an answer head: `HTTP/1.x NNN` (100–599) then a space or the line's end.
fn status(head: &[u8]) -> Option<u16> {
    let [minor, b' ', code @ .., after] = head.strip_prefix(b"HTTP/1.")?.get(..6)? else { return None };
    let digits = minor.is_ascii_digit() && (b'1'..=b'5').contains(&code[0]) && code.iter().all(u8::is_ascii_digit);
    (digits && matches!(after, b' ' | b'\r')).then(|| code.iter().fold(0, |n, d| n * 10 + u16::from(d - b'0')))
}

/// Connects to `host`: an IP literal as it is, `localhost` and its subdomains
/// to the loopback addresses without a lookup (RFC 6761 names them loopback),
/// any other name through the system's resolver, to the addresses that are
/// not this computer's own ([`outward`]: an allowed domain that resolves to
/// the loopback, as DNS rebinding would make it, does not reach local services).
#[cfg(target_os = "linux")]
async fn connect(host: &str, port: u16) -> std::io::Result<TcpStream> {
    use std::net::{Ipv4Addr, Ipv6Addr};
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let upstream = if is_localhost(host) {
        match TcpStream::connect((Ipv4Addr::LOCALHOST, port)).await {
            Ok(stream) => stream,
            Err(_) => TcpStream::connect((Ipv6Addr::LOCALHOST, port)).await?,
        }
    } else if host.parse::<std::net::IpAddr>().is_ok() {
        TcpStream::connect((host, port)).await?
    } else {
        let found: Vec<_> = tokio::net::lookup_host((host, port)).await?.collect();
        let addresses = outward(&found);
        if addresses.is_empty() && !found.is_empty() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("{host} resolves to this computer's own addresses; allow localhost or the address itself"),
            ));
        }
        TcpStream::connect(&addresses[..]).await?
    };
    upstream.set_nodelay(true)?;
    Ok(upstream)
}

/// The addresses a looked-up name may be connected to: none of this
/// computer's own (loopback, unspecified) nor link-local ones (where cloud
/// metadata services answer).
fn outward(found: &[std::net::SocketAddr]) -> Vec<std::net::SocketAddr> {
    use std::net::IpAddr;
    let own = |ip: IpAddr| match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_unspecified() || v4.is_link_local(),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.is_loopback() || v4.is_unspecified() || v4.is_link_local(),
            None => v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xffc0) == 0xfe80,
        },
    };
    found.iter().copied().filter(|a| !own(a.ip())).collect()
}

fn is_localhost(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost" || host.ends_with(".localhost")
}

#[cfg(target_os = "linux")]
async fn respond(client: &mut (impl AsyncWrite + Unpin), status: &str, body: &str) -> std::io::Result<()> {
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(text.as_bytes()).await?;
    client.shutdown().await
}

/// Reads a request head: `CONNECT host:port`, or `METHOD http://host[:port]/path`,
/// rewritten to `METHOD /path` with `Host` the checked authority (RFC 9112
/// §3.2.2: a `Host` header naming another site goes nowhere) and, unless it
/// asks to upgrade (a WebSocket over `ws://`), `Connection: close` in place of
/// its hop-by-hop headers ([`rewritten`]): the host ends the connection after
/// its answer, and [`answer`] tells the client so (`urllib3` and curl keep one
/// connection to a proxy for every host), so the next request comes on a new
/// connection, checked afresh.
/// `Err` says what is wrong, for the `400` answer.
fn parse(head: &[u8]) -> Result<Target, &'static str> {
    let line_is_bad = "the request line is not `METHOD TARGET HTTP/1.x`";
    let text = std::str::from_utf8(head).map_err(|_| "the request head is not UTF-8")?;
    let (line, _) = text.split_once("\r\n").ok_or(line_is_bad)?;
    let parts: Vec<&str> = line.split(' ').collect();
    let [method, target, version] = parts[..] else { return Err(line_is_bad) };
    if line.bytes().any(|b| b.is_ascii_control()) || !matches!(version, "HTTP/1.0" | "HTTP/1.1") {
        return Err(line_is_bad);
    }
    let bad_host = "the target's host or port is not valid";
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = split_port(target, None).ok_or(bad_host)?;
        return Ok(Target { host, port, forward: None, upgrade: false });
    }
    let rest = target
        .strip_prefix("http://")
        .or_else(|| target.strip_prefix("HTTP://"))
        .ok_or("the target is not a whole http:// URL (or CONNECT host:port)")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = split_port(authority, Some(80)).ok_or(bad_host)?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let start = format!("{method} {path} {version}\r\nHost: {authority}");
    let (forward, upgrade) =
        rewritten(head, Some(start.as_bytes())).ok_or("a header line is folded or malformed (RFC 9112 §5)")?;
    Ok(Target { host, port, forward: Some(forward), upgrade })
}

/// `head` (a request's or an answer's) with its first line replaced by
/// `start` for a request (and then without its `Host`), without `Proxy-*`
/// headers, and with `Connection: close` in place of `Connection`,
/// `Keep-Alive` and the headers `Connection` names, unless it is a request to
/// upgrade (`Connection` names `upgrade` and an `Upgrade` header is there),
/// which keeps them, as said by the `bool`. A message's framing
/// (`Content-Length`, `Transfer-Encoding`) stays whatever `Connection` names.
/// `None` for a folded line, and in a request for a control byte but a tab
/// (a bare CR, a NUL) or a name with spaces (RFC 9112 §5.1, §5.2; RFC 9110
/// §5.5: refused, not guessed at).
fn rewritten(head: &[u8], start: Option<&[u8]>) -> Option<(Vec<u8>, bool)> {
    let request = start.is_some();
    let mut lines = head.split(|&b| b == b'\n').map(|line| line.strip_suffix(b"\r").unwrap_or(line));
    let first = lines.next()?;
    let fields: Vec<&[u8]> = lines.filter(|line| !line.is_empty()).collect();
    if fields.iter().any(|line| line.starts_with(b" ") || line.starts_with(b"\t")) {
        return None;
    }
    fn raw_name(line: &[u8]) -> &[u8] {
        line.split(|&b| b == b':').next().unwrap_or_default()
    }
    let sloppy = |line: &&[u8]| {
        let name = raw_name(line);
        let control = line.iter().any(|&b| b.is_ascii_control() && b != b'\t');
        control || !line.contains(&b':') || name.is_empty() || name.iter().any(u8::is_ascii_whitespace)
    };
    if request && fields.iter().any(sloppy) {
        return None;
    }
    let name = |line: &[u8]| String::from_utf8_lossy(raw_name(line)).trim().to_ascii_lowercase();
    let value =
        |line: &[u8]| String::from_utf8_lossy(line.splitn(2, |&b| b == b':').nth(1).unwrap_or_default()).into_owned();
    let options: Vec<String> = fields
        .iter()
        .filter(|line| name(line) == "connection")
        .flat_map(|line| value(line).split(',').map(|o| o.trim().to_ascii_lowercase()).collect::<Vec<_>>())
        .collect();
    let upgrade =
        request && options.iter().any(|o| o == "upgrade") && fields.iter().any(|line| name(line) == "upgrade");
    let mut out = start.unwrap_or(first).to_vec();
    out.extend_from_slice(b"\r\n");
    for line in fields {
        let name = name(line);
        let framing = matches!(name.as_str(), "content-length" | "transfer-encoding" | "host");
        let hop = name == "connection" || name == "keep-alive" || (options.contains(&name) && !framing);
        let dropped = (request && name == "host") || name.starts_with("proxy-") || (hop && !upgrade);
        if !dropped {
            out.extend_from_slice(line);
            out.extend_from_slice(b"\r\n");
        }
    }
    if !upgrade {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
    Some((out, upgrade))
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

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn only_a_listening_tcp_socket_on_the_loopback_is_taken_over() {
        use std::os::fd::OwnedFd;
        let listening = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listening.local_addr().unwrap().port();
        let taken = handover::checked(OwnedFd::from(listening)).unwrap();
        assert_eq!(taken.local_addr().unwrap().port(), port);
        let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let connected = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let (unix, _) = std::os::unix::net::UnixStream::pair().unwrap();
        for fd in [OwnedFd::from(udp), OwnedFd::from(connected), OwnedFd::from(unix)] {
            let refused = handover::checked(fd).unwrap_err();
            assert_eq!(refused.to_string(), "what was handed over is not a listening TCP socket");
        }
        let everywhere = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        let refused = handover::checked(OwnedFd::from(everywhere)).unwrap_err();
        assert_eq!(refused.to_string(), "the listener handed over is not on the loopback");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_proxy_folder_left_by_a_killed_patchbay_goes_and_a_running_ones_stays() {
        let under = tempfile::tempdir().unwrap();
        // Above the kernel's largest process id (2^22): no such process.
        let left = under.path().join("egress-4194305-0123456789abcdef");
        let live = under.path().join(format!("egress-{}-fedcba9876543210", std::process::id()));
        let other = under.path().join("egress-notes");
        for dir in [&left, &live, &other] {
            std::fs::create_dir(dir).unwrap();
        }
        let proxy = Egress::start(Network::Any, Arc::new(|_: &str| {}), under.path()).unwrap();
        assert!(!left.exists(), "the dead process's folder stayed");
        assert!(live.exists() && other.exists() && proxy.dir().exists());
        let own = proxy.dir().file_name().unwrap().to_str().unwrap().to_owned();
        assert!(own.starts_with(&format!("egress-{}-", std::process::id())), "{own}");
    }

    /// A host that answers every request with its name and keeps each
    /// connection alive, unless asked to close it and `heeds_close`; returns its port.
    #[cfg(target_os = "linux")]
    async fn named_host(name: &'static str, heeds_close: bool) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let (mut seen, mut buf) = (Vec::new(), [0u8; 1024]);
                    loop {
                        let Some(end) = memchr::memmem::find(&seen, b"\r\n\r\n") else {
                            match stream.read(&mut buf).await {
                                Ok(0) | Err(_) => return,
                                Ok(n) => seen.extend_from_slice(&buf[..n]),
                            }
                            continue;
                        };
                        let close = heeds_close
                            && String::from_utf8_lossy(&seen[..end]).to_ascii_lowercase().contains("connection: close");
                        seen.drain(..end + 4);
                        let how = if close { "Connection: close\r\n" } else { "" };
                        let answer = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n{how}\r\n{name}", name.len());
                        if stream.write_all(answer.as_bytes()).await.is_err() || close {
                            return;
                        }
                    }
                });
            }
        });
        port
    }

    /// A proxy for `localhost` on a port of its own.
    #[cfg(target_os = "linux")]
    async fn local_proxy() -> u16 {
        let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy_port = proxy.local_addr().unwrap().port();
        tokio::spawn(async move {
            let network = Arc::new(Network::Domains(vec!["localhost".into()]));
            let on_block: BlockListener = Arc::new(|_: &str| {});
            while let Ok((stream, _)) = proxy.accept().await {
                let (network, on_block) = (network.clone(), on_block.clone());
                tokio::spawn(async move { handle(stream, &network, &on_block).await });
            }
        });
        proxy_port
    }

    /// What `head` (a request to `port`) gets through the proxy on a new connection.
    #[cfg(target_os = "linux")]
    async fn first_answer(proxy: u16, head: String, ends: &[u8]) -> String {
        let mut client = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        client.write_all(head.as_bytes()).await.unwrap();
        read_until(&mut client, ends).await
    }

    /// What `from` sends, read until it ends with `ends` (and no further: the connection may
    /// be reset after), each read within 10 s.
    #[cfg(target_os = "linux")]
    async fn read_until(from: &mut (impl AsyncRead + Unpin), ends: &[u8]) -> String {
        let (mut answer, mut buf) = (Vec::new(), [0u8; 1024]);
        while !answer.ends_with(ends) {
            let read = tokio::time::timeout(std::time::Duration::from_secs(10), from.read(&mut buf));
            let n = read.await.expect("the answer came in time").unwrap();
            assert!(n > 0, "closed before the answer: {}", String::from_utf8_lossy(&answer));
            answer.extend_from_slice(&buf[..n]);
        }
        String::from_utf8(answer).unwrap()
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_connection_kept_alive_never_takes_a_request_for_another_host_to_the_first() {
        let (first, second) = (named_host("first", true).await, named_host("second", true).await);
        let proxy_port = local_proxy().await;
        let request = |port: u16| format!("GET http://localhost:{port}/ HTTP/1.1\r\nHost: localhost:{port}\r\n\r\n");
        let wait = std::time::Duration::from_secs(5);
        let mut client = TcpStream::connect(("127.0.0.1", proxy_port)).await.unwrap();
        client.write_all(request(first).as_bytes()).await.unwrap();
        let answer = read_until(&mut client, b"first").await;
        assert!(answer.contains("Connection: close"), "the answer says the connection ends");
        // As a client that keeps the connection: the next request, for another host, on it.
        let _ = client.write_all(request(second).as_bytes()).await;
        let mut rest = Vec::new();
        let ended = tokio::time::timeout(wait, client.read_to_end(&mut rest)).await;
        assert!(ended.is_ok(), "the connection stayed open after its one answer");
        assert!(!String::from_utf8_lossy(&rest).contains("first"), "the first host answered the second's request");
        let mut again = TcpStream::connect(("127.0.0.1", proxy_port)).await.unwrap();
        again.write_all(request(second).as_bytes()).await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(wait, again.read_to_end(&mut answer)).await.unwrap().unwrap();
        assert!(answer.ends_with(b"second"), "{}", String::from_utf8_lossy(&answer));
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_host_that_keeps_the_connection_or_declines_an_upgrade_is_answered_for_with_close() {
        let stubborn = named_host("stubborn", false).await;
        let proxy = local_proxy().await;
        let kept = format!("GET http://localhost:{stubborn}/ HTTP/1.1\r\nConnection: keep-alive\r\n\r\n");
        let upgrade = format!(
            "GET http://localhost:{stubborn}/chat HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
        );
        for head in [kept, upgrade] {
            let answer = first_answer(proxy, head, b"stubborn").await;
            assert!(answer.contains("\r\nConnection: close\r\n"), "{answer}");
        }
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_host_that_answers_before_reading_the_whole_body_is_heard() {
        // It reads the head, refuses the body unread and keeps the connection: the client's
        // upload stalls once the buffers fill, and the answer must still come through.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let host = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let (mut seen, mut buf) = (Vec::new(), [0u8; 1024]);
            while memchr::memmem::find(&seen, b"\r\n\r\n").is_none() {
                let n = stream.read(&mut buf).await.unwrap();
                seen.extend_from_slice(&buf[..n]);
            }
            let refusal = "HTTP/1.1 413 Content Too Large\r\nContent-Length: 8\r\n\r\ntoo long";
            stream.write_all(refusal.as_bytes()).await.unwrap();
            stream.shutdown().await.unwrap();
            tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        });
        let proxy = local_proxy().await;
        let size = 64 * 1024 * 1024;
        let head = format!("POST http://localhost:{host}/ HTTP/1.1\r\nContent-Length: {size}\r\n\r\n");
        let mut client = TcpStream::connect(("127.0.0.1", proxy)).await.unwrap();
        client.write_all(head.as_bytes()).await.unwrap();
        let (mut reading, mut writing) = client.into_split();
        tokio::spawn(async move {
            let body = vec![b'x'; 1024 * 1024];
            for _ in 0..64 {
                if writing.write_all(&body).await.is_err() {
                    return;
                }
            }
        });
        // The proxy then drops the connection with the upload unread, which resets it.
        let answer = read_until(&mut reading, b"too long").await;
        assert!(answer.starts_with("HTTP/1.1 413 "), "{answer}");
    }

    /// What a client gets of `host`'s answer, written in pieces of `piece` bytes.
    #[cfg(target_os = "linux")]
    async fn through(host: &'static [u8], piece: usize, upgrade: bool) -> Vec<u8> {
        let (mut writer, mut reader) = tokio::io::duplex(64 * 1024);
        tokio::spawn(async move {
            for chunk in host.chunks(piece) {
                writer.write_all(chunk).await.unwrap();
                tokio::task::yield_now().await;
            }
        });
        let mut client = Vec::new();
        answer(&mut reader, &mut client, upgrade).await.unwrap();
        client
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn every_answer_head_says_close_but_an_asked_switch_and_what_is_not_http_is_refused() {
        let continued: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nKeep-Alive: timeout=5\r\nConnection: keep-alive, X-Trace, Content-Length\r\nX-Trace: 1\r\nContent-Length: 2\r\n\r\nok";
        let closing: &[u8] = b"HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
        for piece in [continued.len(), 7] {
            assert_eq!(through(continued, piece, false).await, closing, "in pieces of {piece}");
        }
        let hints =
            through(b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.0 204 No Content\r\n\r\n", 5, false);
        let hinted: &[u8] = b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\nConnection: close\r\n\r\nHTTP/1.0 204 No Content\r\nConnection: close\r\n\r\n";
        assert_eq!(hints.await, hinted);
        let latin: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Disposition: caf\xe9\r\n\r\n";
        assert_eq!(
            through(latin, 64, false).await,
            b"HTTP/1.1 200 OK\r\nContent-Disposition: caf\xe9\r\nConnection: close\r\n\r\n"
        );
        let switched: &[u8] =
            b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nframes";
        assert_eq!(through(switched, 64, true).await, switched);
        let refused = |answer: Vec<u8>, why: &str| {
            let answer = String::from_utf8(answer).unwrap();
            assert!(answer.starts_with("HTTP/1.1 502 Bad Gateway\r\n") && answer.ends_with(why), "{answer}");
        };
        refused(through(switched, 64, false).await, "the host switched protocols unasked\n");
        refused(through(b"SSH-2.0-OpenSSH_9.2\r\n\r\n", 64, false).await, "not HTTP/1\n");
        refused(through(b"HTTP/1.1 +20 OK\r\n\r\n", 64, false).await, "not HTTP/1\n");
        refused(through(b"HTTP/1.1 099 Odd\r\n\r\n", 64, false).await, "not HTTP/1\n");
        refused(through(b"HTTP/1.1 200 OK\r\nX-A: 1\r\n continued\r\n\r\n", 64, false).await, "is folded\n");
        refused(through(b"HTTP/1.1 200 OK\r\nContent-", 64, false).await, "without an answer\n");
        let huge: &'static [u8] =
            Box::leak(format!("HTTP/1.1 200 OK\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD)).into_bytes().into());
        refused(through(huge, 4096, false).await, "the host's answer head is too large\n");
    }

    #[test]
    fn a_looked_up_name_never_leads_to_this_computers_own_or_link_local_addresses() {
        let found: Vec<std::net::SocketAddr> =
            ["127.0.1.1:80", "[::1]:80", "0.0.0.0:80", "169.254.169.254:80", "[fe80::1]:80", "[::ffff:127.0.0.1]:80"]
                .iter()
                .map(|a| a.parse().unwrap())
                .collect();
        assert!(outward(&found).is_empty());
        let fine: Vec<std::net::SocketAddr> =
            ["93.184.215.14:443", "10.1.2.3:443", "[2606:4700::1]:443"].iter().map(|a| a.parse().unwrap()).collect();
        assert_eq!(outward(&[found.clone(), fine.clone()].concat()), fine);
    }

    #[test]
    fn localhost_names_are_loopback_without_a_lookup() {
        assert!(is_localhost("localhost") && is_localhost("LocalHost.") && is_localhost("api.localhost"));
        assert!(!is_localhost("localhost.example.com") && !is_localhost("notlocalhost") && !is_localhost("127.0.0.1"));
    }

    #[test]
    fn connect_and_absolute_requests_are_read_and_rewritten() {
        let connect = parse(b"CONNECT api.github.com:443 HTTP/1.1\r\nHost: api.github.com:443\r\n\r\n").unwrap();
        assert_eq!((connect.host.as_str(), connect.port, connect.forward), ("api.github.com", 443, None));
        let get = parse(
            b"GET http://Example.org:8080/a?b HTTP/1.1\r\nHost: example.org\r\nProxy-Connection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert_eq!((get.host.as_str(), get.port), ("example.org", 8080));
        assert_eq!(get.forward.unwrap(), b"GET /a?b HTTP/1.1\r\nHost: Example.org:8080\r\nConnection: close\r\n\r\n");
        let fronted = parse(b"GET http://user@allowed.example/ HTTP/1.1\r\nHost: other.example\r\n\r\n").unwrap();
        assert_eq!(
            fronted.forward.unwrap(),
            b"GET / HTTP/1.1\r\nHost: allowed.example\r\nConnection: close\r\n\r\n",
            "the host header names the checked host"
        );
        let refused: [&[u8]; 9] = [
            b"GET http://example.org/ HTTP/1.1\r\nX-A: 1\0Host: other.example\r\n\r\n",
            b"GET http://example.org/ HTTP/1.1\r\nX-A: a\x7fb\r\n\r\n",
            b"GET http://example.org/\tx HTTP/1.1\r\n\r\n",
            b"GET http://example.org/ x HTTP/1.1\r\n\r\n",
            b"GET http://example.org/ HTTP/1.1\r\nX-A: 1\r\n Host: other.example\r\n\r\n",
            b"GET http://example.org/ HTTP/1.1\nHost:other.example\r\n\r\n",
            b"GET http://example.org/ HTTP/1.1\r\nHost : other.example\r\n\r\n",
            b"GET http://example.org/ HTTP/1.1\r\nX-A: 1\rHost: other.example\r\n\r\n",
            b"GET http://example.org/ HTTP/2\r\n\r\n",
        ];
        for head in refused {
            assert!(parse(head).is_err(), "{}", String::from_utf8_lossy(head));
        }
        let framed =
            parse(b"POST http://example.org/ HTTP/1.1\r\nConnection: content-length\r\nContent-Length: 2\r\n\r\n");
        let kept = b"POST / HTTP/1.1\r\nHost: example.org\r\nContent-Length: 2\r\nConnection: close\r\n\r\n";
        assert_eq!(framed.unwrap().forward.unwrap(), kept, "Connection never takes a message's framing");
        let chunked = b"HTTP/1.1 200 OK\r\nConnection: transfer-encoding\r\nTransfer-Encoding: chunked\r\n\r\n";
        let (answer, _) = rewritten(chunked, None).unwrap();
        assert_eq!(answer, b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n");
        let h2c = parse(b"GET http://example.org/ HTTP/1.1\r\nConnection: keep-alive, X-Trace\r\nX-Trace: 1\r\nUpgrade: h2c\r\n\r\n");
        assert_eq!(
            h2c.unwrap().forward.unwrap(),
            b"GET / HTTP/1.1\r\nHost: example.org\r\nUpgrade: h2c\r\nConnection: close\r\n\r\n",
            "an Upgrade that Connection does not name is no upgrade; what Connection names goes"
        );
        let kept_alive = parse(
            b"POST http://example.org/ HTTP/1.1\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nContent-Length: 0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(
            kept_alive.forward.unwrap(),
            b"POST / HTTP/1.1\r\nHost: example.org\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            "one request a connection"
        );
        let socket =
            parse(b"GET http://example.org/chat HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n");
        let socket = socket.unwrap();
        assert!(socket.upgrade);
        let kept = b"GET /chat HTTP/1.1\r\nHost: example.org\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
        assert_eq!(socket.forward.unwrap(), kept);
        let tabbed = parse(b"GET http://example.org/ HTTP/1.1\r\nX-A:\ta\tb\r\n\r\n").unwrap();
        let kept = b"GET / HTTP/1.1\r\nHost: example.org\r\nX-A:\ta\tb\r\nConnection: close\r\n\r\n";
        assert_eq!(tabbed.forward.unwrap(), kept, "a tab is white space in a field");
        let bare = parse(b"GET http://[::1]/ HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((bare.host.as_str(), bare.port), ("[::1]", 80));
        assert_eq!(bare.forward.unwrap(), b"GET / HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n");
        let relative = parse(b"GET /relative HTTP/1.1\r\n\r\n").unwrap_err();
        assert_eq!(relative, "the target is not a whole http:// URL (or CONNECT host:port)");
        let folded = parse(b"GET http://example.org/ HTTP/1.1\r\nX-A: 1\r\n Host: other.example\r\n\r\n");
        assert_eq!(folded.unwrap_err(), "a header line is folded or malformed (RFC 9112 §5)");
        assert_eq!(
            parse(b"GET http://example.org/ HTTP/2\r\n\r\n").unwrap_err(),
            "the request line is not `METHOD TARGET HTTP/1.x`"
        );
    }
}
