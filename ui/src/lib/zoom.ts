// Page zoom: Ctrl/Cmd with = + - 0, and the choice under Settings → General.
// Stored locally like the theme; the backend zooms the webview itself (as a
// browser does), so the page lays out again at the new size.

/** The zoom levels offered, as in a browser. */
export const ZOOM_STEPS = [0.5, 0.67, 0.75, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 1.75, 2, 2.5, 3] as const;

const KEY = "patchbay.zoom";
const listeners = new Set<() => void>();

export function storedZoom(): number {
  const v = typeof localStorage !== "undefined" ? Number(localStorage.getItem(KEY)) : NaN;
  return (ZOOM_STEPS as readonly number[]).includes(v) ? v : 1;
}

/** Stores a zoom level and tells the page's subscribers; `apply` zooms the webview. */
export function setZoom(zoom: number, apply: (zoom: number) => Promise<void>): Promise<void> {
  localStorage.setItem(KEY, String(zoom));
  for (const l of listeners) l();
  return apply(zoom);
}

export function subscribeZoom(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The step after `zoom` in `direction`; 0 is back to 100%. */
export function stepZoom(zoom: number, direction: -1 | 0 | 1): number {
  if (direction === 0) return 1;
  const steps: readonly number[] = ZOOM_STEPS;
  const next = direction > 0 ? steps.find((s) => s > zoom + 1e-9) : [...steps].reverse().find((s) => s < zoom - 1e-9);
  return next ?? zoom;
}

/** Which way a key press zooms, if it is a zoom shortcut. */
export function zoomDirection(e: Pick<KeyboardEvent, "key" | "ctrlKey" | "metaKey" | "altKey">): -1 | 0 | 1 | null {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return null;
  if (e.key === "=" || e.key === "+") return 1;
  if (e.key === "-" || e.key === "_") return -1;
  if (e.key === "0") return 0;
  return null;
}
