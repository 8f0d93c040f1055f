import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KbEmbeddings as Current, KbEmbeddingsChoice, ProviderProfile, ProviderView } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { KbEmbeddings, type KbEmbeddingsIpc } from "./KbEmbeddings";

afterEach(cleanup);

const OFF: Current = { kind: "off", provider: null, base_url: null, model: null, model_dir: null, english_only: false };

function provider(name: string, kind: ProviderProfile["kind"]): ProviderView {
  return {
    profile: {
      name,
      kind,
      base_url: "http://127.0.0.1:11434/v1",
      default_model: "qwen3",
      models: [],
      headers: {},
      api_key: null,
      native_tools: true,
      prompt_tool_format: "function_call",
      context_window: null,
      listed_windows: {},
      thinking: "auto",
    },
    api_key_set: false,
    windows: {},
    max_tools: null,
  };
}

function fake(current: Current, answer: (c: KbEmbeddingsChoice) => Promise<Current>) {
  const ipc: KbEmbeddingsIpc = {
    kbEmbeddings: vi.fn(() => Promise.resolve(current)),
    kbSetEmbeddings: vi.fn(answer),
    kbPickFolder: vi.fn(() => Promise.resolve("/models/bge-m3")),
    listProviders: vi.fn(() => Promise.resolve([provider("claude", "anthropic"), provider("ollama", "openai")])),
  };
  return ipc;
}

describe("KbEmbeddings", () => {
  it("says MiniLM is English-only and offers multilingual models", async () => {
    const minilm: Current = { ...OFF, kind: "local", model_dir: "/models/all-MiniLM-L6-v2", english_only: true };
    renderIn(<KbEmbeddings ipc={fake(minilm, () => Promise.resolve(minilm))} />);
    expect(await screen.findByText("Now: local model /models/all-MiniLM-L6-v2.")).toBeTruthy();
    expect(screen.getByTestId("kb-embeddings-english-only").textContent).toContain("English only");
    expect(screen.getByTestId("kb-embeddings-note").textContent).toContain("Ollama's bge-m3");
    expect((screen.getByLabelText(/Model folder/) as HTMLInputElement).value).toBe("/models/all-MiniLM-L6-v2");
  });

  it("says so in Chinese too", async () => {
    const minilm: Current = { ...OFF, kind: "local", model_dir: "/m", english_only: true };
    renderIn(<KbEmbeddings ipc={fake(minilm, () => Promise.resolve(minilm))} />, "zh");
    expect((await screen.findByTestId("kb-embeddings-english-only")).textContent).toContain("只懂英文");
  });

  it("picks an OpenAI-compatible provider's endpoint with a multilingual model", async () => {
    const chosen: Current = { ...OFF, kind: "endpoint", provider: "ollama", base_url: "http://127.0.0.1:11434/v1", model: "bge-m3" };
    const ipc = fake(OFF, () => Promise.resolve(chosen));
    const onSaved = vi.fn();
    renderIn(<KbEmbeddings ipc={ipc} onSaved={onSaved} />);
    expect(await screen.findByText("Now: off, search uses keywords (BM25).")).toBeTruthy();
    fireEvent.click(screen.getByLabelText(/embeddings endpoint/));
    const select = (await screen.findByLabelText("Provider")) as HTMLSelectElement;
    // Only providers that have an /embeddings endpoint are offered.
    expect([...select.options].map((o) => o.value)).toEqual(["ollama"]);
    const save = screen.getByRole("button", { name: "Save embeddings" });
    expect(save).toHaveProperty("disabled", true);
    fireEvent.change(screen.getByLabelText("Embeddings model"), { target: { value: " bge-m3 " } });
    fireEvent.click(save);
    await waitFor(() => expect(ipc.kbSetEmbeddings).toHaveBeenCalledWith({ kind: "provider", provider: "ollama", model: "bge-m3" }));
    expect(await screen.findByText("Now: bge-m3 from ollama.")).toBeTruthy();
    expect(screen.getByText("Saved. Re-indexing in the background…")).toBeTruthy();
    expect(onSaved).toHaveBeenCalled();
    expect(screen.queryByTestId("kb-embeddings-english-only")).toBeNull();
  });

  it("picks a local model folder and shows a refusal", async () => {
    const ipc = fake(OFF, () => Promise.reject({ kind: "invalid_input", message: "/models/bge-m3: config.json is missing" }));
    renderIn(<KbEmbeddings ipc={ipc} />);
    fireEvent.click(await screen.findByLabelText(/local model folder/));
    fireEvent.click(screen.getByRole("button", { name: "Browse…" }));
    await waitFor(() => expect((screen.getByLabelText(/Model folder/) as HTMLInputElement).value).toBe("/models/bge-m3"));
    fireEvent.click(screen.getByRole("button", { name: "Save embeddings" }));
    expect(await screen.findByText(/config.json is missing/)).toBeTruthy();
    expect(ipc.kbSetEmbeddings).toHaveBeenCalledWith({ kind: "local", model_dir: "/models/bge-m3" });
    expect(screen.getByText("Now: off, search uses keywords (BM25).")).toBeTruthy();
  });
});
