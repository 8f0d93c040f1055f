import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Assistant, RunNote, ScheduleAdded, ScheduleView } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { blank } from "./Assistants";
import { Schedules, type SchedulesIpc } from "./Schedules";

afterEach(cleanup);

const assistant = (name: string): Assistant => ({ ...blank(), id: name, name });

const digest: ScheduleView = {
  name: "digest",
  assistant: "Default",
  prompt: "Summarise my unread issues",
  when: { kind: "weekdays", at: "08:30" },
  allowed_tools: ["github/list_issues"],
  next_due: 1_800_000_000,
  last_run: {
    id: 3,
    due_at: 1_799_900_000,
    started_at: 1_799_990_000,
    finished_at: 1_799_990_030,
    status: "done",
    late: true,
    conversation: 12,
    notes: [
      { kind: "denied", call: "github/create_issue" },
      { kind: "refused_input", server: "github" },
    ],
  },
};

function fake(schedules: ScheduleView[]) {
  return {
    listSchedules: vi.fn(() => Promise.resolve(schedules)),
    listAssistants: vi.fn(() => Promise.resolve([assistant("Default"), assistant("Coder")])),
    addSchedule: vi.fn(() =>
      Promise.resolve<ScheduleAdded>({
        schedule: digest,
        while_closed: {
          kind: "no_timer",
          why: {
            kind: "refused",
            path: "/home/ada/.config/systemd/user/p.timer",
            tool: "systemctl --user",
            error: "Failed to connect to bus",
          },
        },
      }),
    ),
    removeSchedule: vi.fn(() => Promise.resolve()),
    scheduleRuns: vi.fn(() => Promise.resolve([])),
    runScheduleNow: vi.fn(() => Promise.resolve("digest ran; its answer is in conversation 13")),
  } satisfies SchedulesIpc;
}

describe("Schedules", () => {
  it("lists each schedule with when it runs, its last run and what that run could not do", async () => {
    const ipc = fake([digest]);
    renderIn(<Schedules ipc={ipc} />);
    const row = await screen.findByTestId("schedule");
    expect(row.textContent).toContain("weekdays at 08:30");
    expect(row.textContent).toContain("Runs without asking: github/list_issues");
    expect(within(row).getByTestId("schedule-next").textContent).toMatch(/^Next run: /);
    const run = within(row).getByTestId("schedule-run");
    expect(run.dataset.status).toBe("done");
    expect(run.textContent).toContain("ran late");
    const notes = within(run).getAllByRole("listitem").map((li) => li.textContent);
    expect(notes).toEqual([
      "denied github/create_issue: it needs approval, and nobody can give it in a scheduled run",
      "refused github's request for input: this is a scheduled run, with nobody to answer",
    ]);

    fireEvent.click(within(row).getByRole("button", { name: "Run now" }));
    expect(await within(row).findByRole("status")).toHaveProperty("textContent", "digest ran; its answer is in conversation 13");
    expect(ipc.runScheduleNow).toHaveBeenCalledWith("digest");
  });

  it("says a run's notes in the window's language, and an older Patchbay's as they were written", async () => {
    const run = (notes: RunNote[]): ScheduleView => ({ ...digest, last_run: { ...digest.last_run!, status: "failed", notes } });
    renderIn(
      <Schedules
        ipc={fake([
          run([
            { kind: "refused_sampling", server: "everything" },
            { kind: "timed_out", limit_secs: 3600 },
          ]),
        ])}
      />,
      "zh",
    );
    const items = (await screen.findAllByRole("listitem")).map((li) => li.textContent);
    expect(items).toContain("拒绝了 everything 的采样请求：定时运行时无人回答");
    expect(items).toContain("达到时间限制（60 分钟），已停止");
    cleanup();
    renderIn(
      <Schedules
        ipc={fake([
          run([
            { kind: "timed_out", limit_secs: 90 },
            { kind: "interrupted" },
            { kind: "failed", message: "the provider said no (HTTP 401)" },
            { kind: "text", text: "failed: the provider failed" },
          ]),
        ])}
      />,
    );
    const notes = within(await screen.findByTestId("schedule-run-notes")).getAllByRole("listitem");
    expect(notes.map((li) => li.textContent)).toEqual([
      "stopped after 90 s, its time limit",
      "the process running it ended before it finished",
      "the provider said no (HTTP 401)",
      "failed: the provider failed",
    ]);
  });

  it("adds a schedule from the form, and says when the system timer could not be set up", async () => {
    const ipc = fake([]);
    renderIn(<Schedules ipc={ipc} />);
    expect(await screen.findByText(/No schedules yet/)).toBeTruthy();
    await waitFor(() => expect(screen.getByLabelText<HTMLSelectElement>("Assistant").value).toBe("Default"));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "hourly" } });
    fireEvent.change(screen.getByLabelText("Message sent at each run"), { target: { value: "Check the build" } });
    fireEvent.change(screen.getByLabelText("When"), { target: { value: "every_hours" } });
    fireEvent.change(screen.getByLabelText("Hours (1 to 24)"), { target: { value: "3" } });
    fireEvent.change(screen.getByLabelText("Tools that may run without asking (SERVER/TOOL, comma-separated)"), {
      target: { value: "ci/status, ci/logs" },
    });
    fireEvent.click(screen.getByRole("button", { name: "Add schedule" }));
    await waitFor(() =>
      expect(ipc.addSchedule).toHaveBeenCalledWith({
        name: "hourly",
        assistant: "Default",
        prompt: "Check the build",
        when: { kind: "every_hours", hours: 3 },
        allowed_tools: ["ci/status", "ci/logs"],
      }),
    );
    expect((await screen.findByTestId("schedule-timer")).textContent).toBe(
      "Added, but it runs only while Patchbay is open: the timer /home/ada/.config/systemd/user/p.timer is written, " +
        "but systemctl --user could not enable it: Failed to connect to bus",
    );
  });

  it("says in Chinese which timer runs the schedules, and why there is none", async () => {
    const ipc = fake([]);
    ipc.addSchedule.mockResolvedValueOnce({ schedule: digest, while_closed: { kind: "timer", unit: "patchbay-schedules-1.timer" } });
    renderIn(<Schedules ipc={ipc} />, "zh");
    await waitFor(() => expect(screen.getByLabelText<HTMLSelectElement>("助手").value).toBe("Default"));
    const add = async () => {
      fireEvent.change(screen.getByLabelText("名称"), { target: { value: "daily" } });
      fireEvent.change(screen.getByLabelText("每次运行发送的消息"), { target: { value: "Hi" } });
      fireEvent.click(screen.getByRole("button", { name: "添加" }));
    };
    await add();
    await waitFor(() =>
      expect(screen.getByTestId("schedule-timer").textContent).toBe(
        "已添加。Patchbay 关闭时，由系统定时器 patchbay-schedules-1.timer 运行它。",
      ),
    );
    ipc.addSchedule.mockResolvedValueOnce({ schedule: digest, while_closed: { kind: "no_timer", why: { kind: "unsupported" } } });
    await add();
    await waitFor(() =>
      expect(screen.getByTestId("schedule-timer").textContent).toBe(
        "已添加，但只在 Patchbay 打开时运行：此系统没有 Patchbay 能用的定时器（systemd、launchd 或任务计划程序）",
      ),
    );
  });
});
