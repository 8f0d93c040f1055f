import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ProviderPreset, ProviderProfile, ProviderView } from "../../lib/ipc";
import { renderIn, signalOf, untilCancelled } from "../../test/render";
import { ProvidersSettings, type ProvidersIpc } from "./ProvidersSettings";
import { expectAccessible } from "../../test/axe";

afterEach(cleanup);

const profile: ProviderProfile = {
  name: "openai",
  kind: "openai",
  base_url: "https://api.openai.com/v1",
  default_model: "gpt-4o",
  models: [],
  headers: {},
  api_key: "provider/openai/api_key",
  native_tools: true,
  prompt_tool_format: "function_call",
  context_window: null,
  listed_windows: {},
  thinking: "auto",
};

function fake(views: ProviderView[]): ProvidersIpc {
  return {
    listProviders: vi.fn(() => Promise.resolve(views)),
    saveProvider: vi.fn(() => Promise.resolve()),
    deleteProvider: vi.fn(() => Promise.resolve()),
    testProvider: vi.fn(() => Promise.reject({ kind: "provider", message: "401 Unauthorized: Incorrect API key provided" })),
    providerPresets: vi.fn(() => Promise.resolve([])),
  };
}

describe("ProvidersSettings", () => {
  it("adds a provider, sending the key once and storing only its name", async () => {
    const ipc = fake([]);
    renderIn(<ProvidersSettings ipc={ipc} />);
    expect(await screen.findByText("No provider yet. Add one to start chatting.")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Add provider" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "deepseek" } });
    fireEvent.change(screen.getByLabelText("Base URL"), { target: { value: "https://api.deepseek.com/v1" } });
    fireEvent.change(screen.getByLabelText("Default model"), { target: { value: "deepseek-chat" } });
    fireEvent.change(screen.getByLabelText("Other models (comma-separated)"), { target: { value: "deepseek-reasoner, " } });
    const keyField = screen.getByLabelText(/API key/);
    // No key is set yet: the hint does not speak of keeping one.
    expect(document.getElementById(keyField.getAttribute("aria-describedby") ?? "")?.textContent).not.toContain("keep the key");
    fireEvent.change(keyField, { target: { value: "sk-secret" } });
    await expectAccessible();
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(ipc.saveProvider).toHaveBeenCalled());
    const [saved, key] = (ipc.saveProvider as ReturnType<typeof vi.fn>).mock.calls[0] as [ProviderProfile, string | null];
    expect(key).toBe("sk-secret");
    expect(saved.api_key).toBe("provider/deepseek/api_key");
    expect(saved.models).toEqual(["deepseek-reasoner"]);
    expect(JSON.stringify(saved)).not.toContain("sk-secret");
  });

  it("never shows a stored key, only whether it is set, and keeps it when left empty", async () => {
    const ipc = fake([{ profile, api_key_set: true, windows: {}, max_tools: null }]);
    renderIn(<ProvidersSettings ipc={ipc} />);
    const row = await screen.findByTestId("provider-row");
    expect(within(row).getByText("key set")).toBeTruthy();
    fireEvent.click(within(row).getByRole("button", { name: "Edit" }));
    const keyField = screen.getByLabelText(/API key/) as HTMLInputElement;
    expect(keyField.value).toBe("");
    expect(keyField.type).toBe("password");
    expect(screen.getByTestId("api-key-state").textContent).toBe("key set");
    // The form opens beside the list, whose row for it is marked; each field says what it is for.
    expect(screen.getByTestId("provider-row").getAttribute("aria-current")).toBe("true");
    const hint = document.getElementById(keyField.getAttribute("aria-describedby") ?? "");
    expect(hint?.textContent).toContain("system keyring");
    expect(hint?.textContent).toContain("Leave empty to keep the key that is set.");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(ipc.saveProvider).toHaveBeenCalledWith({ ...profile }, null));
  });

  it("says the window the provider's model list stated, and keeps the list when saved", async () => {
    const listed = { ...profile, listed_windows: { "gpt-4o": 131_072 } };
    const ipc = fake([{ profile: listed, api_key_set: true, windows: { "gpt-4o": 131_072 }, max_tools: 128 }]);
    renderIn(<ProvidersSettings ipc={ipc} />);
    fireEvent.click(within(await screen.findByTestId("provider-row")).getByRole("button", { name: "Edit" }));
    const contextWindow = screen.getByLabelText("Context window (tokens)") as HTMLInputElement;
    expect(contextWindow.value).toBe("");
    expect(contextWindow.placeholder).toBe(`${(131_072).toLocaleString()}, as the provider's model list states`);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(ipc.saveProvider).toHaveBeenCalledWith(listed, null));
  });

  it("shows the real error of a failed connection test", async () => {
    const ipc = fake([{ profile, api_key_set: false, windows: {}, max_tools: null }]);
    renderIn(<ProvidersSettings ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Test connection" }));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("401 Unauthorized: Incorrect API key provided");
    expect(alert.textContent).toContain("Check the provider's URL, model and API key");
  });
});

const presets: ProviderPreset[] = [
  {
    id: "deepseek",
    label: "DeepSeek",
    kind: "openai",
    base_url: "https://api.deepseek.com/v1",
    default_model: "deepseek-chat",
    models: ["deepseek-reasoner"],
    needs_key: true,
    native_tools: true,
    thinking: "thinking_type",
  },
  {
    id: "llamacpp",
    label: "llama.cpp server (this computer)",
    kind: "openai",
    base_url: "http://127.0.0.1:8080/v1",
    default_model: "",
    models: [],
    needs_key: false,
    native_tools: false,
    thinking: "chat_template",
  },
];

describe("ProvidersSettings presets and models", () => {
  it("fills the form from a preset, keeps a name the user typed, and asks for the model a local server runs", async () => {
    const ipc = { ...fake([]), providerPresets: vi.fn(() => Promise.resolve(presets)) };
    renderIn(<ProvidersSettings ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add provider" }));
    const preset = await screen.findByLabelText("Start from");
    await waitFor(() => expect(within(preset).getByRole("option", { name: "DeepSeek" })).toBeTruthy());
    fireEvent.change(preset, { target: { value: "deepseek" } });
    expect((screen.getByLabelText("Name") as HTMLInputElement).value).toBe("deepseek");
    expect((screen.getByLabelText("Base URL") as HTMLInputElement).value).toBe("https://api.deepseek.com/v1");
    expect((screen.getByLabelText("Default model") as HTMLInputElement).value).toBe("deepseek-chat");
    expect((screen.getByLabelText("Other models (comma-separated)") as HTMLInputElement).value).toBe("deepseek-reasoner");
    expect(screen.queryByTestId("no-key-needed")).toBeNull();
    const thinking = screen.getByLabelText("How the server is asked to think") as HTMLSelectElement;
    expect(thinking.value).toBe("thinking_type");
    expect(screen.queryByLabelText("Calls are written as")).toBeNull();

    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "home" } });
    fireEvent.change(preset, { target: { value: "llamacpp" } });
    expect((screen.getByLabelText("Name") as HTMLInputElement).value).toBe("home");
    const model = screen.getByLabelText("Default model") as HTMLInputElement;
    expect(model.value).toBe("");
    expect(model.placeholder).toBe("The model's name as the provider lists it");
    expect(screen.getByTestId("no-key-needed")).toBeTruthy();
    expect((screen.getByRole("checkbox", { name: /calls tools natively/ }) as HTMLInputElement).checked).toBe(false);
    expect(thinking.value).toBe("chat_template");
    // Without native tools the call format is chosen; with them it is not asked.
    const format = screen.getByLabelText("Calls are written as") as HTMLSelectElement;
    expect(format.value).toBe("function_call");
    fireEvent.change(format, { target: { value: "use_mcp_tool" } });

    fireEvent.change(model, { target: { value: "qwen3" } });
    // A local model's window is its server's setting: typed here.
    const contextWindow = screen.getByLabelText("Context window (tokens)") as HTMLInputElement;
    expect(contextWindow.value).toBe("");
    fireEvent.change(contextWindow, { target: { value: "32768" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(ipc.saveProvider).toHaveBeenCalled());
    const [saved, key] = (ipc.saveProvider as ReturnType<typeof vi.fn>).mock.calls[0] as [ProviderProfile, string | null];
    expect(key).toBeNull();
    expect(saved).toMatchObject({
      name: "home",
      base_url: "http://127.0.0.1:8080/v1",
      default_model: "qwen3",
      native_tools: false,
      prompt_tool_format: "use_mcp_tool",
      api_key: null,
      thinking: "chat_template",
      context_window: 32768,
    });
  });

  it("calls a connection test off, leaving no result and no error", async () => {
    const ipc = { ...fake([{ profile, api_key_set: true, windows: {}, max_tools: null }]), testProvider: vi.fn(untilCancelled) };
    renderIn(<ProvidersSettings ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Test connection" }));
    expect(ipc.testProvider).toHaveBeenCalledWith(profile.name, expect.any(AbortSignal));
    fireEvent.click(screen.getByTestId("provider-test-cancel"));
    expect(signalOf(ipc.testProvider as never).aborted).toBe(true);
    expect(await screen.findByRole("button", { name: "Test connection" })).toBeTruthy();
    expect(screen.queryByRole("status")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("offers the models a connection test found and saves the ones checked", async () => {
    const ipc = {
      ...fake([{ profile: { ...profile, models: ["gpt-4o-mini"] }, api_key_set: true, windows: {}, max_tools: null }]),
      testProvider: vi.fn(() => Promise.resolve(["gpt-4o", "o4-mini", "gpt-4o-mini", "gpt-4.1"])),
    };
    renderIn(<ProvidersSettings ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Test connection" }));
    expect((await screen.findByRole("status")).textContent).toBe("Connected. 4 models available.");
    const picker = screen.getByTestId("model-picker");
    const boxes = within(picker).getAllByRole("checkbox") as HTMLInputElement[];
    // The default model is always offered, so it is not in the list.
    expect(boxes.map((b) => b.parentElement?.textContent?.trim())).toEqual(["gpt-4.1", "gpt-4o-mini", "o4-mini"]);
    expect(boxes.map((b) => b.checked)).toEqual([false, true, false]);
    fireEvent.click(within(picker).getByRole("checkbox", { name: "o4-mini" }));
    fireEvent.click(within(picker).getByRole("checkbox", { name: "gpt-4o-mini" }));
    fireEvent.click(within(picker).getByRole("button", { name: "Offer 1 model besides the default" }));
    await waitFor(() => expect(ipc.saveProvider).toHaveBeenCalledWith({ ...profile, models: ["o4-mini"] }, null));
  });
});
