import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { act } from "@testing-library/react";
import type { KbEmbeddings as Current, KbEmbeddingsChoice, KbModelProgress, KbModels, KbModelView, ProviderProfile, ProviderView } from "../../lib/ipc";
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
    kbModels: vi.fn(() => Promise.resolve(models())),
    kbGetModel: vi.fn(() => Promise.resolve()),
    kbCancelModel: vi.fn(() => Promise.resolve()),
    kbSetModelHub: vi.fn((url: string | null) => Promise.resolve({ ...models(), hub: url ?? "https://huggingface.co", hub_setting: url })),
    onKbModelProgress: vi.fn((h: (p: KbModelProgress) => void) => {
      modelProgress = h;
      return Promise.resolve(() => undefined);
    }),
  };
  return ipc;
}

let modelProgress: (p: KbModelProgress) => void = () => undefined;

function model(name: string, multilingual: boolean, extra: Partial<KbModelView> = {}): KbModelView {
  return { name, languages: multilingual ? "Chinese and English" : "English", multilingual, megabytes: 91, state: "absent", in_use: false, suggested: multilingual, folder: `/d/models/${name}`, download: null, ...extra };
}

function models(zh: Partial<KbModelView> = {}): KbModels {
  return { hub: "https://huggingface.co", hub_setting: null, models: [model("all-MiniLM-L6-v2", false), model("bge-small-zh-v1.5", true, zh)] };
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
    fireEvent.click(await screen.findByLabelText(/A local model/));
    fireEvent.click(screen.getByRole("button", { name: "Browse…" }));
    await waitFor(() => expect((screen.getByLabelText(/Model folder/) as HTMLInputElement).value).toBe("/models/bge-m3"));
    fireEvent.click(screen.getByRole("button", { name: "Save embeddings" }));
    expect(await screen.findByText(/config.json is missing/)).toBeTruthy();
    expect(ipc.kbSetEmbeddings).toHaveBeenCalledWith({ kind: "local", model_dir: "/models/bge-m3" });
    expect(screen.getByText("Now: off, search uses keywords (BM25).")).toBeTruthy();
  });

  it("downloads a suggested model with progress, says why a download failed, and uses it", async () => {
    const used: Current = { ...OFF, kind: "local", model_dir: "/d/models/bge-small-zh-v1.5" };
    const ipc = fake(OFF, () => Promise.resolve(used));
    renderIn(<KbEmbeddings ipc={ipc} />);
    fireEvent.click(await screen.findByLabelText(/A local model/));
    const zh = await screen.findByTestId("kb-model-bge-small-zh-v1.5");
    expect(zh.textContent).toContain("Suggested");
    expect(screen.getByTestId("kb-model-all-MiniLM-L6-v2").textContent).not.toContain("Suggested");
    fireEvent.click(screen.getByRole("button", { name: "Download bge-small-zh-v1.5" }));
    await waitFor(() => expect(ipc.kbGetModel).toHaveBeenCalledWith("bge-small-zh-v1.5"));

    act(() => modelProgress({ model: "bge-small-zh-v1.5", file: "model.safetensors", done_bytes: 30e6, total_bytes: 96e6, finished: false, error: null }));
    const bar = screen.getByLabelText("Downloading bge-small-zh-v1.5") as HTMLProgressElement;
    expect(bar.value).toBe(30e6);
    expect(zh.textContent).toContain("30.0 of 96.0 MB");
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(ipc.kbCancelModel).toHaveBeenCalledWith("bge-small-zh-v1.5"));

    // A failed download says why, and offers to go on from where it stopped.
    const failed: KbModelProgress = { model: "bge-small-zh-v1.5", file: "model.safetensors", done_bytes: 30e6, total_bytes: 96e6, finished: true, error: "model.safetensors stopped after 30.0 of 96.0 MB" };
    ipc.kbModels = vi.fn(() => Promise.resolve(models({ state: "partial", download: failed })));
    act(() => modelProgress(failed));
    expect((await screen.findByRole("alert")).textContent).toContain("stopped after 30.0 of 96.0 MB");
    expect(await screen.findByRole("button", { name: "Resume bge-small-zh-v1.5" })).toBeTruthy();

    // Once it is here, one click puts it to work.
    ipc.kbModels = vi.fn(() => Promise.resolve(models({ state: "ready" })));
    act(() => modelProgress({ ...failed, done_bytes: 96e6, error: null }));
    const use = await screen.findByRole("button", { name: "Use bge-small-zh-v1.5" });
    ipc.kbModels = vi.fn(() => Promise.resolve(models({ state: "ready", in_use: true })));
    fireEvent.click(use);
    await waitFor(() => expect(ipc.kbSetEmbeddings).toHaveBeenCalledWith({ kind: "local", model_dir: "/d/models/bge-small-zh-v1.5" }));
    expect(await screen.findByText("Now: local model /d/models/bge-small-zh-v1.5.")).toBeTruthy();
    // The list follows: the model is in use, and offered no more.
    await waitFor(() => expect(screen.getByTestId("kb-model-state-bge-small-zh-v1.5").textContent).toBe("In use"));
    expect(screen.queryByRole("button", { name: "Use bge-small-zh-v1.5" })).toBeNull();

    // A mirror.
    fireEvent.change(screen.getByLabelText(/Download from/), { target: { value: "https://hf-mirror.com" } });
    fireEvent.click(screen.getByRole("button", { name: "Save address" }));
    await waitFor(() => expect(ipc.kbSetModelHub).toHaveBeenCalledWith("https://hf-mirror.com"));
    expect((await screen.findByTestId("kb-model-hub-now")).textContent).toBe("Models come from https://hf-mirror.com.");
  });
});
