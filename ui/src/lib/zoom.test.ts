import { describe, expect, it, vi } from "vitest";
import { setZoom, stepZoom, storedZoom, subscribeZoom, zoomDirection } from "./zoom";

describe("zoom", () => {
  it("steps through the levels and stops at either end", () => {
    expect(stepZoom(1, 1)).toBe(1.1);
    expect(stepZoom(1, -1)).toBe(0.9);
    expect(stepZoom(1.3, 1)).toBe(1.5);
    expect(stepZoom(3, 1)).toBe(3);
    expect(stepZoom(0.5, -1)).toBe(0.5);
    expect(stepZoom(2.5, 0)).toBe(1);
  });

  it("reads Ctrl or Cmd with = + - _ 0 and nothing else", () => {
    const key = (key: string, mods: Partial<KeyboardEvent> = { ctrlKey: true }) =>
      zoomDirection({ key, ctrlKey: false, metaKey: false, altKey: false, ...mods });
    expect(key("=")).toBe(1);
    expect(key("+")).toBe(1);
    expect(key("-", { metaKey: true })).toBe(-1);
    expect(key("0")).toBe(0);
    expect(key("=", {})).toBeNull();
    expect(key("=", { ctrlKey: true, altKey: true })).toBeNull();
    expect(key("n")).toBeNull();
  });

  it("stores the level, tells subscribers and applies it; a stored value that is not a level reads as 100%", async () => {
    const apply = vi.fn(() => Promise.resolve());
    const heard = vi.fn();
    const unsubscribe = subscribeZoom(heard);
    await setZoom(1.25, apply);
    expect(apply).toHaveBeenCalledWith(1.25);
    expect(heard).toHaveBeenCalledTimes(1);
    expect(storedZoom()).toBe(1.25);
    unsubscribe();
    localStorage.setItem("patchbay.zoom", "7");
    expect(storedZoom()).toBe(1);
  });
});
