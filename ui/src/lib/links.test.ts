import { afterEach, describe, expect, it, vi } from "vitest";
import { linkClick, openLinksWith } from "./links";

function link(href: string, text = "a link"): HTMLAnchorElement {
  const a = document.createElement("a");
  a.setAttribute("href", href);
  a.target = "_blank";
  a.append(document.createElement("strong"));
  a.firstElementChild?.append(text);
  document.body.append(a);
  return a;
}

afterEach(() => document.body.replaceChildren());

describe("links", () => {
  it("opens links to elsewhere and leaves in-page ones to the page", () => {
    const base = "tauri://localhost/index.html";
    const path = (a: Element) => [a.firstElementChild as Element, a, document.body];
    expect(linkClick(path(link("https://example.com/x?y=1")), base)).toEqual({ kind: "open", url: "https://example.com/x?y=1" });
    expect(linkClick(path(link("mailto:dev@example.com")), base)).toEqual({ kind: "open", url: "mailto:dev@example.com" });
    expect(linkClick(path(link("#cite-2")), base)).toEqual({ kind: "page" });
    // The window's own origin is opaque: a relative link is not the page's to follow.
    expect(linkClick(path(link("docs/a.md")), base)).toEqual({ kind: "open", url: "tauri://localhost/docs/a.md" });
    // Served over http (the dev server), the page's own links stay in it.
    expect(linkClick(path(link("/settings")), "http://localhost:1420/")).toEqual({ kind: "page" });
    expect(linkClick([document.body], base)).toEqual({ kind: "page" });
    expect(linkClick(path(link("")), base)).toEqual({ kind: "dead" });
  });

  it("sends a click on a link to the opener and keeps the page where it is; a failure is reported", async () => {
    const open = vi.fn((url: string) => (url.includes("bad") ? Promise.reject(new Error("no browser")) : Promise.resolve()));
    const onError = vi.fn();
    const stop = openLinksWith(window, open, onError);
    const good = link("https://example.com/good");
    const click = new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 });
    good.firstElementChild?.dispatchEvent(click);
    expect(click.defaultPrevented).toBe(true);
    expect(open).toHaveBeenCalledWith("https://example.com/good");
    const middle = new MouseEvent("auxclick", { bubbles: true, cancelable: true, button: 1 });
    link("https://example.com/bad").dispatchEvent(middle);
    await vi.waitFor(() => expect(onError).toHaveBeenCalledWith(new Error("no browser")));
    const inPage = new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 });
    link("#cite-1").dispatchEvent(inPage);
    expect(inPage.defaultPrevented).toBe(false);
    expect(open).toHaveBeenCalledTimes(2);
    stop();
    good.dispatchEvent(new MouseEvent("click", { bubbles: true, cancelable: true, button: 0 }));
    expect(open).toHaveBeenCalledTimes(2);
  });
});
