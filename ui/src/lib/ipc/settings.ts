// General settings: theme, language, the data folder, titles and the proxy.
import { call } from "./client";

export type Theme = "light" | "dark" | "system";

export interface GeneralSettings {
  theme: Theme;
  language: "en" | "zh";
  data_dir: string;
  /** The model names a new conversation after its first answer. */
  auto_title: boolean;
  /** A backup waits to be restored at the next start (read only). */
  restore_pending: boolean;
  /** The proxy for providers and remote MCP servers. */
  proxy: ProxyChoice;
}

/** Which proxy outgoing requests use: the environment's (`HTTPS_PROXY`, …), none, or this URL. */
export type ProxyChoice = { mode: "environment" } | { mode: "off" } | { mode: "custom"; url: string };

export const settingsIpc = {
  getSettings: () => call<GeneralSettings>("get_settings"),
  saveSettings: (settings: GeneralSettings) => call<void>("save_settings", { settings }),
  pickDataDir: () => call<string | null>("pick_data_dir"),
};
