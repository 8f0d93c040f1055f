import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ProviderProfile, ProviderView } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { ProvidersSettings, type ProvidersIpc } from "./ProvidersSettings";

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
  context_window: null,
};

function fake(views: ProviderView[]): ProvidersIpc {
  return {
    listProviders: vi.fn(() => Promise.resolve(views)),
    saveProvider: vi.fn(() => Promise.resolve()),
    deleteProvider: vi.fn(() => Promise.resolve()),
    testProvider: vi.fn(() => Promise.reject({ kind: "provider", message: "401 Unauthorized: Incorrect API key provided" })),
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
    fireEvent.change(screen.getByLabelText(/API key/), { target: { value: "sk-secret" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(ipc.saveProvider).toHaveBeenCalled());
    const [saved, key] = (ipc.saveProvider as ReturnType<typeof vi.fn>).mock.calls[0] as [ProviderProfile, string | null];
    expect(key).toBe("sk-secret");
    expect(saved.api_key).toBe("provider/deepseek/api_key");
    expect(saved.models).toEqual(["deepseek-reasoner"]);
    expect(JSON.stringify(saved)).not.toContain("sk-secret");
  });

  it("never shows a stored key, only whether it is set, and keeps it when left empty", async () => {
    const ipc = fake([{ profile, api_key_set: true }]);
    renderIn(<ProvidersSettings ipc={ipc} />);
    const row = await screen.findByTestId("provider-row");
    expect(within(row).getByText("key set")).toBeTruthy();
    fireEvent.click(within(row).getByRole("button", { name: "Edit" }));
    const keyField = screen.getByLabelText(/API key/) as HTMLInputElement;
    expect(keyField.value).toBe("");
    expect(keyField.type).toBe("password");
    expect(screen.getByTestId("api-key-state").textContent).toBe("key set");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(ipc.saveProvider).toHaveBeenCalledWith({ ...profile }, null));
  });

  it("shows the real error of a failed connection test", async () => {
    const ipc = fake([{ profile, api_key_set: false }]);
    renderIn(<ProvidersSettings ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Test connection" }));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("401 Unauthorized: Incorrect API key provided");
    expect(alert.textContent).toContain("Check the provider's URL, model and API key");
  });
});
