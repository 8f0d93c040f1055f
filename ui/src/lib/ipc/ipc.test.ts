// Contract test: every command and event the typed client uses is documented
// in ui/IPC.md (and nothing documented is missing from the client), and
// arguments go over the wire with snake_case keys.
import { beforeEach, describe, expect, it, vi } from "vitest";
import doc from "../../../IPC.md?raw";

const calls: { cmd: string; args: Record<string, unknown> | undefined }[] = [];
const listened: string[] = [];

vi.mock("@tauri-apps/api/core", () => ({
  invoke: vi.fn((cmd: string, args?: Record<string, unknown>) => {
    calls.push({ cmd, args });
    return cmd === "app_info" ? Promise.reject("plain failure") : Promise.resolve(null);
  }),
  Channel: class {
    constructor(public onmessage: unknown) {}
  },
}));
vi.mock("@tauri-apps/api/event", () => ({
  listen: vi.fn((event: string) => {
    listened.push(event);
    return Promise.resolve(() => undefined);
  }),
}));

const { ipc, toIpcError } = await import("./index");

function documented(): { commands: Set<string>; events: Set<string> } {
  const commands = new Set<string>();
  const events = new Set<string>();
  let inEvents = false;
  for (const line of doc.split("\n")) {
    if (line.startsWith("## ")) inEvents = line.startsWith("## Events");
    const m = /^\| `([a-z_]+)`(?: \/ `([a-z_]+)`)?/.exec(line);
    if (!m) continue;
    const set = inEvents ? events : commands;
    for (const name of [m[1], m[2]]) if (name) set.add(name);
  }
  // "`app_info`, `ping`" share a row.
  if (doc.includes("| `app_info`, `ping`")) ["app_info", "ping"].forEach((c) => commands.add(c));
  return { commands, events };
}

describe("IPC contract", () => {
  beforeEach(() => {
    calls.length = 0;
    listened.length = 0;
  });

  it("matches IPC.md: every client command is documented and every documented command is used", async () => {
    const fns = Object.entries(ipc).filter(([name]) => !name.startsWith("on"));
    for (const [, fn] of fns) {
      // Each method is called with placeholder arguments; only the command name and argument keys matter here.
      await (fn as (...a: unknown[]) => Promise<unknown>)("x", "y", [], () => undefined).catch(() => undefined);
    }
    // A cancellable command called off.
    const off = new AbortController();
    const running = ipc.callTool("x", "y", {}, off.signal);
    off.abort();
    await running;
    const used = new Set(calls.map((c) => c.cmd));
    const { commands } = documented();
    expect(commands.size).toBeGreaterThan(50);
    expect([...used].sort()).toEqual([...commands].sort());
  });

  it("matches IPC.md events", async () => {
    for (const [name, fn] of Object.entries(ipc)) {
      if (name.startsWith("on")) await (fn as (h: () => void) => Promise<unknown>)(() => undefined);
    }
    expect(listened.length).toBe(17);
    expect([...listened].sort()).toEqual([...documented().events].sort());
  });

  it("sends snake_case argument keys and a channel for turn events", async () => {
    await ipc.sendMessage("c1", "hi", [], () => undefined);
    await ipc.respondApproval("call-1", "allow_once");
    const [send, approve] = calls;
    expect(send?.cmd).toBe("send_message");
    expect(Object.keys(send?.args ?? {})).toEqual(["conversation_id", "text", "attachments", "on_event"]);
    expect(approve?.args).toEqual({ call_id: "call-1", decision: "allow_once" });
  });

  it("calls a cancellable command off under the id it ran with, and not at all once it is over", async () => {
    const off = new AbortController();
    const running = ipc.callToolForView("srv", "tool", {}, false, off.signal);
    off.abort();
    await running;
    const [run, cancel] = calls;
    expect(run?.cmd).toBe("call_tool_for_view");
    const request = run?.args?.request;
    expect(typeof request).toBe("string");
    expect(cancel).toEqual({ cmd: "cancel_request", args: { request } });
    // Over: an abort now sends nothing.
    const later = new AbortController();
    await ipc.openAppView("srv", "ui://v", later.signal);
    later.abort();
    expect(calls.map((c) => c.cmd)).toEqual(["call_tool_for_view", "cancel_request", "open_app_view"]);
    // Already off: nothing is sent at all.
    await expect(ipc.readResourceForView("srv", "ui://v", later.signal)).rejects.toMatchObject({ kind: "cancelled" });
    expect(calls).toHaveLength(3);
    // Without a signal the command has no id; a tested tool's events come on a channel.
    const events: unknown[] = [];
    await ipc.callTool("srv", "tool", {}, undefined, (e) => events.push(e));
    const { on_event: channel, ...rest } = calls[3]?.args ?? {};
    expect(rest).toEqual({ server: "srv", tool: "tool", arguments: {} });
    (channel as { onmessage: (e: unknown) => void }).onmessage({ kind: "progress", progress: 1, total: null, message: "step" });
    expect(events).toEqual([{ kind: "progress", progress: 1, total: null, message: "step" }]);
  });

  it("turns anything a command rejects with into a typed error", async () => {
    await expect(ipc.appInfo()).rejects.toEqual({ kind: "internal", message: "plain failure" });
    expect(toIpcError({ kind: "mcp", message: "exited" })).toEqual({ kind: "mcp", message: "exited" });
    expect(toIpcError({ kind: "weird", message: "m" })).toEqual({ kind: "internal", message: "m" });
    expect(toIpcError(new Error("boom"))).toEqual({ kind: "internal", message: "boom" });
  });
});
