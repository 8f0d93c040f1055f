import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SavedFile } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { PartView, ToolResultView } from "../chat/ToolResultView";
import { ResourceParts } from "./ResourceParts";
import { FileSaver, type SaveIpc } from "./SaveFile";

afterEach(cleanup);

function fakeSaver(answer: () => Promise<SavedFile[] | null>): SaveIpc {
  return { saveFiles: vi.fn(answer), showInFolder: vi.fn(() => Promise.resolve()) };
}

describe("SaveFile", () => {
  it("saves a picture a tool made into the downloads folder and shows it there", async () => {
    const saver = fakeSaver(() => Promise.resolve([{ name: "image (1).png", path: "/home/u/Downloads/image (1).png", bytes: 3 }]));
    renderIn(
      <FileSaver.Provider value={saver}>
        <ToolResultView result={{ content: [{ type: "image", data: "AAEC", mime_type: "image/png" }], structured_content: null, is_error: false }} server="paint" />
      </FileSaver.Provider>,
    );
    fireEvent.click(screen.getByTestId("save-file-save"));
    expect(saver.saveFiles).toHaveBeenCalledWith(null, [{ type: "resource", resource: { uri: "image", mimeType: "image/png", blob: "AAEC" } }], false);
    expect((await screen.findByTestId("saved-files")).textContent).toContain("Saved image (1).png in /home/u/Downloads");
    fireEvent.click(screen.getByTestId("show-in-folder"));
    expect(saver.showInFolder).toHaveBeenCalledWith("/home/u/Downloads/image (1).png");
  });

  it("saves a resource whole from its server, to a folder the user picks, and says why when it cannot", async () => {
    const saver = fakeSaver(() => Promise.resolve(null));
    const part = { uri: "file:///logs/today.log", mime_type: "text/plain", text: "cut…", blob: null, size: 900_000, truncated: true };
    renderIn(
      <FileSaver.Provider value={saver}>
        <ResourceParts parts={[part]} server="files" />
      </FileSaver.Provider>,
    );
    fireEvent.click(screen.getByTestId("save-file-choose"));
    expect(saver.saveFiles).toHaveBeenCalledWith("files", [{ type: "resource_link", uri: "file:///logs/today.log", mimeType: "text/plain" }], true);
    // The dialog was cancelled: nothing to say.
    await waitFor(() => expect((screen.getByTestId("save-file-save") as HTMLButtonElement).disabled).toBe(false));
    expect(screen.queryByTestId("saved-files")).toBeNull();
    saver.saveFiles = vi.fn(() => Promise.reject({ kind: "data_dir", message: "could not save /full/today.log: No space left on device" }));
    fireEvent.click(screen.getByTestId("save-file-save"));
    expect((await screen.findByRole("alert")).textContent).toBe("Nothing was saved: could not save /full/today.log: No space left on device");
  });

  it("offers no saving for a picture the user attached", () => {
    renderIn(<PartView part={{ type: "image", data: "AAEC", mime_type: "image/png" }} attached />);
    expect(screen.getByRole("img")).toBeTruthy();
    expect(screen.queryByTestId("save-file")).toBeNull();
  });
});
