import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ConversationSettings, ToolInfo } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { Composer, type ComposerProps } from "./Composer";

afterEach(cleanup);

const settings: ConversationSettings = { provider: null, model: null, servers: null, disabled_tools: [], assistant_id: null };

const tool = (server: string, name: string, schema_tokens: number): ToolInfo => ({
  server,
  name,
  description: "",
  input_schema: { type: "object" },
  enabled: true,
  approval: "ask",
  schema_tokens,
  stats: null,
});

function setup(extra: Partial<ComposerProps> = {}) {
  const props: ComposerProps = {
    streaming: false,
    onSend: vi.fn(),
    onCancel: vi.fn(),
    models: [{ provider: "openai", model: "gpt-4o" }],
    settings,
    onSettings: vi.fn(),
    tools: [tool("fs", "read", 100), tool("fs", "write", 50), tool("web", "fetch", 30)],
    prompts: [{ server: "fs", name: "summarize", description: "Summarise a file", arguments: [{ name: "path", description: null, required: true }] }],
    resources: [],
    getPrompt: vi.fn(() => Promise.resolve("Please summarise /tmp/a")),
    ...extra,
  };
  const r = renderIn(<Composer {...props} />);
  return { props, ...r };
}

const input = () => screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)");

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
  });

  it("shows the tool count and schema tokens, and toggles servers and tools", () => {
    const { props, rerender } = setup();
    const button = screen.getByRole("button", { name: "Tools: 3 (~180 tokens)" });
    fireEvent.click(button);
    fireEvent.click(screen.getByRole("checkbox", { name: /write/ }));
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, disabled_tools: ["fs/write"] });
    fireEvent.click(screen.getByRole("checkbox", { name: "web" }));
    expect(props.onSettings).toHaveBeenLastCalledWith({ ...settings, servers: ["fs"] });
    rerender(<Composer {...props} settings={{ ...settings, servers: ["fs"], disabled_tools: ["fs/write"] }} />);
    expect(screen.getByRole("button", { name: "Tools: 1 (~100 tokens)" })).toBeTruthy();
  });

  it("picks a model", () => {
    const { props } = setup();
    fireEvent.change(screen.getByLabelText("Model"), { target: { value: "openai\u0000gpt-4o" } });
    expect(props.onSettings).toHaveBeenCalledWith({ ...settings, provider: "openai", model: "gpt-4o" });
  });

  it("offers MCP prompts as / commands with an argument form", async () => {
    const { props } = setup();
    fireEvent.change(input(), { target: { value: "/sum" } });
    expect(screen.getByRole("listbox", { name: "Prompts" }).textContent).toContain("/summarize");
    fireEvent.keyDown(input(), { key: "Enter" });
    expect(props.onSend).not.toHaveBeenCalled();
    const dialog = screen.getByTestId("prompt-dialog");
    expect(dialog).toBeTruthy();
    fireEvent.change(screen.getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(screen.getByRole("button", { name: "Insert prompt" }));
    expect(props.getPrompt).toHaveBeenCalledWith(props.prompts[0], { path: "/tmp/a" });
    await waitFor(() => expect((input() as HTMLTextAreaElement).value).toBe("Please summarise /tmp/a"));
    expect(screen.queryByTestId("prompt-dialog")).toBeNull();
  });

  it("attaches an MCP resource", () => {
    const { props } = setup({ resources: [{ server: "fs", uri: "file:///a.md", name: "a.md", mime_type: "text/markdown" }] });
    fireEvent.change(screen.getByLabelText("Attach a resource"), { target: { value: "fs\u0000file:///a.md" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(props.onSend).toHaveBeenCalledWith("", [{ type: "resource_link", uri: "file:///a.md", name: "a.md", mime_type: "text/markdown" }]);
  });
});
