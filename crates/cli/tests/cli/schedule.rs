//! `patchbay schedule`: a schedule runs through the CLI with the scripted model
//! and the real server-everything, in a conversation of its own. Nobody is
//! asked: a tool the schedule allows runs, one it does not is denied, and the
//! server's request for input is refused, each recorded with the run. A run
//! missed while "the computer was off" (its last run three days ago) runs once,
//! late; a second `run-now` while a run is under way is refused (two runs never
//! overlap). `add` writes the systemd user timer that calls `run-due`. Each run
//! ends with a desktop notification, read back from a real notification server
//! (dunst, started by D-Bus on a session bus of the test's own).

use std::process::Stdio;
use std::time::Duration;

use chrono::{Local, TimeDelta};
use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};
use serde_json::json;

use crate::common::{command, ok, patchbay, seed_servers, stderr, stdout, store};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schedule_runs_unattended_catches_up_once_and_never_overlaps() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    seed_servers(&data, &[crate::common::everything("everything")]);
    let tools = [("everything", "echo"), ("everything", "get-sum"), ("everything", "trigger-elicitation-request")];
    let names = ToolNames::build(tools);
    let name = |tool: &str| names.model_name("everything", tool).unwrap().to_owned();
    let (echo, sum, elicit) = (name("echo"), name("get-sum"), name("trigger-elicitation-request"));
    // The late run answers slowly, so that a second run can try to start meanwhile.
    let Reply::Stream { frames, end, .. } = openai::text_reply(&["The ", "late ", "digest", "."]) else {
        unreachable!()
    };
    let slow = Reply::Stream { frames, gap: Duration::from_millis(700), end };
    let model = ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[
                ("call_echo", &echo, &["{\"message\": \"morning\"}"]),
                ("call_sum", &sum, &["{\"a\": 2, \"b\": 3}"]),
                ("call_form", &elicit, &["{}"]),
            ]),
            openai::text_reply(&["Digest done."]),
            slow,
        ],
    )
    .await
    .unwrap();
    crate::common::seed_scripted_provider(&data, &model.url());

    // Due two hours ago, daily: added now, it is not due until tomorrow.
    let at = (Local::now() - TimeDelta::hours(2)).format("%H:%M").to_string();
    let config = tmp.path().join("config");
    let mut add = command(&data);
    add.env("XDG_CONFIG_HOME", &config).env("PATCHBAY_NO_SYSTEMCTL", "1").args([
        "schedule",
        "add",
        "digest",
        "--daily",
        &at,
        "--prompt",
        "Write my digest",
    ]);
    add.args(["--allow", "everything/echo", "--allow", "everything/trigger-elicitation-request"]);
    let out = add.stdin(Stdio::null()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with(&format!("added digest (daily at {at}); next run ")), "{}", stdout(&out));
    let units = std::fs::read_dir(config.join("systemd/user")).unwrap().count();
    assert_eq!(units, 2, "a service and a timer");
    let timer = std::fs::read_dir(config.join("systemd/user"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "timer"))
        .unwrap();
    assert!(std::fs::read_to_string(&timer).unwrap().contains("Persistent=true"));
    let service = std::fs::read_to_string(timer.with_extension("service")).unwrap();
    assert!(service.contains(&format!("--data-dir \"{}\" schedule run-due", data.display())), "{service}");
    assert_eq!(ok(&patchbay(&data, &["schedule", "run-due"])), "nothing is due\n");
    for (args, said) in [
        (["--daily", "9am"], "when: \"9am\" is not a time of day: write HH:MM"),
        (["--cron", "0 9 * *"], "when: cron \"0 9 * *\": expected five fields"),
    ] {
        let out = patchbay(&data, &[&["schedule", "add", "bad", "--prompt", "x"][..], &args[..]].concat());
        assert!(!out.status.success() && stderr(&out).contains(said), "{}", stderr(&out));
    }
    let out = patchbay(&data, &["schedule", "add", "other", "--daily", "08:00", "--prompt", "x", "--allow", "echo"]);
    assert!(stderr(&out).contains("allowed tools: \"echo\" is not SERVER/TOOL"), "{}", stderr(&out));
    assert_eq!(ok(&patchbay(&data, &["schedule", "list"])).lines().count(), 1, "nothing bad was added");

    // Run now: the allowed tools run, get-sum is denied, the form is refused; all recorded.
    let desktop = Desktop::start();
    let out = desktop.patchbay(&data, &["schedule", "run-now", "digest"]);
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("digest ran; its answer is in conversation "), "{}", stdout(&out));
    desktop.shown("digest ran; its answer is in conversation ");
    let second = &model.requests()[1].body;
    let results: Vec<String> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(results[0].contains("Echo: morning"), "{results:?}");
    assert!(results[1].contains("scheduled run with nobody to approve everything/get-sum"), "{results:?}");
    let runs = ok(&patchbay(&data, &["schedule", "runs", "digest"]));
    assert!(runs.starts_with("done  run now  started "), "{runs}");
    assert!(
        runs.contains("\n  denied everything/get-sum: it needs approval, and nobody can give it in a scheduled run\n"),
        "{runs}"
    );
    assert!(
        runs.contains("\n  refused everything's request for input: this is a scheduled run, with nobody to answer"),
        "{runs}"
    );

    // The computer was off for three days: the run is due once, late.
    let three_days_ago = (Local::now() - TimeDelta::days(3)).timestamp();
    store(&data)
        .write(|tx| {
            tx.execute("UPDATE schedules SET last_due = ?1", [three_days_ago]).map_err(|e| store(&data).error(e))
        })
        .unwrap();
    let late = command(&data)
        .env("DBUS_SESSION_BUS_ADDRESS", &desktop.address)
        .args(["schedule", "run-due"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // While it runs (once it has claimed the schedule), a second run is refused.
    let started = std::time::Instant::now();
    let claimed = || {
        store(&data)
            .read(|c| c.query_row("SELECT running_session IS NOT NULL FROM schedules", [], |r| r.get::<_, bool>(0)))
            .unwrap()
    };
    while !claimed() {
        assert!(started.elapsed() < Duration::from_secs(60), "the late run never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let clash = patchbay(&data, &["schedule", "run-now", "digest"]);
    assert!(!clash.status.success(), "{}", stdout(&clash));
    assert!(
        stderr(&clash).contains("schedule \"digest\" is running now; two runs of a schedule never overlap"),
        "{}",
        stderr(&clash)
    );
    // As the window asks: one JSON line, the failure's kind kept.
    let clash = patchbay(&data, &["schedule", "run-now", "--json", "digest"]);
    assert_eq!(clash.status.code(), Some(3));
    let said: serde_json::Value = serde_json::from_str(stdout(&clash).trim()).unwrap();
    assert_eq!((said["ok"].clone(), said["kind"].clone()), (json!(false), json!("invalid_input")), "{said}");
    assert!(said["summary"].as_str().unwrap().contains("is running now"), "{said}");
    let late = late.wait_with_output().unwrap();
    assert!(late.status.success(), "{}", stderr(&late));
    assert!(stdout(&late).contains("digest ran (late: it was due while the computer was off"), "{}", stdout(&late));
    desktop.shown("digest ran (late: ");
    assert_eq!(ok(&patchbay(&data, &["schedule", "run-due"])), "nothing is due\n", "it caught up once");
    let runs = ok(&patchbay(&data, &["schedule", "runs", "digest"]));
    let latest = runs.lines().next().unwrap();
    assert!(
        latest.starts_with(&format!(
            "done  due {} {at}, late  started ",
            (Local::now() - TimeDelta::hours(2)).format("%Y-%m-%d")
        )),
        "{runs}"
    );
    assert_eq!(runs.lines().filter(|l| l.starts_with("done")).count(), 2, "{runs}");
    assert_eq!(model.requests().len(), 3, "one model request per turn step: no run was doubled");

    // No such schedule: said as JSON too, as not found.
    let unknown = patchbay(&data, &["schedule", "run-now", "--json", "nightly"]);
    assert_eq!(unknown.status.code(), Some(1));
    let said: serde_json::Value = serde_json::from_str(stdout(&unknown).trim()).unwrap();
    assert_eq!(said["kind"], json!("not_found"), "{said}");

    // A run the model fails: the window hears the provider's failure as such.
    let failed = desktop.patchbay(&data, &["schedule", "run-now", "--json", "digest"]);
    assert!(!failed.status.success());
    let said: serde_json::Value = serde_json::from_str(stdout(&failed).trim().lines().last().unwrap()).unwrap();
    assert_eq!((said["ok"].clone(), said["kind"].clone()), (json!(false), json!("provider")), "{said}");
    assert!(said["summary"].as_str().unwrap().starts_with("digest failed: "), "{said}");
    desktop.shown("digest failed: ");

    // Removing the last schedule removes the timer.
    let mut remove = command(&data);
    remove.env("XDG_CONFIG_HOME", &config).env("PATCHBAY_NO_SYSTEMCTL", "1").args(["schedule", "remove", "digest"]);
    let out = remove.stdin(Stdio::null()).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_dir(config.join("systemd/user")).unwrap().count(), 0, "the units are gone");

    let listed = ok(&patchbay(&data, &["conversation", "list"]));
    assert_eq!(listed.matches("digest · ").count(), 3, "{listed}");
    assert!(listed.contains("(late)"), "{listed}");
}

/// A run over its time limit (`PATCHBAY_RUN_LIMIT_SECS`, an hour unless set) is stopped, with
/// the model still answering: recorded as failed, said as a timeout, and told in a notification.
/// A limit that is not a number of seconds is refused before anything is claimed. With the
/// window in Chinese, the desktop is told in Chinese; the CLI's record stays in English.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_over_its_time_limit_is_stopped_recorded_and_told() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // The model starts its answer, then says nothing more.
    let Reply::Stream { frames, .. } = openai::text_reply(&["Thinking"]) else { unreachable!() };
    let hanging = || Reply::hanging(frames[..2].to_vec());
    let model = ScriptedServer::start(Format::OpenAi, vec![hanging(), hanging()]).await.unwrap();
    crate::common::seed_scripted_provider(&data, &model.url());
    let mut add = command(&data);
    add.env("XDG_CONFIG_HOME", tmp.path().join("config")).env("PATCHBAY_NO_SYSTEMCTL", "1");
    let out =
        add.args(["schedule", "add", "digest", "--daily", "08:00", "--prompt", "Write my digest"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));

    let refused =
        command(&data).env("PATCHBAY_RUN_LIMIT_SECS", "soon").args(["schedule", "run-now", "digest"]).output().unwrap();
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("PATCHBAY_RUN_LIMIT_SECS=\"soon\" is not a number of seconds from 1 to"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(ok(&patchbay(&data, &["schedule", "runs", "digest"])), "", "nothing ran");

    let desktop = Desktop::start();
    let run_now = || {
        command(&data)
            .env("DBUS_SESSION_BUS_ADDRESS", &desktop.address)
            .env("PATCHBAY_RUN_LIMIT_SECS", "2")
            .args(["schedule", "run-now", "--json", "digest"])
            .output()
            .unwrap()
    };
    let started = std::time::Instant::now();
    let out = run_now();
    assert!(!out.status.success());
    assert!(started.elapsed() < Duration::from_secs(30), "the run was not stopped at its limit");
    let said: serde_json::Value = serde_json::from_str(stdout(&out).trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    assert_eq!((said["ok"].clone(), said["kind"].clone()), (json!(false), json!("timeout")), "{said}");
    assert_eq!(said["summary"], json!("digest failed: stopped after 2 seconds, its time limit"), "{said}");
    assert_eq!(model.requests().len(), 1, "the model was asked once");
    desktop.shown("digest failed: stopped after 2 seconds, its time limit");
    let runs = ok(&patchbay(&data, &["schedule", "runs", "digest"]));
    assert!(runs.starts_with("failed  run now  started "), "{runs}");
    assert!(runs.contains("stopped after 2 seconds, its time limit"), "{runs}");
    // Not left running: the next run may start.
    let running = store(&data)
        .read(|c| c.query_row("SELECT running_session IS NOT NULL FROM schedules", [], |r| r.get::<_, bool>(0)))
        .unwrap();
    assert!(!running, "the stopped run still holds the schedule");

    // The window is in Chinese: so is what the desktop is told.
    store(&data).set_setting("ui.language", &"zh").unwrap();
    let out = run_now();
    let said: serde_json::Value = serde_json::from_str(stdout(&out).trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&out), stderr(&out)));
    assert_eq!(said["summary"], json!("digest 失败：达到时间限制（2 秒），已停止"), "{said}");
    desktop.shown("digest 失败：达到时间限制（2 秒），已停止");
    let runs = ok(&patchbay(&data, &["schedule", "runs", "digest"]));
    assert_eq!(runs.matches("stopped after 2 seconds, its time limit").count(), 2, "{runs}");
}

/// `schedule add` enables its timer in a real systemd user manager, which then runs the due
/// schedule through the service's own command line (the quoting of the CLI's and the data
/// folder's paths, as systemd reads them), late and once; `remove` disables the timer, and its
/// units and its stamp are gone. The machine's processes stay in their cgroups.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_systemd_user_manager_enables_the_timer_runs_the_schedule_and_forgets_it() {
    let tmp = tempfile::tempdir().unwrap();
    // A space and a quote in the data folder's path: systemd must hand it over whole.
    let data = tmp.path().join("my \"data\"");
    let model =
        ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Digest from systemd."])]).await.unwrap();
    crate::common::seed_scripted_provider(&data, &model.url());
    // The machine's first process and this one (in the cgroup the manager starts from).
    let placed = || ["/proc/1/cgroup", "/proc/self/cgroup"].map(|p| std::fs::read_to_string(p).unwrap());
    let machine = placed();
    let systemd = UserSystemd::start();
    assert_eq!(placed(), machine, "the manager took the machine's processes");

    let at = (Local::now() - TimeDelta::hours(2)).format("%H:%M").to_string();
    let before = Local::now().timestamp();
    let mut add = command(&data);
    add.args(["schedule", "add", "digest", "--daily", &at, "--prompt", "Write my digest"]);
    let out = systemd.inside(&add).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    let unit = said
        .lines()
        .find_map(|l| l.strip_prefix("the system timer ")?.split_once(' ').map(|(unit, _)| unit.to_owned()))
        .unwrap_or_else(|| panic!("no timer was enabled: {said}{}", stderr(&out)));
    assert!(systemd.home.join(".config/systemd/user").join(&unit).is_file());
    assert_eq!(systemd.ok(&["is-enabled", &unit]), "enabled");
    assert_eq!(systemd.ok(&["is-active", &unit]), "active");
    // Next at a fifth minute of the clock: the coming one (or the one after, had it come
    // meanwhile).
    let next = systemd.ok(&["show", &unit, "--property=NextElapseUSecRealtime", "--value"]);
    let next = chrono::NaiveDateTime::parse_from_str(&next, "%a %Y-%m-%d %H:%M:%S UTC")
        .unwrap_or_else(|e| panic!("next elapse {next:?}: {e}"))
        .and_utc()
        .timestamp();
    let after = Local::now().timestamp();
    assert!(
        next > before && next <= after + 300 && next % 300 == 0,
        "next run at {next}, between {before} and {after}"
    );
    // Where the timer notes its last run (`Persistent=true`), so that one missed runs on start.
    let stamp = systemd.home.join(".local/share/systemd/timers").join(format!("stamp-{unit}"));
    assert!(stamp.is_file(), "{} is missing", stamp.display());

    // The computer was off for three days: what the timer starts runs it once, late.
    let three_days_ago = (Local::now() - TimeDelta::days(3)).timestamp();
    store(&data)
        .write(|tx| {
            tx.execute("UPDATE schedules SET last_due = ?1", [three_days_ago]).map_err(|e| store(&data).error(e))
        })
        .unwrap();
    let service = unit.replace(".timer", ".service");
    // A oneshot service: `start` returns once the run has ended.
    let (started, _) = systemd.systemctl(&["start", &service]);
    let runs = ok(&patchbay(&data, &["schedule", "runs", "digest"]));
    assert!(started && runs.starts_with("done  due "), "{runs}\n{}", systemd.journal(&service));
    assert!(runs.lines().next().unwrap().contains(", late  started "), "{runs}");
    assert_eq!(model.requests().len(), 1, "one run");
    systemd.ok(&["start", &service]);
    assert_eq!(
        ok(&patchbay(&data, &["schedule", "runs", "digest"])).lines().count(),
        runs.lines().count(),
        "it caught up once"
    );
    let listed = ok(&patchbay(&data, &["conversation", "list"]));
    assert!(listed.contains("digest · ") && listed.contains("(late)"), "{listed}");

    assert!(systemd.ok(&["list-timers", "--all", "--no-legend"]).contains(&unit));
    let out = systemd.inside(command(&data).args(["schedule", "remove", "digest"])).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // The manager still answers: what it says of the unit is not silence.
    let (_, state) = systemd.systemctl(&["is-system-running"]);
    assert!(state == "running" || state == "degraded", "the manager is {state}");
    let (enabled, state) = systemd.systemctl(&["is-enabled", &unit]);
    assert!(!enabled, "{unit} is still {state}");
    let timers = systemd.ok(&["list-timers", "--all", "--no-legend"]);
    assert!(!timers.contains(&unit), "{timers}");
    assert!(!stamp.exists(), "the timer's stamp was left behind");
    assert!(!systemd.home.join(".config/systemd/user").join(&unit).exists());
}

/// A cgroup of a test's user manager is this, then the name of the test's temporary folder.
const CGROUP_PREFIX: &str = "patchbay-test-";

/// A systemd user manager of the test's own. A container's first process is not systemd, and
/// the user manager will not start unless the machine booted with it: it runs in a mount
/// namespace of its own (root's, as CI's) where `/run/systemd/system` says so. Everything it
/// writes is the test's: runtime, unit, data and state folders (the timers' stamps), and a
/// cgroup of its own in each hierarchy, since a manager takes every process of the cgroup it
/// starts in into its `init.scope` (it would take the whole machine's from `/`). The user's
/// units it may read, and start (sockets in the runtime folder), are left as they were.
struct UserSystemd {
    manager: std::process::Child,
    /// The manager's cgroup's name, the same in each hierarchy.
    cgroup: String,
    home: std::path::PathBuf,
    log: std::path::PathBuf,
    dir: tempfile::TempDir,
}

impl UserSystemd {
    fn start() -> Self {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        assert_eq!(
            std::fs::metadata("/proc/self").unwrap().uid(),
            0,
            "a user manager of the test's own needs root (a mount namespace, cgroups); scripts/test.sh runs as root"
        );
        let dir = tempfile::tempdir().unwrap();
        let (home, log) = (dir.path().join("home"), dir.path().join("manager.log"));
        let runtime = dir.path().join("run");
        for folder in [&home, &runtime] {
            std::fs::create_dir(folder).unwrap();
        }
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
        // Those of a test killed before it could remove them: their folder is gone.
        remove_cgroups(|name| {
            name.strip_prefix(CGROUP_PREFIX).is_some_and(|t| !std::env::temp_dir().join(format!(".{t}")).exists())
        });
        let folder = dir.path().file_name().unwrap().to_string_lossy();
        let cgroup = format!("{CGROUP_PREFIX}{}", folder.trim_start_matches('.'));
        let cgroups = own_cgroups(&cgroup);
        // In its new cgroups, then a /run of its own, then the manager (the same process: it
        // gets SIGTERM when the thread that started it ends, so this runs on the test's own
        // thread, never a blocking pool's). Its services' output goes to its log.
        let booted = "for cgroup; do echo $$ > \"$cgroup/cgroup.procs\" || exit 1; done \
                      && mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system \
                      && exec /lib/systemd/systemd --user --log-target=console \
                         --default-standard-output=inherit --default-standard-error=inherit";
        let out = std::fs::File::create(&log).unwrap();
        let mut manager = std::process::Command::new("setpriv");
        manager.args([
            "--pdeathsig",
            "TERM",
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            booted,
            "sh",
        ]);
        let systemd = UserSystemd {
            manager: manager
                .args(&cgroups)
                .env("HOME", &home)
                .env("XDG_RUNTIME_DIR", &runtime)
                .env_remove("DBUS_SESSION_BUS_ADDRESS")
                .env_remove("XDG_CONFIG_HOME")
                .env_remove("XDG_DATA_HOME")
                .env_remove("XDG_STATE_HOME")
                .env_remove("XDG_CACHE_HOME")
                .env_remove("GNUPGHOME")
                .stdin(Stdio::null())
                .stdout(out.try_clone().unwrap())
                .stderr(out)
                .spawn()
                .expect("setpriv runs"),
            cgroup,
            home,
            log,
            dir,
        };
        let started = std::time::Instant::now();
        loop {
            let (_, state) = systemd.systemctl(&["is-system-running"]);
            if state == "running" || state == "degraded" {
                return systemd;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the user manager did not start ({state}): {}",
                std::fs::read_to_string(&systemd.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// `cmd` as the user's session would run it: in the manager's mount namespace (where
    /// `systemctl` finds the machine booted with systemd), with its home and runtime folder.
    fn inside(&self, cmd: &std::process::Command) -> std::process::Command {
        let mut inside = std::process::Command::new("nsenter");
        inside.arg(format!("--target={}", self.manager.id())).args(["--mount", "--"]);
        inside.arg(cmd.get_program()).args(cmd.get_args());
        for (name, value) in cmd.get_envs() {
            match value {
                Some(value) => inside.env(name, value),
                None => inside.env_remove(name),
            };
        }
        // The session's bus is the manager's (`clean` needs it), as in a systemd session.
        let runtime = self.dir.path().join("run");
        inside.env("DBUS_SESSION_BUS_ADDRESS", format!("unix:path={}", runtime.join("bus").display()));
        inside.env("HOME", &self.home).env("XDG_RUNTIME_DIR", runtime);
        for unset in ["XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "PATCHBAY_NO_SYSTEMCTL"] {
            inside.env_remove(unset);
        }
        inside.stdin(Stdio::null());
        inside
    }

    /// Whether `systemctl --user ARGS…` succeeded, and what it printed, trimmed.
    fn systemctl(&self, args: &[&str]) -> (bool, String) {
        let mut systemctl = std::process::Command::new("systemctl");
        systemctl.arg("--user").args(args).env("TZ", "UTC");
        let out = self.inside(&systemctl).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).trim().to_owned())
    }

    /// What `systemctl --user ARGS…` printed; it must succeed.
    fn ok(&self, args: &[&str]) -> String {
        let (ok, said) = self.systemctl(args);
        assert!(
            ok,
            "systemctl --user {args:?} failed: {said}\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default()
        );
        said
    }

    /// The manager's log (its services' output too) and `unit`'s status.
    fn journal(&self, unit: &str) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        format!("{}\n{log}", self.systemctl(&["status", "--no-pager", unit]).1)
    }
}

/// A new cgroup named `name` under the test's own, where the manager will run: in the unified
/// hierarchy, and in `name=systemd` where there is one (a hybrid machine like this one, where
/// systemd mirrors its cgroups there), each as `/proc/self/cgroup` places this process.
fn own_cgroups(name: &str) -> Vec<std::path::PathBuf> {
    let placed = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let path = |hierarchy: &str| {
        placed.lines().find_map(|l| l.split_once(':').and_then(|(_, rest)| rest.strip_prefix(hierarchy)))
    };
    let unified = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"].into_iter().find(|m| {
        std::path::Path::new(m).join("cgroup.procs").exists()
            && std::path::Path::new(m).join("cgroup.controllers").exists()
    });
    let mut mounts = Vec::new();
    if std::path::Path::new("/sys/fs/cgroup/systemd/cgroup.procs").exists() {
        mounts.push(("/sys/fs/cgroup/systemd", path("name=systemd:").expect("a name=systemd line")));
    }
    if let Some(unified) = unified {
        mounts.push((unified, path(":").expect("a unified line")));
    }
    mounts
        .into_iter()
        .map(|(mount, path)| {
            let cgroup = std::path::Path::new(mount).join(path.trim_start_matches('/')).join(name);
            std::fs::create_dir(&cgroup).unwrap_or_else(|e| panic!("{}: {e}", cgroup.display()));
            cgroup
        })
        .collect()
}

/// Removes every cgroup whose name is `doomed` (and those under it) in every hierarchy.
fn remove_cgroups(doomed: impl Fn(&str) -> bool) {
    fn remove(dir: &std::path::Path) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                remove(&entry.path());
            }
        }
        if let Err(e) = std::fs::remove_dir(dir) {
            eprintln!("the test's cgroup {} stays: {e}", dir.display());
        }
    }
    fn find(dir: &std::path::Path, doomed: &dyn Fn(&str) -> bool, depth: usize) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            if entry.file_name().to_str().is_some_and(doomed) {
                remove(&entry.path());
            } else if depth > 0 {
                find(&entry.path(), doomed, depth - 1);
            }
        }
    }
    find(std::path::Path::new("/sys/fs/cgroup"), &doomed, 8);
}

impl Drop for UserSystemd {
    fn drop(&mut self) {
        // SIGTERM: the manager stops its units and leaves; its namespace goes with it, and
        // then its cgroups, empty. One that has not left in 30 s is killed.
        let _ = std::process::Command::new("kill").arg(self.manager.id().to_string()).status();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while self.manager.try_wait().is_ok_and(|done| done.is_none()) && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.manager.kill();
        let _ = self.manager.wait();
        remove_cgroups(|name| name == self.cgroup);
    }
}

/// A D-Bus session bus of the test's own, where `notify-send` starts dunst (a real notification
/// server, on the test's display, with no settings of the user's): no other notifications reach
/// it, and none of the user's are touched.
struct Desktop {
    bus: std::process::Child,
    address: String,
    _config: tempfile::TempDir,
}

impl Desktop {
    fn start() -> Self {
        use std::io::BufRead;
        let config = tempfile::tempdir().unwrap();
        let mut bus = std::process::Command::new("dbus-daemon")
            .env("XDG_CONFIG_HOME", config.path())
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("dbus-daemon runs");
        let mut address = String::new();
        std::io::BufReader::new(bus.stdout.take().unwrap()).read_line(&mut address).unwrap();
        Desktop { bus, address: address.trim().to_owned(), _config: config }
    }

    /// `patchbay ARGS…` on this bus.
    fn patchbay(&self, data: &std::path::Path, args: &[&str]) -> std::process::Output {
        command(data).env("DBUS_SESSION_BUS_ADDRESS", &self.address).args(args).output().unwrap()
    }

    /// Waits until a notification "Patchbay: digest" whose body starts with `body` was shown
    /// (closing what is on screen, so that dunst's history has it).
    fn shown(&self, body: &str) {
        let dunstctl = |arg: &str| {
            let mut dunstctl = std::process::Command::new("dunstctl");
            dunstctl.env("DBUS_SESSION_BUS_ADDRESS", &self.address).arg(arg).output().expect("dunstctl runs")
        };
        let mut seen = String::new();
        for _ in 0..50 {
            dunstctl("close-all");
            let history = dunstctl("history");
            let parsed: serde_json::Value = serde_json::from_slice(&history.stdout).unwrap_or_default();
            let bodies: Vec<&str> = parsed["data"][0]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|n| n["summary"]["data"] == "Patchbay: digest" && n["appname"]["data"] == "Patchbay")
                .filter_map(|n| n["body"]["data"].as_str())
                .collect();
            if bodies.iter().any(|b| b.starts_with(body)) {
                return;
            }
            seen = format!("{bodies:?} ({}{})", history.status, String::from_utf8_lossy(&history.stderr).trim());
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("no notification {body:?} was shown; dunst showed {seen}");
    }
}

impl Drop for Desktop {
    fn drop(&mut self) {
        // dunst leaves with its bus.
        let _ = self.bus.kill();
        let _ = self.bus.wait();
    }
}
