//! The watcher that keeps the knowledge base current: file changes in its
//! folders re-index their folder after a quiet period.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::index::{IndexProgress, IndexReport};
use super::kb::KnowledgeBase;

/// Keeps the index current while it lives: file changes in registered folders
/// trigger a re-index of their folder after a quiet period. Dropping it stops
/// the watcher and its task.
pub struct KbWatcher {
    _watcher: notify::RecommendedWatcher,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for KbWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KbWatcher").finish_non_exhaustive()
    }
}

impl Drop for KbWatcher {
    fn drop(&mut self) {
        self.cancel.cancel();
        self.task.abort();
    }
}

impl KnowledgeBase {
    /// Watches every registered folder; after changes settle for `quiet`, the
    /// affected folders are re-indexed and `on_run` receives the result.
    pub fn watch(
        &self,
        quiet: Duration,
        on_run: Arc<dyn Fn(Result<IndexReport, RagError>) + Send + Sync>,
    ) -> Result<KbWatcher, RagError> {
        let folders = self.folders()?;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
        let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            if let Ok(event) = event {
                for path in event.paths {
                    // The receiver only goes away when the watcher is dropped.
                    let _ = tx.send(path);
                }
            }
        })
        .map_err(|e| RagError::Watch { path: PathBuf::new(), detail: e.to_string() })?;
        for folder in folders.iter().filter(|f| f.is_dir()) {
            watcher
                .watch(folder, RecursiveMode::Recursive)
                .map_err(|e| RagError::Watch { path: folder.clone(), detail: e.to_string() })?;
        }
        let cancel = CancellationToken::new();
        let kb = self.clone();
        let stop = cancel.clone();
        let task = tokio::spawn(async move {
            loop {
                let first = tokio::select! {
                    () = stop.cancelled() => return,
                    path = rx.recv() => match path { Some(p) => p, None => return },
                };
                let mut dirty: HashSet<PathBuf> = folder_of(&folders, &first).cloned().into_iter().collect();
                loop {
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(quiet) => break,
                        path = rx.recv() => match path {
                            Some(p) => dirty.extend(folder_of(&folders, &p).cloned()),
                            None => return,
                        },
                    }
                }
                let dirty: Vec<PathBuf> = folders.iter().filter(|f| dirty.contains(*f)).cloned().collect();
                if dirty.is_empty() {
                    continue;
                }
                let result = kb.index_folders(&dirty, Arc::new(|_: &IndexProgress| {}), &stop).await;
                if matches!(result, Err(RagError::Cancelled)) {
                    return;
                }
                on_run(result);
            }
        });
        Ok(KbWatcher { _watcher: watcher, cancel, task })
    }
}

/// Folder a path belongs to, among `folders`.
fn folder_of<'a>(folders: &'a [PathBuf], path: &Path) -> Option<&'a PathBuf> {
    folders.iter().filter(|f| path.starts_with(f)).max_by_key(|f| f.as_os_str().len())
}
