//! The operating system's side of scheduled runs: a systemd user timer (on
//! Linux) that runs `patchbay --data-dir DIR schedule run-due` every five
//! minutes, and once shortly after start-up (`Persistent`) for what was missed
//! while the computer was off. One timer per data directory, named after its
//! fingerprint; [`SystemdUser::install`] writes it and enables it with `systemctl --user`.
//! Behind [`SystemTimer`]: launchd and Task Scheduler would be others.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::paths::DataDir;

/// Why the system timer could not be set up (the window words each kind) or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimerError {
    #[error("only Linux's systemd user timer is supported so far")]
    Unsupported,
    #[error("{path} cannot be written into a systemd unit (not UTF-8, or a control character)")]
    UnusablePath { path: String },
    #[error("neither XDG_CONFIG_HOME nor HOME is set")]
    NoHome,
    #[error("cannot write {path}: {error}")]
    Unwritable { path: String, error: String },
    #[error("cannot remove {path}: {error}")]
    Unremovable { path: String, error: String },
    /// Tests set [`NO_SYSTEMCTL`].
    #[error("wrote {path}; not enabled ({NO_SYSTEMCTL} is set)")]
    NotEnabled { path: String },
    /// `systemctl --user` refused (no user session manager, say): its words.
    #[error("wrote {path}, but systemctl --user could not enable it: {error}")]
    Refused { path: String, error: String },
    #[error("wrote {path}, but systemctl could not run: {error}")]
    NoSystemctl { path: String, error: String },
}

/// The operating system's scheduler, which runs due schedules while Patchbay is closed.
pub trait SystemTimer: Send + Sync {
    /// Sets up the timer that runs `cli` on `dir` (again, if it is there); the unit that runs.
    fn install(&self, cli: &Path, dir: &DataDir) -> Result<String, TimerError>;
    /// Stops and removes `dir`'s timer, if there is one (with its last schedule).
    fn uninstall(&self, dir: &DataDir) -> Result<(), TimerError>;
}

/// A systemd user timer, the Linux desktop's scheduler.
#[derive(Debug, Default)]
pub struct SystemdUser;

/// Set, the units are written but not enabled: tests use it, so that a
/// machine's real systemd never gets a timer for a test's data directory.
pub const NO_SYSTEMCTL: &str = "PATCHBAY_NO_SYSTEMCTL";

/// How long one scheduled run may take before it is stopped (a stuck server
/// or model must not hold every later run).
pub const RUN_LIMIT_SECS: u64 = 3600;

/// How long one `run-due`, which may make several runs, may take before
/// systemd (or the app) stops it.
pub const BATCH_LIMIT_SECS: u64 = 6 * RUN_LIMIT_SECS;

/// The unit name for `dir`'s timer and service.
pub fn unit_name(dir: &DataDir) -> String {
    format!("patchbay-schedules-{}", dir.fingerprint())
}

/// `arg` quoted for an `ExecStart=` line: in double quotes, with `\`, `"` and
/// systemd's `%` specifiers and `$` expansions escaped.
fn quoted(arg: &Path) -> String {
    let text = arg.display().to_string();
    let escaped = text.replace('\\', "\\\\").replace('"', "\\\"").replace('%', "%%").replace('$', "$$");
    format!("\"{escaped}\"")
}

/// The service and timer units that run `cli` on `dir`.
pub fn units(cli: &Path, dir: &DataDir) -> (String, String) {
    let description =
        format!("Patchbay scheduled runs ({})", dir.path().display()).replace('%', "%%").replace('\n', " ");
    let service = format!(
        "[Unit]\nDescription={description}\n\n[Service]\nType=oneshot\nTimeoutStartSec={BATCH_LIMIT_SECS}\n\
         ExecStart={} --data-dir {} schedule run-due\n",
        quoted(cli),
        quoted(dir.path())
    );
    let timer = format!(
        "[Unit]\nDescription={description}\n\n[Timer]\nOnCalendar=*:0/5\nOnStartupSec=2min\nPersistent=true\n\n\
         [Install]\nWantedBy=timers.target\n"
    );
    (service, timer)
}

/// The user's systemd unit folder (`$XDG_CONFIG_HOME/systemd/user`).
fn unit_folder() -> Result<PathBuf, TimerError> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|config| config.join("systemd/user"))
        .ok_or(TimerError::NoHome)
}

impl SystemTimer for SystemdUser {
    /// Writes `dir`'s units for `cli` and enables the timer; or says why it does not run
    /// (the units stay written for a later login).
    fn install(&self, cli: &Path, dir: &DataDir) -> Result<String, TimerError> {
        if !cfg!(target_os = "linux") {
            return Err(TimerError::Unsupported);
        }
        for path in [cli, dir.path()] {
            if path.to_str().is_none_or(|p| p.chars().any(char::is_control)) {
                return Err(TimerError::UnusablePath { path: path.display().to_string() });
            }
        }
        let folder = unit_folder()?;
        let write = |name: String, text: String| {
            std::fs::create_dir_all(&folder).and_then(|()| std::fs::write(folder.join(&name), text)).map_err(|e| {
                TimerError::Unwritable { path: folder.join(name).display().to_string(), error: e.to_string() }
            })
        };
        let unit = unit_name(dir);
        let (service, timer) = units(cli, dir);
        write(format!("{unit}.service"), service)?;
        write(format!("{unit}.timer"), timer)?;
        let path = folder.join(format!("{unit}.timer")).display().to_string();
        if std::env::var_os(NO_SYSTEMCTL).is_some() {
            return Err(TimerError::NotEnabled { path });
        }
        let systemctl = |args: &[&str]| Command::new("systemctl").arg("--user").args(args).output();
        let enabled = systemctl(&["daemon-reload"]).and_then(|reload| {
            if reload.status.success() { systemctl(&["enable", "--now", &format!("{unit}.timer")]) } else { Ok(reload) }
        });
        match enabled {
            Ok(out) if out.status.success() => Ok(format!("{unit}.timer")),
            Ok(out) => Err(TimerError::Refused { path, error: String::from_utf8_lossy(&out.stderr).trim().to_owned() }),
            Err(e) => Err(TimerError::NoSystemctl { path, error: e.to_string() }),
        }
    }

    /// Disables `dir`'s timer and deletes its units, so that nothing runs for it any more.
    fn uninstall(&self, dir: &DataDir) -> Result<(), TimerError> {
        let folder = unit_folder()?;
        let unit = unit_name(dir);
        let timer = folder.join(format!("{unit}.timer"));
        if !timer.exists() {
            return Ok(());
        }
        if std::env::var_os(NO_SYSTEMCTL).is_none() {
            // A timer that was never enabled (no user systemd) is fine to remove as it is.
            let _ = Command::new("systemctl").args(["--user", "disable", "--now", &format!("{unit}.timer")]).output();
        }
        for file in [timer, folder.join(format!("{unit}.service"))] {
            std::fs::remove_file(&file)
                .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
                .map_err(|e| TimerError::Unremovable { path: file.display().to_string(), error: e.to_string() })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_units_quote_paths_and_escape_systemd_specifiers() {
        let dir = DataDir::new("/home/ada/My Data/100% \"real\"");
        let (service, timer) = units(Path::new("/opt/Patch bay/patchbay"), &dir);
        assert!(
            service.contains(
                "ExecStart=\"/opt/Patch bay/patchbay\" --data-dir \"/home/ada/My Data/100%% \\\"real\\\"\" schedule run-due\n"
            ),
            "{service}"
        );
        assert!(timer.contains("OnCalendar=*:0/5\n") && timer.contains("Persistent=true\n"), "{timer}");
        assert!(service.contains("TimeoutStartSec=21600\n"), "{service}");
        assert!(unit_name(&dir).starts_with("patchbay-schedules-"));
    }
}
