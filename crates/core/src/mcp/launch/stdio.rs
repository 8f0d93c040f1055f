//! The stdio transport's child process: its own process group, stderr in a bounded ring buffer, and
//! a guard that leaves no orphans.
//!
//! `npx` and `uvx` start the real server as a grandchild, and some servers ignore stdin closing, so
//! shutdown closes stdin, waits [`ChildGuard::shutdown`]'s grace period, then signals the whole
//! group; dropping a [`ChildGuard`] kills the group at once. If Patchbay itself is killed no cleanup
//! runs, so on Linux the child gets `SIGKILL` through `PR_SET_PDEATHSIG`, and on Unix a tiny `sh`
//! watchdog in the group holds a pipe whose only write end Patchbay has: at end-of-file it signals
//! the group (`SIGTERM`, then `SIGKILL`), grandchildren included.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::mcp::error::McpError;

/// Lines kept per server.
pub const STDERR_LINES: usize = 500;
/// Longest stderr line kept; the rest of a longer line is dropped.
const MAX_LINE: usize = 4096;

/// Called with each new stderr line, as it arrives.
pub type LineListener = Arc<dyn Fn(&str) + Send + Sync>;

/// The last [`STDERR_LINES`] lines a server wrote to stderr. Cheap to clone.
#[derive(Clone, Default)]
pub struct StderrLog {
    lines: Arc<Mutex<VecDeque<String>>>,
    listener: Option<LineListener>,
}

impl std::fmt::Debug for StderrLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StderrLog").field("lines", &self.lines).finish_non_exhaustive()
    }
}

impl StderrLog {
    /// A log that also passes every new line to `listener` (live logs in the UI).
    pub fn with_listener(listener: LineListener) -> Self {
        Self { lines: Arc::default(), listener: Some(listener) }
    }

    /// The last `n` lines, oldest first.
    pub fn tail(&self, n: usize) -> Vec<String> {
        let lines = self.lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        lines.iter().skip(lines.len().saturating_sub(n)).cloned().collect()
    }

    /// Appends a line, dropping the oldest beyond the limit.
    pub fn push(&self, line: String) {
        if let Some(listener) = &self.listener {
            listener(&line);
        }
        let mut lines = self.lines.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// Reads `source` until it closes, one line at a time, each line bounded.
    async fn collect(self, mut source: impl tokio::io::AsyncRead + Unpin) {
        let mut buf = [0u8; 8192];
        let mut line: Vec<u8> = Vec::new();
        loop {
            let n = match source.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            for &b in &buf[..n] {
                if b == b'\n' {
                    self.push(String::from_utf8_lossy(&line).trim_end_matches('\r').to_owned());
                    line.clear();
                } else if line.len() < MAX_LINE {
                    line.push(b);
                }
            }
        }
        if !line.is_empty() {
            self.push(String::from_utf8_lossy(&line).into_owned());
        }
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Launch {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    pub cwd: Option<PathBuf>,
}

/// Owns a server's process (and its process group).
#[derive(Debug)]
pub struct ChildGuard {
    child: Child,
    pid: Option<u32>,
    exited: Option<ExitStatus>,
    #[cfg(unix)]
    watchdog: Option<Watchdog>,
}

/// Starts `launch` with piped stdio; stderr goes into `log`.
pub fn spawn(launch: &Launch, log: &StderrLog) -> Result<(ChildGuard, ChildStdout, ChildStdin), McpError> {
    let mut cmd = Command::new(&launch.program);
    cmd.args(&launch.args)
        .env_clear()
        .envs(launch.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if let Some(dir) = &launch.cwd {
        cmd.current_dir(dir);
    }
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(target_os = "linux")]
    set_parent_death_signal(&mut cmd);
    let mut child =
        cmd.spawn().map_err(|source| McpError::Spawn { command: launch.program.display().to_string(), source })?;
    let (Some(stdout), Some(stdin), Some(stderr)) = (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(McpError::Spawn {
            command: launch.program.display().to_string(),
            source: std::io::Error::other("the child's stdio pipes were not created"),
        });
    };
    tokio::spawn(log.clone().collect(stderr));
    let pid = child.id();
    #[cfg(unix)]
    let watchdog = pid.and_then(|pid| {
        Watchdog::spawn(pid)
            .inspect_err(|e| tracing::warn!(pid, "no watchdog for the server's process group: {e}"))
            .ok()
    });
    Ok((
        ChildGuard {
            child,
            pid,
            exited: None,
            #[cfg(unix)]
            watchdog,
        },
        stdout,
        stdin,
    ))
}

/// Signals a process group when Patchbay dies: see the module docs.
#[cfg(unix)]
#[derive(Debug)]
struct Watchdog {
    process: Child,
    /// Patchbay's end of the pipe (close-on-exec, so no other child inherits it).
    _alive: std::io::PipeWriter,
}

#[cfg(unix)]
impl Watchdog {
    /// Ignores `SIGTERM` (it is in the group it signals), waits for end-of-file
    /// on stdin, then terminates and kills the group.
    const SCRIPT: &'static str =
        "trap '' TERM HUP INT; while read -r _; do :; done; kill -TERM 0; sleep 1; kill -KILL 0";

    fn spawn(pgid: u32) -> std::io::Result<Self> {
        let (read, write) = std::io::pipe()?;
        let pgid = i32::try_from(pgid).map_err(std::io::Error::other)?;
        let process = Command::new("/bin/sh")
            .args(["-c", Self::SCRIPT])
            .stdin(Stdio::from(std::os::fd::OwnedFd::from(read)))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(pgid)
            .spawn()?;
        Ok(Self { process, _alive: write })
    }
}

/// Asks Linux to `SIGKILL` the child when the thread that spawned it ends. Children
/// are spawned from runtime worker threads, which live as long as the runtime.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn set_parent_death_signal(cmd: &mut Command) {
    // SAFETY: between fork and exec only async-signal-safe calls are made
    // (prctl, getppid, _exit), with no allocation.
    let parent = std::process::id();
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() as u32 != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

impl ChildGuard {
    /// The server process's id (also its process group id on Unix).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Waits up to `grace` for the process to exit by itself; its status if it did.
    pub async fn wait_exit(&mut self, grace: Duration) -> Option<ExitStatus> {
        if self.exited.is_none()
            && let Ok(Ok(status)) = tokio::time::timeout(grace, self.child.wait()).await
        {
            self.exited = Some(status);
        }
        self.exited
    }

    /// After stdin was closed: waits `grace`, then terminates the whole process
    /// group (`SIGTERM`, a short wait, `SIGKILL`). Returns the exit status if known.
    pub async fn shutdown(&mut self, grace: Duration) -> Option<ExitStatus> {
        let status = self.wait_exit(grace).await;
        if status.is_none() {
            self.signal_group(Signal::Term);
            self.wait_exit(grace.min(Duration::from_millis(500))).await;
        }
        // Grandchildren (npx → node) may outlive the leader: kill the group regardless.
        self.signal_group(Signal::Kill);
        if self.exited.is_none() {
            let _ = self.child.start_kill();
            self.wait_exit(Duration::from_secs(1)).await;
        }
        // The group kill ended the watchdog too: reap it.
        #[cfg(unix)]
        if let Some(mut watchdog) = self.watchdog.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), watchdog.process.wait()).await;
        }
        self.exited
    }

    fn signal_group(&self, signal: Signal) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
            let sig = match signal {
                Signal::Term => libc::SIGTERM,
                Signal::Kill => libc::SIGKILL,
            };
            kill_group(pid, sig);
        }
        #[cfg(not(unix))]
        let _ = signal;
    }
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
#[allow(unsafe_code)]
fn kill_group(pgid: libc::pid_t, sig: libc::c_int) {
    // SAFETY: killpg has no memory effects; a group that is gone gives ESRCH, ignored.
    unsafe {
        libc::killpg(pgid, sig);
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        self.signal_group(Signal::Kill);
        // `kill_on_drop` reaps the leader.
    }
}

/// The exit code and signal of a status, for reports.
pub fn describe(status: Option<ExitStatus>) -> (Option<i32>, Option<i32>) {
    let Some(status) = status else { return (None, None) };
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        (status.code(), status.signal())
    }
    #[cfg(not(unix))]
    (status.code(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_buffer_keeps_the_last_lines() {
        let log = StderrLog::default();
        for i in 0..STDERR_LINES + 20 {
            log.push(format!("line {i}"));
        }
        let tail = log.tail(usize::MAX);
        assert_eq!(tail.len(), STDERR_LINES);
        assert_eq!(tail[0], "line 20");
        assert_eq!(log.tail(2), vec![format!("line {}", STDERR_LINES + 18), format!("line {}", STDERR_LINES + 19)]);
    }

    #[tokio::test]
    async fn long_lines_are_cut_and_a_last_partial_line_is_kept() {
        let log = StderrLog::default();
        let mut input = vec![b'x'; MAX_LINE * 3];
        input.extend_from_slice(b"\r\nshort\nno newline");
        log.clone().collect(&input[..]).await;
        let tail = log.tail(10);
        assert_eq!(tail.len(), 3);
        assert_eq!(tail[0].len(), MAX_LINE);
        assert_eq!(tail[1..], ["short".to_owned(), "no newline".to_owned()]);
    }
}
