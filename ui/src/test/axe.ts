// axe-core over a rendered component: no serious or critical violation. Colour contrast is left
// to tokens.test.ts and the real window (jsdom lays nothing out, so axe cannot measure it).
import axe from "axe-core";
import { expect } from "vitest";

export async function expectAccessible(root: Element = document.body): Promise<void> {
  const result = await axe.run(root, {
    resultTypes: ["violations"],
    rules: { "color-contrast": { enabled: false }, region: { enabled: false } },
  });
  const serious = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  expect(serious).toEqual([]);
}
