// The servers list: status dots, tool counts, switches and sign-in, and the
// list kept in step with the statuses the backend reports.
import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ServerView } from "../../../lib/ipc";
import { renderIn, signalOf, untilCancelled } from "../../../test/render";
import { config, tool, fake, plainView, view } from "../../../test/fakeServers";
import { ServersSettings, type ServersIpc } from "./ServersSettings";

afterEach(cleanup);

describe("ServersSettings", () => {
  it("offers OAuth sign-in for a remote server that failed, never for a local one", async () => {
    const remote = plainView(
      { ...config, name: "remote", transport: { type: "streamable_http", url: "https://mcp.example.com/mcp", headers: {} } },
      { state: "failed", tool_count: 0, error: "HTTP 401: authorization required" },
    );
    const local = plainView(config, { state: "failed", tool_count: 0, error: "exited" });
    const f = fake([remote, local]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const [remoteRow, localRow] = await screen.findAllByTestId("server-row");
    expect(within(localRow!).queryByTestId("server-sign-in")).toBeNull();
    f.ipc.authorizeServer = vi.fn(untilCancelled);
    fireEvent.click(within(remoteRow!).getByTestId("server-sign-in"));
    expect(f.ipc.authorizeServer).toHaveBeenCalledWith("remote", expect.any(AbortSignal));
    // While the browser is out, the sign-in can be called off; that is no error.
    expect(within(remoteRow!).getByRole("status").textContent).toContain("Waiting for you to sign in in the browser");
    fireEvent.click(within(remoteRow!).getByTestId("server-sign-in-cancel"));
    expect(signalOf(f.ipc.authorizeServer as never).aborted).toBe(true);
    await within(remoteRow!).findByTestId("server-sign-in");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows a server by the name its file gave it, and the name it is stored under beside it", async () => {
    const named = plainView({ ...config, name: "kb_search", title: "Team knowledge" }, { state: "ready", tool_count: 1, error: null });
    renderIn(<ServersSettings ipc={fake([named, plainView(config, { state: "ready", tool_count: 1, error: null })]).ipc} />);
    const [titled, plain] = await screen.findAllByTestId("server-row");
    expect(within(titled!).getByRole("button", { name: "Team knowledge" })).toBeTruthy();
    expect(within(titled!).getByTestId("server-name").textContent).toBe("kb_search");
    expect(within(plain!).queryByTestId("server-name")).toBeNull();
  });

  it("lists servers with live status dots, tool count and an enable switch", async () => {
    const f = fake([view("starting")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("starting");
    expect(within(row).getByTestId("tool-count").textContent).toBe("3 tools");
    f.status({ server: "files", state: "ready", tool_count: 5, error: null });
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("ready");
    expect(within(row).getByTestId("tool-count").textContent).toBe("5 tools");
    fireEvent.click(within(row).getByRole("switch", { name: "Enable files" }));
    await waitFor(() => expect(f.ipc.setServerEnabled).toHaveBeenCalledWith("files", false));
  });

  it("reads the list again on a status, so a server it does not list yet appears, and a list read before the status does not win", async () => {
    const f = fake([view("ready")]);
    const added = plainView({ ...config, name: "poker" }, { state: "ready", tool_count: 1, error: null });
    renderIn(<ServersSettings ipc={f.ipc} />);
    await screen.findByTestId("server-row");
    f.ipc.listServers = vi.fn(() => Promise.resolve([view("ready"), added]));
    await f.status({ server: "poker", state: "ready", tool_count: 1, error: null });
    await waitFor(() => expect(screen.getAllByTestId("server-row")).toHaveLength(2));
    const row = screen.getAllByTestId("server-row")[1]!;
    expect(row.getAttribute("data-server")).toBe("poker");
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("ready");
  });

  it("lists a server's tools again once it is ready", async () => {
    const f = fake([view("starting")]);
    f.ipc.listTools = vi.fn(() => Promise.resolve([]));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    await waitFor(() => expect(f.ipc.listTools).toHaveBeenCalledTimes(1));
    expect(within(screen.getByTestId("tools-table")).queryByText("read_file")).toBeNull();
    f.ipc.listTools = vi.fn(() => Promise.resolve([tool]));
    await f.status({ server: "files", state: "ready", tool_count: 1, error: null });
    expect(await within(screen.getByTestId("tools-table")).findByText("read_file")).toBeTruthy();
  });

  it("keeps the status an event reported when a list read before it answers after it", async () => {
    const f = fake([view("starting")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    // A list read that begins while the server starts and answers late.
    let answerLate: (views: ServerView[]) => void = () => undefined;
    const late = new Promise<ServerView[]>((resolve) => (answerLate = resolve));
    const current = f.ipc.listServers;
    f.ipc.listServers = vi.fn<ServersIpc["listServers"]>().mockReturnValueOnce(late).mockImplementation(current);
    fireEvent.click(within(row).getByRole("switch", { name: "Enable files" }));
    await waitFor(() => expect(f.ipc.listServers).toHaveBeenCalledTimes(1));
    await f.status({ server: "files", state: "ready", tool_count: 3, error: null });
    await act(async () => answerLate([view("starting")]));
    await waitFor(() => expect(f.ipc.listServers).toHaveBeenCalledTimes(2));
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("ready");
  });
});
