// Installing an MCP bundle from the servers page, and an installed bundle's settings.
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../../../test/render";
import { fake, view } from "../../../test/fakeServers";
import { ServersSettings } from "./ServersSettings";

afterEach(cleanup);

describe("ServersSettings", () => {
  it("asks for a bundle's strings in the window's language", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />, "zh");
    fireEvent.click(await screen.findByRole("button", { name: "安装扩展包…" }));
    await waitFor(() => expect(f.ipc.bundlePreview).toHaveBeenCalledWith("/tmp/notes-2.0.0.mcpb", "zh-CN"));
  });

  it("installs a bundle: shows what it is, fills defaults, picks folders, keeps a stored secret left empty", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Install bundle…" }));
    const dialog = await screen.findByTestId("bundle-install");
    expect(f.ipc.bundlePreview).toHaveBeenCalledWith("/tmp/notes-2.0.0.mcpb", "en-US");
    expect(within(dialog).getByTestId("bundle-about").textContent).toBe("Notes 2.0.0 · by Ada");
    expect(within(dialog).getByTestId("bundle-icon").getAttribute("src")).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(within(dialog).getByTestId("bundle-update").textContent).toContain("Version 1.0.0 is installed");
    const token = within(dialog).getByLabelText("Token") as HTMLInputElement;
    expect(token.type).toBe("password");
    expect(token.placeholder).toBe("stored in keyring");
    expect(token.required).toBe(false);
    const folders = within(dialog).getByLabelText(/^Folders/) as HTMLTextAreaElement;
    expect(folders.value).toBe("/home/ada/Notes");
    expect((within(dialog).getByLabelText("Limit") as HTMLInputElement).value).toBe("10");
    fireEvent.click(within(dialog).getByRole("button", { name: "Choose Folders" }));
    await waitFor(() => expect(folders.value).toBe("/home/ada/Notes\n/srv/shared notes"));
    fireEvent.change(within(dialog).getByLabelText("Limit"), { target: { value: "25" } });
    fireEvent.click(within(dialog).getByLabelText("Verbose"));
    fireEvent.click(within(dialog).getByRole("button", { name: "Update" }));
    await waitFor(() => expect(f.ipc.installBundle).toHaveBeenCalled());
    const [preview, signer, values] = (f.ipc.installBundle as ReturnType<typeof vi.fn>).mock.calls[0] as [string, string | null, Record<string, unknown>];
    // What the preview showed: its opened copy, unsigned.
    expect([preview, signer]).toEqual(["preview-1", null]);
    // The token left empty is not sent (the core keeps the stored one); nor is the empty region.
    expect(values).toEqual({ folders: ["/home/ada/Notes", "/srv/shared notes"], limit: 25, verbose: true });
    expect((await screen.findByTestId("bundle-installed")).textContent).toBe("Installed the server notes.");
    expect(screen.queryByTestId("bundle-install")).toBeNull();
  });

  it("changes an installed bundle's settings in its form, filled in with the values it has", async () => {
    const f = fake([{ ...view("ready"), bundle: true }]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByTestId("server-bundle-settings"));
    const dialog = await screen.findByTestId("bundle-install");
    expect(f.ipc.bundleSettings).toHaveBeenCalledWith("files", "en-US");
    expect(within(dialog).getByRole("heading").textContent).toBe("Notes: settings");
    expect((within(dialog).getByLabelText(/^Folders/) as HTMLTextAreaElement).value).toBe("/home/ada/Work");
    expect((within(dialog).getByLabelText("Limit") as HTMLInputElement).value).toBe("40");
    expect((within(dialog).getByLabelText("Token") as HTMLInputElement).placeholder).toBe("stored in keyring");
    fireEvent.change(within(dialog).getByLabelText("Limit"), { target: { value: "50" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save and restart" }));
    await waitFor(() => expect(f.ipc.configureBundle).toHaveBeenCalledWith("files", { folders: ["/home/ada/Work"], limit: 50, verbose: false }));
    await waitFor(() => expect(screen.queryByTestId("bundle-install")).toBeNull());
    expect(f.ipc.installBundle).not.toHaveBeenCalled();
  });

  it("offers no bundle settings for a server not installed from a bundle", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    expect(screen.queryByTestId("server-bundle-settings")).toBeNull();
  });

  it("keeps the install form open with the core's reason when a setting is refused", async () => {
    const f = fake([]);
    f.ipc.installBundle = vi.fn(() =>
      Promise.reject({ kind: "invalid_input", message: "Folders (user_config.folders): \"docs\" is not an absolute path" }),
    );
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Install bundle…" }));
    const dialog = await screen.findByTestId("bundle-install");
    fireEvent.change(within(dialog).getByLabelText("Token"), { target: { value: "  tok with spaces " } });
    fireEvent.change(within(dialog).getByLabelText(/^Folders/), { target: { value: "docs" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Update" }));
    expect(await within(dialog).findByText(/is not an absolute path/)).toBeTruthy();
    const [, , values] = (f.ipc.installBundle as ReturnType<typeof vi.fn>).mock.calls[0] as [string, string | null, Record<string, unknown>];
    expect(values.token).toBe("  tok with spaces ");
    expect(screen.getByTestId("bundle-install")).toBeTruthy();
  });

  it("opens nothing when the file dialog is cancelled", async () => {
    const f = fake([]);
    f.ipc.pickBundle = vi.fn(() => Promise.resolve(null));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Install bundle…" }));
    await waitFor(() => expect(f.ipc.pickBundle).toHaveBeenCalled());
    expect(f.ipc.bundlePreview).not.toHaveBeenCalled();
    expect(screen.queryByTestId("bundle-install")).toBeNull();
  });
});
