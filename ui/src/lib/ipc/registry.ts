// The MCP Registry: searching it, filling in an entry's placeholders, and
// downloading the bundle an entry lists.
import { call, cancellable } from "./client";
import type { McpServerConfig } from "./config";

/** Something a registry entry asks the user for. */
export interface RegistrySetting {
  name: string;
  description: string;
  required: boolean;
  secret: boolean;
  /** `{name}` in its arguments, variables, headers or URL (or the argument `<name>`), filled in by `registryFill`; else the variable or header of this name. */
  placeholder: boolean;
  default: string | null;
  choices: string[];
}

/** A registry entry filled in: the entry for the editor and the secrets to save with it. */
export interface RegistryFill {
  config: McpServerConfig;
  secrets: Record<string, string>;
}

/** One way of running a server the MCP Registry lists, as the server editor starts from it. */
export interface RegistryEntry {
  /** The suggested server name. */
  id: string;
  label: string;
  /** The registry name, e.g. `io.github.acme/weather`. */
  name: string;
  description: string;
  version: string;
  website: string | null;
  via: "npm" | "pypi" | "oci" | "mcpb" | "streamable-http" | "sse";
  needs: "npx" | "uvx" | "docker" | null;
  /** Secrets to type are `{"secret": ""}`; a placeholder for a bundle, whose manifest says how it runs. */
  config: McpServerConfig;
  /** For an `mcpb` entry: the bundle to download (`registryBundle`) and install. */
  bundle: BundleSource | null;
  /** What the entry asks for: each environment variable or header it sets, and each placeholder in its values. */
  settings: RegistrySetting[];
}

export interface BundleSource {
  url: string;
  /** Lowercase hex. */
  sha256: string;
}

export interface RegistryPage {
  entries: RegistryEntry[];
  next_cursor: string | null;
}

export const registryIpc = {
  registrySearch: (query: string, cursor: string | null, signal?: AbortSignal) =>
    cancellable<RegistryPage>("registry_search", { query, cursor }, signal),
  /** Downloads a registry entry's bundle, checking its SHA-256; its path, for `bundlePreview`. */
  registryBundle: (source: BundleSource, signal?: AbortSignal) => cancellable<string>("registry_bundle", { source }, signal),
  /** Fills in a registry entry's placeholders (by setting name); refused with the setting named when one is missing or wrong. */
  registryFill: (entry: RegistryEntry, values: Record<string, string>) => call<RegistryFill>("registry_fill", { entry, values }),
};
