import { act, cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KbEmbeddings, KbProgress, KbShare } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { KnowledgeBase, type KbIpc } from "./KnowledgeBase";

afterEach(cleanup);

const NOT_SHARED: KbShare = { settings: { enabled: false, address: "127.0.0.1:8765", allow_remote: false }, url: null, sse_url: null, error: null, log: [] };
const OFF: KbEmbeddings = { kind: "off", provider: null, base_url: null, model: null, model_dir: null, english_only: false };

function fake() {
  let progress: (p: KbProgress) => void = () => undefined;
  const ipc: KbIpc = {
    kbStatus: vi.fn(() => Promise.resolve([{ path: "/docs", documents: 4, chunks: 40, state: "idle" as const, progress: null, error: null }])),
    kbPickFolder: vi.fn(() => Promise.resolve("/picked")),
    kbAddFolder: vi.fn(() => Promise.resolve()),
    kbRemoveFolder: vi.fn(() => Promise.resolve()),
    kbReindex: vi.fn(() => Promise.resolve()),
    kbDocuments: vi.fn(() => Promise.resolve([{ path: "/docs/a.md", title: "a.md", chunks: 7 }])),
    kbSearch: vi.fn(() => Promise.resolve([{ document: "a.md", path: "/docs/a.md", score: 0.9123, relevance: 0.8, text: "Patchbay hosts MCP servers.", marks: [[0, 8] as [number, number]] }])),
    kbEmbeddings: vi.fn(() => Promise.resolve(OFF)),
    kbSetEmbeddings: vi.fn(() => Promise.resolve(OFF)),
    listProviders: vi.fn(() => Promise.resolve([])),
    kbModels: vi.fn(() => Promise.resolve({ hub: "https://huggingface.co", hub_setting: null, models: [] })),
    kbGetModel: vi.fn(() => Promise.resolve()),
    kbCancelModel: vi.fn(() => Promise.resolve()),
    kbSetModelHub: vi.fn(() => Promise.resolve({ hub: "https://huggingface.co", hub_setting: null, models: [] })),
    onKbModelProgress: vi.fn(() => Promise.resolve(() => undefined)),
    kbShare: vi.fn(() => Promise.resolve(NOT_SHARED)),
    kbSetShare: vi.fn(() => Promise.resolve(NOT_SHARED)),
    kbShareNewToken: vi.fn(() => Promise.resolve(NOT_SHARED)),
    kbShareConfig: vi.fn(() => Promise.resolve("{}")),
    onKbShareChanged: vi.fn(() => Promise.resolve(() => undefined)),
    kbSources: vi.fn(() => Promise.resolve([])),
    kbSourceCandidates: vi.fn(() => Promise.resolve([])),
    kbPutSource: vi.fn(() => Promise.resolve([])),
    kbRemoveSource: vi.fn(() => Promise.resolve([])),
    kbPreviewSource: vi.fn(() => Promise.resolve({ fields: [], answer: "" })),
    kbTrySource: vi.fn(() => Promise.resolve([])),
    onKbProgress: vi.fn((h: (p: KbProgress) => void) => {
      progress = h;
      return Promise.resolve(() => undefined);
    }),
  };
  return { ipc, progress: (p: KbProgress) => act(() => progress(p)) };
}

describe("KnowledgeBase", () => {
  it("shows folders with counts and a progress bar while indexing", async () => {
    const f = fake();
    renderIn(<KnowledgeBase ipc={f.ipc} />);
    expect(await screen.findByText("4 documents · 40 chunks")).toBeTruthy();
    expect(screen.queryByTestId("kb-progress")).toBeNull();
    f.progress({ folder: "/docs", done: 3, total: 10 });
    const bar = screen.getByTestId("kb-progress") as HTMLProgressElement;
    expect(bar.value).toBe(3);
    expect(bar.max).toBe(10);
    expect(screen.getByRole("button", { name: "Re-index" })).toHaveProperty("disabled", true);
    f.progress({ folder: "/docs", done: 10, total: 10 });
    expect(screen.queryByTestId("kb-progress")).toBeNull();

    // The time left, from the run's pace so far.
    const now = vi.spyOn(Date, "now").mockReturnValue(1_000_000);
    f.progress({ folder: "/docs", done: 0, total: 10 });
    expect(screen.queryByTestId("kb-time-left")).toBeNull();
    now.mockReturnValue(1_004_000);
    f.progress({ folder: "/docs", done: 2, total: 10 });
    expect(screen.getByTestId("kb-time-left").textContent).toBe("about 16 s left");
    now.mockReturnValue(1_600_000);
    f.progress({ folder: "/docs", done: 4, total: 1000 });
    expect(screen.getByTestId("kb-time-left").textContent).toBe("about 2490 min left");
    now.mockRestore();
    f.progress({ folder: "/docs", done: 1000, total: 1000 });
    fireEvent.click(screen.getByRole("button", { name: "Documents" }));
    expect(await screen.findByText("a.md")).toBeTruthy();
    expect(screen.getByText("7 chunks")).toBeTruthy();
  });

  it("adds a picked folder and re-indexes", async () => {
    const f = fake();
    renderIn(<KnowledgeBase ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse…" }));
    await waitFor(() => expect((screen.getByLabelText("Folder path") as HTMLInputElement).value).toBe("/picked"));
    fireEvent.click(screen.getByRole("button", { name: "Add folder" }));
    await waitFor(() => expect(f.ipc.kbAddFolder).toHaveBeenCalledWith("/picked"));
    fireEvent.click(screen.getByRole("button", { name: "Re-index" }));
    await waitFor(() => expect(f.ipc.kbReindex).toHaveBeenCalledWith("/docs"));
  });

  it("searches and shows scored passages", async () => {
    const f = fake();
    renderIn(<KnowledgeBase ipc={f.ipc} />);
    fireEvent.change(screen.getByLabelText("Try a search"), { target: { value: "what is patchbay" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    const passage = await screen.findByText((_, el) => el?.classList.contains("kb-hit-text") === true);
    expect(passage.textContent).toBe("Patchbay hosts MCP servers.");
    expect([...passage.querySelectorAll("mark")].map((m) => m.textContent), "the matched word is marked").toEqual(["Patchbay"]);
    expect(f.ipc.kbSearch).toHaveBeenCalledWith("what is patchbay", 10);
    expect(screen.getByText("score 0.912")).toBeTruthy();
    expect(screen.getByText("relevance 80%")).toBeTruthy();
  });
});
