// Model providers: their profiles (the key stays in the keyring), presets and
// the connection test.
import { call, cancellable } from "./client";
import type { ProviderKind, ProviderProfile, ThinkingParam } from "./config";

export interface ProviderView {
  profile: ProviderProfile;
  api_key_set: boolean;
}

/** A provider as it is usually set up; `default_model` is empty where the user must name one. */
export interface ProviderPreset {
  id: string;
  label: string;
  kind: ProviderKind;
  base_url: string;
  default_model: string;
  models: string[];
  needs_key: boolean;
  native_tools: boolean;
  thinking: ThinkingParam;
}

export const providersIpc = {
  listProviders: () => call<ProviderView[]>("list_providers"),
  saveProvider: (profile: ProviderProfile, apiKey: string | null) =>
    call<void>("save_provider", { profile, api_key: apiKey }),
  deleteProvider: (name: string) => call<void>("delete_provider", { name }),
  testProvider: (name: string, signal?: AbortSignal) => cancellable<string[]>("test_provider", { name }, signal),
  providerPresets: () => call<ProviderPreset[]>("provider_presets"),
};
