import { act, cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { GeneralSettings, ShortcutStatus } from "../../lib/ipc";
import { setZoom } from "../../lib/zoom";
import { renderIn } from "../../test/render";
import { Assistants, type AssistantsIpc } from "./Assistants";
import { General, type GeneralIpc } from "./General";
import { expectAccessible } from "../../test/axe";

afterEach(cleanup);

const info = { version: "1.0.0", data_dir: "/d", database: "/d/p.db", schema_version: 2, keyring: { available: true, detail: "mock" }, log_file: "/d/logs/patchbay.log" };

const stored: GeneralSettings = { theme: "system", language: "en", data_dir: "/d", auto_title: true, restore_pending: false, proxy: { mode: "environment" }, tool_share_percent: 10, client_metadata_url: "", keep_in_tray: false, quick_ask_shortcut: "Ctrl+Alt+Space", check_updates: true };

/** A backend for the General page; `over` replaces some of its calls. */
function fake(over: Partial<GeneralIpc> = {}): GeneralIpc {
  return {
    appInfo: () => Promise.resolve(info),
    openLogFolder: vi.fn(() => Promise.resolve()),
    pickDataDir: vi.fn(() => Promise.resolve(null)),
    getSettings: vi.fn(() => Promise.resolve(stored)),
    saveSettings: vi.fn(() => Promise.resolve()),
    setZoom: vi.fn(() => Promise.resolve()),
    backupData: vi.fn(() => Promise.resolve("/backups/patchbay-backup.db")),
    restoreData: vi.fn(() => Promise.resolve("/backups/old.db")),
    policySettings: vi.fn(() => Promise.resolve({ defaults: { level: "normal" as const, turn_tool_calls: 50 }, offered: ["strict" as const, "normal" as const, "permissive" as const] })),
    setPolicyDefaults: vi.fn(() => Promise.resolve()),
    checkUpdate: vi.fn(() => Promise.resolve(null)),
    installUpdate: vi.fn(() => Promise.resolve()),
    restartApp: vi.fn(() => Promise.resolve()),
    openLink: vi.fn(() => Promise.resolve()),
    quickAskShortcutStatus: vi.fn(() => Promise.resolve({ state: "held" as const })),
    onQuickAskShortcut: vi.fn(() => Promise.resolve(() => undefined)),
    retryQuickAskShortcut: vi.fn(() => Promise.resolve()),
    ...over,
  };
}

describe("General", () => {
  it("saves the default security level (of those offered) and the tool calls per turn", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />);
    const level = (await screen.findByLabelText("Security level of servers that set none")) as HTMLSelectElement;
    expect([...level.options].map((o) => o.value)).toEqual(["strict", "normal", "permissive"]);
    expect(level.value).toBe("normal");
    fireEvent.change(level, { target: { value: "strict" } });
    fireEvent.change(screen.getByLabelText(/^Tool calls per turn/), { target: { value: "20" } });
    fireEvent.click(document.getElementById("policy-defaults-save")!);
    await waitFor(() => expect(ipc.setPolicyDefaults).toHaveBeenCalledWith({ level: "strict", turn_tool_calls: 20 }));
  });

  it("switches theme and language", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />);
    expect(await screen.findByText("available (mock)")).toBeTruthy();
    await expectAccessible();
    fireEvent.change(screen.getByLabelText("Theme"), { target: { value: "dark" } });
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(localStorage.getItem("patchbay.theme")).toBe("dark");
    fireEvent.change(screen.getByLabelText("Language"), { target: { value: "zh" } });
    expect(await screen.findByText("主题")).toBeTruthy();
    localStorage.clear();
  });

  it("shows the log file and opens its folder; a folder that cannot be opened says why", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />);
    const log = await screen.findByText(/\/d\/logs\/patchbay\.log/);
    fireEvent.click(screen.getByRole("button", { name: "Open its folder" }));
    expect(ipc.openLogFolder).toHaveBeenCalled();
    expect(log.textContent).toContain("/d/logs/patchbay.log");
    cleanup();
    const failing = fake({ openLogFolder: vi.fn(() => Promise.reject({ kind: "internal", message: "cannot open /d/logs: no file manager" })) });
    renderIn(<General ipc={failing} />);
    fireEvent.click(await screen.findByRole("button", { name: "Open its folder" }));
    expect((await screen.findByRole("alert")).textContent).toContain("no file manager");
  });

  it("zooms the page from its select, which also follows a zoom made with the keyboard", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />);
    const select = (await screen.findByLabelText(/^Zoom/)) as HTMLSelectElement;
    expect(select.value).toBe("1");
    fireEvent.change(select, { target: { value: "1.25" } });
    expect(ipc.setZoom).toHaveBeenCalledWith(1.25);
    expect(localStorage.getItem("patchbay.zoom")).toBe("1.25");
    await act(() => setZoom(0.9, () => Promise.resolve()));
    expect(select.value).toBe("0.9");
    localStorage.clear();
  });

  it("shows why the page could not be zoomed", async () => {
    const ipc = fake({ setZoom: vi.fn(() => Promise.reject({ kind: "invalid_input", message: "zoom 9 is not between 0.25 and 5" })) });
    renderIn(<General ipc={ipc} />);
    fireEvent.change(await screen.findByLabelText(/^Zoom/), { target: { value: "2" } });
    expect((await screen.findByRole("alert")).textContent).toContain("zoom 9 is not between 0.25 and 5");
    localStorage.clear();
  });

  it("moves the data folder after a restart", async () => {
    const ipc = fake({ pickDataDir: vi.fn(() => Promise.resolve("/new")) });
    renderIn(<General ipc={ipc} />);
    fireEvent.click(screen.getByRole("button", { name: "Change data folder…" }));
    expect(await screen.findByText("Patchbay will use /new after a restart.")).toBeTruthy();
    expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, data_dir: "/new" });
  });

  it("backs up, stages a restore for the next start, and says so", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />);
    fireEvent.click(screen.getByRole("button", { name: "Back up now…" }));
    expect((await screen.findByTestId("backup-note")).textContent).toBe("Backed up to /backups/patchbay-backup.db.");
    fireEvent.click(screen.getByRole("button", { name: "Restore from a backup…" }));
    await waitFor(() => expect(screen.getByTestId("backup-note").textContent).toContain("/backups/old.db will be restored when Patchbay next starts"));
  });

  it("says a staged restore waits, and shows why a file cannot be restored from", async () => {
    const ipc = fake({
      getSettings: vi.fn(() => Promise.resolve({ ...stored, restore_pending: true })),
      restoreData: vi.fn(() => Promise.reject({ kind: "invalid_input", message: "/x/notes.txt is not a usable Patchbay database" })),
    });
    renderIn(<General ipc={ipc} />);
    expect((await screen.findByTestId("backup-note")).textContent).toBe("A backup will be restored when Patchbay next starts.");
    fireEvent.click(screen.getByRole("button", { name: "Restore from a backup…" }));
    expect((await screen.findByRole("alert")).textContent).toContain("is not a usable Patchbay database");
  });

  it("turns off conversation titles written by the model", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />);
    const box = screen.getByRole("checkbox", { name: /Let the model name new conversations/ }) as HTMLInputElement;
    await waitFor(() => expect(box.disabled).toBe(false));
    expect(box.checked).toBe(true);
    fireEvent.click(box);
    await waitFor(() => expect(box.checked).toBe(false));
    expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, auto_title: false });
  });

  it("saves the window's language with the other settings, never the one it loaded", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />, "zh");
    const box = screen.getByRole("checkbox", { name: /由模型为新对话命名/ }) as HTMLInputElement;
    await waitFor(() => expect(box.disabled).toBe(false));
    fireEvent.click(box);
    await waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, auto_title: false, language: "zh" }));
  });

  it("saves a client ID metadata document's address trimmed, and shows the stored one again when the core refuses it", async () => {
    const ipc = fake();
    ipc.saveSettings = vi
      .fn<GeneralIpc["saveSettings"]>()
      .mockResolvedValueOnce(undefined)
      .mockRejectedValueOnce({ kind: "invalid_input", message: 'client ID metadata document "http://x/c.json" must be an https URL' });
    // What the backend holds: the first save's address, after it.
    ipc.getSettings = vi.fn<GeneralIpc["getSettings"]>().mockResolvedValueOnce(stored).mockResolvedValue({ ...stored, client_metadata_url: "https://example.com/patchbay/client.json" });
    renderIn(<General ipc={ipc} />);
    const field = () => screen.getByLabelText("Client ID metadata document (sign-in to remote servers)") as HTMLInputElement;
    await waitFor(() => expect(field().disabled).toBe(false));
    fireEvent.change(field(), { target: { value: " https://example.com/patchbay/client.json " } });
    fireEvent.blur(field());
    const url = "https://example.com/patchbay/client.json";
    await waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, client_metadata_url: url }));
    fireEvent.change(field(), { target: { value: "http://x/c.json" } });
    fireEvent.blur(field());
    expect((await screen.findByRole("alert")).textContent).toContain("must be an https URL");
    await waitFor(() => expect(field().value).toBe(url));
  });

  it("saves the tools' share of the context, and shows the stored one again when the core refuses it", async () => {
    const ipc = fake();
    ipc.saveSettings = vi
      .fn<GeneralIpc["saveSettings"]>()
      .mockResolvedValueOnce(undefined)
      .mockRejectedValueOnce({ kind: "invalid_input", message: "the tools' share of the context window is 0%: it must be between 1% and 100%" });
    ipc.getSettings = vi.fn<GeneralIpc["getSettings"]>().mockResolvedValueOnce(stored).mockResolvedValue({ ...stored, tool_share_percent: 25 });
    renderIn(<General ipc={ipc} />);
    // Looked up each time: the field is made anew when the stored value changes.
    const share = () => screen.getByLabelText("Tools may take up to this share of the model's context (%)") as HTMLInputElement;
    await waitFor(() => expect(share().disabled).toBe(false));
    expect(share().value).toBe("10");
    fireEvent.change(share(), { target: { value: "25" } });
    fireEvent.blur(share());
    await waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, tool_share_percent: 25 }));
    fireEvent.change(share(), { target: { value: "0" } });
    fireEvent.blur(share());
    expect((await screen.findByRole("alert")).textContent).toContain("must be between 1% and 100%");
    await waitFor(() => expect(share().value).toBe("25"));
  });

  it("keeps Patchbay in the tray when asked, and saves the quick-ask shortcut, showing what the desktop said of it", async () => {
    const ipc = fake();
    const refused = "the quick-ask shortcut Super+K is saved, but the desktop refused it (HotKey already registered). Bind the command `patchbay-desktop --quick-ask` to a key in your desktop's keyboard settings instead";
    ipc.saveSettings = vi
      .fn<GeneralIpc["saveSettings"]>()
      .mockResolvedValueOnce(undefined)
      .mockRejectedValueOnce({ kind: "invalid_input", message: refused });
    ipc.getSettings = vi
      .fn<GeneralIpc["getSettings"]>()
      .mockResolvedValueOnce(stored)
      .mockResolvedValue({ ...stored, keep_in_tray: true, quick_ask_shortcut: "Super+K" });
    renderIn(<General ipc={ipc} />);
    const keep = () => screen.getByLabelText(/^Closing the window keeps Patchbay in the tray/) as HTMLInputElement;
    await waitFor(() => expect(keep().disabled).toBe(false));
    expect(keep().checked).toBe(false);
    fireEvent.click(keep());
    await waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, keep_in_tray: true }));
    const shortcut = () => screen.getByLabelText("Quick-ask shortcut") as HTMLInputElement;
    expect(shortcut().value).toBe("Ctrl+Alt+Space");
    fireEvent.change(shortcut(), { target: { value: " Super+K " } });
    fireEvent.blur(shortcut());
    await waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, keep_in_tray: true, quick_ask_shortcut: "Super+K" }));
    expect((await screen.findByRole("alert")).textContent).toContain("patchbay-desktop --quick-ask");
    // Saved all the same: the field shows what the backend holds.
    await waitFor(() => expect(shortcut().value).toBe("Super+K"));
    expect(keep().checked).toBe(true);
  });

  it("shows how the desktop's portal holds the quick-ask shortcut as it answers", async () => {
    let tell: (s: ShortcutStatus) => void = () => undefined;
    const ipc = fake({
      quickAskShortcutStatus: vi.fn(() => Promise.resolve({ state: "waiting" as const })),
      onQuickAskShortcut: vi.fn((h: (s: ShortcutStatus) => void) => {
        tell = h;
        return Promise.resolve(() => undefined);
      }),
    });
    renderIn(<General ipc={ipc} />);
    const status = () => document.getElementById("quick-ask-shortcut-status");
    await waitFor(() => expect(status()?.textContent).toContain("Waiting for the desktop"));
    act(() => tell({ state: "desktop", trigger: "Ctrl+Alt+J" }));
    await waitFor(() => expect(status()?.textContent).toContain("Your desktop holds this shortcut as Ctrl+Alt+J"));
    act(() => tell({ state: "desktop", trigger: null }));
    await waitFor(() => expect(status()?.textContent).toContain("with no key yet"));
    act(() => tell({ state: "unbound", why: "the desktop's shortcut dialog was cancelled" }));
    await waitFor(() => expect(status()?.dataset.state).toBe("unbound"));
    expect(status()?.textContent).toContain("the desktop's shortcut dialog was cancelled");
    // Asked again on the user's word.
    fireEvent.click(screen.getByRole("button", { name: "Try again" }));
    expect(ipc.retryQuickAskShortcut).toHaveBeenCalledTimes(1);
    // Held by Patchbay itself, or none: nothing to say beyond the hint (the live region stays, empty).
    act(() => tell({ state: "held" }));
    await waitFor(() => expect(status()?.textContent).toBe(""));
    expect(screen.getByLabelText("Quick-ask shortcut").getAttribute("aria-describedby")).toContain("quick-ask-shortcut-status");
  });

  it("switches the look for updates off, and looks now: up to date, then a newer version to install", async () => {
    const ipc = fake();
    renderIn(<General ipc={ipc} />);
    const on = (await screen.findByLabelText("Look for a newer version at start and once a day")) as HTMLInputElement;
    await waitFor(() => expect(on.disabled).toBe(false));
    expect(on.checked).toBe(true);
    fireEvent.click(on);
    await waitFor(() => expect(ipc.saveSettings).toHaveBeenCalledWith({ ...stored, check_updates: false }));
    fireEvent.click(screen.getByRole("button", { name: "Check now" }));
    expect((await screen.findByTestId("up-to-date")).textContent).toBe("Patchbay is up to date.");
    ipc.checkUpdate = vi.fn(() => Promise.resolve({ version: "1.1.0", current_version: "1.0.0", notes: "Faster search", date: null, install: { kind: "here" as const } }));
    fireEvent.click(screen.getByRole("button", { name: "Check now" }));
    expect((await screen.findByTestId("update")).textContent).toContain("Patchbay 1.1.0 is available (you have 1.0.0)");
    expect(screen.getByRole("button", { name: "Install" })).toBeTruthy();
  });

  it("saves a custom proxy, and shows the core's reason when it refuses one", async () => {
    const saveSettings = vi
      .fn<GeneralIpc["saveSettings"]>()
      .mockRejectedValueOnce({ kind: "invalid_input", message: 'proxy "proxy.example.com:3128": relative URL without a base' })
      .mockResolvedValue(undefined);
    const ipc = fake({ saveSettings });
    renderIn(<General ipc={ipc} />);
    fireEvent.change(await screen.findByLabelText(/^Proxy for model providers/), { target: { value: "custom" } });
    fireEvent.change(screen.getByLabelText(/^Proxy URL/), { target: { value: "proxy.example.com:3128" } });
    fireEvent.click(document.getElementById("proxy-save")!);
    expect(await screen.findByText(/relative URL without a base/)).toBeTruthy();
    expect(screen.queryByText("Saved.")).toBeNull();
    fireEvent.change(screen.getByLabelText(/^Proxy URL/), { target: { value: " http://127.0.0.1:7890 " } });
    fireEvent.click(document.getElementById("proxy-save")!);
    expect(await screen.findByText("Saved.")).toBeTruthy();
    expect(saveSettings).toHaveBeenLastCalledWith({ ...stored, proxy: { mode: "custom", url: "http://127.0.0.1:7890" } });
    expect(screen.queryByText(/relative URL without a base/)).toBeNull();
  });

  it("shows a proxy's password as dots, never in the URL, and saves it joined back", async () => {
    const saveSettings = vi.fn<GeneralIpc["saveSettings"]>().mockResolvedValue(undefined);
    const withLogin: GeneralSettings = { ...stored, proxy: { mode: "custom", url: "http://ann:s3cr%40t@proxy.example:3128/" } };
    const ipc = fake({ saveSettings, getSettings: vi.fn(() => Promise.resolve(withLogin)) });
    renderIn(<General ipc={ipc} />);
    const url = (await screen.findByLabelText(/^Proxy URL/)) as HTMLInputElement;
    expect(url.value).toBe("http://ann@proxy.example:3128/");
    const password = screen.getByLabelText("Proxy password") as HTMLInputElement;
    expect([password.type, password.value]).toEqual(["password", "s3cr%40t"]);
    expect(document.body.textContent).not.toContain("s3cr");
    fireEvent.click(document.getElementById("proxy-save")!);
    await screen.findByText("Saved.");
    expect(saveSettings).toHaveBeenLastCalledWith({ ...withLogin, proxy: { mode: "custom", url: "http://ann:s3cr%40t@proxy.example:3128/" } });
    // Typed into the URL, the password moves to its field at once.
    fireEvent.change(url, { target: { value: "http://bob:hunter2@10.0.0.1:8080" } });
    expect(url.value).toBe("http://bob@10.0.0.1:8080");
    expect(password.value).toBe("hunter2");
  });
});

describe("Assistants", () => {
  it("creates a preset with prompt, sampling settings, reasoning effort, servers and knowledge-base mode", async () => {
    const ipc: AssistantsIpc = {
      listAssistants: vi.fn(() => Promise.resolve([])),
      saveAssistant: vi.fn((a) => Promise.resolve(a)),
      deleteAssistant: vi.fn(),
    };
    renderIn(<Assistants ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "New assistant" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "Coder" } });
    fireEvent.change(screen.getByLabelText("System prompt"), { target: { value: "You write Rust." } });
    fireEvent.change(screen.getByLabelText("Temperature"), { target: { value: "0.2" } });
    fireEvent.change(screen.getByLabelText("MCP servers (comma-separated)"), { target: { value: "files, git" } });
    expect(screen.queryByTestId("assistant-knowledge-limits")).toBeNull();
    fireEvent.change(screen.getByLabelText("Knowledge base"), { target: { value: "always" } });
    // Citing assistants say how much context they add.
    fireEvent.change(screen.getByLabelText("Passages at most"), { target: { value: "3" } });
    fireEvent.change(screen.getByLabelText("Minimum relevance (0–1)"), { target: { value: "0.5" } });
    fireEvent.change(screen.getByLabelText("Reasoning effort (thinking models)"), { target: { value: "high" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(ipc.saveAssistant).toHaveBeenCalledWith(
        expect.objectContaining({ name: "Coder", system_prompt: "You write Rust.", temperature: 0.2, servers: ["files", "git"], kb_mode: "always", top_p: null, reasoning: "high", knowledge: { top_k: 3, min_relevance: 0.5, max_tokens: 2000 } }),
      ),
    );
  });
});
