//! Local embedding models in one click: a short [`CATALOGUE`], downloaded from the Hugging Face hub
//! or a mirror of it ([`hub_url`]: the knowledge base's setting, else `HF_ENDPOINT`, else
//! huggingface.co) into `<data dir>/models/NAME`.
//!
//! A download fills `NAME.partial` and becomes `NAME` only when every file is whole and matches the
//! checksum the hub publishes for it (the sha256 of a large file, the git blob hash of a small one),
//! so a model folder in use is never half there. A download that stops keeps what it got, and the
//! next one resumes with a range request. The folder is an ordinary model folder afterwards.

use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::StreamExt as _;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncWriteExt as _;
use tokio_util::sync::CancellationToken;

use super::RagError;
use crate::paths::DataDir;

/// A model Patchbay offers to download.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogueModel {
    /// The name users type (`patchbay kb model get NAME`) and the folder's.
    pub name: &'static str,
    /// Its repository on the hub.
    pub repo: &'static str,
    pub languages: &'static str,
    /// Understands more than English (suggested for Chinese).
    pub multilingual: bool,
    /// About how much is downloaded.
    pub megabytes: u32,
}

/// The models offered: an English one, and multilingual ones that understand Chinese.
pub static CATALOGUE: &[CatalogueModel] = &[
    CatalogueModel {
        name: "all-MiniLM-L6-v2",
        repo: "sentence-transformers/all-MiniLM-L6-v2",
        languages: "English",
        multilingual: false,
        megabytes: 91,
    },
    CatalogueModel {
        name: "bge-small-zh-v1.5",
        repo: "BAAI/bge-small-zh-v1.5",
        languages: "Chinese and English",
        multilingual: true,
        megabytes: 96,
    },
    CatalogueModel {
        name: "paraphrase-multilingual-MiniLM-L12-v2",
        repo: "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2",
        languages: "50 languages, Chinese included",
        multilingual: true,
        megabytes: 480,
    },
];

/// The hub when neither the setting nor `HF_ENDPOINT` names another.
pub const DEFAULT_HUB: &str = "https://huggingface.co";

/// Bytes between two progress reports.
const PROGRESS_STEP: u64 = 1 << 20;

/// How long a download may receive nothing before it counts as stopped.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(30);

/// The model named `name` in the catalogue.
pub fn find(name: &str) -> Result<&'static CatalogueModel, RagError> {
    CATALOGUE.iter().find(|m| m.name.eq_ignore_ascii_case(name.trim())).ok_or_else(|| RagError::UnknownModel {
        name: name.to_owned(),
        known: CATALOGUE.iter().map(|m| m.name).collect::<Vec<_>>().join(", "),
    })
}

/// The model to suggest: a multilingual one when the window speaks Chinese or the user's
/// documents hold Han text, else the English one.
pub fn suggested(chinese_ui: bool, han_documents: bool) -> &'static CatalogueModel {
    let multilingual = chinese_ui || han_documents;
    CATALOGUE.iter().find(|m| m.multilingual == multilingual).unwrap_or(&CATALOGUE[0])
}

/// The hub to download from: `setting` (checked when it was saved), else the `HF_ENDPOINT`
/// environment variable (checked here, and named when it is not usable), else huggingface.co.
pub fn hub_url(setting: Option<&str>) -> Result<String, RagError> {
    if let Some(hub) = setting.map(str::trim).filter(|h| !h.is_empty()) {
        return Ok(hub.trim_end_matches('/').to_owned());
    }
    match std::env::var("HF_ENDPOINT") {
        Ok(hub) if !hub.trim().is_empty() => check_hub(&hub).map_err(|e| match e {
            RagError::BadHub { url, why } => RagError::BadHub { url: format!("{url} (from HF_ENDPOINT)"), why },
            other => other,
        }),
        _ => Ok(DEFAULT_HUB.to_owned()),
    }
}

/// Checks a hub address the user typed: an http or https URL.
pub fn check_hub(url: &str) -> Result<String, RagError> {
    let bad = |why: &str| RagError::BadHub { url: url.to_owned(), why: why.to_owned() };
    let parsed = url::Url::parse(url.trim()).map_err(|e| bad(&e.to_string()))?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return Err(bad("it is not an http or https address with a host"));
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return Err(bad("it holds a user name or password, which would be shown and stored in plain text"));
    }
    Ok(url.trim().trim_end_matches('/').to_owned())
}

/// Where downloaded models live.
pub fn models_dir(data: &DataDir) -> PathBuf {
    data.path().join("models")
}

/// Whether a catalogue model is here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    /// Not downloaded.
    Absent,
    /// A download stopped part way; getting it again resumes.
    Partial,
    /// Downloaded and checked: a folder to use.
    Ready,
}

/// The state of `model` in `root` ([`models_dir`]).
pub fn state(root: &Path, model: &CatalogueModel) -> ModelState {
    if root.join(model.name).join(MANIFEST).is_file() {
        ModelState::Ready
    } else if partial_dir(root, model).is_dir() {
        ModelState::Partial
    } else {
        ModelState::Absent
    }
}

/// Written last into a downloaded model's folder: where it came from and what was checked.
pub const MANIFEST: &str = "patchbay-model.json";

#[derive(Debug, Serialize, Deserialize)]
struct Manifest {
    repo: String,
    hub: String,
    /// The hub's commit of the repository, when it said.
    commit: Option<String>,
    files: Vec<FileRecord>,
}

#[derive(Debug, Serialize, Deserialize)]
struct FileRecord {
    path: String,
    bytes: u64,
    /// `sha256:…` or `git-sha1:…`, as the hub published it.
    checksum: String,
}

/// A download's progress over all its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DownloadProgress {
    pub model: String,
    /// The file being fetched now.
    pub file: String,
    pub done_bytes: u64,
    pub total_bytes: u64,
}

/// How a file must be: `Weights` is model.safetensors, or pytorch_model.bin where a repository has no safetensors.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Need {
    Required,
    Optional,
    Weights,
}

const FILES: &[(&str, Need)] = &[
    ("config.json", Need::Required),
    ("tokenizer.json", Need::Required),
    ("model.safetensors", Need::Weights),
    ("1_Pooling/config.json", Need::Optional),
    ("sentence_bert_config.json", Need::Optional),
];

/// The weights of repositories that publish no safetensors.
const PYTORCH_WEIGHTS: &str = "pytorch_model.bin";

/// What the hub says about one file before it is fetched.
struct Remote {
    path: String,
    url: String,
    bytes: u64,
    checksum: Checksum,
}

#[derive(Clone, PartialEq, Eq)]
enum Checksum {
    Sha256(String),
    /// Git's blob hash: sha1 of `blob <len>\0` and the bytes.
    GitSha1(String),
}

impl std::fmt::Display for Checksum {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Sha256(h) => write!(f, "sha256:{h}"),
            Self::GitSha1(h) => write!(f, "git-sha1:{h}"),
        }
    }
}

fn partial_dir(root: &Path, model: &CatalogueModel) -> PathBuf {
    root.join(format!("{}.partial", model.name))
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RagError + '_ {
    move |source| RagError::Io { path: path.to_path_buf(), source }
}

/// A download's error; the URL without any user name or password (`HF_ENDPOINT` may hold one).
fn download_error(url: &str, detail: impl Into<String>) -> RagError {
    RagError::Download { url: crate::net::redacted(url), detail: detail.into() }
}

/// Downloads `model` from `hub` into `root` ([`models_dir`]) and returns its folder; a model
/// already there is returned as it is. `progress` hears of the download a megabyte at a time.
/// One download of a model runs at a time, across processes (a lock file beside the folders).
pub async fn download(
    root: &Path,
    hub: &str,
    model: &CatalogueModel,
    stall: Duration,
    progress: &(dyn Fn(&DownloadProgress) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<PathBuf, RagError> {
    let target = root.join(model.name);
    if state(root, model) == ModelState::Ready {
        return Ok(target);
    }
    if target.exists() {
        return Err(download_error(
            &format!("{hub}/{}", model.repo),
            format!(
                "{} exists and is not a model Patchbay downloaded; move it away (or use it as a model folder of \
                 your own) and get the model again",
                target.display()
            ),
        ));
    }
    tokio::fs::create_dir_all(root).await.map_err(io(root))?;
    let lock_path = root.join(format!("{}.lock", model.name));
    let lock = std::fs::File::create(&lock_path).map_err(io(&lock_path))?;
    // Held until the download returns, released when `lock` is dropped (or the process ends).
    if lock.try_lock().is_err() {
        return Err(download_error(
            &format!("{hub}/{}", model.repo),
            format!("{} is being downloaded already (by this or another Patchbay)", model.name),
        ));
    }
    // Another download may have finished while this one waited to start.
    if state(root, model) == ModelState::Ready {
        return Ok(target);
    }
    let client = crate::net::public_client();
    let mut files = Vec::new();
    // Every file from the commit the hub named first, so that none comes from a newer one.
    let mut revision = "main".to_owned();
    let mut commit = None;
    for &(path, need) in FILES {
        let found = match head(hub, model, &revision, path, stall, cancel).await? {
            Some(found) => Some(found),
            None if need == Need::Weights => head(hub, model, &revision, PYTORCH_WEIGHTS, stall, cancel).await?,
            None => None,
        };
        match found {
            Some((remote, c)) => {
                let named = c.filter(|c| c.len() == 40 && c.chars().all(|ch| ch.is_ascii_hexdigit()));
                if let (None, Some(c)) = (&commit, named) {
                    revision.clone_from(&c);
                    commit = Some(c);
                }
                files.push(remote);
            }
            None if need == Need::Optional => {}
            None => {
                let what = if need == Need::Weights { "model.safetensors nor pytorch_model.bin" } else { path };
                return Err(download_error(
                    &format!("{hub}/{}", model.repo),
                    format!("the hub has no {what} for {} (is the hub address right?)", model.repo),
                ));
            }
        }
    }
    if let Some(commit) = &commit {
        for file in &mut files {
            file.url = format!("{hub}/{}/resolve/{commit}/{}", model.repo, file.path);
        }
    }
    let total_bytes: u64 = files.iter().map(|f| f.bytes).sum();
    // A hub that announces far more than the model is would fill the disk: refuse before fetching.
    let most = (u64::from(model.megabytes) * 2 + 64) * 1_000_000;
    if total_bytes > most {
        return Err(download_error(
            &format!("{hub}/{}", model.repo),
            format!(
                "the hub announces {:.0} MB for {}, far more than its {} MB; is the hub address right?",
                total_bytes as f64 / 1e6,
                model.name,
                model.megabytes
            ),
        ));
    }
    let partial = partial_dir(root, model);
    tokio::fs::create_dir_all(&partial).await.map_err(io(&partial))?;
    let mut done_bytes = 0;
    for file in &files {
        let path = partial.join(&file.path);
        if let Some(parent) = path.parent() {
            tokio::fs::create_dir_all(parent).await.map_err(io(parent))?;
        }
        let report = |done: u64| {
            progress(&DownloadProgress {
                model: model.name.to_owned(),
                file: file.path.clone(),
                done_bytes: done_bytes + done,
                total_bytes,
            });
        };
        fetch(&client, file, &path, stall, &report, cancel).await?;
        verify(file, &path).await?;
        done_bytes += file.bytes;
    }
    // Only what was fetched and checked now goes into the model: not a file an earlier,
    // different download left (weights of another format, an optional file the hub no longer has).
    let kept: Vec<PathBuf> = files.iter().map(|f| partial.join(&f.path)).collect();
    remove_others(&partial, &kept)?;
    let manifest = Manifest {
        repo: model.repo.to_owned(),
        hub: crate::net::redacted(hub),
        commit,
        files: files
            .iter()
            .map(|f| FileRecord { path: f.path.clone(), bytes: f.bytes, checksum: f.checksum.to_string() })
            .collect(),
    };
    let json = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| RagError::Io { path: partial.join(MANIFEST), source: std::io::Error::other(e) })?;
    tokio::fs::write(partial.join(MANIFEST), json).await.map_err(io(&partial.join(MANIFEST)))?;
    tokio::fs::rename(&partial, &target).await.map_err(io(&target))?;
    Ok(target)
}

/// Deletes every file under `dir` that is not one of `kept`.
fn remove_others(dir: &Path, kept: &[PathBuf]) -> Result<(), RagError> {
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let path = entry.map_err(io(dir))?.path();
        if path.is_dir() {
            remove_others(&path, kept)?;
        } else if !kept.contains(&path) {
            std::fs::remove_file(&path).map_err(io(&path))?;
        }
    }
    Ok(())
}

/// Asks the hub about one file. Redirects within the hub are followed by hand, never from https
/// to http; one to another host (the hub sends large files to a storage host) is not, as the hub's
/// own answer holds the checksum and size. `None` when the repository has no such file.
async fn head(
    hub: &str,
    model: &CatalogueModel,
    revision: &str,
    path: &str,
    stall: Duration,
    cancel: &CancellationToken,
) -> Result<Option<(Remote, Option<String>)>, RagError> {
    let url = format!("{hub}/{}/resolve/{revision}/{path}", model.repo);
    let no_redirects = crate::net::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| download_error(&url, e.to_string()))?;
    let mut at = url::Url::parse(&url).map_err(|e| download_error(&url, e.to_string()))?;
    for _ in 0..5 {
        let response = tokio::select! {
            () = cancel.cancelled() => return Err(RagError::Cancelled),
            r = tokio::time::timeout(stall, no_redirects.head(at.clone()).send()) => r
                .map_err(|_| download_error(at.as_str(), format!("no answer within {} s", stall.as_secs())))?
                .map_err(|e| download_error(at.as_str(), e.to_string()))?,
        };
        let status = response.status();
        if status == reqwest::StatusCode::NOT_FOUND {
            return Ok(None);
        }
        let headers = response.headers();
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
        if status.is_redirection() && header("x-linked-etag").is_none() {
            let next = header("location")
                .and_then(|l| at.join(&l).ok())
                .ok_or_else(|| download_error(at.as_str(), format!("{status} without a usable Location")))?;
            if at.scheme() == "https" && next.scheme() != "https" {
                return Err(download_error(at.as_str(), "the hub redirects from https to plain http"));
            }
            at = next;
            continue;
        }
        if !status.is_redirection() && !status.is_success() {
            return Err(download_error(at.as_str(), format!("the hub answered {status}")));
        }
        let etag = header("x-linked-etag").or_else(|| header("etag")).unwrap_or_default();
        let etag = etag.trim_start_matches("W/").trim_matches('"').to_ascii_lowercase();
        let hex = etag.chars().all(|c| c.is_ascii_hexdigit());
        let checksum = match etag.len() {
            64 if hex => Checksum::Sha256(etag),
            40 if hex => Checksum::GitSha1(etag),
            _ => {
                return Err(download_error(
                    at.as_str(),
                    format!(
                        "the hub gave no checksum for {path} (ETag {etag:?}); is this a Hugging Face hub or a mirror of one?"
                    ),
                ));
            }
        };
        let bytes = header("x-linked-size")
            .or_else(|| header("content-length"))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| download_error(at.as_str(), format!("the hub gave no size for {path}")))?;
        let remote = Remote { path: path.to_owned(), url: url.clone(), bytes, checksum };
        return Ok(Some((remote, header("x-repo-commit"))));
    }
    Err(download_error(&url, "too many redirects"))
}

/// Fetches `file` into `path`, resuming from what is there.
async fn fetch(
    client: &reqwest::Client,
    file: &Remote,
    path: &Path,
    stall: Duration,
    report: &(dyn Fn(u64) + Send + Sync),
    cancel: &CancellationToken,
) -> Result<(), RagError> {
    let mut have = tokio::fs::metadata(path).await.map_or(0, |m| m.len());
    if have > file.bytes {
        have = 0;
    }
    if have == file.bytes {
        report(have);
        return Ok(());
    }
    let mut request = client.get(&file.url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let response = tokio::select! {
        () = cancel.cancelled() => return Err(RagError::Cancelled),
        r = tokio::time::timeout(stall, request.send()) => r
            .map_err(|_| download_error(&file.url, format!("no answer within {} s", stall.as_secs())))?
            .map_err(|e| download_error(&file.url, e.to_string()))?,
    };
    let status = response.status();
    if status == reqwest::StatusCode::RANGE_NOT_SATISFIABLE {
        // What is here does not fit the file the hub has now: start it again next time.
        let _ = tokio::fs::remove_file(path).await;
    }
    if !status.is_success() {
        return Err(download_error(&file.url, format!("the hub answered {status}")));
    }
    // A server that ignores the range sends the whole file again.
    let resumed = status == reqwest::StatusCode::PARTIAL_CONTENT;
    let mut out = tokio::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .append(resumed)
        .truncate(!resumed)
        .open(path)
        .await
        .map_err(io(path))?;
    let mut got = if resumed { have } else { 0 };
    let mut reported = got;
    report(got);
    let mut body = response.bytes_stream();
    let stopped = |got: u64, why: String| {
        download_error(
            &file.url,
            format!(
                "{} stopped after {:.1} of {:.1} MB: {why}; get the model again to resume",
                file.path,
                got as f64 / 1e6,
                file.bytes as f64 / 1e6
            ),
        )
    };
    loop {
        let next = tokio::select! {
            () = cancel.cancelled() => {
                out.flush().await.map_err(io(path))?;
                return Err(RagError::Cancelled);
            }
            next = tokio::time::timeout(stall, body.next()) => next,
        };
        let chunk = match next {
            Err(_) => {
                out.flush().await.map_err(io(path))?;
                return Err(stopped(got, format!("nothing arrived for {} s", stall.as_secs())));
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                out.flush().await.map_err(io(path))?;
                return Err(stopped(got, format!("the connection failed ({e})")));
            }
            Ok(Some(Ok(chunk))) => chunk,
        };
        got += chunk.len() as u64;
        if got > file.bytes {
            drop(out);
            let _ = tokio::fs::remove_file(path).await;
            return Err(download_error(
                &file.url,
                format!(
                    "{} is larger than the {} bytes the hub announced; the file was deleted",
                    file.path, file.bytes
                ),
            ));
        }
        out.write_all(&chunk).await.map_err(io(path))?;
        // A report a megabyte, not a chunk: thousands of events would flood a window.
        if got - reported >= PROGRESS_STEP || got == file.bytes {
            reported = got;
            report(got);
        }
    }
    out.flush().await.map_err(io(path))?;
    if got < file.bytes {
        return Err(stopped(got, "the server ended the file early".into()));
    }
    Ok(())
}

/// Checks a fetched file against the hub's checksum; a file that does not match is deleted.
async fn verify(file: &Remote, path: &Path) -> Result<(), RagError> {
    let read = path.to_path_buf();
    let checksum = file.checksum.clone();
    let actual = tokio::task::spawn_blocking(move || -> std::io::Result<Checksum> {
        // Streamed: the weights of a model are hundreds of megabytes.
        fn digest<D: sha2::Digest + std::io::Write>(
            mut hasher: D,
            prefix: &[u8],
            path: &Path,
        ) -> std::io::Result<String> {
            hasher.update(prefix);
            std::io::copy(&mut std::fs::File::open(path)?, &mut hasher)?;
            Ok(hex::encode(hasher.finalize()))
        }
        Ok(match checksum {
            Checksum::Sha256(_) => Checksum::Sha256(digest(<sha2::Sha256 as sha2::Digest>::new(), b"", &read)?),
            Checksum::GitSha1(_) => {
                let len = std::fs::metadata(&read)?.len();
                Checksum::GitSha1(digest(
                    <sha1::Sha1 as sha2::Digest>::new(),
                    format!("blob {len}\0").as_bytes(),
                    &read,
                )?)
            }
        })
    })
    .await
    .map_err(|e| RagError::Io { path: path.to_path_buf(), source: std::io::Error::other(e) })?
    .map_err(io(path))?;
    if actual == file.checksum {
        return Ok(());
    }
    tokio::fs::remove_file(path).await.map_err(io(path))?;
    Err(download_error(
        &file.url,
        format!(
            "{} does not match the hub's checksum (expected {}, got {}); the file was deleted, get the model again",
            file.path, file.checksum, actual
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suggestion_follows_the_language() {
        assert!(!suggested(false, false).multilingual);
        assert!(suggested(true, false).multilingual);
        assert!(suggested(false, true).multilingual);
        assert_eq!(find("ALL-minilm-l6-v2").unwrap().repo, "sentence-transformers/all-MiniLM-L6-v2");
        let unknown = find("gpt-embed").unwrap_err().to_string();
        assert!(unknown.contains("gpt-embed") && unknown.contains("bge-small-zh-v1.5"), "{unknown}");
    }

    #[test]
    fn hub_addresses_are_checked() {
        assert_eq!(check_hub(" https://hf-mirror.com/ ").unwrap(), "https://hf-mirror.com");
        assert!(check_hub("hf-mirror.com").is_err());
        assert!(check_hub("ftp://mirror").unwrap_err().to_string().contains("not an http or https address"));
        assert_eq!(hub_url(Some("http://127.0.0.1:9/")).unwrap(), "http://127.0.0.1:9");
    }
}
