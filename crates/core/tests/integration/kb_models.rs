//! Downloading a local embedding model from a hub: a local one serving the packaged
//! all-MiniLM-L6-v2 in the hub's layout (`patchbay_test_support::hub`). Progress, checksums,
//! resuming, the errors of a broken download, and never a half model where a model is used.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use patchbay_core::rag::models::{self, DownloadProgress, ModelState};
use patchbay_core::rag::{Embedder, LocalEmbedder};
use patchbay_test_support::hub::{Fault, TestHub};
use patchbay_test_support::peers;
use tokio_util::sync::CancellationToken;

const REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";

async fn get(root: &Path, hub: &str, stall: Duration) -> Result<std::path::PathBuf, String> {
    let model = models::find("all-MiniLM-L6-v2").unwrap();
    models::download(root, hub, model, stall, &|_| {}, &CancellationToken::new()).await.map_err(|e| e.to_string())
}

async fn vector(dir: &Path) -> Vec<f32> {
    let model = LocalEmbedder::load(dir).unwrap();
    model.embed(&["A man is eating food.".to_owned()], &CancellationToken::new()).await.unwrap().remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_downloads_with_progress_and_checksums_and_embeds_as_the_original() {
    let hub = TestHub::serve(REPO, &peers::minilm_dir()).await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("models");
    let model = models::find("all-MiniLM-L6-v2").unwrap();
    assert_eq!(models::state(&root, model), ModelState::Absent);
    let seen: Arc<Mutex<Vec<DownloadProgress>>> = Arc::default();
    let record = Arc::clone(&seen);
    let progress = move |p: &DownloadProgress| record.lock().unwrap().push(p.clone());
    let dir = models::download(&root, &hub.url, model, models::STALL_TIMEOUT, &progress, &CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(dir, root.join("all-MiniLM-L6-v2"));
    assert_eq!(models::state(&root, model), ModelState::Ready);
    assert!(!root.join("all-MiniLM-L6-v2.partial").exists(), "nothing half-done is left");

    let seen = seen.lock().unwrap().clone();
    let last = seen.last().unwrap();
    let weights = std::fs::metadata(peers::minilm_dir().join("model.safetensors")).unwrap().len();
    assert_eq!(last.done_bytes, last.total_bytes);
    assert!(last.total_bytes > weights, "every file counts: {last:?}");
    assert!(seen.windows(2).all(|w| w[0].done_bytes <= w[1].done_bytes), "progress only grows");
    assert!(seen.iter().any(|p| p.file == "model.safetensors"));

    // What was checked is written down.
    let manifest = std::fs::read_to_string(dir.join(models::MANIFEST)).unwrap();
    assert!(manifest.contains(REPO) && manifest.contains("0123456789abcdef"), "{manifest}");
    assert!(
        manifest.contains("\"checksum\": \"sha256:") && manifest.contains("\"checksum\": \"git-sha1:"),
        "{manifest}"
    );

    // The downloaded folder is the model: the same vector as the original's.
    let (ours, original) = (vector(&dir).await, vector(&peers::minilm_dir()).await);
    let cosine: f32 = ours.iter().zip(&original).map(|(a, b)| a * b).sum();
    assert!(cosine > 0.9999, "{cosine}");

    // Every file after the first was asked at the commit the hub named first.
    let revisions = hub.revisions();
    assert_eq!(revisions[0], "main");
    assert!(revisions[1..].iter().all(|r| r == patchbay_test_support::hub::COMMIT), "{revisions:?}");

    // Getting it again costs nothing.
    assert_eq!(get(&root, "http://127.0.0.1:9", models::STALL_TIMEOUT).await.unwrap(), dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_keeps_only_what_it_checked_and_never_replaces_a_users_folder() {
    let hub = TestHub::serve(REPO, &peers::minilm_dir()).await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("models");

    // A folder of the user's where the model would go is left alone.
    let mine = root.join("all-MiniLM-L6-v2");
    std::fs::create_dir_all(&mine).unwrap();
    std::fs::write(mine.join("notes.txt"), "mine").unwrap();
    let err = get(&root, &hub.url, models::STALL_TIMEOUT).await.unwrap_err();
    assert!(err.contains("exists and is not a model Patchbay downloaded; move it away"), "{err}");
    assert_eq!(std::fs::read_to_string(mine.join("notes.txt")).unwrap(), "mine");
    std::fs::remove_dir_all(&mine).unwrap();

    // What an earlier download left that this one did not fetch and check stays out of the model.
    let partial = root.join("all-MiniLM-L6-v2.partial");
    std::fs::create_dir_all(partial.join("2_Dense")).unwrap();
    std::fs::write(partial.join("pytorch_model.bin"), "stale weights").unwrap();
    std::fs::write(partial.join("2_Dense/config.json"), "{}").unwrap();
    let dir = get(&root, &hub.url, models::STALL_TIMEOUT).await.unwrap();
    assert!(!dir.join("pytorch_model.bin").exists() && !dir.join("2_Dense/config.json").exists());
    assert!(dir.join("model.safetensors").is_file());

    // One download of a model at a time, in this process or another.
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let held = std::fs::File::create(other.join("all-MiniLM-L6-v2.lock")).unwrap();
    held.lock().unwrap();
    let err = get(&other, &hub.url, models::STALL_TIMEOUT).await.unwrap_err();
    assert!(err.contains("all-MiniLM-L6-v2 is being downloaded already"), "{err}");
    drop(held);
    get(&other, &hub.url, models::STALL_TIMEOUT).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_download_says_why_leaves_no_model_and_the_next_one_resumes() {
    let hub = TestHub::serve(REPO, &peers::minilm_dir()).await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("models");
    let model = models::find("all-MiniLM-L6-v2").unwrap();
    let in_use = root.join("all-MiniLM-L6-v2");
    let weights = root.join("all-MiniLM-L6-v2.partial/model.safetensors");

    hub.set_fault(Fault::Oversize);
    let err = get(&root, &hub.url, models::STALL_TIMEOUT).await.unwrap_err();
    assert!(err.contains("the hub announces 10000 MB for all-MiniLM-L6-v2, far more than its 91 MB"), "{err}");
    assert_eq!(models::state(&root, model), ModelState::Absent, "nothing was fetched");

    hub.set_fault(Fault::WrongChecksum);
    let err = get(&root, &hub.url, models::STALL_TIMEOUT).await.unwrap_err();
    assert!(err.contains("model.safetensors does not match the hub's checksum (expected sha256:"), "{err}");
    assert!(err.contains("the file was deleted"), "{err}");
    assert!(!weights.exists() && !in_use.exists());
    assert_eq!(models::state(&root, model), ModelState::Partial);

    hub.set_fault(Fault::Truncate(1_000_000));
    let err = get(&root, &hub.url, models::STALL_TIMEOUT).await.unwrap_err();
    assert!(err.contains("model.safetensors stopped after 1.0 of 90.9 MB: the server ended the file early"), "{err}");
    assert!(err.contains("get the model again to resume"), "{err}");
    assert!(!in_use.exists());
    assert_eq!(std::fs::metadata(&weights).unwrap().len(), 1_000_000, "what arrived is kept");

    hub.set_fault(Fault::Stall(2_000_000));
    // Long enough for the hub's first answer on a loaded machine (1 s was not, once, in CI's
    // two lanes); the stall itself never ends.
    let err = get(&root, &hub.url, Duration::from_secs(3)).await.unwrap_err();
    assert!(err.contains("stopped after 3.0 of 90.9 MB: nothing arrived for 3 s"), "{err}");
    assert!(!in_use.exists());

    hub.set_fault(Fault::None);
    let dir = get(&root, &hub.url, models::STALL_TIMEOUT).await.unwrap();
    assert_eq!(hub.ranges(), ["bytes=1000000-", "bytes=3000000-"], "each download went on from where the last stopped");
    assert_eq!(models::state(&root, model), ModelState::Ready);
    assert_eq!(vector(&dir).await.len(), 384);

    // A hub without the repository, and no hub at all, say so.
    let elsewhere = TestHub::serve("someone/else", &peers::minilm_dir()).await;
    let other = tmp.path().join("other");
    let err = get(&other, &elsewhere.url, models::STALL_TIMEOUT).await.unwrap_err();
    assert!(err.contains(&format!("the hub has no config.json for {REPO} (is the hub address right?)")), "{err}");
    let err = get(&other, "http://127.0.0.1:9", models::STALL_TIMEOUT).await.unwrap_err();
    assert!(err.starts_with("downloading http://127.0.0.1:9/sentence-transformers/"), "{err}");
    assert!(!other.join("all-MiniLM-L6-v2").exists());
}
