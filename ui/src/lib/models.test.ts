import { describe, expect, it } from "vitest";
import { defaultModel } from "./models";

const models = [
  { provider: "deepseek", model: "deepseek-chat" },
  { provider: "deepseek", model: "deepseek-reasoner" },
  { provider: "ollama", model: "" },
  { provider: "ollama", model: "qwen3" },
];

describe("defaultModel", () => {
  it("is the first provider's default without an assistant", () => {
    expect(defaultModel(models, null)).toEqual({ provider: "deepseek", model: "deepseek-chat" });
  });

  it("is the assistant's provider and model, or that provider's default", () => {
    expect(defaultModel(models, { provider: "ollama", model: "llama3" })).toEqual({ provider: "ollama", model: "llama3" });
    expect(defaultModel(models, { provider: "ollama", model: null })).toEqual({ provider: "ollama", model: "qwen3" });
    expect(defaultModel(models, { provider: null, model: "deepseek-reasoner" })).toEqual({ provider: "deepseek", model: "deepseek-reasoner" });
  });

  it("is unknown without providers", () => {
    expect(defaultModel([], null)).toBeNull();
  });
});
