// Theme choice: light, dark or following the system; stored locally and
// applied as `data-theme` on the root element.
import type { Theme } from "./ipc";

const KEY = "patchbay.theme";

export function storedTheme(): Theme {
  const v = typeof localStorage !== "undefined" ? localStorage.getItem(KEY) : null;
  return v === "light" || v === "dark" ? v : "system";
}

export function storeTheme(theme: Theme) {
  localStorage.setItem(KEY, theme);
}

export function applyTheme(theme: Theme) {
  const dark =
    theme === "dark" ||
    (theme === "system" && typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}
