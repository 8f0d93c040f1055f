//! Scheduled runs: an assistant's prompt run at set times, while nobody
//! watches ([`When`]).
//!
//! This module keeps the schedules and their runs in SQLite and decides what
//! is due; running a turn is the front end's (`patchbay schedule run-due`,
//! which the desktop app and the operating system's timer both call). A run
//! is claimed before it starts, in one conditional `UPDATE`: the claim names
//! the store session that runs it, so two processes never run a schedule at
//! once, and a claim whose process died (its session lease is gone) does not
//! block the next. A run missed while the computer was off is found by
//! [`Cron::last_due`] from the last run's due time: it is made once, marked
//! late.

pub mod timer;
mod when;

use chrono::{DateTime, Local, TimeZone};
use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

pub use when::{Cron, When};

use crate::clock;
use crate::store::{Store, StoreError};

/// A run that starts this long after its due time is late.
pub const LATE_AFTER_SECS: i64 = 10 * 60;

/// Errors from the schedules.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScheduleError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A stored schedule could not be decoded.
    #[error("stored schedule {name:?} is invalid: {source}")]
    Decode {
        name: String,
        #[source]
        source: serde_json::Error,
    },
    /// A field is invalid: `field` says which, `reason` why.
    #[error("{field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("no schedule named {0:?}")]
    NotFound(String),
    #[error("a schedule named {0:?} exists; remove it first or choose another name")]
    Exists(String),
    /// Another process runs it now.
    #[error("schedule {0:?} is running now; two runs of a schedule never overlap")]
    Running(String),
    /// The operating system's timer could not be set up or removed.
    #[error(transparent)]
    Timer(#[from] timer::TimerError),
}

/// A schedule as the user gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSchedule {
    pub name: String,
    /// The assistant whose prompt, model and tools the run uses.
    pub assistant: String,
    /// The message sent each run.
    pub prompt: String,
    pub when: When,
    /// Tools (`server/tool`) that run although they ask for approval: nobody is there to ask.
    pub allowed_tools: Vec<String>,
}

/// A stored schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Schedule {
    pub id: i64,
    pub name: String,
    pub assistant: String,
    pub prompt: String,
    pub when: When,
    pub allowed_tools: Vec<String>,
    /// The due time (Unix seconds) of the last run started; creation time before the first.
    pub last_due: i64,
    /// The store session running it now, if any (alive or not).
    #[serde(skip)]
    running_session: Option<String>,
}

impl Schedule {
    /// When it is next due after now (or after its last run, if that is later).
    pub fn next_due(&self, now: DateTime<Local>) -> Option<DateTime<Local>> {
        let after = local(self.last_due).map_or(now, |last| last.max(now));
        self.when.cron().ok()?.next_due(after)
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Done,
    Failed,
}

impl RunStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Done => "done",
            Self::Failed => "failed",
        }
    }
}

/// A run, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
pub struct RunRecord {
    pub id: i64,
    /// When it was due (Unix seconds); `None` for "run now".
    pub due_at: Option<i64>,
    pub started_at: i64,
    pub finished_at: Option<i64>,
    /// `running` (while it runs), `done` or `failed` (also a run whose process died, once the next run takes over).
    pub status: String,
    pub late: bool,
    pub conversation: Option<i64>,
    /// What the run could not do (tools denied, servers' requests refused) and why it failed.
    pub notes: Vec<RunNote>,
}

/// One thing a run could not do, or why it failed: kept as data, so that each reader says it
/// in its own language (the window in the user's, the CLI in English).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RunNote {
    /// A tool set to "ask" was called (`server/tool`): nobody can approve it in a scheduled run.
    Denied { call: String },
    /// A server's sampling request was refused: nobody can review it.
    RefusedSampling { server: String },
    /// A server's request for input (a form) was refused: nobody can answer it.
    RefusedInput { server: String },
    /// The turn failed; `message` says why (in English, as errors are).
    Failed { message: String },
    /// Stopped at its time limit, `limit_secs` seconds.
    TimedOut { limit_secs: u64 },
    /// The process running it ended before it finished.
    Interrupted,
    /// A note as an older Patchbay wrote it (a line of English).
    Text { text: String },
}

impl std::fmt::Display for RunNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NOBODY: &str = "this is a scheduled run, with nobody to answer";
        match self {
            Self::Denied { call } => {
                write!(f, "denied {call}: it needs approval, and nobody can give it in a scheduled run")
            }
            Self::RefusedSampling { server } => write!(f, "refused {server}'s sampling request: {NOBODY}"),
            Self::RefusedInput { server } => write!(f, "refused {server}'s request for input: {NOBODY}"),
            Self::Failed { message } => f.write_str(message),
            Self::TimedOut { limit_secs } => {
                let limit = match limit_secs {
                    60 => "1 minute".to_owned(),
                    secs if secs % 60 == 0 => format!("{} minutes", secs / 60),
                    secs => format!("{secs} seconds"),
                };
                write!(f, "stopped after {limit}, its time limit")
            }
            Self::Interrupted => f.write_str("the process running it ended before it finished"),
            Self::Text { text } => f.write_str(text),
        }
    }
}

/// A run's notes as stored: a JSON array, or (written before notes were data) lines of text.
fn read_notes(stored: &str) -> Vec<RunNote> {
    if let Ok(notes) = serde_json::from_str(stored) {
        return notes;
    }
    stored.lines().filter(|l| !l.is_empty()).map(|text| RunNote::Text { text: text.to_owned() }).collect()
}

fn write_notes(notes: &[RunNote]) -> String {
    serde_json::to_string(notes).expect("run notes are plain data")
}

/// A run this process has claimed and must [`finish`](ScheduleStore::finish).
#[derive(Debug, Clone)]
pub struct Claim {
    pub run: i64,
    pub schedule: Schedule,
    pub due_at: Option<i64>,
    pub late: bool,
}

/// The schedules in the database.
#[derive(Clone)]
pub struct ScheduleStore {
    store: Store,
}

fn local(secs: i64) -> Option<DateTime<Local>> {
    Local.timestamp_opt(secs, 0).single()
}

fn now_secs() -> i64 {
    i64::try_from(clock::now_secs()).unwrap_or(i64::MAX)
}

const COLUMNS: &str = "id, name, assistant, prompt, timing, allowed_tools, last_due, running_session";

/// A `schedules` row as [`COLUMNS`] reads it.
type Row = (i64, String, String, String, String, String, i64, Option<String>);

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?, r.get(7)?))
}

fn decode(
    (id, name, assistant, prompt, timing, allowed, last_due, running_session): Row,
) -> Result<Schedule, ScheduleError> {
    let when = serde_json::from_str(&timing).map_err(|source| ScheduleError::Decode { name: name.clone(), source })?;
    let allowed_tools =
        serde_json::from_str(&allowed).map_err(|source| ScheduleError::Decode { name: name.clone(), source })?;
    Ok(Schedule { id, name, assistant, prompt, when, allowed_tools, last_due, running_session })
}

impl ScheduleStore {
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Adds a schedule; nothing before now is due.
    pub fn add(&self, new: &NewSchedule) -> Result<Schedule, ScheduleError> {
        let name = new.name.trim();
        if name.is_empty() || name.chars().any(char::is_control) {
            return Err(ScheduleError::Invalid {
                field: "name",
                reason: "give a name without control characters".into(),
            });
        }
        if new.prompt.trim().is_empty() {
            return Err(ScheduleError::Invalid { field: "prompt", reason: "the message to send is empty".into() });
        }
        new.when.cron().map_err(|reason| ScheduleError::Invalid { field: "when", reason })?;
        if let Some(bad) =
            new.allowed_tools.iter().find(|t| !t.split_once('/').is_some_and(|(s, t)| !s.is_empty() && !t.is_empty()))
        {
            return Err(ScheduleError::Invalid {
                field: "allowed tools",
                reason: format!("{bad:?} is not SERVER/TOOL (e.g. github/list_issues)"),
            });
        }
        let timing = serde_json::to_string(&new.when).unwrap_or_default();
        let allowed = serde_json::to_string(&new.allowed_tools).unwrap_or_default();
        let inserted = self.store.write(|tx| {
            let exists: bool = tx
                .query_row("SELECT 1 FROM schedules WHERE name = ?1", [name], |_| Ok(true))
                .optional()
                .map_err(|e| self.store.error(e))?
                .unwrap_or(false);
            if exists {
                return Err(ScheduleError::Exists(name.to_owned()));
            }
            tx.execute(
                "INSERT INTO schedules (name, assistant, prompt, timing, allowed_tools, created_at, last_due)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![name, new.assistant, new.prompt, timing, allowed, clock::now_ms(), now_secs()],
            )
            .map_err(|e| self.store.error(e))?;
            Ok(())
        });
        inserted?;
        self.get(name)
    }

    /// Every schedule, by name.
    pub fn list(&self) -> Result<Vec<Schedule>, ScheduleError> {
        let rows = self.store.read(|c| {
            c.prepare(&format!("SELECT {COLUMNS} FROM schedules ORDER BY name"))?
                .query_map([], row)?
                .collect::<Result<Vec<_>, _>>()
        })?;
        rows.into_iter().map(decode).collect()
    }

    pub fn get(&self, name: &str) -> Result<Schedule, ScheduleError> {
        let found = self.store.read(|c| {
            c.query_row(&format!("SELECT {COLUMNS} FROM schedules WHERE name = ?1"), [name], row).optional()
        })?;
        decode(found.ok_or_else(|| ScheduleError::NotFound(name.to_owned()))?)
    }

    /// Removes a schedule and its run records (their conversations stay).
    pub fn remove(&self, name: &str) -> Result<(), ScheduleError> {
        let removed = self
            .store
            .write(|tx| tx.execute("DELETE FROM schedules WHERE name = ?1", [name]).map_err(|e| self.store.error(e)))?;
        if removed == 0 {
            return Err(ScheduleError::NotFound(name.to_owned()));
        }
        Ok(())
    }

    /// The schedules due at `now`, each once, at the latest time it was due
    /// since its last run; [`claim`](Self::claim) each just before running it.
    pub fn due(&self, now: DateTime<Local>) -> Result<Vec<(Schedule, i64)>, ScheduleError> {
        let mut due = Vec::new();
        for schedule in self.list()? {
            let (Ok(cron), Some(after)) = (schedule.when.cron(), local(schedule.last_due)) else { continue };
            if let Some(at) = cron.last_due(after, now) {
                due.push((schedule, at.timestamp()));
            }
        }
        Ok(due)
    }

    /// Claims `schedule`'s run due at `due_at` (read by [`due`](Self::due)),
    /// unless a live process runs it or it changed since; late when `now` is
    /// well past the due time.
    pub fn claim_due(
        &self,
        schedule: &Schedule,
        due_at: i64,
        now: DateTime<Local>,
    ) -> Result<Option<Claim>, ScheduleError> {
        self.claim(schedule, Some(due_at), now.timestamp() - due_at > LATE_AFTER_SECS)
    }

    /// Claims a run of `name` now, whatever its times; an error if it runs.
    pub fn claim_now(&self, name: &str) -> Result<Claim, ScheduleError> {
        let schedule = self.get(name)?;
        self.claim(&schedule, None, false)?.ok_or_else(|| ScheduleError::Running(name.to_owned()))
    }

    /// Takes `schedule` for this session if nobody alive runs it and it was
    /// not claimed since it was read; records the run as running.
    fn claim(&self, schedule: &Schedule, due_at: Option<i64>, late: bool) -> Result<Option<Claim>, ScheduleError> {
        if let Some(session) = &schedule.running_session
            && self.store.session_alive(session)
        {
            return Ok(None);
        }
        let mine = self.store.session_id().to_owned();
        let run = self.store.write(|tx| {
            // One statement: the claim holds only if the row is as it was read.
            let taken = tx
                .execute(
                    "UPDATE schedules SET running_session = ?1, last_due = COALESCE(?2, last_due)
                     WHERE id = ?3 AND running_session IS ?4 AND last_due = ?5",
                    params![mine, due_at, schedule.id, schedule.running_session, schedule.last_due],
                )
                .map_err(|e| self.store.error(e))?;
            if taken == 0 {
                return Ok::<_, ScheduleError>(None);
            }
            if schedule.running_session.is_some() {
                // Its process ended without finishing the run.
                tx.execute(
                    "UPDATE schedule_runs SET status = 'failed', finished_at = ?1, notes = ?2
                     WHERE schedule_id = ?3 AND status = 'running'",
                    params![now_secs(), write_notes(&[RunNote::Interrupted]), schedule.id],
                )
                .map_err(|e| self.store.error(e))?;
            }
            tx.execute(
                "INSERT INTO schedule_runs (schedule_id, due_at, started_at, status, late) VALUES (?1, ?2, ?3, 'running', ?4)",
                params![schedule.id, due_at, now_secs(), late],
            )
            .map_err(|e| self.store.error(e))?;
            Ok(Some(tx.last_insert_rowid()))
        })?;
        let mut schedule = schedule.clone();
        if let Some(due) = due_at {
            schedule.last_due = due;
        }
        schedule.running_session = Some(mine);
        Ok(run.map(|run| Claim { run, schedule, due_at, late }))
    }

    /// Records how a claimed run ended and releases the schedule.
    pub fn finish(
        &self,
        claim: &Claim,
        status: RunStatus,
        conversation: Option<i64>,
        notes: &[RunNote],
    ) -> Result<(), ScheduleError> {
        self.store.write(|tx| {
            tx.execute(
                "UPDATE schedule_runs SET status = ?1, finished_at = ?2, conversation_id = ?3, notes = ?4 WHERE id = ?5",
                params![status.as_str(), now_secs(), conversation, write_notes(notes), claim.run],
            )
            .map_err(|e| self.store.error(e))?;
            tx.execute(
                "UPDATE schedules SET running_session = NULL WHERE id = ?1 AND running_session = ?2",
                params![claim.schedule.id, self.store.session_id()],
            )
            .map_err(|e| self.store.error(e))?;
            Ok(())
        })
    }

    /// The last `limit` runs of `name`, newest first.
    pub fn runs(&self, name: &str, limit: usize) -> Result<Vec<RunRecord>, ScheduleError> {
        let schedule = self.get(name)?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Ok(self.store.read(|c| {
            c.prepare(
                "SELECT id, due_at, started_at, finished_at, status, late, conversation_id, notes
                 FROM schedule_runs WHERE schedule_id = ?1 ORDER BY id DESC LIMIT ?2",
            )?
            .query_map(params![schedule.id, limit], |r| {
                Ok(RunRecord {
                    id: r.get(0)?,
                    due_at: r.get(1)?,
                    started_at: r.get(2)?,
                    finished_at: r.get(3)?,
                    status: r.get(4)?,
                    late: r.get(5)?,
                    conversation: r.get(6)?,
                    notes: read_notes(&r.get::<_, String>(7)?),
                })
            })?
            .collect::<Result<Vec<_>, _>>()
        })?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daily(name: &str, at: &str) -> NewSchedule {
        NewSchedule {
            name: name.into(),
            assistant: "default".into(),
            prompt: "Summarise my day".into(),
            when: When::Daily { at: at.into() },
            allowed_tools: vec!["github/list_issues".into()],
        }
    }

    #[test]
    fn a_missed_run_is_claimed_once_and_a_running_schedule_is_not_claimed_again() {
        let store = Store::open_in_memory().unwrap();
        let schedules = ScheduleStore::new(store.clone());
        let added = schedules.add(&daily("morning", "09:00")).unwrap();
        assert_eq!(added.allowed_tools, ["github/list_issues"]);
        assert!(matches!(schedules.add(&daily("morning", "10:00")), Err(ScheduleError::Exists(_))));
        // Due three times since its last run (the computer was off): claimed once, late.
        let last = Local.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).unwrap();
        let now = Local.with_ymd_and_hms(2026, 11, 26, 18, 0, 0).unwrap();
        store
            .write(|tx| {
                tx.execute("UPDATE schedules SET last_due = ?1", [last.timestamp()]).map_err(|e| store.error(e))
            })
            .unwrap();
        let due = schedules.due(now).unwrap();
        assert_eq!(due.len(), 1);
        let (schedule, at) = &due[0];
        assert_eq!(*at, Local.with_ymd_and_hms(2026, 11, 26, 9, 0, 0).unwrap().timestamp());
        let claim = &schedules.claim_due(schedule, *at, now).unwrap().unwrap();
        assert!(claim.late);
        assert!(schedules.due(now).unwrap().is_empty(), "claimed: not due again");
        assert!(matches!(schedules.claim_now("morning"), Err(ScheduleError::Running(_))), "it runs now");
        let denied = RunNote::Denied { call: "github/create_issue".into() };
        schedules.finish(claim, RunStatus::Done, None, std::slice::from_ref(&denied)).unwrap();
        let runs = schedules.runs("morning", 5).unwrap();
        assert_eq!((runs[0].status.as_str(), runs[0].late, &runs[0].notes[..]), ("done", true, &[denied][..]));
        // Run now, then nothing is due before tomorrow 09:00.
        let now_run = schedules.claim_now("morning").unwrap();
        assert_eq!(now_run.due_at, None);
        let failed = RunNote::Failed { message: "the provider failed".into() };
        schedules.finish(&now_run, RunStatus::Failed, None, &[failed]).unwrap();
        assert!(schedules.due(now).unwrap().is_empty());
        let next = schedules.get("morning").unwrap().next_due(now).unwrap();
        assert_eq!(next, Local.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap());
        schedules.remove("morning").unwrap();
        assert!(matches!(schedules.get("morning"), Err(ScheduleError::NotFound(_))));
    }

    #[test]
    fn of_two_processes_that_read_a_due_schedule_only_one_claims_it_and_a_dead_claim_is_taken_over() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = crate::paths::DataDir::new(tmp.path());
        let (a, b) = (Store::open(&dir).unwrap(), Store::open(&dir).unwrap());
        let (first, second) = (ScheduleStore::new(a.clone()), ScheduleStore::new(b.clone()));
        first.add(&daily("morning", "09:00")).unwrap();
        let last = Local.with_ymd_and_hms(2026, 11, 23, 9, 0, 0).unwrap();
        a.write(|tx| tx.execute("UPDATE schedules SET last_due = ?1", [last.timestamp()]).map_err(|e| a.error(e)))
            .unwrap();
        let now = Local.with_ymd_and_hms(2026, 11, 24, 10, 0, 0).unwrap();
        // Both read it as due before either claims: the conditional UPDATE lets one through.
        let (seen_a, seen_b) = (first.due(now).unwrap().remove(0), second.due(now).unwrap().remove(0));
        let claim = first.claim_due(&seen_a.0, seen_a.1, now).unwrap();
        assert!(claim.is_some());
        assert!(second.claim_due(&seen_b.0, seen_b.1, now).unwrap().is_none(), "claimed already");
        // The first process dies mid-run: its claim is taken over, its run marked failed.
        drop((claim, first, a));
        let later = Local.with_ymd_and_hms(2026, 11, 25, 10, 0, 0).unwrap();
        let (schedule, at) = second.due(later).unwrap().remove(0);
        let taken = second.claim_due(&schedule, at, later).unwrap().unwrap();
        second.finish(&taken, RunStatus::Done, None, &[]).unwrap();
        let runs = second.runs("morning", 5).unwrap();
        assert_eq!(runs.iter().map(|r| r.status.as_str()).collect::<Vec<_>>(), ["done", "failed"]);
        assert_eq!((&runs[0].notes[..], &runs[1].notes[..]), (&[][..], &[RunNote::Interrupted][..]));
    }

    #[test]
    fn notes_are_data_that_the_cli_says_in_english_and_older_notes_stay_readable() {
        let notes = [
            RunNote::Denied { call: "github/create_issue".into() },
            RunNote::RefusedSampling { server: "everything".into() },
            RunNote::RefusedInput { server: "everything".into() },
            RunNote::TimedOut { limit_secs: 120 },
            RunNote::TimedOut { limit_secs: 90 },
        ];
        let stored = write_notes(&notes);
        assert!(stored.starts_with(r#"[{"kind":"denied","call":"github/create_issue"}"#), "{stored}");
        assert_eq!(read_notes(&stored), notes);
        let said: Vec<String> = notes.iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "denied github/create_issue: it needs approval, and nobody can give it in a scheduled run",
                "refused everything's sampling request: this is a scheduled run, with nobody to answer",
                "refused everything's request for input: this is a scheduled run, with nobody to answer",
                "stopped after 2 minutes, its time limit",
                "stopped after 90 seconds, its time limit",
            ]
        );
        // Written by an older Patchbay: its lines, as they were.
        let old = "denied github/create_issue: it needs approval\nfailed: the provider failed";
        assert_eq!(
            read_notes(old),
            [
                RunNote::Text { text: "denied github/create_issue: it needs approval".into() },
                RunNote::Text { text: "failed: the provider failed".into() }
            ]
        );
        assert_eq!(read_notes(""), []);
    }

    #[test]
    fn a_bad_schedule_says_which_field_and_why() {
        let schedules = ScheduleStore::new(Store::open_in_memory().unwrap());
        let mut bad = daily("x", "9am");
        let err = schedules.add(&bad).unwrap_err().to_string();
        assert!(err.starts_with("when: \"9am\" is not a time of day"), "{err}");
        bad = daily("x", "09:00");
        bad.allowed_tools = vec!["list_issues".into()];
        let err = schedules.add(&bad).unwrap_err().to_string();
        assert_eq!(err, "allowed tools: \"list_issues\" is not SERVER/TOOL (e.g. github/list_issues)");
        bad.allowed_tools.clear();
        bad.prompt = "  ".into();
        assert_eq!(schedules.add(&bad).unwrap_err().to_string(), "prompt: the message to send is empty");
    }
}
