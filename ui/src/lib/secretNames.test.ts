import { describe, expect, it } from "vitest";
import data from "./secretNames.json";
import { isSecretName } from "./secretNames";

describe("isSecretName", () => {
  it("gives the core's verdict on every example the core wrote", () => {
    const examples = data.examples as [string, boolean][];
    expect(examples.length).toBeGreaterThan(10);
    for (const [name, secret] of examples) expect([name, isSecretName(name)]).toEqual([name, secret]);
  });
});
