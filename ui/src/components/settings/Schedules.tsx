// Scheduled runs: an assistant's prompt run daily, on weekdays, every N hours
// or on a cron line, each run in a conversation of its own. The list shows when
// each runs next and how its last run went (what it denied or refused, whether
// it ran late); "Run now" runs it as the timer would. Adding one also sets up
// the system timer that runs it while Patchbay is closed, and says if it could not.
import { useCallback, useState } from "react";
import { useI18n } from "../../lib/i18n";
import {
  toIpcError,
  type Ipc,
  type IpcError,
  type RunNote,
  type RunRecord,
  type ScheduleAdded,
  type ScheduleView,
  type TimerError,
  type When,
} from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { useLoad } from "./useLoad";

export type SchedulesIpc = Pick<Ipc, "listSchedules" | "addSchedule" | "removeSchedule" | "scheduleRuns" | "runScheduleNow" | "listAssistants">;

type Kind = When["kind"];

/** A Unix time as the user's local date and time. */
function localTime(secs: number): string {
  return new Date(secs * 1000).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function whenOf(kind: Kind, value: string): When {
  // Not a whole number: 0, which the core refuses saying which field and why.
  if (kind === "every_hours") return { kind, hours: /^\d+$/.test(value) ? Number(value) : 0 };
  if (kind === "cron") return { kind, line: value };
  return { kind, at: value };
}

/** Why no system timer runs the schedules while Patchbay is closed, in the window's language. */
function timerWhy(t: ReturnType<typeof useI18n>["t"], why: TimerError): string {
  return t(`schedules.timer.${why.kind}`, {
    path: "path" in why ? why.path : "",
    error: "error" in why ? why.error : "",
    tool: "tool" in why ? why.tool : "",
  });
}

/** What a run could not do, or why it failed, in the window's language. */
function noteText(t: ReturnType<typeof useI18n>["t"], note: RunNote): string {
  switch (note.kind) {
    case "timed_out":
      return note.limit_secs % 60 === 0
        ? t("schedules.note.timedOutMinutes", { n: note.limit_secs / 60 })
        : t("schedules.note.timedOutSeconds", { n: note.limit_secs });
    case "text":
      // Written by an older Patchbay, in English.
      return note.text;
    case "failed":
      // The error's own words (in English, as errors are); the run is marked failed beside.
      return note.message;
    case "denied":
      return t("schedules.note.denied", { call: note.call });
    case "refused_sampling":
    case "refused_input":
      return t(`schedules.note.${note.kind}`, { server: note.server });
    case "interrupted":
      return t("schedules.note.interrupted");
  }
}

function RunLine({ run }: { run: RunRecord }) {
  const { t } = useI18n();
  return (
    <div className="small" data-testid="schedule-run" data-status={run.status}>
      <span className={`badge ${run.status === "done" ? "new" : run.status === "failed" ? "conflict" : ""}`}>{t(`schedules.status.${run.status}` as "schedules.status.done")}</span>{" "}
      {run.due_at === null ? t("schedules.ranNow", { at: localTime(run.started_at) }) : t("schedules.ranDue", { at: localTime(run.due_at) })}
      {run.late && <strong className="warning-text"> {t("schedules.late")}</strong>}
      {run.notes.length > 0 && (
        <ul className="muted" data-testid="schedule-run-notes">
          {run.notes.map((note, i) => (
            <li key={i}>{noteText(t, note)}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

function Row({
  schedule,
  ipc,
  onChanged,
  onError,
}: {
  schedule: ScheduleView;
  ipc: SchedulesIpc;
  onChanged: (act: () => Promise<unknown>) => Promise<boolean>;
  onError: (e: IpcError) => void;
}) {
  const { t } = useI18n();
  const [running, setRunning] = useState(false);
  const [said, setSaid] = useState<string | null>(null);
  const [runs, setRuns] = useState<RunRecord[] | null>(null);
  const when =
    schedule.when.kind === "daily"
      ? t("schedules.daily", { at: schedule.when.at })
      : schedule.when.kind === "weekdays"
        ? t("schedules.weekdays", { at: schedule.when.at })
        : schedule.when.kind === "every_hours"
          ? t("schedules.everyHours", { hours: schedule.when.hours })
          : t("schedules.cron", { line: schedule.when.line });
  return (
    <li className="card" data-testid="schedule" data-name={schedule.name}>
      <div className="row">
        <strong>{schedule.name}</strong>
        <span className="muted">{when}</span>
        <span className="muted">· {schedule.assistant}</span>
        <span className="spacer" />
        <button
          type="button"
          data-testid="schedule-run-now"
          disabled={running}
          onClick={() => {
            setRunning(true);
            setSaid(null);
            void onChanged(() => ipc.runScheduleNow(schedule.name).then(setSaid)).finally(() => setRunning(false));
          }}
        >
          {running ? t("common.running") : t("schedules.runNow")}
        </button>
        <button type="button" onClick={() => void ipc.scheduleRuns(schedule.name).then(setRuns, (e: unknown) => onError(toIpcError(e)))}>
          {t("schedules.history")}
        </button>
        <button type="button" className="danger" onClick={() => void onChanged(() => ipc.removeSchedule(schedule.name))}>
          {t("common.remove")}
        </button>
      </div>
      <p className="small">“{schedule.prompt}”</p>
      {schedule.allowed_tools.length > 0 && <p className="small muted">{t("schedules.allowed", { tools: schedule.allowed_tools.join(", ") })}</p>}
      <p className="small muted" data-testid="schedule-next">
        {schedule.next_due === null ? t("schedules.never") : t("schedules.next", { at: localTime(schedule.next_due) })}
      </p>
      {said && (
        <p className="small" role="status">
          {said}
        </p>
      )}
      {schedule.last_run && !runs && <RunLine run={schedule.last_run} />}
      {runs?.map((run) => <RunLine key={run.id} run={run} />)}
    </li>
  );
}

export function Schedules({ ipc }: { ipc: SchedulesIpc }) {
  const { t } = useI18n();
  const load = useCallback(() => Promise.all([ipc.listSchedules(), ipc.listAssistants()]), [ipc]);
  const { data, error, setError, act } = useLoad(load);
  const [name, setName] = useState("");
  const [assistant, setAssistant] = useState("");
  const [prompt, setPrompt] = useState("");
  const [kind, setKind] = useState<Kind>("daily");
  const [value, setValue] = useState("08:00");
  const [allowed, setAllowed] = useState("");
  const [added, setAdded] = useState<ScheduleAdded | null>(null);
  const [schedules, assistants] = data ?? [[], []];
  const chosen = assistant || assistants[0]?.name || "";

  return (
    <div data-testid="schedules">
      <p className="muted">{t("schedules.intro")}</p>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <ul className="list">
        {schedules.map((s) => (
          <Row key={s.name} schedule={s} ipc={ipc} onChanged={act} onError={setError} />
        ))}
      </ul>
      {data && schedules.length === 0 && <p className="muted">{t("schedules.empty")}</p>}
      <h2>{t("schedules.add")}</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const input = {
            name: name.trim(),
            assistant: chosen,
            prompt,
            when: whenOf(kind, value.trim()),
            allowed_tools: allowed.split(",").map((s) => s.trim()).filter(Boolean),
          };
          setAdded(null);
          void act(() => ipc.addSchedule(input).then(setAdded)).then((ok) => {
            if (ok) {
              setName("");
              setPrompt("");
            }
          });
        }}
      >
        <label className="field">
          <span>{t("schedules.name")}</span>
          <input id="schedule-name" value={name} onChange={(e) => setName(e.target.value)} required />
        </label>
        <label className="field">
          <span>{t("schedules.assistant")}</span>
          <select id="schedule-assistant" value={chosen} onChange={(e) => setAssistant(e.target.value)}>
            {assistants.map((a) => (
              <option key={a.name} value={a.name}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>{t("schedules.prompt")}</span>
          <textarea id="schedule-prompt" rows={3} value={prompt} onChange={(e) => setPrompt(e.target.value)} required />
        </label>
        <div className="row">
          <label className="field">
            <span>{t("schedules.when")}</span>
            <select
              id="schedule-kind"
              value={kind}
              onChange={(e) => {
                const next = e.target.value as Kind;
                setKind(next);
                setValue(next === "every_hours" ? "6" : next === "cron" ? "0 9 * * 1" : "08:00");
              }}
            >
              <option value="daily">{t("schedules.kind.daily")}</option>
              <option value="weekdays">{t("schedules.kind.weekdays")}</option>
              <option value="every_hours">{t("schedules.kind.everyHours")}</option>
              <option value="cron">{t("schedules.kind.cron")}</option>
            </select>
          </label>
          <label className="field">
            <span>{kind === "every_hours" ? t("schedules.hours") : kind === "cron" ? t("schedules.cronLine") : t("schedules.at")}</span>
            <input id="schedule-value" value={value} onChange={(e) => setValue(e.target.value)} required />
          </label>
        </div>
        <label className="field">
          <span>{t("schedules.allow")}</span>
          <input
            id="schedule-allow"
            value={allowed}
            placeholder="github/list_issues, time/get_current_time"
            aria-describedby="schedule-allow-hint"
            onChange={(e) => setAllowed(e.target.value)}
          />
        </label>
        <small className="muted" id="schedule-allow-hint">
          {t("schedules.allowHint")}
        </small>
        <button type="submit" id="schedule-add" className="primary">
          {t("schedules.addButton")}
        </button>
      </form>
      {added && (
        <p
          className={added.while_closed.kind === "timer" ? "small" : "small warning-text"}
          role="status"
          data-testid="schedule-timer"
        >
          {added.while_closed.kind === "timer"
            ? t("schedules.timerOk", { unit: added.while_closed.unit })
            : t("schedules.timerMissing", { why: timerWhy(t, added.while_closed.why) })}
        </p>
      )}
    </div>
  );
}

