//! The operating system's side of scheduled runs: the system's scheduler runs
//! `patchbay --data-dir DIR schedule run-due` every five minutes, and soon
//! after the computer is back for what was missed while it was off (`run-due`
//! itself finds what is late). One job per data directory, named
//! after its fingerprint, behind [`SystemTimer`]:
//! - Linux: a systemd user timer ([`SystemdUser`], enabled with `systemctl --user`);
//! - macOS: a launchd agent ([`LaunchAgent`], loaded with `launchctl`);
//! - Windows: a Task Scheduler task ([`ScheduledTask`], made with `schtasks`).
//!
//! Each compiles everywhere (what it writes is tested here), and acts only on
//! its own system; [`for_this_system`] picks it. Only the first has run here:
//! the macOS and Windows ones are untested on those systems.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::paths::DataDir;

/// Why the system timer could not be set up (the window words each kind) or removed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TimerError {
    #[error("this system has no scheduler Patchbay can use (systemd, launchd or Task Scheduler)")]
    Unsupported,
    #[error(
        "{path} cannot be written into the scheduler's job (not UTF-8, a control character, or on Windows a quote or %)"
    )]
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
    /// The scheduler's `tool` refused (no user session manager, say): its words.
    #[error("wrote {path}, but {tool} could not enable it: {error}")]
    Refused { path: String, tool: String, error: String },
    #[error("wrote {path}, but {tool} could not run: {error}")]
    NoTool { path: String, tool: String, error: String },
}

/// The operating system's scheduler, which runs due schedules while Patchbay is closed.
pub trait SystemTimer: Send + Sync {
    /// Sets up the timer that runs `cli` on `dir` (again, if it is there); the unit that runs.
    fn install(&self, cli: &Path, dir: &DataDir) -> Result<String, TimerError>;
    /// Stops and removes `dir`'s timer, if there is one (with its last schedule).
    fn uninstall(&self, dir: &DataDir) -> Result<(), TimerError>;
}

/// The scheduler of the system Patchbay runs on.
pub fn for_this_system() -> Box<dyn SystemTimer> {
    if cfg!(target_os = "macos") {
        Box::new(LaunchAgent)
    } else if cfg!(windows) {
        Box::new(ScheduledTask)
    } else {
        Box::new(SystemdUser)
    }
}

/// A systemd user timer, the Linux desktop's scheduler.
#[derive(Debug, Default)]
pub struct SystemdUser;

/// A launchd agent in `~/Library/LaunchAgents`, macOS's scheduler.
#[derive(Debug, Default)]
pub struct LaunchAgent;

/// A task in Task Scheduler's `\Patchbay\` folder, Windows' scheduler.
#[derive(Debug, Default)]
pub struct ScheduledTask;

/// Set, the jobs are written but not enabled: tests use it, so that a
/// machine's real scheduler never gets a job for a test's data directory.
pub const NO_SYSTEMCTL: &str = "PATCHBAY_NO_SYSTEMCTL";

/// How long one scheduled run may take before it is stopped (a stuck server
/// or model must not hold every later run).
pub const RUN_LIMIT_SECS: u64 = 3600;

/// How long one `run-due`, which may make several runs, may take before
/// systemd (or the app) stops it.
pub const BATCH_LIMIT_SECS: u64 = 6 * RUN_LIMIT_SECS;

/// The command-line app that belongs with the executable `exe`: itself when it is the CLI
/// (named `patchbay`), else the `patchbay` beside it (the .deb installs both in `/usr/bin`, a
/// build puts both in its target folder); on macOS, whose bundle has none, the desktop binary
/// itself, which is the CLI when run under the name `patchbay` (the launchd agent and the
/// window's own runs name it so). `None` where there is none.
pub fn cli_beside(exe: &Path) -> Option<PathBuf> {
    if exe.file_stem().is_some_and(|stem| stem == "patchbay") {
        return Some(exe.to_path_buf());
    }
    let beside = exe.with_file_name(format!("patchbay{}", std::env::consts::EXE_SUFFIX));
    if beside.is_file() { Some(beside) } else { cfg!(target_os = "macos").then(|| exe.to_path_buf()) }
}

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

/// `systemctl --user ARGS…`, run to its end.
fn systemctl(args: &[&str]) -> std::io::Result<std::process::Output> {
    Command::new("systemctl").arg("--user").args(args).output()
}

impl SystemTimer for SystemdUser {
    /// Writes `dir`'s units for `cli` and enables the timer; or says why it does not run
    /// (the units stay written for a later login).
    fn install(&self, cli: &Path, dir: &DataDir) -> Result<String, TimerError> {
        writable(cfg!(target_os = "linux"), cli, dir)?;
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
        let enabled = systemctl(&["daemon-reload"]).and_then(|reload| {
            if reload.status.success() { systemctl(&["enable", "--now", &format!("{unit}.timer")]) } else { Ok(reload) }
        });
        told(enabled, path, "systemctl --user").map(|()| format!("{unit}.timer"))
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
            let _ = systemctl(&["disable", "--now", &format!("{unit}.timer")]);
            // Its `Persistent=` stamp (in ~/.local/share/systemd/timers) goes too, where the
            // session's bus is systemd's (`clean` needs it); best effort.
            let _ = systemctl(&["clean", "--what=state", &format!("{unit}.timer")]);
        }
        for file in [timer, folder.join(format!("{unit}.service"))] {
            remove(&file)?;
        }
        Ok(())
    }
}

/// Refuses a scheduler that is not this system's (`here` false), and paths no scheduler's job
/// can hold: not UTF-8, or with a control character.
fn writable(here: bool, cli: &Path, dir: &DataDir) -> Result<(), TimerError> {
    if !here {
        return Err(TimerError::Unsupported);
    }
    for path in [cli, dir.path()] {
        if path.to_str().is_none_or(|p| p.chars().any(char::is_control)) {
            return Err(TimerError::UnusablePath { path: path.display().to_string() });
        }
    }
    Ok(())
}

/// How the scheduler's `tool` took the job written at `path`.
fn told(ran: std::io::Result<std::process::Output>, path: String, tool: &str) -> Result<(), TimerError> {
    let tool = tool.to_owned();
    match ran {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => {
            let said = if out.stderr.is_empty() { &out.stdout } else { &out.stderr };
            Err(TimerError::Refused { path, tool, error: String::from_utf8_lossy(said).trim().to_owned() })
        }
        Err(e) => Err(TimerError::NoTool { path, tool, error: e.to_string() }),
    }
}

/// Removes `file`; one already gone is fine.
fn remove(file: &Path) -> Result<(), TimerError> {
    std::fs::remove_file(file)
        .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
        .map_err(|e| TimerError::Unremovable { path: file.display().to_string(), error: e.to_string() })
}

/// `text` for XML character data and attribute values.
fn xml(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

/// The launchd agent that runs `cli` on `dir`: at log-in (what was missed while the computer
/// was off), and at every fifth minute of the clock (a time missed asleep runs on waking,
/// once: launchd's calendar intervals, unlike `StartInterval`, are not lost in sleep). Its
/// process is named `patchbay` (`Program` runs, `ProgramArguments` starts with the name), so
/// the app's own binary, which the macOS bundle has instead of a `patchbay` command, runs as
/// the command-line app.
pub fn launch_agent(cli: &Path, dir: &DataDir) -> String {
    let (cli, data) = (cli.display().to_string(), dir.path().display().to_string());
    let arguments: String = ["patchbay", "--data-dir", data.as_str(), "schedule", "run-due"]
        .iter()
        .map(|a| format!("    <string>{}</string>\n", xml(a)))
        .collect();
    let minutes: String =
        (0..60).step_by(5).map(|m| format!("    <dict><key>Minute</key><integer>{m}</integer></dict>\n")).collect();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" \"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n\
         <plist version=\"1.0\">\n<dict>\n  <key>Label</key>\n  <string>{}</string>\n\
         \x20 <key>Program</key>\n  <string>{}</string>\n\
         \x20 <key>ProgramArguments</key>\n  <array>\n{arguments}  </array>\n\
         \x20 <key>StartCalendarInterval</key>\n  <array>\n{minutes}  </array>\n\
         \x20 <key>RunAtLoad</key>\n  <true/>\n  <key>ProcessType</key>\n  <string>Background</string>\n\
         </dict>\n</plist>\n",
        xml(&unit_name(dir)),
        xml(&cli)
    )
}

/// `~/Library/LaunchAgents`.
fn agents_folder() -> Result<PathBuf, TimerError> {
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join("Library/LaunchAgents")).ok_or(TimerError::NoHome)
}

impl SystemTimer for LaunchAgent {
    /// Writes `dir`'s agent for `cli` and loads it (again, if it was loaded).
    fn install(&self, cli: &Path, dir: &DataDir) -> Result<String, TimerError> {
        writable(cfg!(target_os = "macos"), cli, dir)?;
        let folder = agents_folder()?;
        let file = folder.join(format!("{}.plist", unit_name(dir)));
        let path = file.display().to_string();
        let agent = launch_agent(cli, dir);
        let unchanged = std::fs::read_to_string(&file).is_ok_and(|was| was == agent);
        std::fs::create_dir_all(&folder)
            .and_then(|()| std::fs::write(&file, &agent))
            .map_err(|e| TimerError::Unwritable { path: path.clone(), error: e.to_string() })?;
        if std::env::var_os(NO_SYSTEMCTL).is_some() {
            return Err(TimerError::NotEnabled { path });
        }
        // Loaded as it is: unloading it again would stop a run in progress.
        let loaded = || Command::new("launchctl").args(["list", &unit_name(dir)]).output();
        if unchanged && loaded().is_ok_and(|out| out.status.success()) {
            return Ok(unit_name(dir));
        }
        // Loaded before (an older Patchbay's binary, say): unloaded first, or load keeps the old one.
        let _ = Command::new("launchctl").arg("unload").arg(&file).output();
        let load = Command::new("launchctl").args(["load", "-w"]).arg(&file).output();
        // `load` can exit 0 having loaded nothing (a plist it refused, say), its reason on
        // stderr: loaded is what `list` then knows.
        let said = load.as_ref().map(|out| String::from_utf8_lossy(&out.stderr).trim().to_owned()).unwrap_or_default();
        told(load, path.clone(), "launchctl")?;
        if loaded().is_ok_and(|out| out.status.success()) {
            return Ok(unit_name(dir));
        }
        let error = if said.is_empty() { "the agent is not loaded".to_owned() } else { said };
        Err(TimerError::Refused { path, tool: "launchctl".into(), error })
    }

    /// Unloads `dir`'s agent and deletes it.
    fn uninstall(&self, dir: &DataDir) -> Result<(), TimerError> {
        let file = agents_folder()?.join(format!("{}.plist", unit_name(dir)));
        if !file.exists() {
            return Ok(());
        }
        if std::env::var_os(NO_SYSTEMCTL).is_none() {
            let _ = Command::new("launchctl").args(["unload", "-w"]).arg(&file).output();
        }
        remove(&file)
    }
}

/// The task's name in Task Scheduler.
fn task_name(dir: &DataDir) -> String {
    format!("\\Patchbay\\{}", unit_name(dir))
}

/// The Task Scheduler task that runs `cli` on `dir` every five minutes while the user is logged
/// on; a run missed while the computer was off starts as soon as it can (`StartWhenAvailable`),
/// one at a time, and none runs longer than `run-due`'s limit. (No log-on trigger: one for any
/// user needs an administrator, and the missed run starts anyway.)
/// A path with a double quote, which a Windows command line cannot quote, or a `%`, which
/// Task Scheduler would read as a variable, is refused.
pub fn scheduled_task(cli: &Path, dir: &DataDir) -> Result<String, TimerError> {
    let (cli, data) = (cli.display().to_string(), dir.path().display().to_string());
    if let Some(path) = [&cli, &data].into_iter().find(|p| p.contains(['"', '%'])) {
        return Err(TimerError::UnusablePath { path: path.clone() });
    }
    // Backslashes before the closing quote are doubled, or the quote would be taken as
    // part of the folder (`"D:\"`).
    let trailing = data.len() - data.trim_end_matches('\\').len();
    let argument = format!("{data}{}", "\\".repeat(trailing));
    let hours = BATCH_LIMIT_SECS / 3600;
    Ok(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n\
         <Task version=\"1.2\" xmlns=\"http://schemas.microsoft.com/windows/2004/02/mit/task\">\n\
         \x20 <RegistrationInfo><Description>{}</Description></RegistrationInfo>\n\
         \x20 <Triggers>\n\
         \x20   <TimeTrigger><Repetition><Interval>PT5M</Interval></Repetition>\
         <StartBoundary>2026-01-01T00:00:00</StartBoundary><Enabled>true</Enabled></TimeTrigger>\n\
         \x20 </Triggers>\n\
         \x20 <Principals><Principal id=\"Author\"><LogonType>InteractiveToken</LogonType>\
         <RunLevel>LeastPrivilege</RunLevel></Principal></Principals>\n\
         \x20 <Settings>\n\
         \x20   <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>\n\
         \x20   <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>\n\
         \x20   <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>\n\
         \x20   <StartWhenAvailable>true</StartWhenAvailable>\n\
         \x20   <ExecutionTimeLimit>PT{hours}H</ExecutionTimeLimit>\n\
         \x20   <Hidden>true</Hidden>\n\
         \x20 </Settings>\n\
         \x20 <Actions Context=\"Author\"><Exec><Command>{}</Command>\
         <Arguments>--data-dir \"{}\" schedule run-due</Arguments></Exec></Actions>\n\
         </Task>\n",
        xml(&format!("Patchbay scheduled runs ({data})")),
        xml(&cli),
        xml(&argument)
    ))
}

impl SystemTimer for ScheduledTask {
    /// Makes (or replaces) `dir`'s task for `cli`, from its XML (UTF-16, as `schtasks` reads it).
    fn install(&self, cli: &Path, dir: &DataDir) -> Result<String, TimerError> {
        writable(cfg!(windows), cli, dir)?;
        let task = scheduled_task(cli, dir)?;
        let file = std::env::temp_dir().join(format!("{}.xml", unit_name(dir)));
        let path = file.display().to_string();
        let utf16: Vec<u8> = [0xFEFF_u16].into_iter().chain(task.encode_utf16()).flat_map(u16::to_le_bytes).collect();
        std::fs::write(&file, utf16)
            .map_err(|e| TimerError::Unwritable { path: path.clone(), error: e.to_string() })?;
        if std::env::var_os(NO_SYSTEMCTL).is_some() {
            return Err(TimerError::NotEnabled { path });
        }
        let made = Command::new("schtasks").args(["/Create", "/F", "/TN", &task_name(dir), "/XML"]).arg(&file).output();
        let _ = std::fs::remove_file(&file);
        told(made, task_name(dir), "schtasks").map(|()| task_name(dir))
    }

    /// Deletes `dir`'s task; one that is not there is fine.
    fn uninstall(&self, dir: &DataDir) -> Result<(), TimerError> {
        if !cfg!(windows) || std::env::var_os(NO_SYSTEMCTL).is_some() {
            return Ok(());
        }
        let name = task_name(dir);
        let listed = Command::new("schtasks").args(["/Query", "/TN", &name]).output();
        if !listed.is_ok_and(|out| out.status.success()) {
            return Ok(());
        }
        let unremovable = |error: String| TimerError::Unremovable { path: name.clone(), error };
        match Command::new("schtasks").args(["/Delete", "/F", "/TN", &name]).output() {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(unremovable(String::from_utf8_lossy(&out.stderr).trim().to_owned())),
            Err(e) => Err(unremovable(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

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

    /// A data folder and a program whose names XML must escape.
    fn awkward() -> (PathBuf, DataDir) {
        (PathBuf::from("/Applications/Patch & Bay.app/patchbay"), DataDir::new("/Users/ada/<My> 'data' & more"))
    }

    #[test]
    fn the_launch_agent_runs_the_cli_on_the_data_dir_at_log_in_and_every_fifth_minute() {
        let (cli, dir) = awkward();
        let agent: plist::Dictionary = plist::from_bytes(launch_agent(&cli, &dir).as_bytes()).expect("a plist");
        assert_eq!(agent.get("Label").and_then(|v| v.as_string()), Some(unit_name(&dir).as_str()));
        let arguments: Vec<_> = agent["ProgramArguments"].as_array().unwrap().iter().map(|a| a.as_string()).collect();
        assert_eq!(agent.get("Program").and_then(|v| v.as_string()), cli.to_str());
        assert_eq!(
            arguments,
            [Some("patchbay"), Some("--data-dir"), dir.path().to_str(), Some("schedule"), Some("run-due")],
            "named patchbay, each argument whole, as written"
        );
        let minutes: Vec<_> = agent["StartCalendarInterval"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_dictionary().and_then(|d| d.get("Minute")).and_then(plist::Value::as_unsigned_integer))
            .collect();
        assert_eq!(minutes, (0..60).step_by(5).map(Some).collect::<Vec<_>>());
        assert_eq!(agent.get("RunAtLoad").and_then(plist::Value::as_boolean), Some(true));
    }

    #[test]
    fn the_windows_task_runs_the_cli_every_five_minutes_and_catches_up() {
        use quick_xml::events::Event;
        let (cli, dir) = awkward();
        let task = scheduled_task(&cli, &dir).expect("no double quote in the paths");
        let mut reader = quick_xml::Reader::from_str(&task);
        let (mut path, mut found) = (Vec::<String>::new(), HashMap::<String, String>::new());
        loop {
            match reader.read_event().expect("well-formed XML") {
                Event::Start(e) => path.push(e.name().as_ref().to_owned()),
                Event::End(_) => {
                    path.pop();
                }
                Event::Text(t) => found.entry(path.join("/")).or_default().push_str(&t.xml10_content()),
                Event::GeneralRef(r) => {
                    let name = r.into_inner();
                    let text = quick_xml::escape::resolve_predefined_entity(&name).expect("an XML entity");
                    found.entry(path.join("/")).or_default().push_str(text);
                }
                Event::Eof => break,
                _ => {}
            }
        }
        let at = |p: &str| found.get(p).map(String::as_str);
        assert_eq!(at("Task/Actions/Exec/Command"), cli.to_str());
        assert_eq!(
            at("Task/Actions/Exec/Arguments").map(str::to_owned),
            Some(format!("--data-dir \"{}\" schedule run-due", dir.path().display()))
        );
        assert_eq!(at("Task/Triggers/TimeTrigger/Repetition/Interval"), Some("PT5M"));
        assert_eq!(at("Task/Triggers/TimeTrigger/Enabled"), Some("true"));
        assert_eq!(at("Task/Settings/StartWhenAvailable"), Some("true"));
        assert_eq!(at("Task/Settings/MultipleInstancesPolicy"), Some("IgnoreNew"));
        assert_eq!(at("Task/Settings/ExecutionTimeLimit"), Some("PT6H"));
        let quoted = Path::new("C:\\x\"y\\patchbay.exe");
        assert_eq!(
            scheduled_task(quoted, &dir),
            Err(TimerError::UnusablePath { path: quoted.display().to_string() }),
            "a quote cannot be quoted"
        );
        let variable = DataDir::new("C:\\%APPDATA%\\p");
        assert_eq!(
            scheduled_task(&cli, &variable),
            Err(TimerError::UnusablePath { path: variable.path().display().to_string() }),
            "a variable would be expanded"
        );
        let root = scheduled_task(Path::new("C:\\patchbay.exe"), &DataDir::new("D:\\")).unwrap();
        assert!(root.contains("D:\\\\\" schedule run-due</Arguments>"), "{root}");
    }

    #[test]
    fn each_system_gets_its_own_scheduler_and_the_others_refuse() {
        let dir = DataDir::new("/tmp/patchbay-timer-test");
        let cli = Path::new("/usr/bin/patchbay");
        let others: Vec<Box<dyn SystemTimer>> = if cfg!(target_os = "linux") {
            vec![Box::new(LaunchAgent), Box::new(ScheduledTask)]
        } else {
            vec![Box::new(SystemdUser)]
        };
        for other in others {
            assert_eq!(other.install(cli, &dir), Err(TimerError::Unsupported));
        }
    }

    #[test]
    fn a_scheduler_that_refuses_or_is_missing_is_named() {
        let missing = told(Command::new("/nonexistent/launchctl").output(), "p.plist".into(), "launchctl");
        assert!(matches!(&missing, Err(TimerError::NoTool { tool, .. }) if tool == "launchctl"), "{missing:?}");
        let refused = Command::new("sh").args(["-c", "echo no session >&2; exit 3"]).output();
        assert_eq!(
            told(refused, "p.timer".into(), "systemctl --user").unwrap_err().to_string(),
            "wrote p.timer, but systemctl --user could not enable it: no session"
        );
    }
}
