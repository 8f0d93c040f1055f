// Copying text. In the window it goes through the backend: WebKitGTK gives
// pages no clipboard (`navigator.clipboard` is missing). Elsewhere (a browser,
// the tests) the page's own clipboard is used.
import { ipc } from "./ipc";

export function copyText(text: string): Promise<void> {
  if (typeof window !== "undefined" && "__TAURI_INTERNALS__" in window) return ipc.writeClipboard(text);
  if (!navigator.clipboard) return Promise.reject(new Error("this page has no clipboard"));
  return navigator.clipboard.writeText(text);
}
