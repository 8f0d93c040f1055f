import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { I18nProvider } from "./lib/i18n";
import { SettingsPage } from "./pages/SettingsPage";
import type { AppInfo } from "./lib/ipc";
import { bundleInfo, serverView } from "./test/render";
import { LiveViews, LiveViewsContext } from "./lib/mcpApps";

const invoke = vi.hoisted(() => vi.fn<(command: string, args?: unknown) => Promise<unknown>>(() => new Promise(() => {})));
vi.mock("@tauri-apps/api/core", () => ({ invoke, Channel: class {} }));
const listeners = vi.hoisted(() => new Map<string, (e: { payload: unknown }) => void>());
vi.mock("@tauri-apps/api/event", () => ({
  listen: vi.fn((event: string, handler: (e: { payload: unknown }) => void) => {
    listeners.set(event, handler);
    return Promise.resolve(() => {});
  }),
}));

const { App } = await import("./App");

afterEach(cleanup);

/** The app with the backend answering these commands (and never the others). */
function renderApp(answers: Record<string, unknown>) {
  invoke.mockImplementation((command: string) => (command in answers ? Promise.resolve(answers[command]) : new Promise(() => {})));
  render(
    <I18nProvider lang="en">
      <App />
    </I18nProvider>,
  );
}

const info: AppInfo = {
  version: "9.9.9",
  data_dir: "/tmp/pb",
  database: "/tmp/pb/patchbay.db",
  schema_version: 3,
  log_file: "/tmp/pb/logs/patchbay.log",
  keyring: { available: false, detail: "no session bus" },
};

/**
 * The app with one view on screen whose teardown ends on `release` (like a view's bridge, it is
 * asked once: a second teardown is the first); `remove` takes the view off the screen.
 */
function renderWithView() {
  const views = new LiveViews();
  let release = () => undefined as void;
  const torn = new Promise<void>((r) => (release = r));
  const remove = views.add("t1", () => torn);
  render(
    <I18nProvider lang="en">
      <LiveViewsContext.Provider value={views}>
        <App />
      </LiveViewsContext.Provider>
    </I18nProvider>,
  );
  return { release, remove };
}

describe("App shell", () => {
  it("navigates between chat and settings", async () => {
    render(
      <I18nProvider lang="en">
        <App />
      </I18nProvider>,
    );
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Chat");
    fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    // The settings page is loaded on first use.
    expect((await screen.findByRole("heading", { level: 1, name: "Settings" })).textContent).toBe("Settings");
    expect(screen.getByRole("button", { name: "Settings" }).getAttribute("aria-current")).toBe("page");
    fireEvent.click(screen.getByRole("button", { name: "Chat" }));
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Chat");
  });

  it("leaves the chat page once its views tore down, and the latest choice wins", async () => {
    const { release } = renderWithView();
    fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    await act(() => Promise.resolve());
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Chat");
    // Chat again before the view answered: the page stays, and stays when it answers.
    fireEvent.click(screen.getByRole("button", { name: "Chat" }));
    await act(async () => release());
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Chat");
    fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    expect((await screen.findByRole("heading", { level: 1, name: "Settings" })).textContent).toBe("Settings");
  });
});

describe("A newer version", () => {
  const found = { version: "1.1.0", current_version: "1.0.0", notes: "Faster", date: null, install: { kind: "here" } };

  it("found before the window loaded is shown, and Later puts it away", async () => {
    renderApp({ found_update: found });
    expect((await screen.findByTestId("update")).textContent).toContain("Patchbay 1.1.0 is available (you have 1.0.0)");
    fireEvent.click(screen.getByRole("button", { name: "Later" }));
    await waitFor(() => expect(screen.queryByTestId("update")).toBeNull());
  });

  it("found later is shown when the backend says so", async () => {
    renderApp({ found_update: null });
    await waitFor(() => expect(listeners.get("update_available")).toBeDefined());
    expect(screen.queryByTestId("update")).toBeNull();
    act(() => listeners.get("update_available")!({ payload: { ...found, version: "1.2.0" } }));
    expect((await screen.findByTestId("update")).textContent).toContain("Patchbay 1.2.0 is available");
  });
});

describe("Closing the window", () => {
  it("tears the views down first, then closes; with none on screen it closes at once", async () => {
    invoke.mockImplementation(() => new Promise(() => {}));
    const { release, remove } = renderWithView();
    const closes = () => invoke.mock.calls.filter(([command]) => command === "close_window").length;
    await act(async () => listeners.get("window_closing")!({ payload: null }));
    expect(closes()).toBe(0);
    await act(async () => release());
    expect(closes()).toBe(1);
    // Torn down and gone: the next request closes without waiting.
    remove();
    await act(async () => listeners.get("window_closing")!({ payload: null }));
    expect(closes()).toBe(2);
  });
});

describe("A server's request", () => {
  it("is asked on the settings page too, where a tool is being tested", async () => {
    renderApp({ list_providers: [], list_tools: [], list_conversations: [], take_opened: null });
    fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    await screen.findByRole("heading", { level: 1, name: "Settings" });
    const request = { kind: "elicitation", id: "e1", server: "everything", message: "What is your name?", requested_schema: { type: "object", properties: {} } };
    act(() => listeners.get("server_request")?.({ payload: request }));
    expect(screen.getByRole("dialog").textContent).toContain("What is your name?");
    fireEvent.click(screen.getByRole("button", { name: "Decline" }));
    expect(invoke).toHaveBeenCalledWith("respond_server_request", { id: "e1", response: { action: "decline" } });
  });
});

describe("The welcome", () => {
  it("sends a new user to the providers settings, and Settings in the menu opens on General", async () => {
    renderApp({ list_providers: [], list_tools: [], list_conversations: [], take_opened: null });
    fireEvent.click(await screen.findByRole("button", { name: "Add a provider" }));
    await screen.findByRole("heading", { level: 1, name: "Settings" });
    expect(screen.getByRole("tab", { name: "Providers" }).getAttribute("aria-selected")).toBe("true");
    fireEvent.click(screen.getByRole("button", { name: "Chat" }));
    fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    await screen.findByRole("heading", { level: 1, name: "Settings" });
    expect(screen.getByRole("tab", { name: "General" }).getAttribute("aria-selected")).toBe("true");
    invoke.mockImplementation(() => new Promise(() => {}));
  });

  it("opens the page of a server that failed", async () => {
    const servers = [serverView("fs", "ready"), serverView("fetch", "failed", "not found on PATH")];
    renderApp({ list_providers: [], list_tools: [], list_conversations: [], take_opened: null, list_servers: servers, server_presets: [] });
    fireEvent.click(await screen.findByRole("button", { name: "fetch failed: see why" }));
    await screen.findByRole("heading", { level: 1, name: "Settings" });
    expect(screen.getByRole("tab", { name: "MCP servers" }).getAttribute("aria-selected")).toBe("true");
    // Its page is open: its row is the active one.
    await waitFor(() => expect(document.querySelector('[data-server="fetch"]')?.className).toBe("card active"));
    expect(document.querySelector('[data-server="fs"]')?.className).toBe("card");
    invoke.mockImplementation(() => new Promise(() => {}));
  });
});

describe("Opening a bundle file", () => {
  it("shows its installer on the servers page when Patchbay was launched with it", async () => {
    const info = bundleInfo();
    renderApp({ take_opened: { kind: "bundle", path: "/home/ada/notes.mcpb" }, bundle_preview: info });
    const dialog = await screen.findByTestId("bundle-install");
    // Behind the dialog, hidden from screen readers while it is open.
    expect(screen.queryByRole("heading", { level: 1, name: "Settings" })).toBeNull();
    expect(screen.getByRole("heading", { level: 1, name: "Settings", hidden: true })).toBeTruthy();
    expect(screen.getByRole("tab", { name: "MCP servers", hidden: true }).getAttribute("aria-selected")).toBe("true");
    expect(dialog.textContent).toContain("Notes 1.0.0 · by Ada");
    expect(invoke).toHaveBeenCalledWith("bundle_preview", { path: "/home/ada/notes.mcpb", locale: "en-US" });
    invoke.mockImplementation(() => new Promise(() => {}));
  });
});

describe("Opening an install link", () => {
  it("shows its confirmation over the page, and a link that comes meanwhile waits its turn", async () => {
    const entry = (name: string) => ({
      name,
      status: "new",
      incoming: { name, transport: { type: "streamable_http", url: `https://${name}.example/mcp`, headers: {} }, enabled: true },
      diff: [],
      detail: null,
      secrets: [],
      environment: [],
      steering: [],
      policy: { kind: "remote", rate: {} },
    });
    const previews: Record<string, unknown> = {
      "patchbay://first": { format: "patchbay_link", warnings: [], entries: [entry("first")], inputs: [], removed_on_replace: [], providers: [] },
      "patchbay://second": { format: "patchbay_link", warnings: [], entries: [entry("second")], inputs: [], removed_on_replace: [], providers: [] },
    };
    invoke.mockImplementation((command: string, args?: unknown) => {
      if (command === "take_opened") return Promise.resolve({ kind: "link", link: "patchbay://first" });
      if (command === "import_preview") return Promise.resolve(previews[(args as { text: string }).text]);
      return new Promise(() => {});
    });
    render(
      <I18nProvider lang="en">
        <App />
      </I18nProvider>,
    );
    expect(await screen.findByRole("dialog", { name: "Add the MCP server first?" })).toBeTruthy();
    expect(screen.getByTestId("link-url").textContent).toBe("https://first.example/mcp");
    invoke.mockImplementation((command: string, args?: unknown) => {
      if (command === "take_opened") return Promise.resolve({ kind: "link", link: "patchbay://second" });
      if (command === "import_preview") return Promise.resolve(previews[(args as { text: string }).text]);
      return new Promise(() => {});
    });
    act(() => listeners.get("opened")?.({ payload: null }));
    await waitFor(() => expect(invoke).toHaveBeenCalledWith("take_opened", undefined));
    expect(screen.getByRole("dialog", { name: "Add the MCP server first?" })).toBeTruthy();
    fireEvent.click(document.querySelector("#link-close")!);
    expect(await screen.findByRole("dialog", { name: "Add the MCP server second?" })).toBeTruthy();
    invoke.mockImplementation(() => new Promise(() => {}));
  });
});

describe("SettingsPage", () => {
  it("shows app info from the backend", async () => {
    render(
      <I18nProvider lang="en">
        <SettingsPage ipc={{ appInfo: () => Promise.resolve(info) }} />
      </I18nProvider>,
    );
    expect((await screen.findByText("9.9.9")).id).toBe("app-version");
    expect(screen.getByText("unavailable: no session bus")).toBeTruthy();
  });

  it("shows a backend error as a readable sentence", async () => {
    const appInfo = () => Promise.reject({ kind: "database", message: "patchbay.db is damaged" });
    render(
      <I18nProvider lang="en">
        <SettingsPage ipc={{ appInfo }} />
      </I18nProvider>,
    );
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("The database cannot be opened. patchbay.db is damaged");
    expect(alert.textContent).not.toContain("{");
  });
});

describe("Chinese UI", () => {
  it("shows navigation and settings sections in Chinese", () => {
    render(
      <I18nProvider lang="zh">
        <App />
      </I18nProvider>,
    );
    fireEvent.click(screen.getByRole("button", { name: "设置" }));
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("设置");
    const tabs = screen.getAllByRole("tab").map((t) => t.textContent);
    expect(tabs).toEqual(["通用", "模型服务商", "MCP 服务器", "共享文件夹", "导入与导出", "知识库", "助手", "定时任务"]);
    expect(document.getElementById("language")).toBeTruthy();
    expect(document.documentElement.lang).toBe("zh-CN");
  });
});

describe("Settings tabs", () => {
  it("move with the arrow keys, Home and End", async () => {
    render(
      <I18nProvider lang="en">
        <App />
      </I18nProvider>,
    );
    fireEvent.click(screen.getByRole("button", { name: "Settings" }));
    const general = screen.getByRole("tab", { name: "General" });
    // Tab stops once on the list (Radix), which hands the focus to the selected tab.
    screen.getByRole("tablist").focus();
    expect(document.activeElement).toBe(general);
    // Radix moves the focus on the next tick; the focused tab is selected.
    fireEvent.keyDown(general, { key: "ArrowRight" });
    const providers = screen.getByRole("tab", { name: "Providers" });
    await waitFor(() => expect(document.activeElement).toBe(providers));
    expect(providers.getAttribute("aria-selected")).toBe("true");
    fireEvent.keyDown(providers, { key: "End" });
    await waitFor(() => expect(screen.getByRole("tab", { name: "Schedules" }).getAttribute("aria-selected")).toBe("true"));
    fireEvent.keyDown(document.activeElement as Element, { key: "ArrowRight" });
    await waitFor(() => expect(screen.getByRole("tab", { name: "General" }).getAttribute("aria-selected")).toBe("true"));
  });
});

describe("Links", () => {
  it("go to the backend to open in the browser; one it refuses says why over the page until dismissed", async () => {
    renderApp({ list_providers: [], list_tools: [], list_conversations: [], take_opened: null });
    invoke.mockImplementation((command: string, args?: unknown) => {
      if (command !== "open_link") return new Promise(() => {});
      const url = (args as { url: string }).url;
      return url.startsWith("https:") ? Promise.resolve(null) : Promise.reject({ kind: "invalid_input", message: `the link "${url}" is not opened` });
    });
    const page = document.createElement("p");
    page.innerHTML = '<a href="https://example.com/a" target="_blank">web</a> <a href="xmpp:x@example.com" target="_blank">chat</a>';
    document.body.append(page);
    const web = new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 });
    page.querySelector("a")!.dispatchEvent(web);
    expect(web.defaultPrevented).toBe(true);
    expect(invoke).toHaveBeenCalledWith("open_link", { url: "https://example.com/a" });
    expect(screen.queryByTestId("link-error")).toBeNull();
    fireEvent.click(page.querySelectorAll("a")[1]!);
    expect((await screen.findByTestId("link-error")).textContent).toContain('the link "xmpp:x@example.com" is not opened');
    // A Radix toast in its labelled region, the top layer: Esc closes it and only it (the event is
    // marked taken, so the composer does not also stop an answer).
    expect(screen.getByRole("region", { name: "Notifications (F8)" })).toBeTruthy();
    const elsewhere = vi.fn();
    window.addEventListener("keydown", elsewhere);
    const esc = new KeyboardEvent("keydown", { key: "Escape", bubbles: true, cancelable: true });
    document.body.dispatchEvent(esc);
    expect(esc.defaultPrevented).toBe(true);
    // No other handler (the composer's stop, full screen's exit, a tooltip's or a dialog's) sees it.
    expect(elsewhere).not.toHaveBeenCalled();
    window.removeEventListener("keydown", elsewhere);
    await waitFor(() => expect(screen.queryByTestId("link-error")).toBeNull());
    // F8 takes the focus to it; Esc closes it and gives the focus back.
    const back = screen.getByRole("button", { name: "Settings" });
    back.focus();
    fireEvent.click(page.querySelectorAll("a")[1]!);
    await screen.findByTestId("link-error");
    fireEvent.keyDown(document.activeElement!, { key: "F8", code: "F8" });
    expect(document.activeElement).toBe(screen.getByRole("region", { name: "Notifications (F8)" }).querySelector("ol"));
    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("link-error")).toBeNull());
    expect(document.activeElement).toBe(back);
    // A second error while one is shown is a new toast, announced again; Dismiss closes it.
    fireEvent.click(page.querySelectorAll("a")[1]!);
    const first = await screen.findByTestId("link-error");
    fireEvent.click(page.querySelectorAll("a")[1]!);
    await waitFor(() => expect(screen.getByTestId("link-error")).not.toBe(first));
    fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    await waitFor(() => expect(screen.queryByTestId("link-error")).toBeNull());
    page.remove();
  });
});
