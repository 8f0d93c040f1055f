//! Files the user saves from a tool's view (MCP Apps `ui/download-file`).
//!
//! A view hands over MCP content blocks: embedded resources (their text or
//! base64 blob) and resource links (read from the view's own server by the
//! caller). Each becomes a [`Download`] named after the link's name or the
//! URI's last segment, made safe for any file system, and is written into a
//! folder under a name no file there has yet (`report (1).csv`). A write that
//! fails, a full disk for one, leaves no partial file behind, and the files
//! already there are never touched.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use base64::Engine;
use serde::{Deserialize, Serialize};

/// The most one download may hold.
pub const MAX_DOWNLOAD_BYTES: usize = 64 * 1024 * 1024;

/// The longest file name written, in bytes (most file systems allow 255).
const MAX_NAME_BYTES: usize = 200;

/// How many `name (n).ext` are tried before giving up.
const MAX_COPIES: usize = 1000;

/// Why a download could not be saved.
#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    /// A content block a view sent that is not a file.
    #[error("item {index} of the download: {reason}")]
    Invalid { index: usize, reason: String },
    #[error("{name} is {bytes} bytes; Patchbay saves at most {limit} bytes in one download")]
    TooLarge { name: String, bytes: usize, limit: usize },
    #[error("nothing to save: the download lists no files")]
    Empty,
    #[error("there is no downloads folder: {0}")]
    NoFolder(String),
    /// Nothing is left behind: a partly written file is removed.
    #[error("could not save {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// One file to save.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    /// A safe file name (see [`file_name`]).
    pub name: String,
    pub bytes: Vec<u8>,
}

/// A file that was saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct SavedFile {
    pub name: String,
    pub path: PathBuf,
    pub bytes: u64,
}

/// One item of a view's download, as it asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requested {
    /// The content came with the request.
    Embedded(Download),
    /// A resource of the view's server, to be read.
    Link { uri: String, name: Option<String>, mime_type: Option<String> },
}

/// The `contents` of a `ui/download-file`: embedded resources and resource links.
pub fn parse_request(contents: &[serde_json::Value]) -> Result<Vec<Requested>, DownloadError> {
    if contents.is_empty() {
        return Err(DownloadError::Empty);
    }
    contents.iter().enumerate().map(|(index, block)| parse_block(index, block)).collect()
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block {
    Resource {
        resource: Contents,
    },
    ResourceLink {
        uri: String,
        name: Option<String>,
        #[serde(rename = "mimeType")]
        mime_type: Option<String>,
    },
}

/// A resource's contents as MCP gives them (`ReadResourceResult.contents[]` or an embedded resource).
#[derive(Debug, Deserialize)]
pub struct Contents {
    uri: String,
    #[serde(rename = "mimeType")]
    mime_type: Option<String>,
    text: Option<String>,
    blob: Option<String>,
}

fn parse_block(index: usize, block: &serde_json::Value) -> Result<Requested, DownloadError> {
    let invalid = |reason: String| DownloadError::Invalid { index, reason };
    let block = Block::deserialize(block)
        .map_err(|e| invalid(format!("{e} (a download is a list of \"resource\" and \"resource_link\" blocks)")))?;
    Ok(match block {
        Block::Resource { resource } => Requested::Embedded(download(None, None, &resource).map_err(invalid)?),
        Block::ResourceLink { uri, name, mime_type } => Requested::Link { uri, name, mime_type },
    })
}

/// The names the files of a `ui/download-file` are saved under, as far as they
/// are known before any is read (a link's contents may still add the extension
/// of their MIME type), so the user is asked about the names that are saved.
pub fn offered_names(contents: &[serde_json::Value]) -> Result<Vec<String>, DownloadError> {
    let names = parse_request(contents)?.into_iter().map(|asked| match asked {
        Requested::Embedded(file) => file.name,
        Requested::Link { uri, name, mime_type } => file_name(&uri, name.as_deref(), mime_type.as_deref()),
    });
    Ok(names.collect())
}

/// The file `contents` hold, named after `name` (a link's) or the URI; a
/// link's `mime_type` stands in for the one the contents lack.
pub fn download(name: Option<&str>, mime_type: Option<&str>, contents: &Contents) -> Result<Download, String> {
    let name = file_name(&contents.uri, name, contents.mime_type.as_deref().or(mime_type));
    let bytes = match (&contents.text, &contents.blob) {
        (Some(text), _) => text.as_bytes().to_vec(),
        (None, Some(blob)) => base64::engine::general_purpose::STANDARD
            .decode(blob.trim())
            .map_err(|e| format!("{}: its blob is not base64: {e}", contents.uri))?,
        (None, None) => return Err(format!("{}: it has neither text nor a blob", contents.uri)),
    };
    Ok(Download { name, bytes })
}

/// The contents of a read resource that are the file `uri`: the block with that
/// URI, else the first.
pub fn pick_contents(uri: &str, read: &serde_json::Value) -> Result<Contents, String> {
    let blocks = read.get("contents").and_then(|c| c.as_array()).map(Vec::as_slice).unwrap_or_default();
    let block = blocks.iter().find(|b| b.get("uri").and_then(|u| u.as_str()) == Some(uri)).or(blocks.first());
    let block = block.ok_or_else(|| format!("{uri}: the server read it as empty"))?;
    Contents::deserialize(block).map_err(|e| format!("{uri}: {e}"))
}

/// A name any file system takes for a file from `uri`: `name` when given,
/// else the URI's last path segment, made safe by [`crate::file_name::safe`];
/// an extension from `mime_type` when it has none.
pub fn file_name(uri: &str, name: Option<&str>, mime_type: Option<&str>) -> String {
    let from_uri = || {
        let uri = uri.split(['?', '#']).next().unwrap_or(uri);
        // The path's last segment after the scheme and authority (`ui://server/…`);
        // the authority when there is no path (`notes://today`).
        let (authority, path) = match uri.split_once("://") {
            Some((_, rest)) => rest.split_once('/').unwrap_or((rest, "")),
            None => ("", uri),
        };
        let last = path.trim_end_matches('/').rsplit('/').next().filter(|s| !s.is_empty()).unwrap_or(authority);
        percent_decoded(last)
    };
    let wanted = name.map(str::to_owned).filter(|n| !n.trim().is_empty()).unwrap_or_else(from_uri);
    let mut clean = crate::file_name::safe(&wanted, "download");
    if !clean.contains('.')
        && let Some(ext) = mime_type.and_then(extension)
    {
        clean = format!("{clean}.{ext}");
    }
    shorten(&clean, MAX_NAME_BYTES)
}

/// `text` with its `%XX` escapes decoded (bytes that are not UTF-8 become U+FFFD).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes.get(at + 1..at + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[at], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The usual extension of a MIME type.
fn extension(mime_type: &str) -> Option<&'static str> {
    let essence = mime_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    Some(match essence.as_str() {
        "text/plain" => "txt",
        "text/csv" => "csv",
        "text/markdown" => "md",
        "text/html" => "html",
        "application/json" => "json",
        "application/pdf" => "pdf",
        "application/zip" => "zip",
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "audio/mpeg" => "mp3",
        "audio/wav" => "wav",
        _ => return None,
    })
}

/// `name` cut to `max` bytes on a character boundary, its extension kept.
fn shorten(name: &str, max: usize) -> String {
    if name.len() <= max {
        return name.to_owned();
    }
    let (stem, ext) = split_extension(name);
    let keep = max.saturating_sub(ext.len());
    let mut end = keep.min(stem.len());
    while !stem.is_char_boundary(end) {
        end -= 1;
    }
    // The cut may end the stem in a dot or space, which Windows drops.
    format!("{}{ext}", stem[..end].trim_end_matches(['.', ' ']))
}

/// `report.csv` → (`report`, `.csv`); a name without a dot has no extension.
fn split_extension(name: &str) -> (&str, &str) {
    match name.rfind('.') {
        Some(at) if at > 0 => name.split_at(at),
        _ => (name, ""),
    }
}

/// The user's downloads folder (the desktop's own, else `~/Downloads`), made when missing.
pub fn default_folder() -> Result<PathBuf, DownloadError> {
    let folder = dirs::download_dir()
        .or_else(|| dirs::home_dir().map(|home| home.join("Downloads")))
        .ok_or_else(|| DownloadError::NoFolder("the home folder is unknown".to_owned()))?;
    std::fs::create_dir_all(&folder).map_err(|e| DownloadError::NoFolder(format!("{}: {e}", folder.display())))?;
    Ok(folder)
}

/// Checks the size of each download before anything is written.
pub fn check_sizes(downloads: &[Download]) -> Result<(), DownloadError> {
    match downloads.iter().find(|d| d.bytes.len() > MAX_DOWNLOAD_BYTES) {
        Some(d) => {
            Err(DownloadError::TooLarge { name: d.name.clone(), bytes: d.bytes.len(), limit: MAX_DOWNLOAD_BYTES })
        }
        None => Ok(()),
    }
}

/// Writes each download into `dir` under an unused name; on a failure, the
/// files this call wrote are removed again.
pub fn save_all(dir: &Path, downloads: &[Download]) -> Result<Vec<SavedFile>, DownloadError> {
    check_sizes(downloads)?;
    let mut saved: Vec<SavedFile> = Vec::with_capacity(downloads.len());
    for download in downloads {
        match save_into(dir, download, |file, bytes| file.write_all(bytes).and_then(|()| file.sync_all())) {
            Ok(file) => saved.push(file),
            Err(e) => {
                for file in &saved {
                    let _ = std::fs::remove_file(&file.path);
                }
                return Err(e);
            }
        }
    }
    Ok(saved)
}

/// Writes one download with `write` into a new file of `dir`; a failed write
/// removes that file.
fn save_into(
    dir: &Path,
    download: &Download,
    write: impl FnOnce(&mut File, &[u8]) -> io::Result<()>,
) -> Result<SavedFile, DownloadError> {
    let (mut file, path) = create_unused(dir, &download.name)?;
    if let Err(source) = write(&mut file, &download.bytes) {
        drop(file);
        let _ = std::fs::remove_file(&path);
        return Err(DownloadError::Write { path, source });
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    Ok(SavedFile { name, path, bytes: download.bytes.len() as u64 })
}

/// A new file in `dir` named `name`, or `stem (n).ext` when that is taken.
fn create_unused(dir: &Path, name: &str) -> Result<(File, PathBuf), DownloadError> {
    let (stem, ext) = split_extension(name);
    for n in 0..MAX_COPIES {
        let candidate = if n == 0 { name.to_owned() } else { format!("{stem} ({n}){ext}") };
        let path = dir.join(candidate);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(DownloadError::Write { path, source }),
        }
    }
    let source = io::Error::new(io::ErrorKind::AlreadyExists, format!("{MAX_COPIES} files of that name are there"));
    Err(DownloadError::Write { path: dir.join(name), source })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn file(name: &str, text: &str) -> Download {
        Download { name: name.into(), bytes: text.as_bytes().to_vec() }
    }

    #[test]
    fn names_come_from_the_link_or_the_uri_and_are_made_safe() {
        assert_eq!(file_name("ui://counter/report.csv", None, None), "report.csv");
        assert_eq!(file_name("ui://counter/data?x=1", None, Some("application/json")), "data.json");
        assert_eq!(file_name("file:///tmp/My%20Notes%2B.md", None, None), "My Notes+.md");
        assert_eq!(file_name("ui://x/100%25%zz", None, None), "100%%zz");
        assert_eq!(file_name("ui://x/y", Some("../../etc/passwd"), None), "_.._etc_passwd");
        assert_eq!(file_name("ui://x/", Some(".bashrc"), None), "bashrc");
        assert_eq!(file_name("ui://x/", Some("a:b*c?\u{7}.txt"), None), "a_b_c__.txt");
        assert_eq!(file_name("ui://", None, Some("text/csv; charset=utf-8")), "download.csv");
        assert_eq!(file_name("ui://x/chart", None, Some("application/x-unknown")), "chart");
        assert_eq!(file_name("image", None, Some("image/png")), "image.png");
        assert_eq!(file_name("notes://today", None, Some("text/plain")), "today.txt");
        assert_eq!(file_name("ui://counter/", None, None), "counter");
        assert_eq!(file_name("ui://x/", Some("invoice\u{202E}fdp.exe"), None), "invoicefdp.exe");
        assert_eq!(file_name("ui://x/%E2%80%AEgnp.exe", None, None), "gnp.exe");
        assert_eq!(file_name("ui://x/", Some("NUL"), Some("text/plain")), "_NUL.txt");
        assert_eq!(file_name("ui://x/", Some("con.csv"), None), "_con.csv");
        let long = file_name("ui://x/", Some(&format!("{}.csv", "报".repeat(100))), None);
        assert!(long.len() <= MAX_NAME_BYTES && long.ends_with(".csv"), "{long}");
    }

    #[test]
    fn a_request_takes_embedded_text_and_blobs_and_links_and_says_which_item_is_wrong() {
        let asked = parse_request(&[
            json!({"type": "resource", "resource": {"uri": "ui://c/a.txt", "text": "hello"}}),
            json!({"type": "resource", "resource": {"uri": "ui://c/b", "mimeType": "image/png", "blob": "AAEC"}}),
            json!({"type": "resource_link", "uri": "ui://c/big.csv", "name": "Big report", "mimeType": "text/csv"}),
        ])
        .unwrap();
        assert_eq!(asked[0], Requested::Embedded(file("a.txt", "hello")));
        assert_eq!(asked[1], Requested::Embedded(Download { name: "b.png".into(), bytes: vec![0, 1, 2] }));
        assert_eq!(
            asked[2],
            Requested::Link {
                uri: "ui://c/big.csv".into(),
                name: Some("Big report".into()),
                mime_type: Some("text/csv".into())
            }
        );
        let wrong = parse_request(&[
            json!({"type": "resource", "resource": {"uri": "u", "text": "x"}}),
            json!({"type": "text", "text": "hi"}),
        ])
        .unwrap_err();
        assert!(wrong.to_string().starts_with("item 1 of the download:"), "{wrong}");
        let wrong =
            parse_request(&[json!({"type": "resource", "resource": {"uri": "ui://c/z", "blob": "!!"}})]).unwrap_err();
        assert!(wrong.to_string().contains("ui://c/z: its blob is not base64"), "{wrong}");
        assert!(matches!(parse_request(&[]), Err(DownloadError::Empty)));
    }

    #[test]
    fn the_names_offered_are_the_names_saved() {
        let contents = [
            json!({"type": "resource", "resource": {"uri": "ui://c/a", "mimeType": "text/csv", "text": "1"}}),
            json!({"type": "resource_link", "uri": "ui://c/x", "name": "\u{202E}fdp.exe", "mimeType": "text/plain"}),
            json!({"type": "resource_link", "uri": "ui://c/AUX"}),
        ];
        assert_eq!(offered_names(&contents).unwrap(), ["a.csv", "fdp.exe", "_AUX"]);
        let dir = tempfile::tempdir().unwrap();
        let Requested::Embedded(first) = parse_block(0, &contents[0]).unwrap() else { unreachable!() };
        assert_eq!(save_all(dir.path(), &[first]).unwrap()[0].name, "a.csv");
    }

    #[test]
    fn a_read_resource_gives_the_contents_of_its_uri() {
        let read = json!({"contents": [{"uri": "ui://c/other", "text": "no"}, {"uri": "ui://c/r.txt", "text": "yes"}]});
        let picked = download(Some("r.txt"), None, &pick_contents("ui://c/r.txt", &read).unwrap()).unwrap();
        assert_eq!(picked, file("r.txt", "yes"));
        assert!(pick_contents("ui://c/r.txt", &json!({"contents": []})).unwrap_err().contains("read it as empty"));
    }

    #[test]
    fn files_are_saved_under_unused_names_and_existing_ones_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("report.csv"), "mine").unwrap();
        let saved =
            save_all(dir.path(), &[file("report.csv", "a,b"), file("report.csv", "c,d"), file("notes", "n")]).unwrap();
        let names: Vec<_> = saved.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["report (1).csv", "report (2).csv", "notes"]);
        assert_eq!(std::fs::read_to_string(dir.path().join("report.csv")).unwrap(), "mine");
        assert_eq!(std::fs::read_to_string(&saved[1].path).unwrap(), "c,d");
        assert_eq!(saved[0].bytes, 3);
    }

    #[test]
    fn a_full_disk_leaves_no_partial_file_and_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let full = |file: &mut File, bytes: &[u8]| {
            file.write_all(&bytes[..2])?;
            Err(io::Error::from(io::ErrorKind::StorageFull))
        };
        let e = save_into(dir.path(), &file("big.bin", "0123456789"), full).unwrap_err();
        let path = dir.path().join("big.bin");
        assert!(e.to_string().starts_with(&format!("could not save {}:", path.display())), "{e}");
        assert!(!path.exists());
    }

    #[test]
    fn a_failure_removes_what_the_same_download_wrote_and_oversized_files_are_refused_first() {
        let dir = tempfile::tempdir().unwrap();
        // The second name is a folder that cannot be created in: the first file goes again.
        let e = save_all(dir.path(), &[file("one.txt", "1"), file("missing/two.txt", "2")]).unwrap_err();
        assert!(matches!(e, DownloadError::Write { .. }), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let big = Download { name: "big.bin".into(), bytes: vec![0; MAX_DOWNLOAD_BYTES + 1] };
        let e = save_all(dir.path(), &[file("one.txt", "1"), big]).unwrap_err();
        assert!(e.to_string().starts_with("big.bin is 67108865 bytes"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
