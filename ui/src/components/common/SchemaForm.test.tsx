import { cleanup, fireEvent, screen } from "@testing-library/react";
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
    };
    renderIn(<ServerRequestDialog request={req} onRespond={onRespond} />);
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
