//! When a schedule runs: daily or on weekdays at a time, every N hours, or a
//! cron line, all read as a cron line in the computer's local time.
//!
//! Only two questions are asked of it: the latest time it was due in a span
//! ([`Cron::last_due`], which makes a missed run catch up once however many
//! times it was missed) and the next time it is due ([`Cron::next_due`]).
//! Both walk the local calendar a minute at a time, so daylight-saving jumps
//! and a cron line's day-of-month-or-weekday rule need no special cases.

use chrono::{DateTime, Datelike, Local, NaiveDateTime, TimeDelta, TimeZone, Timelike};
use serde::{Deserialize, Serialize};

/// The furthest back (and ahead) a due time is looked for.
const HORIZON: TimeDelta = TimeDelta::days(400);

/// When a schedule runs, as the user gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum When {
    /// Every day at `at` (`HH:MM`, local time).
    Daily { at: String },
    /// Monday to Friday at `at`.
    Weekdays { at: String },
    /// At minute 0 of every `hours`th hour of the day (from midnight).
    EveryHours { hours: u32 },
    /// A five-field cron line: minute, hour, day of month, month, day of week.
    Cron { line: String },
}

impl When {
    /// The cron line it stands for, checked.
    pub fn cron(&self) -> Result<Cron, String> {
        let line = match self {
            Self::Daily { at } => {
                let (h, m) = clock_time(at)?;
                format!("{m} {h} * * *")
            }
            Self::Weekdays { at } => {
                let (h, m) = clock_time(at)?;
                format!("{m} {h} * * 1-5")
            }
            Self::EveryHours { hours } if (1..=24).contains(hours) => format!("0 */{hours} * * *"),
            Self::EveryHours { hours } => return Err(format!("every {hours} hours: give 1 to 24 hours")),
            Self::Cron { line } => line.clone(),
        };
        Cron::parse(&line)
    }
}

impl std::fmt::Display for When {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Daily { at } => write!(f, "daily at {at}"),
            Self::Weekdays { at } => write!(f, "weekdays at {at}"),
            Self::EveryHours { hours: 1 } => write!(f, "every hour"),
            Self::EveryHours { hours } => write!(f, "every {hours} hours"),
            Self::Cron { line } => write!(f, "cron {line}"),
        }
    }
}

/// `HH:MM` as hour and minute.
fn clock_time(at: &str) -> Result<(u32, u32), String> {
    let bad = || format!("{at:?} is not a time of day: write HH:MM, e.g. 09:30");
    let (h, m) = at.trim().split_once(':').ok_or_else(bad)?;
    let (h, m): (u32, u32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h > 23 || m > 59 || at.trim().len() > 5 {
        return Err(bad());
    }
    Ok((h, m))
}

/// A checked cron line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minutes: Vec<bool>,
    hours: Vec<bool>,
    days: Vec<bool>,
    months: Vec<bool>,
    weekdays: Vec<bool>,
    /// Whether day of month and day of week were both restricted: then either matches (cron's rule).
    either_day: bool,
}

const FIELDS: [(&str, u32, u32); 5] =
    [("minute", 0, 59), ("hour", 0, 23), ("day of month", 1, 31), ("month", 1, 12), ("day of week", 0, 7)];
const MONTHS: [&str; 12] = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];
const DAYS: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];

impl Cron {
    /// Reads `minute hour day-of-month month day-of-week` (`*`, `a-b`, `*/n`,
    /// `a-b/n`, lists, and three-letter month and day names).
    pub fn parse(line: &str) -> Result<Self, String> {
        let parts: Vec<&str> = line.split_whitespace().collect();
        if parts.len() != 5 {
            return Err(format!(
                "cron {line:?}: expected five fields (minute hour day-of-month month day-of-week), found {}",
                parts.len()
            ));
        }
        let mut sets = Vec::new();
        for (part, (name, low, high)) in parts.iter().zip(FIELDS) {
            let names: &[&str] = match name {
                "month" => &MONTHS,
                "day of week" => &DAYS,
                _ => &[],
            };
            sets.push(field(part, low, high, names).map_err(|why| format!("cron {line:?}, {name} {part:?}: {why}"))?);
        }
        let mut weekdays = sets.pop().unwrap_or_default();
        weekdays[0] |= weekdays[7];
        weekdays.truncate(7);
        let months = sets.pop().unwrap_or_default();
        let days = sets.pop().unwrap_or_default();
        let hours = sets.pop().unwrap_or_default();
        let minutes = sets.pop().unwrap_or_default();
        // Cron's rule: a field starting with `*` (`*/2` too) leaves the days unrestricted.
        let either_day = !parts[2].starts_with('*') && !parts[4].starts_with('*');
        Ok(Self { minutes, hours, days, months, weekdays, either_day })
    }

    fn matches(&self, t: &NaiveDateTime) -> bool {
        let day = self.days[t.day() as usize];
        let weekday = self.weekdays[t.weekday().num_days_from_sunday() as usize];
        let day_ok = if self.either_day { day || weekday } else { day && weekday };
        self.minutes[t.minute() as usize] && self.hours[t.hour() as usize] && self.months[t.month() as usize] && day_ok
    }

    /// The latest time it was due after `after` and no later than `now`.
    pub fn last_due(&self, after: DateTime<Local>, now: DateTime<Local>) -> Option<DateTime<Local>> {
        let stop = (now - HORIZON).max(after).naive_local() - TimeDelta::hours(2);
        let mut t = minute_of(now.naive_local());
        while t >= stop {
            if self.matches(&t)
                && let Some(at) = instant(&t)
                && at > after
                && at <= now
            {
                return Some(at);
            }
            t -= TimeDelta::minutes(1);
        }
        None
    }

    /// The first time it is due after `after`.
    pub fn next_due(&self, after: DateTime<Local>) -> Option<DateTime<Local>> {
        let stop = (after + HORIZON).naive_local();
        let mut t = minute_of(after.naive_local());
        while t <= stop {
            if self.matches(&t)
                && let Some(at) = instant(&t)
                && at > after
            {
                return Some(at);
            }
            t += TimeDelta::minutes(1);
        }
        None
    }
}

/// The instant of local time `t`; one skipped by a clock change (02:30 when
/// clocks go from 02:00 to 03:00) is the first instant after the jump, as cron
/// runs it.
fn instant(t: &NaiveDateTime) -> Option<DateTime<Local>> {
    Local
        .from_local_datetime(t)
        .earliest()
        .or_else(|| (1..=180).find_map(|m| Local.from_local_datetime(&(*t + TimeDelta::minutes(m))).earliest()))
}

/// `t` with its seconds dropped.
fn minute_of(t: NaiveDateTime) -> NaiveDateTime {
    t.with_second(0).and_then(|t| t.with_nanosecond(0)).unwrap_or(t)
}

/// One field's allowed values, indexed by value.
fn field(text: &str, low: u32, high: u32, names: &[&str]) -> Result<Vec<bool>, String> {
    let mut set = vec![false; high as usize + 1];
    let value = |v: &str| -> Result<u32, String> {
        let lower = v.to_ascii_lowercase();
        let named = names.iter().position(|n| *n == lower).map(|i| i as u32 + if names.len() == 12 { 1 } else { 0 });
        let n = named.map_or_else(|| v.parse::<u32>().map_err(|_| format!("{v:?} is not a number")), Ok)?;
        if n < low || n > high {
            return Err(format!("{n} is outside {low}-{high}"));
        }
        Ok(n)
    };
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((range, step)) => {
                let step: u32 = step.parse().map_err(|_| format!("the step {step:?} is not a number"))?;
                if step == 0 {
                    return Err("a step of 0".into());
                }
                (range, step)
            }
            None => (item, 1),
        };
        let (from, to) = match range {
            "*" => (low, high),
            _ => match range.split_once('-') {
                // `sat-sun`: Sunday ends a weekday range as 7.
                Some((a, b)) if names.len() == 7 && value(b)? == 0 => (value(a)?, 7),
                Some((a, b)) => (value(a)?, value(b)?),
                None if step > 1 => (value(range)?, high),
                None => (value(range)?, value(range)?),
            },
        };
        if from > to {
            return Err(format!("the range {from}-{to} runs backwards"));
        }
        for v in (from..=to).step_by(step as usize) {
            set[v as usize] = true;
        }
    }
    Ok(set)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Local> {
        let t = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M").unwrap();
        Local.from_local_datetime(&t).earliest().unwrap()
    }

    #[test]
    fn daily_weekdays_hours_and_cron_lines_are_due_when_they_say() {
        let daily = When::Daily { at: "09:30".into() }.cron().unwrap();
        // 2026-11-27 is a Friday.
        assert_eq!(daily.next_due(at("2026-11-27 09:30")), Some(at("2026-11-28 09:30")));
        assert_eq!(daily.next_due(at("2026-11-27 09:29")), Some(at("2026-11-27 09:30")));
        let weekdays = When::Weekdays { at: "08:00".into() }.cron().unwrap();
        assert_eq!(weekdays.next_due(at("2026-11-27 09:00")), Some(at("2026-11-30 08:00")), "Friday to Monday");
        let hours = When::EveryHours { hours: 6 }.cron().unwrap();
        assert_eq!(hours.next_due(at("2026-11-27 13:10")), Some(at("2026-11-27 18:00")));
        let cron = When::Cron { line: "15 10 1 * mon".into() }.cron().unwrap();
        // The 1st of the month or a Monday (cron's rule when both are given).
        assert_eq!(cron.next_due(at("2026-11-27 00:00")), Some(at("2026-11-30 10:15")));
        assert_eq!(cron.next_due(at("2026-11-30 10:15")), Some(at("2026-12-01 10:15")));
        let weekend = Cron::parse("0 10 * * sat-sun").unwrap();
        assert_eq!(weekend.next_due(at("2026-11-27 12:00")), Some(at("2026-11-28 10:00")));
        assert_eq!(weekend.next_due(at("2026-11-28 10:00")), Some(at("2026-11-29 10:00")));
        // A stepped day of month leaves the weekday deciding alone, as `*` does.
        let stepped = Cron::parse("0 8 */1 * mon").unwrap();
        assert_eq!(stepped.next_due(at("2026-11-27 12:00")), Some(at("2026-11-30 08:00")));
        let steps = Cron::parse("*/20 9-17/4 * JAN-mar,12 7").unwrap();
        assert_eq!(steps.next_due(at("2026-11-27 00:00")), Some(at("2026-12-06 09:00")), "a Sunday in December");
    }

    #[test]
    fn a_run_missed_many_times_is_due_once_at_the_latest_time() {
        let daily = When::Daily { at: "09:00".into() }.cron().unwrap();
        // Off from Monday to Thursday evening: the run is due once, Thursday 09:00.
        assert_eq!(daily.last_due(at("2026-11-23 09:00"), at("2026-11-26 18:00")), Some(at("2026-11-26 09:00")));
        assert_eq!(daily.last_due(at("2026-11-26 09:00"), at("2026-11-26 18:00")), None, "already run");
        assert_eq!(daily.last_due(at("2026-11-26 10:00"), at("2026-11-27 08:59")), None, "not yet due");
    }

    #[test]
    fn a_bad_time_or_cron_line_says_which_part_and_why() {
        for (when, said) in [
            (When::Daily { at: "9.30".into() }, "\"9.30\" is not a time of day: write HH:MM"),
            (When::Weekdays { at: "24:00".into() }, "\"24:00\" is not a time of day"),
            (When::EveryHours { hours: 0 }, "every 0 hours: give 1 to 24 hours"),
            (When::Cron { line: "0 9 * *".into() }, "expected five fields"),
            (When::Cron { line: "61 9 * * *".into() }, "minute \"61\": 61 is outside 0-59"),
            (When::Cron { line: "0 9 * * funday".into() }, "day of week \"funday\": \"funday\" is not a number"),
            (When::Cron { line: "0 17-9 * * *".into() }, "hour \"17-9\": the range 17-9 runs backwards"),
            (When::Cron { line: "*/0 * * * *".into() }, "a step of 0"),
        ] {
            let err = when.cron().unwrap_err();
            assert!(err.contains(said), "{when}: {err}");
        }
    }
}
