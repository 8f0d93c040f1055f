//! The operating system's side of scheduled runs: a systemd user timer (on
//! Linux) that runs `patchbay --data-dir DIR schedule run-due` every five
//! minutes, and once shortly after start-up (`Persistent`) for what was missed
//! while the computer was off. One timer per data directory, named after its
//! fingerprint; `install` writes it and enables it with `systemctl --user`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::ScheduleError;
use crate::paths::DataDir;

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
fn unit_folder() -> Result<PathBuf, ScheduleError> {
    std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))
        .map(|config| config.join("systemd/user"))
        .ok_or_else(|| ScheduleError::Timer("neither XDG_CONFIG_HOME nor HOME is set".into()))
}

/// Writes `dir`'s units for `cli` and enables the timer; says what was done,
/// or why the timer does not run (the units stay written for a later login).
pub fn install(cli: &Path, dir: &DataDir) -> Result<String, ScheduleError> {
    if !cfg!(target_os = "linux") {
        return Err(ScheduleError::Timer("only Linux's systemd user timer is supported so far".into()));
    }
    for path in [cli, dir.path()] {
        if path.to_str().is_none_or(|p| p.chars().any(char::is_control)) {
            return Err(ScheduleError::Timer(format!(
                "{} cannot be written into a systemd unit (not UTF-8, or a control character)",
                path.display()
            )));
        }
    }
    let folder = unit_folder()?;
    let write = |name: String, text: String| {
        std::fs::create_dir_all(&folder)
            .and_then(|()| std::fs::write(folder.join(&name), text))
            .map_err(|e| ScheduleError::Timer(format!("cannot write {}: {e}", folder.join(name).display())))
    };
    let unit = unit_name(dir);
    let (service, timer) = units(cli, dir);
    write(format!("{unit}.service"), service)?;
    write(format!("{unit}.timer"), timer)?;
    let at = folder.join(format!("{unit}.timer"));
    if std::env::var_os(NO_SYSTEMCTL).is_some() {
        return Err(ScheduleError::Timer(format!("wrote {}; not enabled ({NO_SYSTEMCTL} is set)", at.display())));
    }
    let systemctl = |args: &[&str]| Command::new("systemctl").arg("--user").args(args).output();
    let enabled = systemctl(&["daemon-reload"]).and_then(|reload| {
        if reload.status.success() { systemctl(&["enable", "--now", &format!("{unit}.timer")]) } else { Ok(reload) }
    });
    match enabled {
        Ok(out) if out.status.success() => {
            Ok(format!("the systemd user timer {unit}.timer runs due schedules while Patchbay is closed"))
        }
        Ok(out) => Err(ScheduleError::Timer(format!(
            "wrote {}, but systemctl --user could not enable it: {}",
            at.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(e) => Err(ScheduleError::Timer(format!("wrote {}, but systemctl could not run: {e}", at.display()))),
    }
}

/// Disables `dir`'s timer and deletes its units (when its last schedule is
/// removed), so that nothing runs for it any more; what was done.
pub fn uninstall(dir: &DataDir) -> Result<String, ScheduleError> {
    let folder = unit_folder()?;
    let unit = unit_name(dir);
    let timer = folder.join(format!("{unit}.timer"));
    if !timer.exists() {
        return Ok("no system timer was set up".into());
    }
    if std::env::var_os(NO_SYSTEMCTL).is_none() {
        // A timer that was never enabled (no user systemd) is fine to remove as it is.
        let _ = Command::new("systemctl").args(["--user", "disable", "--now", &format!("{unit}.timer")]).output();
    }
    for file in [timer, folder.join(format!("{unit}.service"))] {
        std::fs::remove_file(&file)
            .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
            .map_err(|e| ScheduleError::Timer(format!("cannot remove {}: {e}", file.display())))?;
    }
    Ok(format!("the system timer {unit}.timer is removed"))
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
