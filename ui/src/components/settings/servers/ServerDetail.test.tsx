// A server's page: its policy and refused hosts, who it is, its instructions and
// icons, copying its entry, its logs and log level, and the doctor.
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../../../test/render";
import { tool, fake, view } from "../../../test/fakeServers";
import { ServersSettings } from "./ServersSettings";
import { expectAccessible } from "../../../test/axe";

afterEach(cleanup);

describe("ServersSettings", () => {
  it("shows the policy in one line, and a refused host with a button that allows it", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} initialSelected="files" />);
    expect((await screen.findByTestId("server-policy")).textContent).toBe("normal: reads home (not its secrets) · writes nothing · network: any");
    expect(screen.queryByTestId("blocked-connection")).toBeNull();
    await f.block({ server: "files", host: "evil.example.com" });
    const line = await screen.findByTestId("blocked-connection");
    expect(line.textContent).toContain("blocked a connection to evil.example.com: not in the allowed domains");
    fireEvent.click(within(line).getByRole("button", { name: "Allow this domain" }));
    expect(f.ipc.allowDomain).toHaveBeenCalledWith("files", "evil.example.com");
    await waitFor(() => expect(screen.getByTestId("server-policy").textContent).toContain("network: evil.example.com"));
    expect(screen.queryByTestId("blocked-connection")).toBeNull();
  });

  it("words the policy line in the window's language", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} initialSelected="files" />, "zh");
    expect((await screen.findByTestId("server-policy")).textContent).toBe("普通 · 可读：主目录（机密位置除外） · 可写：无 · 网络：不限");
  });

  it("says who a ready server is, how it is reached and what it offers, and names its tools by their titles", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    // The row says who the server is too.
    expect(screen.getByTestId("server-identity").textContent).toBe("Files 1.4.2");
    // And its security level, the whole policy in its tooltip.
    const level = screen.getByTestId("server-level");
    expect([level.textContent, level.getAttribute("title")]).toEqual(["normal", "normal: reads home (not its secrets) · writes nothing · network: any"]);
    const shown = screen.getByTestId("server-about");
    expect(shown.querySelector("strong")?.textContent).toBe("Files");
    expect(shown.textContent).toContain("files-server");
    expect(shown.textContent).toContain("version 1.4.2");
    expect(shown.textContent).toContain("Reads and writes your files.");
    await expectAccessible();
    const website = within(shown).getByTestId("server-website");
    expect([website.getAttribute("href"), website.getAttribute("target")]).toEqual(["https://files.example.com/", "_blank"]);
    expect(within(shown).getByTestId("server-reached").textContent).toBe("MCP 2025-06-18 over stdio · process 4711 · /usr/local/bin/files-server");
    // Known capabilities in words; an extension by its id.
    expect(within(shown).getByTestId("server-offers").textContent).toBe("Offers: toolstool list updatesresourceswatching resourcesio.example/apps");
    const row = (await within(screen.getByTestId("tools-table")).findByText("Read a file")).closest("tr")!;
    expect(row.querySelector("code")?.textContent).toBe("read_file");
    // A server that is not ready says nothing of itself.
    await f.status({ server: "files", state: "failed", tool_count: 0, error: "exited" });
    await waitFor(() => expect(screen.queryByTestId("server-about")).toBeNull());
    expect(screen.queryByTestId("server-identity")).toBeNull();
  });

  it("shows what the server says about using it, the text the model reads with its tools", async () => {
    const f = fake([view("ready", "Call list_files before read_file.")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const shown = screen.getByTestId("server-instructions");
    expect(shown.textContent).toContain("The server's instructions (the model reads them with its tools)");
    expect(shown.textContent).toContain("Call list_files before read_file.");
  });

  it("says when the server's health was last checked, and checks it again on demand", async () => {
    const failedAt = Date.UTC(2026, 10, 28, 5, 0);
    const f = fake([{ ...view("ready"), health: { at_ms: failedAt, round_trip_ms: 10000, error: "timed out after 10s" } }]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(within(await screen.findByTestId("server-row")).getByRole("button", { name: "files" }));
    const health = await screen.findByTestId("server-health");
    const time = (ms: number) => new Date(ms).toLocaleTimeString();
    expect(health.textContent).toContain(`Health checked at ${time(failedAt)}: no answer (timed out after 10s).`);
    fireEvent.click(within(health).getByRole("button", { name: "Check now" }));
    expect(f.ipc.checkServerHealth).toHaveBeenCalledWith("files");
    await waitFor(() =>
      expect(health.textContent).toContain(`Health checked at ${time(Date.UTC(2026, 10, 28, 5, 30))}: answered a ping in 4 ms.`),
    );
  });

  it("cannot check a server that is not running, and says it has not been checked yet", async () => {
    const f = fake([view("starting")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(within(await screen.findByTestId("server-row")).getByRole("button", { name: "files" }));
    const health = await screen.findByTestId("server-health");
    expect(health.textContent).toContain("Health not checked yet");
    expect((within(health).getByRole("button", { name: "Check now" }) as HTMLButtonElement).disabled).toBe(true);
  });

  it("shows the icons a server gives itself and its tools, one for each theme", async () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    const f = fake([{ ...view("ready"), icons: [{ src: png, theme: null }] }]);
    f.ipc.listTools = vi.fn(() =>
      Promise.resolve([{ ...tool, icons: [{ src: "data:image/gif;base64,R0lG", theme: "light" as const }, { src: png, theme: "dark" as const }] }]),
    );
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    const own = row.querySelector("img.mcp-icon");
    expect([own?.getAttribute("src"), own?.getAttribute("data-for"), own?.getAttribute("alt")]).toEqual([png, "any", ""]);
    fireEvent.click(within(row).getByRole("button", { name: "files" }));
    const table = await screen.findByTestId("tools-table");
    await waitFor(() => expect(table.querySelectorAll("img.mcp-icon")).toHaveLength(2));
    const drawn = [...table.querySelectorAll("img.mcp-icon")].map((i) => [i.getAttribute("data-for"), i.getAttribute("src")]);
    expect(drawn).toEqual([["light", "data:image/gif;base64,R0lG"], ["dark", png]]);
  });

  it("copies a server's entry in the Claude Desktop shape", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("button", { name: "Copy as JSON" }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('{"mcpServers": {"files": {}}}'));
    expect(f.ipc.exportServer).toHaveBeenCalledWith("files");
    expect(await screen.findByRole("button", { name: "Copied" })).toBeTruthy();
  });

  it("sets the level of the messages a server that logs sends", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Logs" }));
    const level = screen.getByLabelText("Messages the server sends, from") as HTMLSelectElement;
    expect(level.value).toBe("info");
    fireEvent.change(level, { target: { value: "debug" } });
    await waitFor(() => expect(f.ipc.setServerLogLevel).toHaveBeenCalledWith("files", "debug"));
  });

  it("names the doctor's checks, hints and policy in the window's language", async () => {
    const f = fake([{ ...view("failed"), status: { server: "files", state: "failed", tool_count: 0, error: "not found" } }]);
    f.ipc.serverDoctor = vi.fn(() =>
      Promise.resolve({
        server: "files",
        checks: [{ name: "command", ok: false, detail: "npx not found on PATH", hint: "install it, or give its absolute path as the command" }],
        policy: { kind: "local" as const, level: "strict" as const, read: [], write: [], network: "off" as const, rate: {} },
      }),
    );
    renderIn(<ServersSettings ipc={f.ipc} />, "zh");
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const report = await screen.findByTestId("doctor-report");
    expect(report.textContent).toBe("✓ 安全策略: 严格 · 可读：仅限自身文件 · 可写：无 · 网络：关闭✗ 命令: npx not found on PATH请安装它，或把命令写成绝对路径");
  });

  it("opens a failed server on its doctor report and streams its logs", async () => {
    const f = fake([{ ...view("failed"), status: { server: "files", state: "failed", tool_count: 0, error: "exited with code 127" } }]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    expect((await screen.findByTestId("server-error")).textContent).toBe("exited with code 127");
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const report = await screen.findByTestId("doctor-report");
    expect(report.textContent).toContain("npx not found");
    expect(report.textContent).toContain("Install Node.js");
    // The server's own lines keep their line breaks.
    expect(report.querySelector("pre.stderr")?.textContent).toBe("Error: boom\n    at main.js:3");
    fireEvent.click(screen.getByRole("tab", { name: "Logs" }));
    await waitFor(() => expect(screen.getByTestId("server-logs").textContent).toBe("booting"));
    f.log({ server: "files", line: "listening" });
    f.log({ server: "other", line: "not mine" });
    expect(screen.getByTestId("server-logs").textContent).toBe("booting\nlistening");
    fireEvent.click(screen.getByRole("button", { name: "Restart" }));
    expect(f.ipc.restartServer).toHaveBeenCalledWith("files");
    expect(screen.queryByLabelText("Messages the server sends, from"), "a failed server has no level to set").toBeNull();
  });
});
