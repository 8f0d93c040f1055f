//! [`RecordingOpener`]: a stand-in for the desktop's opener (the user's browser
//! and file manager). An `xdg-open` first on the app's `PATH` writes down what
//! it was asked to open, one line each, and opens nothing.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Result;

/// The recording `xdg-open` and the file it writes to.
pub struct RecordingOpener {
    /// `PATH` for the app, with the recording `xdg-open` first.
    pub env: Vec<(String, String)>,
    record: PathBuf,
}

impl RecordingOpener {
    /// Writes the recording `xdg-open` into `dir`.
    pub fn new(dir: &Path) -> Result<Self> {
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin)?;
        let record = dir.join("opened.txt");
        let script = bin.join("xdg-open");
        std::fs::write(&script, format!("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\n", record.display()))?;
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
        let path = format!("{}:{}", bin.display(), std::env::var("PATH")?);
        Ok(Self { env: vec![("PATH".to_owned(), path)], record })
    }

    /// What it was asked to open so far, once `want` things have come (or `wait` is over).
    pub fn opened(&self, want: usize, wait: Duration) -> Vec<String> {
        let deadline = Instant::now() + wait;
        loop {
            let opened: Vec<String> =
                std::fs::read_to_string(&self.record).unwrap_or_default().lines().map(str::to_owned).collect();
            if opened.len() >= want || Instant::now() > deadline {
                return opened;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}
