//! What Patchbay is opened with: an MCP bundle to install, or an install link
//! (`patchbay://mcp/install?…`, or Cursor's and VS Code's). It comes as an
//! argument (a file manager's "Open with", the desktop entry's `%u` for a
//! link), from a later launch that handed over, or from macOS's open-URL
//! event; it waits in [`Pending`] until the window takes it, because an event
//! sent before the page listens reaches nobody. Nothing is installed here: the
//! window shows what would run and the user confirms.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::Serialize;
use tauri::{AppHandle, Emitter, Runtime};

/// A thing to install, as the window receives it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Opened {
    /// An MCP bundle file (`.mcpb`, or `.dxt` from before the rename), absolute.
    Bundle { path: String },
    /// An install link, as given (the core reads or refuses it).
    Link { link: String },
}

/// The event that tells the window something waits (take it with `take_opened`).
pub const EVENT: &str = "opened";

/// The first argument that is a bundle or a link, skipping `--data-dir`'s
/// value; a relative bundle path is made absolute from `cwd`.
pub fn from_args(args: impl IntoIterator<Item = String>, cwd: &Path) -> Option<Opened> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--data-dir" {
            args.next();
            continue;
        }
        if arg.starts_with('-') {
            continue;
        }
        // A desktop entry's `%u` may give a file as a file: URL.
        let file = match arg.strip_prefix("file://") {
            Some(path) => url_path(path),
            None if patchbay_core::config::import::is_link(&arg) => return Some(Opened::Link { link: arg }),
            None => arg,
        };
        let lower = file.to_ascii_lowercase();
        if lower.ends_with(".mcpb") || lower.ends_with(".dxt") {
            return Some(Opened::Bundle { path: cwd.join(file).display().to_string() });
        }
    }
    None
}

/// A file: URL's path, percent-decoded.
fn url_path(path: &str) -> String {
    let decoded = url::Url::parse(&format!("file://{path}")).ok().and_then(|u| u.to_file_path().ok());
    decoded.map_or_else(|| path.to_owned(), |p: PathBuf| p.display().to_string())
}

/// What waits for the window, oldest first: each is taken once (one `opened`
/// event each), so a second launch before the window took the first loses nothing.
#[derive(Debug, Default)]
pub struct Pending(Mutex<VecDeque<Opened>>);

impl Pending {
    pub fn new(opened: Option<Opened>) -> Self {
        Self(Mutex::new(opened.into_iter().collect()))
    }

    /// Hands over the oldest, once.
    pub fn take(&self) -> Option<Opened> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).pop_front()
    }

    fn put(&self, opened: Opened) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push_back(opened);
    }
}

/// Keeps `opened` in `pending` for the window and tells it.
pub fn offer<R: Runtime>(app: &AppHandle<R>, pending: &Pending, opened: Opened) {
    pending.put(opened);
    if let Err(e) = app.emit(EVENT, ()) {
        tracing::warn!("could not tell the window what Patchbay was opened with: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::{Opened, Pending, from_args};

    #[test]
    fn what_waits_is_taken_oldest_first_and_once() {
        let link = |l: &str| Opened::Link { link: l.to_owned() };
        let pending = Pending::new(Some(link("a")));
        pending.put(link("b"));
        assert_eq!((pending.take(), pending.take(), pending.take()), (Some(link("a")), Some(link("b")), None));
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn a_bundle_argument_is_found_and_made_absolute() {
        let cwd = std::path::Path::new("/home/ada/Downloads");
        let bundle = |p: &str| Some(Opened::Bundle { path: p.to_owned() });
        assert_eq!(from_args(args(&["notes.mcpb"]), cwd), bundle("/home/ada/Downloads/notes.mcpb"));
        assert_eq!(from_args(args(&["--data-dir", "/d.mcpb", "/tmp/Old.DXT"]), cwd), bundle("/tmp/Old.DXT"));
        assert_eq!(from_args(args(&["file:///tmp/My%20Notes.mcpb"]), cwd), bundle("/tmp/My Notes.mcpb"));
        assert_eq!(from_args(args(&["--data-dir=/x", "notes.zip"]), cwd), None);
    }

    #[test]
    fn a_link_argument_is_kept_as_given() {
        let cwd = std::path::Path::new("/");
        let link = |l: &str| Some(Opened::Link { link: l.to_owned() });
        for given in [
            "patchbay://mcp/install?name=a&config=e30",
            "vscode:mcp/install?%7B%7D",
            "slack://open",
            "https://x/a.mcpb",
        ] {
            assert_eq!(from_args(args(&["--data-dir", "/d", given]), cwd), link(given));
        }
        assert_eq!(from_args(args(&["--data-dir", "patchbay://x"]), cwd), None, "the data dir is not a link");
    }
}
