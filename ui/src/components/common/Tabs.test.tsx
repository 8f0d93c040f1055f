import { useState } from "react";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { renderIn } from "../../test/render";
import { expectAccessible } from "../../test/axe";
import { Tabs } from "./Tabs";

afterEach(cleanup);

type Id = "one" | "two" | "three";

function Shown({ idPrefix }: { idPrefix?: string }) {
  const [tab, setTab] = useState<Id>("one");
  return (
    <Tabs
      tabs={[
        { id: "one", label: "One" },
        { id: "two", label: "Two" },
        { id: "three", label: "Three" },
      ]}
      selected={tab}
      onSelect={setTab}
      label="Parts"
      idPrefix={idPrefix}
    >
      <p>panel {tab}</p>
    </Tabs>
  );
}

describe("Tabs", () => {
  it("selects a tab from the keyboard or a click and shows only its panel, labelled by it", async () => {
    renderIn(<Shown idPrefix="parts" />);
    const tab = (name: string) => screen.getByRole("tab", { name });
    expect(screen.getByRole("tablist", { name: "Parts" })).toBeTruthy();
    // Tab stops once on the list, which hands the focus to the selected tab.
    expect([tab("One"), tab("Two"), tab("Three")].map((t) => t.tabIndex)).toEqual([-1, -1, -1]);
    screen.getByRole("tablist").focus();
    expect(document.activeElement).toBe(tab("One"));
    // Radix moves the focus on the next tick; the focused tab is selected.
    fireEvent.keyDown(tab("One"), { key: "ArrowRight" });
    await waitFor(() => expect(document.activeElement).toBe(tab("Two")));
    expect(tab("Two").getAttribute("aria-selected")).toBe("true");
    expect(screen.getByRole("tabpanel").textContent).toBe("panel two");
    fireEvent.keyDown(tab("Two"), { key: "End" });
    await waitFor(() => expect(tab("Three").getAttribute("aria-selected")).toBe("true"));
    fireEvent.keyDown(tab("Three"), { key: "ArrowRight" });
    await waitFor(() => expect(document.activeElement).toBe(tab("One")));
    fireEvent.click(tab("Three"));
    const panel = screen.getByRole("tabpanel");
    expect(screen.getAllByRole("tabpanel")).toHaveLength(1);
    expect(panel.textContent).toBe("panel three");
    expect(panel.id).toBe("parts-panel-three");
    expect(panel.getAttribute("aria-labelledby")).toBe("parts-tab-three");
    expect(panel.tabIndex).toBe(-1);
    expect(tab("Three").id).toBe("parts-tab-three");
    expect(tab("Three").getAttribute("aria-controls")).toBe("parts-panel-three");
    await expectAccessible();
  });

  it("keeps Radix's own ids, consistent, without a prefix", () => {
    renderIn(<Shown />);
    const panel = screen.getByRole("tabpanel");
    expect(document.getElementById(panel.getAttribute("aria-labelledby")!)).toBe(screen.getByRole("tab", { name: "One" }));
  });
});
