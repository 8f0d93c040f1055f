//! A Hugging Face hub on 127.0.0.1 serving a model folder as a repository, the way the hub does:
//! `HEAD`/`GET /REPO/resolve/main/FILE`; small files answer with their git blob hash as ETag, large
//! ones (`.safetensors`, `.bin`) redirect to a storage path and give their sha256 in
//! `X-Linked-Etag` and their size in `X-Linked-Size`; storage honours `Range: bytes=N-`.
//! A [`Fault`] makes the weights' download go wrong in one of the ways networks do.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

/// How the next downloads of large files go wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// They do not.
    None,
    /// The body ends cleanly after this many bytes (no length announced).
    Truncate(usize),
    /// The server sends this many bytes, then nothing more.
    Stall(usize),
    /// The published sha256 is not the file's.
    WrongChecksum,
    /// The published size is 10 GB.
    Oversize,
}

/// The commit the hub says every file is at.
pub const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

struct Hub {
    revisions: Mutex<Vec<String>>,
    repo: String,
    files: BTreeMap<String, Vec<u8>>,
    fault: Mutex<Fault>,
    ranges: Mutex<Vec<String>>,
}

/// A running hub; dropping it does not stop it (it lives as long as the runtime).
#[derive(Clone)]
pub struct TestHub {
    pub url: String,
    hub: Arc<Hub>,
}

impl TestHub {
    /// Serves every file under `folder` as the repository `repo` (such as `sentence-transformers/all-MiniLM-L6-v2`).
    pub async fn serve(repo: &str, folder: &Path) -> Self {
        let mut files = BTreeMap::new();
        for entry in walk(folder) {
            let rel = entry.strip_prefix(folder).expect("inside").to_string_lossy().replace('\\', "/");
            files.insert(rel, std::fs::read(&entry).expect("read a model file"));
        }
        let hub = Arc::new(Hub {
            revisions: Mutex::new(Vec::new()),
            repo: repo.to_owned(),
            files,
            fault: Mutex::new(Fault::None),
            ranges: Mutex::new(Vec::new()),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind the hub");
        let url = format!("http://{}", listener.local_addr().expect("an address"));
        let app = Router::new().fallback(answer).with_state(Arc::clone(&hub));
        tokio::spawn(async move { axum::serve(listener, app).await.expect("serve the hub") });
        Self { url, hub }
    }

    /// Makes the next large-file downloads go wrong (or right again).
    pub fn set_fault(&self, fault: Fault) {
        *self.hub.fault.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = fault;
    }

    /// The revisions files were asked at (`main` or [`COMMIT`]), in order.
    pub fn revisions(&self) -> Vec<String> {
        self.hub.revisions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// The `Range` headers storage has been asked for, in order.
    pub fn ranges(&self) -> Vec<String> {
        self.hub.ranges.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read the model folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn large(name: &str) -> bool {
    name.ends_with(".safetensors") || name.ends_with(".bin")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex(&sha2::Sha256::digest(bytes))
}

fn git_sha1(bytes: &[u8]) -> String {
    use sha1::Digest as _;
    let mut h = sha1::Sha1::new();
    h.update(format!("blob {}\0", bytes.len()).as_bytes());
    h.update(bytes);
    hex(&h.finalize())
}

async fn answer(State(hub): State<Arc<Hub>>, method: Method, uri: Uri, headers: HeaderMap) -> Response {
    let path = uri.path();
    if let Some(name) = path.strip_prefix("/storage/") {
        return storage(&hub, &method, name, &headers);
    }
    // `resolve/main/FILE`, or `resolve/COMMIT/FILE` once a client pins the commit it was told.
    let Some((revision, name)) = path.strip_prefix(&format!("/{}/resolve/", hub.repo)).and_then(|r| r.split_once('/'))
    else {
        return (StatusCode::NOT_FOUND, "Repository not found").into_response();
    };
    if revision != "main" && revision != COMMIT {
        return (StatusCode::NOT_FOUND, "Revision not found").into_response();
    }
    hub.revisions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(revision.to_owned());
    let Some(bytes) = hub.files.get(name) else {
        return (StatusCode::NOT_FOUND, "Entry not found").into_response();
    };
    let commit = [("x-repo-commit", COMMIT.to_owned())];
    if large(name) {
        let fault = *hub.fault.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let published = if fault == Fault::WrongChecksum { sha256(b"other weights") } else { sha256(bytes) };
        return (
            StatusCode::FOUND,
            commit,
            [
                (header::LOCATION.as_str(), format!("/storage/{name}")),
                ("x-linked-etag", format!("\"{published}\"")),
                (
                    "x-linked-size",
                    if fault == Fault::Oversize { "10000000000".to_owned() } else { bytes.len().to_string() },
                ),
            ],
        )
            .into_response();
    }
    let etag = [(header::ETAG, format!("\"{}\"", git_sha1(bytes)))];
    let body = if method == Method::HEAD { Body::empty() } else { Body::from(bytes.clone()) };
    (commit, etag, [(header::CONTENT_LENGTH, bytes.len().to_string())], body).into_response()
}

fn storage(hub: &Hub, method: &Method, name: &str, headers: &HeaderMap) -> Response {
    let Some(bytes) = hub.files.get(name) else { return StatusCode::NOT_FOUND.into_response() };
    let range = headers.get(header::RANGE).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let from = match &range {
        Some(r) => {
            hub.ranges.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(r.clone());
            r.strip_prefix("bytes=").and_then(|r| r.strip_suffix('-')).and_then(|n| n.parse().ok()).unwrap_or(0)
        }
        None => 0,
    };
    let rest = Bytes::copy_from_slice(&bytes[from.min(bytes.len())..]);
    let status = if from > 0 { StatusCode::PARTIAL_CONTENT } else { StatusCode::OK };
    if method == Method::HEAD {
        return (status, [(header::CONTENT_LENGTH, rest.len().to_string())]).into_response();
    }
    let fault = *hub.fault.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let content_range = [(header::CONTENT_RANGE, format!("bytes {from}-{}/{}", bytes.len().max(1) - 1, bytes.len()))];
    match fault {
        Fault::None | Fault::WrongChecksum | Fault::Oversize => {
            (status, content_range, Body::from(rest)).into_response()
        }
        Fault::Truncate(n) => {
            let part = rest.slice(..n.min(rest.len()));
            let stream = futures::stream::iter([Ok::<_, std::io::Error>(part)]);
            (status, content_range, Body::from_stream(stream)).into_response()
        }
        Fault::Stall(n) => {
            let part = rest.slice(..n.min(rest.len()));
            let stream = futures::StreamExt::chain(
                futures::stream::iter([Ok::<_, std::io::Error>(part)]),
                futures::stream::pending(),
            );
            (status, content_range, Body::from_stream(stream)).into_response()
        }
    }
}
