//! `patchbay schedule`: an assistant's prompt run at set times, each run in a
//! conversation of its own (`patchbay_core::schedules` keeps them and says what
//! is due).
//!
//! `run-due` is what runs them: the operating system's scheduler calls it
//! (a systemd user timer on Linux, a launchd agent on macOS, a Task Scheduler
//! task on Windows, set up by `add`) every five minutes, and soon after the
//! computer is back for what was missed, on the same data directory. A run
//! never waits for a human: tools that ask for approval are denied unless the
//! schedule allows them, and servers' sampling and form
//! requests are refused; each denial and refusal is recorded with the run
//! (`runs NAME`). A run missed while the computer was off runs once, marked
//! late; two runs of a schedule never overlap (the claim is in the database).

use std::collections::{BTreeSet, HashMap};
use std::process::{Command, ExitCode};
use std::sync::Arc;

use chrono::{Local, TimeZone};
use clap::{ArgGroup, Args, Subcommand};
use patchbay_core::app::views::{ScheduleInput, WhileClosed};
use patchbay_core::app::{App, AppError, AppEvents};
use patchbay_core::assistants::DEFAULT_ASSISTANT;
use patchbay_core::conversations::ConversationStore;
use patchbay_core::host::turn::{DoneReason, ErrorKind};
use patchbay_core::paths::DataDir;
use patchbay_core::schedules::{Claim, RunNote, RunStatus, ScheduleError, ScheduleStore, When, timer};
use patchbay_core::secrets::KeyringStore;
use patchbay_core::store::Store;

use crate::ask::{Session, TurnArgs, Unattended};

/// `run-now`'s exit status when the schedule is running already (the window tells it apart).
pub const RUNNING_EXIT: u8 = 3;

#[derive(Debug, Subcommand)]
pub enum ScheduleCommand {
    /// Add a schedule: a prompt sent to an assistant at set times, each run in its own conversation.
    Add(AddArgs),
    /// Every schedule: when it runs, when next, and how its last run ended.
    List,
    /// Remove a schedule (its runs' conversations stay).
    Remove { name: String },
    /// Run a schedule now (its times are unchanged).
    RunNow {
        name: String,
        /// Say how it went as one JSON line, `{"ok", "summary", "kind"}` (what the window reads).
        #[arg(long)]
        json: bool,
    },
    /// Run every schedule that is due, each once (what the timer calls).
    RunDue,
    /// A schedule's last runs: when, whether late, how they ended, what was denied or refused.
    Runs {
        name: String,
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("when").required(true).args(["daily", "weekdays", "every_hours", "cron"])))]
pub struct AddArgs {
    name: String,
    /// The message sent at each run.
    #[arg(long)]
    prompt: String,
    /// The assistant whose model, tools and knowledge the run uses.
    #[arg(long, default_value = DEFAULT_ASSISTANT)]
    assistant: String,
    /// Every day at HH:MM (local time).
    #[arg(long, value_name = "HH:MM")]
    daily: Option<String>,
    /// Monday to Friday at HH:MM.
    #[arg(long, value_name = "HH:MM")]
    weekdays: Option<String>,
    /// Every N hours (at minute 0, counted from midnight).
    #[arg(long, value_name = "N")]
    every_hours: Option<u32>,
    /// A cron line: minute hour day-of-month month day-of-week.
    #[arg(long, value_name = "LINE")]
    cron: Option<String>,
    /// A tool that may run although it asks for approval (nobody is there to ask), as SERVER/TOOL; repeatable.
    #[arg(long = "allow", value_name = "SERVER/TOOL")]
    allow: Vec<String>,
}

pub fn run(dir: &DataDir, command: &ScheduleCommand) -> anyhow::Result<ExitCode> {
    // The timer of a data directory that was deleted must not make it again.
    if matches!(command, ScheduleCommand::RunDue) && !dir.database().exists() {
        println!("no Patchbay data in {}: nothing to run", dir.path().display());
        return Ok(ExitCode::SUCCESS);
    }
    let schedules = ScheduleStore::new(crate::open_store(dir)?);
    match command {
        ScheduleCommand::Add(args) => add(dir, args),
        ScheduleCommand::List => list(&schedules),
        ScheduleCommand::Remove { name } => {
            app(dir)?.remove_schedule(name)?;
            println!("removed {name}");
            Ok(ExitCode::SUCCESS)
        }
        ScheduleCommand::RunNow { name, json } => {
            // Read before anything is claimed: a bad limit leaves the schedule as it was.
            let limit = run_limit()?;
            let claim = match schedules.claim_now(name) {
                Ok(claim) => claim,
                Err(e) => {
                    let code = if matches!(e, ScheduleError::Running(_)) { RUNNING_EXIT } else { 1 };
                    let kind = AppError::from(e);
                    Ran { ok: false, summary: kind.to_string(), kind: Some(kind.kind()) }.say(*json, true);
                    return Ok(ExitCode::from(code));
                }
            };
            let ran = tokio::runtime::Runtime::new()?.block_on(run_limited(
                dir,
                &schedules,
                &claim,
                limit,
                &NotifySend::new(),
            ))?;
            ran.say(*json, false);
            Ok(if ran.ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        ScheduleCommand::RunDue => {
            let limit = run_limit()?;
            let due = schedules.due(Local::now())?;
            if due.is_empty() {
                println!("nothing is due");
            }
            let runtime = tokio::runtime::Runtime::new()?;
            let mut all_ok = true;
            // Each is claimed just before it runs: one that fails or is cut off leaves the others due.
            for (schedule, at) in &due {
                match schedules.claim_due(schedule, *at, Local::now())? {
                    Some(claim) => {
                        let ran = runtime.block_on(run_limited(dir, &schedules, &claim, limit, &NotifySend::new()))?;
                        ran.say(false, false);
                        all_ok &= ran.ok;
                    }
                    None => println!("{} is running elsewhere", schedule.name),
                }
            }
            Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        ScheduleCommand::Runs { name, limit } => runs(&schedules, name, *limit),
    }
}

/// The app's services on `dir`, for what the window does too (adding and removing a schedule).
fn app(dir: &DataDir) -> anyhow::Result<App> {
    let store = crate::open_store(dir)?;
    Ok(App::open(dir.clone(), store, Arc::new(KeyringStore::for_data_dir(dir)), AppEvents::unwatched())?)
}

fn add(dir: &DataDir, args: &AddArgs) -> anyhow::Result<ExitCode> {
    let when = match (&args.daily, &args.weekdays, args.every_hours, &args.cron) {
        (Some(at), ..) => When::Daily { at: at.clone() },
        (_, Some(at), ..) => When::Weekdays { at: at.clone() },
        (_, _, Some(hours), _) => When::EveryHours { hours },
        (.., Some(line)) => When::Cron { line: line.clone() },
        _ => anyhow::bail!("say when: --daily, --weekdays, --every-hours or --cron"),
    };
    let input = ScheduleInput {
        name: args.name.clone(),
        assistant: args.assistant.clone(),
        prompt: args.prompt.clone(),
        when,
        allowed_tools: args.allow.clone(),
    };
    let added = app(dir)?.add_schedule(input, &crate::own_path()?)?;
    let next = added.schedule.next_due.and_then(|secs| Local.timestamp_opt(secs, 0).single());
    let next = next.map_or("never".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string());
    println!("added {} ({}); next run {next}", added.schedule.name, added.schedule.when);
    match added.while_closed {
        WhileClosed::Timer { unit } => println!("the system timer {unit} runs due schedules while Patchbay is closed"),
        WhileClosed::NoTimer { why } => eprintln!(
            "note: the system timer that runs schedules while Patchbay is closed is not set up ({}); they run \
             while the app runs, or with `patchbay schedule run-due`",
            why
        ),
    }
    Ok(ExitCode::SUCCESS)
}

fn list(schedules: &ScheduleStore) -> anyhow::Result<ExitCode> {
    let now = Local::now();
    for schedule in schedules.list()? {
        let next = schedule.next_due(now).map_or("never".to_owned(), |t| t.format("%Y-%m-%d %H:%M").to_string());
        let last = schedules.runs(&schedule.name, 1)?.into_iter().next();
        let last = last.map_or("never run".to_owned(), |r| format!("last run {}", r.status));
        println!("{}  {}  next {next}  {last}  {}", schedule.name, schedule.when, schedule.assistant);
    }
    Ok(ExitCode::SUCCESS)
}

fn runs(schedules: &ScheduleStore, name: &str, limit: usize) -> anyhow::Result<ExitCode> {
    let time = |secs: i64| Local.timestamp_opt(secs, 0).single().map(|t| t.format("%Y-%m-%d %H:%M").to_string());
    for run in schedules.runs(name, limit)? {
        let due = run.due_at.and_then(time).map_or("run now".to_owned(), |t| format!("due {t}"));
        let late = if run.late { ", late" } else { "" };
        let started = time(run.started_at).unwrap_or_default();
        let conversation = run.conversation.map(|c| format!("  conversation {c}")).unwrap_or_default();
        println!("{}  {due}{late}  started {started}{conversation}", run.status);
        for note in &run.notes {
            println!("  {note}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// How a run went: its summary line, and the kind of its failure.
#[derive(Debug)]
struct Ran {
    ok: bool,
    summary: String,
    kind: Option<ErrorKind>,
}

impl Ran {
    /// Prints the summary: a line of text, or of JSON; `error` puts the text on stderr.
    fn say(&self, json: bool, error: bool) {
        match (json, error) {
            (true, _) => println!("{}", serde_json::json!({"ok": self.ok, "summary": self.summary, "kind": self.kind})),
            (false, true) => eprintln!("error: {}", self.summary),
            (false, false) => println!("{}", self.summary),
        }
    }
}

/// The kind of a failure that is not a turn's error: its core error's (each
/// classified as the window's are), else `internal`.
fn kind_of(e: anyhow::Error) -> ErrorKind {
    macro_rules! core_errors {
        ($e:ident: $($t:ty),*) => {
            $(let $e = match $e.downcast::<$t>() {
                Ok(core) => return AppError::from(core).kind(),
                Err(other) => other,
            };)*
        };
    }
    let e = match e.downcast::<AppError>() {
        Ok(core) => return core.kind(),
        Err(other) => other,
    };
    core_errors!(e: patchbay_core::store::StoreError, patchbay_core::secrets::SecretError,
        patchbay_core::config::ConfigError, patchbay_core::assistants::AssistantError,
        patchbay_core::host::HostError, patchbay_core::llm::LlmError, patchbay_core::mcp::McpError,
        patchbay_core::paths::PathsError, ScheduleError);
    drop(e);
    ErrorKind::Internal
}

/// The variable that sets how long one scheduled run may take, in seconds.
const RUN_LIMIT_VAR: &str = "PATCHBAY_RUN_LIMIT_SECS";

/// How long one run may take: [`timer::RUN_LIMIT_SECS`], or [`RUN_LIMIT_VAR`] when set (up
/// to [`timer::BATCH_LIMIT_SECS`], after which systemd stops the whole `run-due`).
fn run_limit() -> anyhow::Result<std::time::Duration> {
    let Ok(text) = std::env::var(RUN_LIMIT_VAR) else {
        return Ok(std::time::Duration::from_secs(timer::RUN_LIMIT_SECS));
    };
    match text.trim().parse::<u64>() {
        Ok(secs) if (1..=timer::BATCH_LIMIT_SECS).contains(&secs) => Ok(std::time::Duration::from_secs(secs)),
        _ => anyhow::bail!("{RUN_LIMIT_VAR}={text:?} is not a number of seconds from 1 to {}", timer::BATCH_LIMIT_SECS),
    }
}

/// [`run_claim`] within [`run_limit`]: a run over it is stopped (its turn dropped,
/// which stops the model and the tools) and recorded as failed. How it went is
/// told to `notifier`.
async fn run_limited(
    dir: &DataDir,
    schedules: &ScheduleStore,
    claim: &Claim,
    limit: std::time::Duration,
    notifier: &dyn Notifier,
) -> anyhow::Result<Ran> {
    let ran = match tokio::time::timeout(limit, run_claim(dir, schedules, claim)).await {
        Ok(ran) => ran?,
        Err(_) => {
            // The answer so far was cut off mid-line: what follows starts on a line of its own
            // (`--json`'s last line is read as JSON).
            println!();
            let why = RunNote::TimedOut { limit_secs: limit.as_secs() };
            schedules.finish(claim, RunStatus::Failed, None, std::slice::from_ref(&why))?;
            let summary = Words::of(crate::open_store(dir).ok().as_ref()).failed(&claim.schedule.name, &why);
            Ran { ok: false, summary, kind: Some(ErrorKind::Timeout) }
        }
    };
    notifier.notify(&format!("Patchbay: {}", claim.schedule.name), &ran.summary);
    Ok(ran)
}

/// Runs a claimed schedule's turn and records how it went; how it went.
async fn run_claim(dir: &DataDir, schedules: &ScheduleStore, claim: &Claim) -> anyhow::Result<Ran> {
    let schedule = &claim.schedule;
    let late = if claim.late { Words::new(None).say("schedules.notify.late", &[]) } else { String::new() };
    eprintln!("running schedule {}{late}", schedule.name);
    let refused = Arc::default();
    let unattended = Unattended { allowed: schedule.allowed_tools.iter().cloned().collect::<BTreeSet<_>>(), refused };
    let refused = unattended.refused.clone();
    let outcome = async {
        let mut session =
            Session::open_as(dir, &TurnArgs::for_assistant(&schedule.assistant), Some(unattended)).await?;
        let turn = session.turn(&schedule.prompt, Vec::new()).await;
        anyhow::Ok((session.conversation, turn))
    }
    .await;
    // What it could not do first, then why it failed (the summary names the last note).
    let mut notes: Vec<RunNote> = Vec::new();
    let mut failure = None;
    let mut kind = None;
    let (conversation, status) = match outcome {
        Ok((conversation, Ok((reason, report)))) => {
            for call in report.denied() {
                notes.push(RunNote::Denied { call });
            }
            let status = match (reason, report.error) {
                (DoneReason::Stop, _) => RunStatus::Done,
                (_, Some(error)) => {
                    failure = Some(RunNote::Failed { message: error.message });
                    kind = Some(error.kind);
                    RunStatus::Failed
                }
                (other, None) => {
                    failure = Some(RunNote::Failed { message: format!("the turn ended ({other:?})") });
                    kind = Some(ErrorKind::Internal);
                    RunStatus::Failed
                }
            };
            (conversation, status)
        }
        Ok((conversation, Err(e))) => {
            failure = Some(RunNote::Failed { message: format!("{e:#}") });
            kind = Some(kind_of(e));
            (conversation, RunStatus::Failed)
        }
        Err(e) => {
            failure = Some(RunNote::Failed { message: format!("{e:#}") });
            kind = Some(kind_of(e));
            (None, RunStatus::Failed)
        }
    };
    notes.extend(refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner).drain(..));
    notes.extend(failure);
    let store = crate::open_store(dir);
    let words = Words::of(store.as_ref().ok());
    if let Some(id) = conversation {
        let late_mark = if claim.late { words.late_mark() } else { String::new() };
        let title = format!("{} · {}{late_mark}", schedule.name, Local::now().format("%Y-%m-%d %H:%M"));
        let renamed = store.and_then(|store| Ok(ConversationStore::new(store).rename(id, &title)?));
        if let Err(e) = renamed {
            eprintln!("note: the run's conversation keeps its first title: {e:#}");
        }
    }
    schedules.finish(claim, status, conversation, &notes)?;
    let ok = status == RunStatus::Done;
    let summary = match (ok, notes.last()) {
        (false, Some(why)) => words.failed(&schedule.name, why),
        _ => words.ran(&schedule.name, claim.late, conversation),
    };
    Ok(Ran { ok, summary, kind })
}

/// The window's catalogues (`ui/src/locales`, keys `schedules.notify.*` and `schedules.note.*`):
/// what a run tells the desktop is said in the window's words, kept in one place.
const CATALOGUES: [(&str, &str); 2] =
    [("en", include_str!("../../../ui/src/locales/en.json")), ("zh", include_str!("../../../ui/src/locales/zh.json"))];

/// What a run tells the desktop (its notification, the window's "Run now"), in the window's
/// language. Its record keeps the notes as data, which the window says in its own language
/// and `runs` in English.
struct Words {
    english: bool,
    table: HashMap<String, String>,
}

impl Words {
    /// The words of `language`, English where it has none (as the window does); English for
    /// any other language.
    fn new(language: Option<&str>) -> Self {
        // Both parse: `every_language_has_every_word` reads them.
        let read = |text: &str| serde_json::from_str::<HashMap<String, String>>(text).unwrap_or_default();
        let mut table = read(CATALOGUES[0].1);
        let chosen = CATALOGUES.iter().find(|(l, _)| Some(*l) == language).filter(|(l, _)| *l != "en");
        if let Some((_, text)) = chosen {
            table.extend(read(text));
        }
        Self { english: chosen.is_none(), table }
    }

    /// The words of the window's language in `store` (English when it cannot be read).
    fn of(store: Option<&Store>) -> Self {
        Self::new(store.and_then(|store| patchbay_core::app::window_language(store).ok()).as_deref())
    }

    /// The text of `key` with each `{name}` in it replaced by its value, in one pass (a value's
    /// own braces stay as they are).
    fn say(&self, key: &str, values: &[(&str, &str)]) -> String {
        let text = self.table.get(key).map_or(key, String::as_str);
        let mut said = String::with_capacity(text.len());
        let mut rest = text;
        while let Some(open) = rest.find('{') {
            said.push_str(&rest[..open]);
            let after = &rest[open + 1..];
            let value = after.find('}').and_then(|close| {
                values.iter().find(|(name, _)| *name == &after[..close]).map(|(_, value)| (close, *value))
            });
            match value {
                Some((close, value)) => {
                    said.push_str(value);
                    rest = &after[close + 1..];
                }
                None => {
                    said.push('{');
                    rest = after;
                }
            }
        }
        said.push_str(rest);
        said
    }

    /// Added to a late run's conversation title.
    fn late_mark(&self) -> String {
        self.say("schedules.notify.lateMark", &[])
    }

    fn ran(&self, name: &str, late: bool, conversation: Option<i64>) -> String {
        let late = if late { self.say("schedules.notify.late", &[]) } else { String::new() };
        let answer =
            conversation.map(|id| self.say("schedules.notify.answer", &[("id", &id.to_string())])).unwrap_or_default();
        self.say("schedules.notify.ran", &[("name", name), ("late", &late), ("answer", &answer)])
    }

    fn failed(&self, name: &str, why: &RunNote) -> String {
        self.say("schedules.notify.failed", &[("name", name), ("why", &self.note(why))])
    }

    /// A note as `runs` says it in English, else in the window's words.
    fn note(&self, note: &RunNote) -> String {
        if self.english {
            return note.to_string();
        }
        match note {
            RunNote::Denied { call } => self.say("schedules.note.denied", &[("call", call)]),
            RunNote::RefusedSampling { server } => self.say("schedules.note.refused_sampling", &[("server", server)]),
            RunNote::RefusedInput { server } => self.say("schedules.note.refused_input", &[("server", server)]),
            RunNote::TimedOut { limit_secs } if limit_secs % 60 == 0 => {
                self.say("schedules.note.timedOutMinutes", &[("n", &(limit_secs / 60).to_string())])
            }
            RunNote::TimedOut { limit_secs } => {
                self.say("schedules.note.timedOutSeconds", &[("n", &limit_secs.to_string())])
            }
            RunNote::Interrupted => self.say("schedules.note.interrupted", &[]),
            // The error's own words, which are English.
            RunNote::Failed { message } => message.clone(),
            RunNote::Text { text } => text.clone(),
        }
    }
}

/// Where a run's outcome is told while nobody watches: the desktop's notifications.
trait Notifier {
    /// Shows `title` and `body`, or says on stderr why it could not.
    fn notify(&self, title: &str, body: &str);
}

/// libnotify's `notify-send` (`program`), shown by the notification server the desktop runs
/// (where there is one), within `limit`: a session bus that cannot start its notification
/// server (no display) holds `notify-send` for D-Bus's activation time-out, and the run with it.
struct NotifySend {
    program: std::path::PathBuf,
    limit: std::time::Duration,
}

impl NotifySend {
    fn new() -> Self {
        Self { program: "notify-send".into(), limit: std::time::Duration::from_secs(5) }
    }
}

impl Notifier for NotifySend {
    fn notify(&self, title: &str, body: &str) {
        let mut shown = match Command::new(&self.program)
            .args(["--app-name=Patchbay", "--", title, body])
            .stdin(std::process::Stdio::null())
            .spawn()
        {
            Ok(shown) => shown,
            Err(e) => return eprintln!("note: no desktop notification (notify-send: {e})"),
        };
        let deadline = std::time::Instant::now() + self.limit;
        loop {
            match shown.try_wait() {
                Ok(Some(status)) if status.success() => return,
                Ok(Some(status)) => return eprintln!("note: no desktop notification (notify-send: {status})"),
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Ok(None) => {
                    let _ = shown.kill();
                    let _ = shown.wait();
                    let secs = self.limit.as_secs_f32();
                    return eprintln!("note: no desktop notification (notify-send did not finish within {secs} s)");
                }
                Err(e) => return eprintln!("note: no desktop notification (notify-send: {e})"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every note a run can end with.
    fn notes() -> Vec<RunNote> {
        vec![
            RunNote::Denied { call: "files.write_file".into() },
            RunNote::RefusedSampling { server: "everything".into() },
            RunNote::RefusedInput { server: "everything".into() },
            RunNote::TimedOut { limit_secs: 120 },
            RunNote::TimedOut { limit_secs: 90 },
            RunNote::Interrupted,
        ]
    }

    #[test]
    fn every_language_has_every_word() {
        for (language, _) in CATALOGUES {
            let words = Words::new(Some(language));
            assert!(!words.table.is_empty(), "{language}'s catalogue does not parse");
            let mut said =
                vec![words.ran("digest", true, Some(7)), words.ran("digest", false, None), words.late_mark()];
            said.extend(notes().iter().map(|note| words.failed("digest", note)));
            for text in said {
                assert!(!text.contains("schedules.") && !text.contains('{'), "{language}: {text}");
                if language == "zh" {
                    assert!(text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "not Chinese: {text}");
                }
            }
        }
    }

    #[test]
    fn english_says_notes_as_runs_does_and_chinese_in_the_windows_words() {
        let (english, chinese) = (Words::new(None), Words::new(Some("zh")));
        for note in notes() {
            assert_eq!(english.failed("digest", &note), format!("digest failed: {note}"));
        }
        assert_eq!(
            english.ran("digest", true, Some(7)),
            "digest ran (late: it was due while the computer was off or Patchbay did not run); its answer is in \
             conversation 7"
        );
        assert_eq!(Words::new(Some("fr")).ran("digest", false, None), "digest ran");
        assert_eq!(
            chinese.failed("digest", &RunNote::TimedOut { limit_secs: 120 }),
            "digest 失败：达到时间限制（2 分钟），已停止"
        );
        assert_eq!(chinese.ran("digest", false, Some(7)), "digest 已运行；回答在对话 7 中");
    }

    #[test]
    fn a_names_own_braces_are_kept() {
        let words = Words::new(None);
        assert_eq!(
            words.ran("{answer} {late}", false, Some(1)),
            "{answer} {late} ran; its answer is in conversation 1"
        );
        assert_eq!(words.say("schedules.notify.failed", &[("name", "a{b")]), "a{b failed: {why}");
    }

    /// A notification server that never answers does not hold the run: `notify-send` is
    /// stopped at its limit.
    #[cfg(unix)]
    #[test]
    fn a_notification_that_never_shows_is_given_up_at_its_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let stuck = tmp.path().join("notify-send");
        patchbay_test_support::processes::write_program(&stuck, "#!/bin/sh\nexec sleep 60\n").unwrap();
        let notifier = NotifySend { program: stuck, limit: std::time::Duration::from_millis(300) };
        let started = std::time::Instant::now();
        notifier.notify("Patchbay: digest", "digest ran");
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "waited {:?}", started.elapsed());
    }
}
