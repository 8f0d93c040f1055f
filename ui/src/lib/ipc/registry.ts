// The MCP Registry: searching it, filling in an entry's placeholders, and
// downloading the bundle an entry lists.
import { call, cancellable } from "./client";
import type { BundleSource, RegistryEntry, RegistryFill, RegistryPage } from "./generated";

export type { BundleSource, RegistryEntry, RegistryFill, RegistryPage, RegistrySetting } from "./generated";

export const registryIpc = {
  registrySearch: (query: string, cursor: string | null, signal?: AbortSignal) =>
    cancellable<RegistryPage>("registry_search", { query, cursor }, signal),
  /** Downloads a registry entry's bundle, checking its SHA-256; its path, for `bundlePreview`. */
  registryBundle: (source: BundleSource, signal?: AbortSignal) => cancellable<string>("registry_bundle", { source }, signal),
  /** Fills in a registry entry's placeholders (by setting name); refused with the setting named when one is missing or wrong. */
  registryFill: (entry: RegistryEntry, values: Record<string, string>) => call<RegistryFill>("registry_fill", { entry, values }),
};
