import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../../test/render";
import { Assistants, type AssistantsIpc } from "./Assistants";
import { General, type GeneralIpc } from "./General";

afterEach(cleanup);

const info = { version: "1.0.0", data_dir: "/d", database: "/d/p.db", schema_version: 2, keyring: { available: true, detail: "mock" } };

describe("General", () => {
  it("switches theme and language", async () => {
    const ipc: GeneralIpc = {
      appInfo: () => Promise.resolve(info),
      pickDataDir: vi.fn(() => Promise.resolve(null)),
      getSettings: vi.fn(),
      saveSettings: vi.fn(),
    };
    renderIn(<General ipc={ipc} />);
    expect(await screen.findByText("available (mock)")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Theme"), { target: { value: "dark" } });
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(localStorage.getItem("patchbay.theme")).toBe("dark");
    fireEvent.change(screen.getByLabelText("Language"), { target: { value: "zh" } });
    expect(await screen.findByText("主题")).toBeTruthy();
    localStorage.clear();
  });

  it("moves the data folder after a restart", async () => {
    const ipc: GeneralIpc = {
      appInfo: () => Promise.resolve(info),
      pickDataDir: vi.fn(() => Promise.resolve("/new")),
      getSettings: vi.fn(() => Promise.resolve({ theme: "system" as const, language: "en" as const, data_dir: "/d" })),
      saveSettings: vi.fn(() => Promise.resolve()),
    };
    renderIn(<General ipc={ipc} />);
    fireEvent.click(screen.getByRole("button", { name: "Change data folder…" }));
    expect(await screen.findByText("Patchbay will use /new after a restart.")).toBeTruthy();
    expect(ipc.saveSettings).toHaveBeenCalledWith({ theme: "system", language: "en", data_dir: "/new" });
  });
});

describe("Assistants", () => {
  it("creates a preset with prompt, sampling settings, servers and knowledge-base mode", async () => {
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
    fireEvent.change(screen.getByLabelText("Knowledge base"), { target: { value: "always" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(ipc.saveAssistant).toHaveBeenCalledWith(
        expect.objectContaining({ name: "Coder", system_prompt: "You write Rust.", temperature: 0.2, servers: ["files", "git"], kb_mode: "always", top_p: null }),
      ),
    );
  });
});
