// Model providers: their profiles (the key stays in the keyring), presets and
// the connection test.
import { call, cancellable } from "./client";
import type { ProviderPreset, ProviderProfile, ProviderView } from "./generated";

export type { ProviderPreset, ProviderView } from "./generated";

export const providersIpc = {
  listProviders: () => call<ProviderView[]>("list_providers"),
  saveProvider: (profile: ProviderProfile, apiKey: string | null) =>
    call<void>("save_provider", { profile, api_key: apiKey }),
  deleteProvider: (name: string) => call<void>("delete_provider", { name }),
  testProvider: (name: string, signal?: AbortSignal) => cancellable<string[]>("test_provider", { name }, signal),
  providerPresets: () => call<ProviderPreset[]>("provider_presets"),
};
