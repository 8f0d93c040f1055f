import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ConversationSettings } from "../../lib/ipc";
import { renderIn, signalOf, toolInfo, untilCancelled } from "../../test/render";
import { Composer, type ComposerProps } from "./Composer";
import { expectAccessible } from "../../test/axe";

afterEach(cleanup);

const settings: ConversationSettings = { provider: null, model: null, servers: null, disabled_tools: [], assistant_id: null, system_prompt: null, reasoning: null };


function setup(extra: Partial<ComposerProps> = {}) {
  const props: ComposerProps = {
    streaming: false,
    onSend: vi.fn(),
    onCancel: vi.fn(),
    models: [{ provider: "openai", model: "gpt-4o" }],
    settings,
    onSettings: vi.fn(),
    tools: [toolInfo("fs", "read", { schema_tokens: 100 }), toolInfo("fs", "write", { schema_tokens: 50 }), toolInfo("web", "fetch", { schema_tokens: 30 })],
    prompts: [
      { server: "fs", name: "summarize", title: "Summarise", description: "Summarise a file", arguments: [{ name: "path", title: null, description: null, required: true }], icons: [] },
    ],
    resources: [],
    templates: [],
    getPrompt: vi.fn(() => Promise.resolve("Please summarise /tmp/a")),
    complete: vi.fn(() => Promise.resolve([])),
    expandTemplate: vi.fn((t: string, v: Record<string, string>) => Promise.resolve(t.replace("{id}", v.id ?? ""))),
    ...extra,
  };
  const r = renderIn(<Composer {...props} />);
  return { props, ...r };
}

const input = () => screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)");

/** Opens the composer menu named `menu` from the keyboard and chooses `item` in it. */
function pick(menu: string, item: string, role: "menuitem" | "menuitemradio" = "menuitem") {
  fireEvent.keyDown(screen.getByRole("button", { name: menu }), { key: "Enter" });
  fireEvent.click(screen.getByRole(role, { name: item }));
}

describe("Composer", () => {
  it("sends on Enter, not on Shift+Enter", () => {
    const { props } = setup();
    fireEvent.change(input(), { target: { value: "hello" } });
    fireEvent.keyDown(input(), { key: "Enter", shiftKey: true });
    expect(props.onSend).not.toHaveBeenCalled();
    fireEvent.keyDown(input(), { key: "Enter" });
    expect(props.onSend).toHaveBeenCalledWith("hello", []);
    expect((input() as HTMLTextAreaElement).value).toBe("");
  });

  it("cancels the turn with Esc or the stop button while streaming", () => {
    const { props } = setup({ streaming: true });
    fireEvent.change(input(), { target: { value: "more" } });
    fireEvent.keyDown(input(), { key: "Enter" });
    expect(props.onSend).not.toHaveBeenCalled();
    fireEvent.keyDown(input(), { key: "Escape" });
    expect(props.onCancel).toHaveBeenCalledTimes(1);
    fireEvent.keyDown(document.body, { key: "Escape" });
    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    expect(props.onCancel).toHaveBeenCalledTimes(3);
    // Named for assistive technology as the UI Events spec names the key, not as drawn ("Esc").
    expect(screen.getByRole("button", { name: "Stop" }).getAttribute("aria-keyshortcuts")).toBe("Escape");
  });

  it("shows the tool count and schema tokens, and toggles servers and tools", async () => {
    const { props, rerender } = setup();
    const button = screen.getByRole("button", { name: "Tools: 3 (~180 tokens)" });
    fireEvent.click(button);
    await expectAccessible();
    fireEvent.click(screen.getByRole("checkbox", { name: /write/ }));
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, disabled_tools: ["fs/write"] });
    fireEvent.click(screen.getByRole("checkbox", { name: "web" }));
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, servers: ["fs"] });
    rerender(<Composer {...props} settings={{ ...settings, servers: ["fs"], disabled_tools: ["fs/write"] }} />);
    expect(screen.getByRole("button", { name: "Tools: 1 (~100 tokens)" })).toBeTruthy();
  });

  it("picks a model from a menu searched by typing, with the mouse or the keyboard", async () => {
    const { props } = setup();
    fireEvent.click(screen.getByRole("button", { name: "Model: Default model" }));
    const search = screen.getByRole("combobox", { name: "Search models" });
    const listed = () => within(screen.getByRole("listbox", { name: "Model" })).getAllByRole("option");
    expect(listed().map((o) => o.textContent)).toEqual(["Default model", "openai / gpt-4o"]);
    await expectAccessible();
    fireEvent.change(search, { target: { value: "gpt 4o" } });
    expect(listed().map((o) => o.textContent)).toEqual(["openai / gpt-4o"]);
    fireEvent.click(screen.getByRole("option", { name: "openai / gpt-4o" }));
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, provider: "openai", model: "gpt-4o" });
    expect(screen.queryByRole("listbox")).toBeNull();
    // The keyboard: the first match is active; arrows move; Enter chooses.
    fireEvent.click(screen.getByRole("button", { name: /^Model: / }));
    const box = screen.getByRole("combobox", { name: "Search models" });
    fireEvent.change(box, { target: { value: "zzz" } });
    expect(screen.getByText("No model matches.")).toBeTruthy();
    fireEvent.change(box, { target: { value: "" } });
    fireEvent.keyDown(box, { key: "ArrowUp" });
    const options = listed();
    expect(box.getAttribute("aria-activedescendant")).toBe(options[options.length - 1]!.id);
    fireEvent.keyDown(box, { key: "ArrowDown" });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, provider: null, model: null });
  });

  it("picks this conversation's reasoning effort, off, and back to the assistant's", async () => {
    const { props, rerender } = setup();
    const trigger = () => screen.getByRole("button", { name: /^Reasoning effort: / });
    expect(trigger().textContent).toBe("Thinking: assistant's");
    fireEvent.keyDown(trigger(), { key: "Enter" });
    const options = screen.getAllByRole("menuitemradio");
    expect(options.map((o) => o.textContent)).toEqual(["Thinking: assistant's", "Thinking: off", "Thinking: low", "Thinking: medium", "Thinking: high"]);
    expect(options[0]!.getAttribute("aria-checked")).toBe("true");
    await expectAccessible();
    fireEvent.click(screen.getByRole("menuitemradio", { name: "Thinking: off" }));
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, reasoning: "off" });
    expect(screen.queryByRole("menu")).toBeNull();
    pick("Reasoning effort: Thinking: assistant's", "Thinking: high", "menuitemradio");
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, reasoning: "high" });
    rerender(<Composer {...props} settings={{ ...settings, reasoning: "high" }} />);
    expect(trigger().textContent).toBe("Thinking: high");
    pick("Reasoning effort: Thinking: high", "Thinking: assistant's", "menuitemradio");
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, reasoning: null });
  });

  it("offers MCP prompts as / commands with an argument form", async () => {
    const { props } = setup();
    fireEvent.change(input(), { target: { value: "/sum" } });
    expect(screen.getByRole("listbox", { name: "Prompts" }).textContent).toContain("/summarize Summarise");
    fireEvent.keyDown(input(), { key: "Enter" });
    expect(props.onSend).not.toHaveBeenCalled();
    const dialog = screen.getByTestId("prompt-dialog");
    expect(dialog).toBeTruthy();
    fireEvent.change(screen.getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(screen.getByRole("button", { name: "Insert prompt" }));
    expect(props.getPrompt).toHaveBeenCalledWith(props.prompts[0], { path: "/tmp/a" }, expect.any(AbortSignal));
    await waitFor(() => expect((input() as HTMLTextAreaElement).value).toBe("Please summarise /tmp/a"));
    expect(screen.queryByTestId("prompt-dialog")).toBeNull();
  });

  it("calls off a prompt being filled in and its suggestions when the dialog closes, and a suggestion when the next is asked", async () => {
    const getPrompt = vi.fn(untilCancelled);
    const complete = vi.fn(untilCancelled);
    setup({ getPrompt, complete });
    fireEvent.change(input(), { target: { value: "/summarize" } });
    fireEvent.keyDown(input(), { key: "Enter" });
    fireEvent.change(screen.getByLabelText("path *"), { target: { value: "/tm" } });
    await waitFor(() => expect(complete).toHaveBeenCalledTimes(1));
    const first = signalOf(complete);
    fireEvent.change(screen.getByLabelText("path *"), { target: { value: "/tmp/a" } });
    await waitFor(() => expect(complete).toHaveBeenCalledTimes(2));
    expect(first.aborted).toBe(true);
    const second = signalOf(complete);
    expect(second.aborted).toBe(false);

    fireEvent.click(screen.getByRole("button", { name: "Insert prompt" }));
    const filling = signalOf(getPrompt);
    expect(filling.aborted).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: "Close" }));
    expect(screen.queryByTestId("prompt-dialog")).toBeNull();
    expect(filling.aborted).toBe(true);
    expect(second.aborted).toBe(true);
    // Nothing came back into the message.
    await Promise.resolve();
    expect((input() as HTMLTextAreaElement).value).toBe("/summarize");
  });

  it("shows the server's suggestions for a prompt argument as it is typed, with the other arguments", async () => {
    const team = {
      server: "hr",
      name: "promote",
      title: null,
      description: null,
      arguments: [
        { name: "department", title: null, description: null, required: true },
        { name: "name", title: "Employee", description: null, required: true },
      ],
      icons: [],
    };
    const complete = vi.fn((_s: string, _t: unknown, arg: string, value: string) =>
      Promise.resolve(arg === "department" ? ["Sales", "Support"].filter((d) => d.startsWith(value)) : ["David", "Eve"]),
    );
    setup({ prompts: [team], complete });
    fireEvent.change(input(), { target: { value: "/promote" } });
    fireEvent.keyDown(input(), { key: "Enter" });
    fireEvent.change(screen.getByLabelText("department *"), { target: { value: "Sa" } });
    const departments = await screen.findByRole("listbox", { name: "Suggestions for department" });
    expect(departments.textContent).toBe("Sales");
    expect(complete).toHaveBeenLastCalledWith("hr", { type: "prompt", name: "promote" }, "department", "Sa", { department: "Sa" }, expect.any(AbortSignal));
    fireEvent.click(screen.getByRole("button", { name: "Sales" }));
    expect((screen.getByLabelText("department *") as HTMLInputElement).value).toBe("Sales");
    expect(screen.queryByRole("listbox", { name: "Suggestions for department" })).toBeNull();

    fireEvent.focus(screen.getByLabelText("Employee *"));
    const names = await screen.findByRole("listbox", { name: "Suggestions for Employee" });
    expect(names.textContent).toBe("DavidEve");
    expect(complete).toHaveBeenLastCalledWith("hr", { type: "prompt", name: "promote" }, "name", "", { department: "Sales" }, expect.any(AbortSignal));
    // Escape closes the suggestions, not the dialog.
    fireEvent.keyDown(screen.getByLabelText("Employee *"), { key: "Escape" });
    expect(screen.queryByRole("listbox", { name: "Suggestions for Employee" })).toBeNull();
    expect(screen.getByTestId("prompt-dialog")).toBeTruthy();
  });

  it("attaches a resource made from a server's template, read from that server", async () => {
    const template = { server: "db", uri_template: "db://rows/{id}", name: "Row", description: "One row", mime_type: "text/plain", variables: ["id"], icons: [] };
    const complete = vi.fn(() => Promise.resolve(["42", "420"]));
    const { props } = setup({ templates: [template], complete });
    pick("Attach a resource", "db: Row (from a template…)");
    const dialog = screen.getByTestId("template-dialog");
    expect(dialog.textContent).toContain("db://rows/{id} — One row");
    fireEvent.change(screen.getByLabelText("id *"), { target: { value: "42" } });
    await screen.findByRole("listbox", { name: "Suggestions for id" });
    expect(complete).toHaveBeenLastCalledWith("db", { type: "resource_template", uri_template: "db://rows/{id}" }, "id", "42", { id: "42" }, expect.any(AbortSignal));
    // The value typed is not offered again.
    expect(screen.getByRole("listbox", { name: "Suggestions for id" }).textContent).toBe("420");
    fireEvent.click(screen.getByRole("button", { name: "Attach resource" }));
    await waitFor(() => expect(screen.queryByTestId("template-dialog")).toBeNull());
    expect(props.expandTemplate).toHaveBeenCalledWith("db://rows/{id}", { id: "42" });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(props.onSend).toHaveBeenCalledWith("", [
      { type: "resource_link", uri: "db://rows/42", name: "db://rows/42", mime_type: "text/plain", server: "db" },
    ]);
  });

  it("says why a template's resource could not be made, and keeps the dialog", async () => {
    const template = { server: "db", uri_template: "db://{broken", name: "Row", description: null, mime_type: null, variables: ["id"], icons: [] };
    const expandTemplate = vi.fn(() => Promise.reject({ kind: "invalid_input", message: "URI template is not valid" }));
    setup({ templates: [template], expandTemplate });
    pick("Attach a resource", "db: Row (from a template…)");
    fireEvent.change(screen.getByLabelText("id *"), { target: { value: "1" } });
    fireEvent.click(screen.getByRole("button", { name: "Attach resource" }));
    expect((await screen.findByRole("alert")).textContent).toBe("URI template is not valid");
    expect(screen.getByTestId("template-dialog")).toBeTruthy();
  });

  it("attaches picked pictures and documents, says which files it cannot take, and sends the rest", async () => {
    const { props } = setup();
    const png = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "dot.png", { type: "image/png" });
    const notes = new File(["squares"], "notes.md", { type: "text/markdown" });
    const pdf = new File(["%PDF"], "paper.pdf", { type: "application/pdf" });
    const heic = new File(["x"], "photo.heic", { type: "image/heic" });
    const huge = new File([new Uint8Array(21 * 1024 * 1024)], "scan.pdf", { type: "application/pdf" });
    fireEvent.change(screen.getByTestId("file-picker"), { target: { files: [png, notes, pdf, heic, huge] } });

    await waitFor(() => expect(screen.getAllByTestId("attachment-chip")).toHaveLength(3));
    expect(screen.getAllByTestId("attachment-chip").map((c) => c.textContent)).toEqual(["dot.png×", "notes.md×", "paper.pdf×"]);
    expect(screen.getAllByRole("alert").map((a) => a.textContent)).toEqual([
      "photo.heic: image/heic cannot be attached; attach a PNG, JPEG, GIF or WebP image, audio, a PDF, a Word document or text.",
      "scan.pdf is 21.0 MB; an attachment can be at most 20 MB.",
    ]);
    fireEvent.change(input(), { target: { value: "what is this?" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(props.onSend).toHaveBeenCalledWith("what is this?", [
      { type: "image", mime_type: "image/png", data: "iVBORw==", title: "dot.png" },
      { type: "file", title: "notes.md", data: btoa("squares") },
      { type: "file", title: "paper.pdf", data: btoa("%PDF") },
    ]);
    expect(screen.queryAllByTestId("attachment-chip")).toHaveLength(0);
    expect(screen.queryAllByRole("alert")).toHaveLength(0);
  });

  it("shows where files can be dropped while they are dragged over it", () => {
    setup();
    const composer = screen.getByTestId("composer");
    fireEvent.dragOver(composer, { dataTransfer: { types: ["Files"], files: [] } });
    expect(composer.className).toBe("composer dropping");
    fireEvent.dragLeave(composer, { relatedTarget: document.body });
    expect(composer.className).toBe("composer");
    fireEvent.dragOver(composer, { dataTransfer: { types: ["text/plain"], files: [] } });
    expect(composer.className).toBe("composer");
  });

  it("attaches a pasted picture and keeps pasted text as text", async () => {
    const { props } = setup();
    const shot = new File([new Uint8Array([1, 2, 3])], "image.png", { type: "image/png" });
    const pasted = fireEvent.paste(input(), { clipboardData: { files: [shot], getData: () => "" } });
    expect(pasted).toBe(false);
    await waitFor(() => expect(screen.getAllByTestId("attachment-chip")).toHaveLength(1));
    expect(fireEvent.paste(input(), { clipboardData: { files: [], getData: () => "words" } })).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(props.onSend).toHaveBeenCalledWith("", [{ type: "image", mime_type: "image/png", data: "AQID", title: "image.png" }]);
  });

  it("attaches an MCP resource", () => {
    const { props } = setup({ resources: [{ server: "fs", uri: "file:///a.md", name: "a.md", title: null, mime_type: "text/markdown", watchable: false, watched: false, icons: [] }] });
    pick("Attach a resource", "fs: a.md");
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(props.onSend).toHaveBeenCalledWith("", [{ type: "resource_link", uri: "file:///a.md", name: "a.md", server: null }]);
  });
});
