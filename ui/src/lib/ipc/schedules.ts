// Scheduled runs: an assistant's prompt run at set times, each run in its own conversation.
import { call } from "./client";
import type { RunRecord, ScheduleAdded, ScheduleInput, ScheduleView } from "./generated";

export type { RunNote, RunRecord, ScheduleAdded, ScheduleInput, ScheduleView, TimerError, When, WhileClosed } from "./generated";

export const schedulesIpc = {
  listSchedules: () => call<ScheduleView[]>("list_schedules"),
  /** Adds a schedule and sets up the system timer that runs it while Patchbay is closed. */
  addSchedule: (schedule: ScheduleInput) => call<ScheduleAdded>("add_schedule", { schedule }),
  removeSchedule: (name: string) => call<void>("remove_schedule", { name }),
  scheduleRuns: (name: string) => call<RunRecord[]>("schedule_runs", { name }),
  /** Runs it now, as the timer would; what the run said when done. */
  runScheduleNow: (name: string) => call<string>("run_schedule_now", { name }),
};
