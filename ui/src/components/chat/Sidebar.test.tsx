import { cleanup, fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ConversationSummary } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { Sidebar, type SidebarProps } from "./Sidebar";
import { expectAccessible } from "../../test/axe";

afterEach(cleanup);

const conv = (id: string, title: string, updated_at: number, pinned = false): ConversationSummary => ({
  id,
  title,
  created_at: 0,
  updated_at,
  snippet: null,
  pinned,
});

function setup(extra: Partial<SidebarProps> = {}) {
  const props: SidebarProps = {
    conversations: [conv("a", "Old", 1), conv("b", "Newest", 3), conv("c", "Middle", 2)],
    activeId: "c",
    query: "",
    onQuery: vi.fn(),
    onSelect: vi.fn(),
    onNew: vi.fn(),
    onRename: vi.fn(),
    onDelete: vi.fn(),
    onPin: vi.fn(),
    now: 10,
    ...extra,
  };
  renderIn(<Sidebar {...props} />);
  return props;
}

describe("Sidebar", () => {
  it("groups conversations by the local day they last changed", () => {
    const now = new Date(2026, 10, 25, 15, 0).getTime();
    const at = (days: number, hour: number) => new Date(2026, 10, 25 - days, hour).getTime();
    setup({
      now,
      activeId: null,
      conversations: [
        conv("t", "This morning", at(0, 8)),
        conv("y", "Last night", at(1, 23)),
        conv("w", "Monday", at(3, 12)),
        conv("m", "Earlier this month", at(20, 12)),
        conv("o", "Last year", at(400, 12)),
        conv("t2", "Just now", at(0, 14)),
        conv("p", "Pinned long ago", at(90, 12), true),
      ],
    });
    const list = screen.getByTestId("conversation-list");
    const rows = [...list.querySelectorAll("li")].map((li) => (li.classList.contains("conversation-group") ? `# ${li.textContent}` : li.querySelector(".conversation-title")?.textContent));
    expect(rows).toEqual([
      "# Pinned",
      "Pinned long ago",
      "# Today",
      "Just now",
      "This morning",
      "# Yesterday",
      "Last night",
      "# Previous 7 days",
      "Monday",
      "# Previous 30 days",
      "Earlier this month",
      "# Older",
      "Last year",
    ]);
  });

  it("lists conversations newest first and marks the active one", () => {
    setup();
    const titles = within(screen.getByTestId("conversation-list")).getAllByRole("button", { name: /^(Old|Newest|Middle)$/ });
    expect(titles.map((b) => b.textContent)).toEqual(["Newest", "Middle", "Old"]);
    expect(screen.getByRole("button", { name: "Middle" }).getAttribute("aria-current")).toBe("true");
  });

  it("pins and unpins a conversation", async () => {
    const p = setup({ conversations: [conv("a", "Old", 1, true), conv("b", "Newest", 3)] });
    const unpin = screen.getByRole("button", { name: "Unpin Old" });
    expect(unpin.getAttribute("aria-pressed")).toBe("true");
    await expectAccessible();
    fireEvent.click(unpin);
    expect(p.onPin).toHaveBeenCalledWith("a", false);
    fireEvent.click(screen.getByRole("button", { name: "Pin Newest" }));
    expect(p.onPin).toHaveBeenCalledWith("b", true);
  });

  it("starts a conversation with Ctrl+N or Cmd+N and focuses search with Ctrl+K", () => {
    const p = setup();
    fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    fireEvent.keyDown(window, { key: "N", metaKey: true });
    fireEvent.keyDown(window, { key: "n" });
    expect(p.onNew).toHaveBeenCalledTimes(2);
    fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    expect(document.activeElement?.id).toBe("conversation-search");
  });

  it("searches, renames and deletes after confirmation", () => {
    const p = setup();
    fireEvent.change(screen.getByLabelText("Search conversations"), { target: { value: "rust" } });
    expect(p.onQuery).toHaveBeenCalledWith("rust");
    fireEvent.click(screen.getByRole("button", { name: "Rename Old" }));
    fireEvent.change(screen.getByLabelText("New title"), { target: { value: "Renamed" } });
    fireEvent.submit(screen.getByLabelText("New title"));
    expect(p.onRename).toHaveBeenCalledWith("a", "Renamed");
    fireEvent.click(screen.getByRole("button", { name: "Delete Newest" }));
    expect(p.onDelete).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Really delete" }));
    expect(p.onDelete).toHaveBeenCalledWith("b");
  });

  it("says when a search matches nothing", () => {
    setup({ conversations: [], query: "zzz" });
    expect(screen.getByText("No conversation matches.")).toBeTruthy();
  });
});
