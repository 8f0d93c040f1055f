// Links in the window (answers, tool results, a server's website) open in the
// user's browser: the window itself never navigates away from Patchbay. The
// backend checks each link (`open_link`: http, https and mailto only).

/** What a click on the page means for links. */
export type LinkClick =
  /** Not a link, or one within the page (`#cite-1`): left to the page. */
  | { kind: "page" }
  /** A link to elsewhere: the window must not follow it; `url` goes to the browser. */
  | { kind: "open"; url: string }
  /** A link to nowhere (`href=""`): following it would reload the window. */
  | { kind: "dead" };

/**
 * Reads a click: which link it is on (the nearest `<a href>` on its path), and
 * where that leads from the page at `base`. Only a link to the page's own web
 * origin stays in the page (the window's `tauri:` origin is opaque: nothing is).
 */
export function linkClick(path: EventTarget[], base: string): LinkClick {
  const anchor = path.find((x): x is HTMLAnchorElement => x instanceof HTMLAnchorElement && x.hasAttribute("href"));
  if (!anchor) return { kind: "page" };
  const href = anchor.getAttribute("href") ?? "";
  if (href.trim() === "") return { kind: "dead" };
  if (href.startsWith("#")) return { kind: "page" };
  try {
    const url = new URL(href, base);
    const origin = new URL(base).origin;
    return origin !== "null" && url.origin === origin ? { kind: "page" } : { kind: "open", url: url.href };
  } catch {
    return { kind: "open", url: href };
  }
}

/**
 * Sends every click on a link to elsewhere (a left or middle click) to `open`,
 * and keeps the window where it is. Returns the function that stops it.
 */
export function openLinksWith(target: Window, open: (url: string) => Promise<void>, onError: (e: unknown) => void): () => void {
  const handle = (e: MouseEvent) => {
    if (e.defaultPrevented || (e.button !== 0 && e.button !== 1)) return;
    const click = linkClick(e.composedPath(), target.location.href);
    if (click.kind === "page") return;
    e.preventDefault();
    if (click.kind === "open") open(click.url).catch(onError);
  };
  target.addEventListener("click", handle);
  target.addEventListener("auxclick", handle);
  return () => {
    target.removeEventListener("click", handle);
    target.removeEventListener("auxclick", handle);
  };
}
