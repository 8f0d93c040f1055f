import { cleanup, fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../../test/render";
import { expectAccessible } from "../../test/axe";
import { Dialog } from "./Dialog";

afterEach(cleanup);

describe("Dialog", () => {
  it("is named by its title, takes the focus, and closes on Escape or its button but not on a field's own Escape", async () => {
    const onClose = vi.fn();
    renderIn(
      <>
        <button type="button">behind</button>
        <Dialog title="Add a server" onClose={onClose}>
          <input aria-label="with suggestions" data-owns-escape />
          <input aria-label="plain" />
        </Dialog>
      </>,
    );
    const dialog = screen.getByRole("dialog", { name: "Add a server" });
    expect(document.activeElement).toBe(dialog);
    // The page behind is out of reach of screen readers while it is open.
    expect(screen.queryByRole("button", { name: "behind" })).toBeNull();
    await expectAccessible();
    fireEvent.keyDown(screen.getByLabelText("with suggestions"), { key: "Escape" });
    expect(onClose).not.toHaveBeenCalled();
    fireEvent.keyDown(screen.getByLabelText("plain"), { key: "Escape" });
    expect(onClose).toHaveBeenCalledTimes(1);
    fireEvent.click(screen.getByRole("button", { name: "Close" }));
    expect(onClose).toHaveBeenCalledTimes(2);
  });
});
