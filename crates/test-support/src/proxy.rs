//! A recording HTTP forward proxy on 127.0.0.1, to check that requests go
//! through the proxy the user chose.
//!
//! A client sends a proxy its request with the whole URL as target
//! (`POST http://127.0.0.1:8080/v1/chat/completions HTTP/1.1`). For each
//! connection the proxy records that request line and its `Proxy-Authorization`
//! (which it does not pass on), connects to the host it names, rewrites the
//! line to the origin's form, asks for the connection to close after the
//! answer (so every request comes on a connection of its own, and is
//! recorded), and then copies both directions as they are.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One connection's request line and `Proxy-Authorization` value.
type Seen = (String, Option<String>);

/// A running proxy; dropping it stops accepting.
pub struct RecordingProxy {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl RecordingProxy {
    /// Starts listening on a free port.
    pub async fn start() -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let record = record.clone();
                tokio::spawn(async move {
                    let _ = forward(client, record).await;
                });
            }
        });
        Ok(Self { port, seen, task })
    }

    /// The proxy's URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The first request line of every connection so far.
    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().iter().map(|(line, _)| line.clone()).collect()
    }

    /// The `Proxy-Authorization` value of every connection so far (`None` without one).
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.seen.lock().unwrap().iter().map(|(_, login)| login.clone()).collect()
    }
}

async fn forward(mut client: TcpStream, record: Arc<Mutex<Vec<Seen>>>) -> anyhow::Result<()> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        anyhow::ensure!(head.len() < 65536 && client.read(&mut byte).await? == 1, "no request head");
        head.push(byte[0]);
    }
    let head = String::from_utf8(head)?;
    let mut lines = head.split("\r\n").filter(|l| !l.is_empty());
    let line = lines.next().unwrap_or_default().to_owned();
    let mut login = None;
    let headers: Vec<&str> = lines
        .filter(|h| {
            let (name, value) = h.split_once(':').unwrap_or((h, ""));
            let name = name.trim().to_ascii_lowercase();
            if name == "proxy-authorization" {
                login = Some(value.trim().to_owned());
            }
            !["connection", "proxy-connection", "proxy-authorization"].contains(&name.as_str())
        })
        .collect();
    record.lock().unwrap().push((line.clone(), login));
    let mut parts = line.splitn(3, ' ');
    let (method, target, version) =
        (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let rest = target.strip_prefix("http://").ok_or_else(|| anyhow::anyhow!("not an absolute http URL: {target}"))?;
    let (authority, path) = rest.split_once('/').map_or((rest, "/".to_owned()), |(a, p)| (a, format!("/{p}")));
    let mut upstream = TcpStream::connect(authority).await?;
    let rewritten = format!("{method} {path} {version}\r\n{}\r\nConnection: close\r\n\r\n", headers.join("\r\n"));
    upstream.write_all(rewritten.as_bytes()).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}
