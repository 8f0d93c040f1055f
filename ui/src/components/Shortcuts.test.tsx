import { cleanup, fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../test/render";
import { expectAccessible } from "../test/axe";
import { Shortcuts } from "./Shortcuts";

afterEach(cleanup);

const press = (key: string, more: KeyboardEventInit = {}) => fireEvent.keyDown(window, { key, ctrlKey: true, ...more });

describe("Shortcuts", () => {
  it("lists the shortcuts on Ctrl+/ and closes on Ctrl+/ again or Esc", async () => {
    renderIn(<Shortcuts onSettings={() => undefined} />);
    expect(screen.queryByRole("dialog")).toBeNull();
    press("/");
    const sheet = screen.getByRole("dialog", { name: "Keyboard shortcuts" });
    const rows = within(sheet).getAllByRole("row").map((r) => r.textContent);
    expect(rows).toContain("Ctrl+NNew chat");
    expect(rows).toContain("Ctrl+KSearch conversations");
    expect(rows).toContain("Shift+EnterNew line in the message");
    expect(rows).toContain("F8Go to an error shown over the page");
    await expectAccessible();
    press("/");
    expect(screen.queryByRole("dialog")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Keyboard shortcuts" }));
    fireEvent.keyDown(screen.getByRole("dialog"), { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("describes its button by the shortcut in the open tooltip", async () => {
    renderIn(<Shortcuts onSettings={() => undefined} />);
    const button = screen.getByRole("button", { name: "Keyboard shortcuts" });
    expect(button.getAttribute("aria-keyshortcuts")).toBe("Control+/");
    fireEvent.focus(button);
    await screen.findByRole("tooltip");
    expect(document.getElementById(button.getAttribute("aria-describedby") ?? "")?.textContent).toBe("Ctrl+/");
  });

  it("opens Settings on Ctrl+, and ignores the keys without Ctrl or with Alt", () => {
    const onSettings = vi.fn();
    renderIn(<Shortcuts onSettings={onSettings} />);
    fireEvent.keyDown(window, { key: "/" });
    press("/", { altKey: true });
    expect(screen.queryByRole("dialog")).toBeNull();
    press(",");
    expect(onSettings).toHaveBeenCalledTimes(1);
  });
});
