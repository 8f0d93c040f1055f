import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { RootsView } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { SharedFolders, type SharedFoldersIpc } from "./SharedFolders";

afterEach(cleanup);

function fake(start: RootsView) {
  let roots = start;
  const ipc: SharedFoldersIpc = {
    listRoots: vi.fn(() => Promise.resolve(roots)),
    addSharedFolder: vi.fn((path: string) => {
      roots = { ...roots, shared: [...roots.shared, path] };
      return Promise.resolve(roots);
    }),
    removeSharedFolder: vi.fn((path: string) => {
      roots = { ...roots, shared: roots.shared.filter((p) => p !== path) };
      return Promise.resolve(roots);
    }),
    kbPickFolder: vi.fn(() => Promise.resolve("/picked")),
  };
  return ipc;
}

describe("SharedFolders", () => {
  it("lists shared folders and the knowledge-base folders shared with them", async () => {
    renderIn(<SharedFolders ipc={fake({ shared: ["/work/project"], knowledge: ["/notes"] })} />);
    expect(await screen.findByText("/work/project")).toBeTruthy();
    expect(screen.getByTestId("shared-kb-folders").textContent).toContain("/notes");
    expect(screen.getAllByTestId("shared-folder")).toHaveLength(1);
  });

  it("adds a picked folder and removes one", async () => {
    const ipc = fake({ shared: ["/old"], knowledge: [] });
    renderIn(<SharedFolders ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse…" }));
    await waitFor(() => expect((screen.getByLabelText("Folder path") as HTMLInputElement).value).toBe("/picked"));
    fireEvent.click(screen.getByRole("button", { name: "Share folder" }));
    await waitFor(() => expect(ipc.addSharedFolder).toHaveBeenCalledWith("/picked"));
    expect(await screen.findByText("/picked")).toBeTruthy();
    expect((screen.getByLabelText("Folder path") as HTMLInputElement).value).toBe("");
    const old = screen.getAllByTestId("shared-folder").find((li) => li.textContent?.includes("/old"));
    fireEvent.click(old!.querySelector("button")!);
    await waitFor(() => expect(ipc.removeSharedFolder).toHaveBeenCalledWith("/old"));
    await waitFor(() => expect(screen.queryByText("/old")).toBeNull());
  });

  it("shows the backend's refusal", async () => {
    const ipc = fake({ shared: [], knowledge: [] });
    ipc.addSharedFolder = vi.fn(() => Promise.reject({ kind: "not_found", message: "/nope does not exist" }));
    renderIn(<SharedFolders ipc={ipc} />);
    expect(await screen.findByText("No shared folder yet. Servers see only the knowledge-base folders.")).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Folder path"), { target: { value: "/nope" } });
    fireEvent.click(screen.getByRole("button", { name: "Share folder" }));
    expect(await screen.findByText(/\/nope does not exist/)).toBeTruthy();
  });
});
