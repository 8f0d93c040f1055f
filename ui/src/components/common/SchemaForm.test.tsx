import { cleanup, fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { JsonSchema, ServerRequest } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { ServerRequestDialog } from "../chat/ServerRequestDialog";
import { SchemaForm } from "./SchemaForm";

afterEach(cleanup);

const schema: JsonSchema = {
  type: "object",
  properties: {
    path: { type: "string", title: "Path", description: "File to read" },
    limit: { type: "integer", minimum: 1 },
    recursive: { type: "boolean" },
    mode: { type: "string", enum: ["text", "binary"] },
    tags: { type: "array", items: { type: "string" } },
    options: { type: "object", properties: { depth: { type: "number" } } },
    extra: {},
  },
  required: ["path", "mode"],
};

/** The choices of an elicitation as server-everything asks for them (MCP 2025-11-25). */
const choicesSchema: JsonSchema = {
  type: "object",
  properties: {
    hero: { type: "string", title: "Hero", oneOf: [{ const: "hero-1", title: "Superman" }, { const: "hero-2", title: "Wonder Woman" }] },
    pet: { type: "string", title: "Pet", enum: ["pet-1", "pet-2"], enumNames: ["Cats", "Dogs"] },
    fish: { type: "array", title: "Fish", minItems: 1, maxItems: 2, items: { anyOf: [{ const: "fish-1", title: "Tuna" }, { const: "fish-2", title: "Salmon" }, { const: "fish-3", title: "Trout" }] } },
    sizes: { type: "array", title: "Sizes", items: { type: "integer", enum: [1, 2, 3] } },
    count: { type: "integer", title: "Count", minimum: 1, maximum: 10 },
    nick: { type: "string", title: "Nick", minLength: 2, maxLength: 5 },
    born: { type: "string", title: "Born", format: "date" },
  },
  required: ["fish"],
};

describe("SchemaForm choices", () => {
  it("shows titled choices by their titles and sends their values", () => {
    const onSubmit = vi.fn();
    renderIn(<SchemaForm schema={choicesSchema} submitLabel="Send" onSubmit={onSubmit} />);
    const labels = (name: string) => [...(screen.getByLabelText(name) as HTMLSelectElement).options].map((o) => o.textContent);
    expect(labels("Hero")).toEqual(["Choose…", "Superman", "Wonder Woman"]);
    expect(labels("Pet")).toEqual(["Choose…", "Cats", "Dogs"]);
    expect((screen.getByLabelText("Born") as HTMLInputElement).type).toBe("date");
    fireEvent.change(screen.getByLabelText("Hero"), { target: { value: "hero-2" } });
    fireEvent.change(screen.getByLabelText("Pet"), { target: { value: "pet-1" } });
    const fish = screen.getByRole("group", { name: "Fish *" });
    fireEvent.click(within(fish).getByLabelText("Tuna"));
    fireEvent.click(within(fish).getByLabelText("Trout"));
    fireEvent.click(within(screen.getByRole("group", { name: "Sizes" })).getByLabelText("2"));
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(onSubmit).toHaveBeenCalledWith({ hero: "hero-2", pet: "pet-1", fish: ["fish-1", "fish-3"], sizes: [2] });
  });

  it("checks item counts, ranges and lengths before sending", () => {
    const onSubmit = vi.fn();
    renderIn(<SchemaForm schema={choicesSchema} submitLabel="Send" onSubmit={onSubmit} />);
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(screen.getByRole("group", { name: "Fish *" }).textContent).toContain("This field is required.");
    const fish = screen.getByRole("group", { name: "Fish *" });
    for (const f of ["Tuna", "Salmon", "Trout"]) fireEvent.click(within(fish).getByLabelText(f));
    fireEvent.change(screen.getByLabelText("Count"), { target: { value: "11" } });
    fireEvent.change(screen.getByLabelText("Nick"), { target: { value: "x" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    const alerts = screen.getAllByRole("alert").map((a) => a.textContent);
    expect(alerts).toEqual(["Choose 1 to 2.", "Enter a number from 1 to 10.", "Enter 2 to 5 characters."]);
    expect(onSubmit).not.toHaveBeenCalled();
    fireEvent.click(within(fish).getByLabelText("Salmon"));
    fireEvent.change(screen.getByLabelText("Count"), { target: { value: "10" } });
    fireEvent.change(screen.getByLabelText("Nick"), { target: { value: "ada" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect(onSubmit).toHaveBeenCalledWith({ fish: ["fish-1", "fish-3"], count: 10, nick: "ada" });
  });
});

describe("SchemaForm", () => {
  it("generates a labelled field for every property type", () => {
    renderIn(<SchemaForm schema={schema} submitLabel="Run" onSubmit={() => undefined} />);
    expect((screen.getByLabelText("Path *") as HTMLInputElement).type).toBe("text");
    expect((screen.getByLabelText("limit") as HTMLInputElement).type).toBe("number");
    expect((screen.getByLabelText("recursive") as HTMLInputElement).type).toBe("checkbox");
    expect(screen.getByLabelText("mode *").tagName).toBe("SELECT");
    expect(screen.getByLabelText("tags").tagName).toBe("TEXTAREA");
    expect(screen.getByRole("group", { name: "options" })).toBeTruthy();
    expect(screen.getByLabelText("depth")).toBeTruthy();
    expect(screen.getByLabelText("extra").tagName).toBe("TEXTAREA");
    expect(screen.getByText("File to read")).toBeTruthy();
  });

  it("refuses to submit without required fields and says which", () => {
    const onSubmit = vi.fn();
    renderIn(<SchemaForm schema={schema} submitLabel="Run" onSubmit={onSubmit} />);
    fireEvent.click(screen.getByRole("button", { name: "Run" }));
    expect(onSubmit).not.toHaveBeenCalled();
    expect(screen.getAllByText("This field is required.")).toHaveLength(2);
  });

  it("rejects malformed JSON in free-form fields", () => {
    const onSubmit = vi.fn();
    renderIn(<SchemaForm schema={schema} initial={{ path: "a", mode: "text" }} submitLabel="Run" onSubmit={onSubmit} />);
    fireEvent.change(screen.getByLabelText("extra"), { target: { value: "{oops" } });
    fireEvent.click(screen.getByRole("button", { name: "Run" }));
    expect(onSubmit).not.toHaveBeenCalled();
    expect(screen.getByText("Enter valid JSON.")).toBeTruthy();
  });

  it("submits typed values", () => {
    const onSubmit = vi.fn();
    renderIn(<SchemaForm schema={schema} submitLabel="Run" onSubmit={onSubmit} />);
    fireEvent.change(screen.getByLabelText("Path *"), { target: { value: "/tmp/x" } });
    fireEvent.change(screen.getByLabelText("limit"), { target: { value: "5" } });
    fireEvent.click(screen.getByLabelText("recursive"));
    fireEvent.change(screen.getByLabelText("mode *"), { target: { value: "binary" } });
    fireEvent.change(screen.getByLabelText("tags"), { target: { value: "a\n\nb" } });
    fireEvent.change(screen.getByLabelText("depth"), { target: { value: "2.5" } });
    fireEvent.change(screen.getByLabelText("extra"), { target: { value: '{"k": [1]}' } });
    fireEvent.click(screen.getByRole("button", { name: "Run" }));
    expect(onSubmit).toHaveBeenCalledWith({
      path: "/tmp/x",
      limit: 5,
      recursive: true,
      mode: "binary",
      tags: ["a", "b"],
      options: { depth: 2.5 },
      extra: { k: [1] },
    });
  });
});

describe("ServerRequestDialog", () => {
  it("renders an elicitation form from the requested schema and sends the answer", () => {
    const onRespond = vi.fn();
    const req: ServerRequest = {
      kind: "elicitation",
      id: "r1",
      server: "github",
      message: "Which repository?",
      requested_schema: { type: "object", properties: { repo: { type: "string" }, private: { type: "boolean" } }, required: ["repo"] },
    };
    renderIn(<ServerRequestDialog request={req} onRespond={onRespond} />);
    expect(screen.getByRole("dialog", { name: "github asks for information" })).toBeTruthy();
    fireEvent.change(screen.getByLabelText("repo *"), { target: { value: "acme/app" } });
    fireEvent.click(screen.getByRole("button", { name: "Submit" }));
    expect(onRespond).toHaveBeenCalledWith("r1", { action: "accept", content: { repo: "acme/app", private: false } });
    fireEvent.click(screen.getByRole("button", { name: "Decline" }));
    expect(onRespond).toHaveBeenLastCalledWith("r1", { action: "decline" });
  });

  it("lets the user edit a sampling request before approving, or reject it", () => {
    const onRespond = vi.fn();
    const req: ServerRequest = {
      kind: "sampling",
      id: "s1",
      server: "summarizer",
      messages: [{ role: "user", text: "Summarise this" }],
      system_prompt: null,
      max_tokens: 200,
      model: "deepseek / deepseek-chat",
      model_hints: ["claude-sonnet"],
    };
    renderIn(<ServerRequestDialog request={req} onRespond={onRespond} />);
    expect(screen.getByTestId("sampling-model").textContent).toBe("It goes to deepseek / deepseek-chat. (The server would prefer claude-sonnet.)");
    fireEvent.change(screen.getByLabelText("You"), { target: { value: "Summarise briefly" } });
    fireEvent.click(screen.getByTestId("sampling-approve"));
    expect(onRespond).toHaveBeenCalledWith("s1", {
      action: "approve_sampling",
      messages: [{ role: "user", text: "Summarise briefly" }],
      system_prompt: null,
    });
    fireEvent.click(screen.getByTestId("sampling-reject"));
    expect(onRespond).toHaveBeenLastCalledWith("s1", { action: "decline" });
  });
});
