// MCP bundles (.mcpb): previewing one with its signature, installing it with
// its settings, and changing an installed bundle's settings.
import { call, on } from "./client";

/** A setting an MCP bundle's manifest declares (`user_config`). */
export interface BundleSetting {
  key: string;
  kind: "string" | "number" | "boolean" | "directory" | "file";
  title: string;
  description: string;
  required: boolean;
  /** Typed masked; kept in the keyring. */
  sensitive: boolean;
  /** Several folders or files. */
  multiple: boolean;
  min: number | null;
  max: number | null;
  /** The default, its variables (`${HOME}`, …) substituted. */
  default: string | number | boolean | string[] | null;
  /** A secret the installed version keeps; left empty, it is kept. */
  kept: boolean;
  /** The value the installed version was given (never a sensitive one). */
  value: string | number | boolean | string[] | null;
}

/** What the install form shows about an MCP bundle (`.mcpb`). */
export interface BundleInfo {
  name: string;
  server_name: string;
  title: string;
  version: string;
  description: string;
  long_description: string | null;
  author: string;
  homepage: string | null;
  /** The bundle's PNG icon as a `data:` URL. */
  icon: string | null;
  kind: "node" | "python" | "binary" | "uv";
  runtime: string | null;
  tools: { name: string; description: string | null }[];
  tools_generated: boolean;
  prompts: { name: string; description: string | null }[];
  settings: BundleSetting[];
  /** The version installed now, when this replaces it. */
  installed_version: string | null;
  /** Who signed it (`mcpb sign`), and whether this computer trusts them. */
  signature: BundleSignature;
  /** Who signed the version installed now (null when none is, or it was installed before Patchbay kept this). */
  installed_signature: BundleSignature | null;
  /** The installed version was signed, and this one is not signed with the same certificate. */
  signer_changed: boolean;
  /** The opened bundle this preview shows, for `installBundle` (null for an installed bundle's settings). */
  preview_id: string | null;
}

/** A bundle's signing certificate; dates are `YYYY-MM-DD`, the fingerprint its SHA-256 in hex. */
export interface BundleSigner {
  publisher: string;
  issuer: string;
  valid_from: string;
  valid_to: string;
  fingerprint: string;
}

/** Why a bundle's signing certificate is not trusted. */
export type BundleDistrust = "unknown_issuer" | "expired" | "not_yet_valid" | "not_for_code" | "revoked" | "bad_chain";

export type BundleSignature =
  | { status: "unsigned" }
  | { status: "signed"; signer: BundleSigner }
  | { status: "self_signed"; signer: BundleSigner }
  | { status: "untrusted"; signer: BundleSigner; reason: BundleDistrust };

/** A bundle setting's value: text, a number, a boolean or a list of paths. */
export type BundleValue = string | number | boolean | string[];

export const bundlesIpc = {
  pickBundle: () => call<string | null>("pick_bundle"),
  pickSettingFile: () => call<string | null>("pick_setting_file"),
  /** What the install form shows, in `locale`'s words (a BCP 47 tag) where the bundle has them. */
  bundlePreview: (path: string, locale: string) => call<BundleInfo>("bundle_preview", { path, locale }),
  /** Installs the bundle previewed as `preview_id`, with the signer (certificate fingerprint) its preview showed. */
  installBundle: (preview_id: string, signer: string | null, values: Record<string, BundleValue>) =>
    call<string>("install_bundle", { preview_id, signer, values }),
  /** The settings form of the bundle a server was installed from, with its values now. */
  bundleSettings: (name: string, locale: string) => call<BundleInfo>("bundle_settings", { name, locale }),
  /** Changes an installed bundle's settings; its server restarts. */
  configureBundle: (name: string, values: Record<string, BundleValue>) => call<void>("configure_bundle", { name, values }),
  /** The bundle file Patchbay was launched with (or a later launch handed over), once. */
  takeOpenedBundle: () => call<string | null>("take_opened_bundle"),
  /** A launch handed over a bundle file: take it with `takeOpenedBundle`. */
  onBundleOpened: (h: () => void) => on<null>("bundle_opened", () => h()),
};
