// General settings: theme, language, the data folder, titles and the proxy.
import { call } from "./client";
import type { GeneralSettings } from "./generated";

export type { GeneralSettings, ProxyChoice } from "./generated";

/** The themes `GeneralSettings.theme` names. */
export type Theme = "light" | "dark" | "system";

export const settingsIpc = {
  getSettings: () => call<GeneralSettings>("get_settings"),
  saveSettings: (settings: GeneralSettings) => call<void>("save_settings", { settings }),
  setLanguage: (language: "en" | "zh") => call<void>("set_language", { language }),
  pickDataDir: () => call<string | null>("pick_data_dir"),
};
