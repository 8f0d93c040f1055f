import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KbSourceCandidate, KnowledgeSource } from "../../lib/ipc";
import { expectAccessible } from "../../test/axe";
import { renderIn } from "../../test/render";
import { KbSources, type KbSourcesIpc } from "./KbSources";

afterEach(cleanup);

const RAGFLOW: KbSourceCandidate = { server: "ragflow", tool: "ragflow_retrieval", description: "Retrieve chunks", shape: { kind: "ragflow" }, text_args: ["question", "rerank_id"] };
const WIKI: KbSourceCandidate = { server: "wiki", tool: "search", description: null, shape: null, text_args: ["q", "lang"] };
const HIT = { document: "fleet.pdf", path: "fleet.pdf", score: 0, relevance: 0.75, text: "Brakes every 20,000 km.", marks: [] };

function fake(sources: KnowledgeSource[] = []) {
  let saved = sources;
  const ipc: KbSourcesIpc = {
    kbSources: vi.fn(() => Promise.resolve(saved)),
    kbSourceCandidates: vi.fn(() => Promise.resolve([RAGFLOW, WIKI])),
    kbPutSource: vi.fn((s: KnowledgeSource) => Promise.resolve((saved = [...saved, s]))),
    kbRemoveSource: vi.fn((name: string) => Promise.resolve((saved = saved.filter((s) => s.name !== name)))),
    kbPreviewSource: vi.fn(() =>
      Promise.resolve({ fields: ["body", "meta.title", "meta.url"], answer: '{"hits": [{"body": "Tui sing."}]}' }),
    ),
    kbTrySource: vi.fn(() => Promise.resolve([HIT])),
  };
  return ipc;
}

describe("KbSources", () => {
  it("adds a known tool as it is, after trying it", async () => {
    const ipc = fake();
    renderIn(<KbSources ipc={ipc} />);
    expect(await screen.findByText("No knowledge sources yet.")).toBeTruthy();
    const tool = await screen.findByTestId("kb-source-tool");
    expect(within(tool).getByRole("option", { name: "ragflow › ragflow_retrieval (RAGFlow)" })).toBeTruthy();
    fireEvent.change(tool, { target: { value: "ragflow/ragflow_retrieval" } });
    expect((screen.getByTestId("kb-source-name") as HTMLInputElement).value).toBe("ragflow");
    // A known tool needs no mapping.
    expect(screen.queryByTestId("kb-source-preview")).toBeNull();
    fireEvent.change(screen.getByTestId("kb-source-name"), { target: { value: "Fleet" } });
    fireEvent.change(screen.getByTestId("kb-source-question"), { target: { value: "brakes" } });
    fireEvent.click(screen.getByTestId("kb-source-try"));
    expect((await screen.findByTestId("kb-source-hits")).textContent).toContain("Brakes every 20,000 km.");
    const source = { name: "Fleet", server: "ragflow", tool: "ragflow_retrieval", shape: { kind: "ragflow" } };
    expect(ipc.kbTrySource).toHaveBeenCalledWith(source, "brakes", expect.any(AbortSignal));
    fireEvent.click(screen.getByTestId("kb-source-save"));
    await waitFor(() => expect(ipc.kbPutSource).toHaveBeenCalledWith(source));
    const row = await screen.findByTestId("kb-source");
    expect(row.textContent).toContain("Fleet");
    expect(row.textContent).toContain("ragflow › ragflow_retrieval · RAGFlow");
    fireEvent.click(within(row).getByRole("button", { name: "Remove the source Fleet" }));
    await waitFor(() => expect(screen.queryByTestId("kb-source")).toBeNull());
  });

  it("maps an unknown tool's fields on a preview of its answer", async () => {
    const ipc = fake();
    renderIn(<KbSources ipc={ipc} />);
    fireEvent.change(await screen.findByTestId("kb-source-tool"), { target: { value: "wiki/search" } });
    expect(screen.getByTestId("kb-source-save")).toHaveProperty("disabled", true);
    fireEvent.change(screen.getByTestId("kb-source-question"), { target: { value: "tui" } });
    fireEvent.click(screen.getByTestId("kb-source-preview"));
    await waitFor(() => expect(ipc.kbPreviewSource).toHaveBeenCalledWith("wiki", "search", "q", "tui", expect.any(AbortSignal)));
    fireEvent.change(await screen.findByTestId("kb-source-text"), { target: { value: "body" } });
    fireEvent.change(screen.getByTestId("kb-source-title"), { target: { value: "meta.title" } });
    expect(screen.getByText("The answer as it came")).toBeTruthy();
    fireEvent.click(screen.getByTestId("kb-source-save"));
    await waitFor(() =>
      expect(ipc.kbPutSource).toHaveBeenCalledWith({
        name: "wiki",
        server: "wiki",
        tool: "search",
        shape: { kind: "mapped", query_arg: "q", text: "body", title: "meta.title", source: null },
      }),
    );
  });

  it("shows a source's refusal and reads well in Chinese", async () => {
    const ipc = fake([{ name: "Team", server: "team-kb", tool: "knowledge_search", shape: { kind: "patchbay" } }]);
    ipc.kbTrySource = vi.fn(() => Promise.reject({ kind: "invalid_input", message: "the tool answered with an error: dataset gone" }));
    renderIn(<KbSources ipc={ipc} />, "zh");
    expect((await screen.findByTestId("kb-source")).textContent).toContain("team-kb › knowledge_search · Patchbay");
    fireEvent.change(await screen.findByTestId("kb-source-tool"), { target: { value: "ragflow/ragflow_retrieval" } });
    fireEvent.change(screen.getByTestId("kb-source-question"), { target: { value: "刹车" } });
    fireEvent.click(screen.getByTestId("kb-source-try"));
    expect(await screen.findByText(/dataset gone/)).toBeTruthy();
    await expectAccessible();
  });
});
