//! What the knowledge-base benchmarks (`kb`, `embed`) share: where Cranfield and their Python
//! environments are, and this process's memory.

use std::path::PathBuf;

/// `../shared/data/cranfield` next to the checkout (or next to the folder of worktrees).
pub fn cranfield_dir() -> PathBuf {
    ["../../../shared/data/cranfield", "../../../../shared/data/cranfield"]
        .iter()
        .map(|rel| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(rel))
        .find(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("../shared/data/cranfield"))
}

/// The Python of a virtual environment in `~/.cache/patchbay/VENV`.
pub fn python(venv: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    home.join(".cache/patchbay").join(venv).join("bin/python")
}

/// A memory figure of this process from `/proc/self/status` (`VmHWM:` peak, `VmRSS:` now), in MB (Linux).
pub fn status_mb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with(field)).map(str::to_owned))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

/// This process's peak resident memory so far, in MB.
pub fn peak_rss_mb() -> f64 {
    status_mb("VmHWM:")
}
