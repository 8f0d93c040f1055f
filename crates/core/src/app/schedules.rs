//! Scheduled runs as the window lists, adds and removes them; running one is
//! the CLI's (`patchbay schedule run-due`), which the desktop starts.

use std::path::Path;

use super::views::{ScheduleAdded, ScheduleInput, ScheduleView, WhileClosed};
use super::{App, AppError};
use crate::schedules::{NewSchedule, RunRecord, Schedule, ScheduleError, ScheduleStore};

impl App {
    fn schedule_store(&self) -> ScheduleStore {
        ScheduleStore::new(self.inner.store.clone())
    }

    fn schedule_view(&self, schedule: Schedule) -> Result<ScheduleView, AppError> {
        let last_run = self.schedule_store().runs(&schedule.name, 1)?.into_iter().next();
        Ok(ScheduleView {
            next_due: schedule.next_due(crate::clock::now_local()).map(|t| t.timestamp()),
            name: schedule.name,
            assistant: schedule.assistant,
            prompt: schedule.prompt,
            when: schedule.when,
            allowed_tools: schedule.allowed_tools,
            last_run,
        })
    }

    /// Every schedule, with its next due time and last run.
    pub fn schedules(&self) -> Result<Vec<ScheduleView>, AppError> {
        self.schedule_store().list()?.into_iter().map(|s| self.schedule_view(s)).collect()
    }

    /// Adds a schedule (for an assistant that exists) and sets up the
    /// operating system's timer that runs `cli` while Patchbay is closed.
    pub fn add_schedule(&self, input: ScheduleInput, cli: &Path) -> Result<ScheduleAdded, AppError> {
        self.inner.assistants.get(&input.assistant)?;
        let new = NewSchedule {
            name: input.name,
            assistant: input.assistant,
            prompt: input.prompt,
            when: input.when,
            allowed_tools: input.allowed_tools,
        };
        let schedule = self.schedule_store().add(&new)?;
        let while_closed = match self.inner.timer.install(cli, &self.inner.dir) {
            Ok(unit) => WhileClosed::Timer { unit },
            Err(why) => WhileClosed::NoTimer { why },
        };
        Ok(ScheduleAdded { schedule: self.schedule_view(schedule)?, while_closed })
    }

    /// Removes a schedule (its runs' conversations stay); with the last one,
    /// the system timer goes too.
    pub fn remove_schedule(&self, name: &str) -> Result<(), AppError> {
        self.schedule_store().remove(name)?;
        if self.schedule_store().list()?.is_empty() {
            self.inner.timer.uninstall(&self.inner.dir).map_err(ScheduleError::from)?;
        }
        Ok(())
    }

    /// A schedule's last runs, newest first.
    pub fn schedule_runs(&self, name: &str) -> Result<Vec<RunRecord>, AppError> {
        Ok(self.schedule_store().runs(name, 20)?)
    }
}
