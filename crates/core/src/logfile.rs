//! [`LogFile`]: the desktop app's log, a file in the data directory that a
//! user launched from a desktop menu can read (that app's stderr goes nowhere).
//!
//! It never grows without bound: past [`MAX_BYTES`] the file is renamed to
//! `patchbay.log.1` (replacing the one before) and a new one is started, so at
//! most two files of that size are kept. A write that fails (a full disk) is
//! reported to the caller, which drops the line; the app runs on.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The size at which the log starts a new file.
pub const MAX_BYTES: u64 = 5 << 20;

/// Errors of opening the log.
#[derive(Debug, thiserror::Error)]
pub enum LogFileError {
    #[error("cannot open the log file {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

/// An append-only log file that starts a new file past its size limit.
#[derive(Debug)]
pub struct LogFile {
    path: PathBuf,
    file: File,
    written: u64,
    limit: u64,
}

impl LogFile {
    /// Opens (creating it and its folder) the log at `path`, to append to it.
    pub fn open(path: &Path) -> Result<Self, LogFileError> {
        Self::with_limit(path, MAX_BYTES)
    }

    /// [`LogFile::open`] with another size limit.
    pub fn with_limit(path: &Path, limit: u64) -> Result<Self, LogFileError> {
        let open_error = |source| LogFileError::Open { path: path.to_owned(), source };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(open_error)?;
        }
        let file = append(path).map_err(open_error)?;
        let written = file.metadata().map_err(open_error)?.len();
        Ok(Self { path: path.to_owned(), file, written, limit })
    }

    /// Where the previous file goes when a new one starts.
    pub fn previous(path: &Path) -> PathBuf {
        let mut name = path.file_name().unwrap_or_default().to_owned();
        name.push(".1");
        path.with_file_name(name)
    }

    /// Starts a new file, keeping the current one as the previous.
    fn rotate(&mut self) -> io::Result<()> {
        self.file.flush()?;
        fs::rename(&self.path, Self::previous(&self.path))?;
        self.file = append(&self.path)?;
        self.written = 0;
        Ok(())
    }
}

fn append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl Write for LogFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written > 0 && self.written + buf.len() as u64 > self.limit {
            self.rotate()?;
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appends_and_starts_a_new_file_past_its_limit_keeping_one_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("logs").join("patchbay.log");
        let mut log = LogFile::with_limit(&path, 30).unwrap();
        log.write_all(b"first line\n").unwrap();
        drop(log);
        // Opened again, it appends and counts what is there.
        let mut log = LogFile::with_limit(&path, 30).unwrap();
        log.write_all(b"second line\n").unwrap();
        assert_eq!(fs::read_to_string(&path).unwrap(), "first line\nsecond line\n");
        log.write_all(b"third line\n").unwrap();
        assert_eq!(fs::read_to_string(LogFile::previous(&path)).unwrap(), "first line\nsecond line\n");
        assert_eq!(fs::read_to_string(&path).unwrap(), "third line\n");
        log.write_all(b"fourth line\n").unwrap();
        log.write_all(b"fifth line\n").unwrap();
        assert_eq!(fs::read_to_string(LogFile::previous(&path)).unwrap(), "third line\nfourth line\n");
        assert_eq!(fs::read_to_string(&path).unwrap(), "fifth line\n");
        assert_eq!(fs::read_dir(path.parent().unwrap()).unwrap().count(), 2, "never more than two files");
    }

    #[test]
    fn a_log_that_cannot_be_opened_says_where() {
        let dir = tempfile::tempdir().unwrap();
        let blocked = dir.path().join("file");
        fs::write(&blocked, "not a folder").unwrap();
        let error = LogFile::open(&blocked.join("patchbay.log")).unwrap_err().to_string();
        assert!(error.starts_with(&format!("cannot open the log file {}", blocked.join("patchbay.log").display())));
    }
}
