// A server's prompts, resources and templates on its page, and watching a resource.
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../../../test/render";
import { fake, view } from "../../../test/fakeServers";
import { ServersSettings } from "./ServersSettings";

afterEach(cleanup);

describe("ServersSettings", () => {
  it("tries the server's prompts, resources and templates on its page, with its suggestions", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Prompts & resources" }));
    const prompts = await screen.findAllByTestId("server-prompt");
    // Shown by its title, with the name it is called by.
    expect(prompts.map((p) => p.textContent)).toEqual(["Summarise/summarizeSummarise a fileTry…"]);
    expect(prompts[0]!.querySelector("img.mcp-icon")?.getAttribute("src"), "the prompt's icon").toBe("data:image/png;base64,iVBORw0KGgo=");
    fireEvent.click(within(prompts[0]!).getByRole("button", { name: "Try…" }));
    fireEvent.change(screen.getByLabelText("File *"), { target: { value: "/tmp" } });
    fireEvent.click(within(await screen.findByRole("listbox", { name: "Suggestions for File" })).getByRole("button", { name: "/tmp/b" }));
    expect(f.ipc.completeArgument).toHaveBeenLastCalledWith("files", { type: "prompt", name: "summarize" }, "path", "/tmp", { path: "/tmp" }, expect.any(AbortSignal));
    fireEvent.click(screen.getByRole("button", { name: "Get prompt" }));
    expect((await screen.findByTestId("prompt-preview")).textContent).toBe("Please summarise /tmp/b");

    const [notes, dot] = screen.getAllByTestId("server-resource");
    fireEvent.click(within(notes!).getByRole("button", { name: "Read" }));
    await waitFor(() => expect(screen.getByTestId("resource-preview").textContent).toContain("# Notes"));
    expect(screen.queryByTestId("prompt-preview")).toBeNull();
    fireEvent.click(within(dot!).getByRole("button", { name: "Read" }));
    const picture = await screen.findByAltText("file:///dot.png");
    expect(picture.getAttribute("src")).toBe("data:image/png;base64,iVBORw==");

    const template = screen.getByTestId("server-template");
    fireEvent.click(within(template).getByRole("button", { name: "Try…" }));
    fireEvent.change(within(template).getByLabelText("name *"), { target: { value: "missing" } });
    fireEvent.click(within(template).getByRole("button", { name: "Read" }));
    expect((await screen.findByRole("alert")).textContent).toContain('MCP server "files" returned error -32002: not found');
    expect(f.ipc.readResource).toHaveBeenLastCalledWith("files", "file:///missing", expect.any(AbortSignal));
  });

  it("watches a resource: its changes are marked and the one shown is read again", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Prompts & resources" }));
    const box = (await screen.findByLabelText("Watch notes.md for changes")) as HTMLInputElement;
    expect(box.checked).toBe(false);
    fireEvent.click(box);
    await waitFor(() => expect((screen.getByLabelText("Watch notes.md for changes") as HTMLInputElement).checked).toBe(true));
    expect(f.ipc.watchResource).toHaveBeenCalledWith("files", "file:///notes.md", true);

    const [notes] = screen.getAllByTestId("server-resource");
    fireEvent.click(within(notes!).getByRole("button", { name: "Read" }));
    await screen.findByTestId("resource-preview");
    const reads = (f.ipc.readResource as ReturnType<typeof vi.fn>).mock.calls.length;
    await f.updated({ server: "other", uri: "file:///notes.md" });
    expect(screen.queryByTestId("resource-changed")).toBeNull();
    await f.updated({ server: "files", uri: "file:///notes.md" });
    expect(within(notes!).getByTestId("resource-changed").textContent).toMatch(/^changed at /);
    await waitFor(() => expect(f.ipc.readResource).toHaveBeenCalledTimes(reads + 1));
  });
});
