// MCP bundles (.mcpb): previewing one with its signature, installing it with
// its settings, and changing an installed bundle's settings.
import { call, on } from "./client";
import type { BundleInfo, Opened } from "./generated";

export type {
  BundleInfo,
  BundleSetting,
  Declared,
  Opened,
  Distrust as BundleDistrust,
  OptionKind,
  ServerKind,
  Signature as BundleSignature,
  Signer as BundleSigner,
} from "./generated";

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
  /** The bundle file or install link Patchbay was launched with (or a later launch handed over), once. */
  takeOpened: () => call<Opened | null>("take_opened"),
  /** Something was opened with Patchbay while it ran: take it with `takeOpened`. */
  onOpened: (h: () => void) => on<null>("opened", () => h()),
};
