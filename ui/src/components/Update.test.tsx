import { act, cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { UpdateProgress, UpdateView } from "../lib/ipc";
import { renderIn } from "../test/render";
import { UpdateCard, type UpdateIpc } from "./Update";

afterEach(cleanup);

const newer: UpdateView = { version: "1.1.0", current_version: "1.0.0", notes: "Faster search\nA tray icon", date: "2026-12-01T10:00:00Z", install: { kind: "here" } };

function fake() {
  let progress: (p: UpdateProgress) => void = () => undefined;
  let finish: (failure?: unknown) => void = () => undefined;
  const ipc = {
    installUpdate: vi.fn((_version: string, onEvent: (p: UpdateProgress) => void) => {
      progress = onEvent;
      return new Promise<void>((resolve, reject) => {
        finish = (failure) => (failure === undefined ? resolve() : reject(failure));
      });
    }),
    restartApp: vi.fn(() => Promise.resolve()),
    openLink: vi.fn(() => Promise.resolve()),
  } satisfies UpdateIpc;
  return { ipc, progress: (p: UpdateProgress) => act(() => progress(p)), finish: (failure?: unknown) => act(() => finish(failure)) };
}

describe("UpdateCard", () => {
  it("shows what is new, installs on the user's word with its progress, then offers a restart", async () => {
    const f = fake();
    const later = vi.fn();
    renderIn(<UpdateCard update={newer} ipc={f.ipc} onLater={later} />);
    expect(screen.getByRole("heading").textContent).toBe("Patchbay 1.1.0 is available (you have 1.0.0)");
    expect(screen.getByTestId("update-notes").textContent).toBe("Faster search\nA tray icon");
    expect(screen.getByText("Released 2026-12-01")).toBeTruthy();
    expect(f.ipc.installUpdate).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Install" }));
    expect(f.ipc.installUpdate.mock.calls[0]![0]).toBe("1.1.0");
    expect((screen.getByRole("button", { name: "Install" }) as HTMLButtonElement).disabled).toBe(true);
    f.progress({ kind: "downloading", done: 512, total: 2048 });
    expect(screen.getByTestId("update-progress").textContent).toBe("Downloading… 25%");
    f.progress({ kind: "installing" });
    expect(screen.getByTestId("update-progress").textContent).toBe("Installing…");
    f.finish();
    expect((await screen.findByTestId("update-installed")).textContent).toContain("Patchbay 1.1.0 is installed");
    fireEvent.click(screen.getByRole("button", { name: "Restart now" }));
    expect(f.ipc.restartApp).toHaveBeenCalled();
  });

  it("says why an install failed (a package whose signature does not match), and offers it again", async () => {
    const f = fake();
    renderIn(<UpdateCard update={newer} ipc={f.ipc} />);
    fireEvent.click(screen.getByRole("button", { name: "Install" }));
    f.finish({ kind: "invalid_input", message: "Patchbay 1.1.0 was not installed: the signature does not match (nothing was changed)" });
    expect((await screen.findByRole("alert")).textContent).toContain("signature does not match");
    await waitFor(() => expect((screen.getByRole("button", { name: "Install" }) as HTMLButtonElement).disabled).toBe(false));
    expect(f.ipc.restartApp).not.toHaveBeenCalled();
  });

  it("sends an install that cannot update itself to the release page, saying why", () => {
    const f = fake();
    const elsewhere: UpdateView = { ...newer, install: { kind: "elsewhere", why: "this copy of Patchbay was not installed from a package", release_url: "https://example.com/releases/latest" } };
    renderIn(<UpdateCard update={elsewhere} ipc={f.ipc} />);
    expect(screen.getByTestId("update-elsewhere").textContent).toBe("This install cannot update itself: this copy of Patchbay was not installed from a package.");
    expect(screen.queryByRole("button", { name: "Install" })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Open the release page" }));
    expect(f.ipc.openLink).toHaveBeenCalledWith("https://example.com/releases/latest");
  });
});
