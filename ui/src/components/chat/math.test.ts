import { describe, expect, it } from "vitest";
import { normalizeMath } from "./math";

describe("normalizeMath", () => {
  it("writes \\( \\), \\[ \\] and Pandoc-style $ $ as $$", () => {
    expect(normalizeMath("Energy \\(E = mc^2\\) holds.")).toBe("Energy $$E = mc^2$$ holds.");
    expect(normalizeMath("So\n\\[\n\\int_0^1 x\\,dx\n\\]\ndone")).toBe("So\n\n$$\n\\int_0^1 x\\,dx\n$$\n\ndone");
    expect(normalizeMath("where $x^2$ grows")).toBe("where $$x^2$$ grows");
    expect(normalizeMath("already $$a+b$$ here")).toBe("already $$a+b$$ here");
  });

  it("leaves prices, escaped dollars, escaped brackets and code alone", () => {
    for (const text of [
      "It costs $5 and $10.",
      "from $ 3 to $ 4",
      "a \\$x\\$ literal",
      "see \\[1\\] and \\[2\\]",
      "run `echo $HOME$` now",
      "```sh\necho $x$ \\(y\\)\n```",
    ]) {
      expect(normalizeMath(text)).toBe(text);
    }
    expect(normalizeMath("`$a$` but $b$")).toBe("`$a$` but $$b$$");
    expect(normalizeMath("~~~\n$a$\n~~~\n$b$")).toBe("~~~\n$a$\n~~~\n$$b$$");
  });
});
