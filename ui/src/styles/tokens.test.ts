import { describe, expect, it } from "vitest";
import tokens from "./tokens.css?raw";

/** The custom properties a block of tokens.css sets, by name. */
function block(selector: string): Map<string, string> {
  const at = tokens.indexOf(`${selector} {`);
  if (at < 0) throw new Error(`tokens.css has no ${selector} block`);
  const body = tokens.slice(at, tokens.indexOf("\n}", at));
  return new Map([...body.matchAll(/--([\w-]+):\s*([^;]+);/g)].map((m) => [m[1] ?? "", (m[2] ?? "").trim()]));
}

const light = block(":root");
const dark = new Map([...light, ...block(':root[data-theme="dark"]')]);

function luminance(hex: string): number {
  const m = /^#([0-9a-f]{6})$/i.exec(hex)?.[1];
  if (!m) throw new Error(`${hex} is not a #rrggbb colour`);
  const [r = 0, g = 0, b = 0] = [0, 2, 4].map((i) => parseInt(m.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** WCAG 2 contrast ratio of two #rrggbb colours. */
export function contrast(a: string, b: string): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

/** Text colours and the surfaces each is drawn on. */
const TEXT_ON: [string, string[]][] = [
  ["text", ["bg", "panel", "raised", "hover", "accent-soft", "code-bg"]],
  ["muted", ["bg", "panel", "raised", "hover", "accent-soft", "code-bg"]],
  ["accent", ["bg", "panel", "raised", "hover", "accent-soft"]],
  ["danger", ["bg", "panel", "raised", "accent-soft"]],
  ["ok", ["bg", "panel", "raised"]],
  ["warn", ["bg", "panel", "raised", "accent-soft"]],
  ["on-accent", ["accent"]],
  ["syntax-keyword", ["code-bg"]],
  ["syntax-string", ["code-bg"]],
  ["syntax-number", ["code-bg"]],
  ["syntax-title", ["code-bg"]],
];

describe("design tokens", () => {
  it("computes contrast as WCAG does", () => {
    expect(contrast("#000000", "#ffffff")).toBeCloseTo(21, 5);
    expect(contrast("#767676", "#ffffff")).toBeCloseTo(4.54, 2);
  });

  for (const [name, theme] of [
    ["light", light],
    ["dark", dark],
  ] as const) {
    it(`keeps every text colour at AA (4.5:1) on its surfaces in the ${name} theme`, () => {
      const below: string[] = [];
      for (const [fg, surfaces] of TEXT_ON) {
        for (const bg of surfaces) {
          const ratio = contrast(theme.get(fg)!, theme.get(bg)!);
          if (ratio < 4.5) below.push(`--${fg} on --${bg}: ${ratio.toFixed(2)}`);
        }
      }
      expect(below).toEqual([]);
    });

    it(`draws the focus ring (the accent) at 3:1 against the ${name} surfaces`, () => {
      for (const bg of ["bg", "panel"]) expect(contrast(theme.get("accent")!, theme.get(bg)!)).toBeGreaterThanOrEqual(3);
    });
  }

  it("gives the dark theme its own value for every colour", () => {
    const own = block(':root[data-theme="dark"]');
    const colours = [...light].filter(([, v]) => v.startsWith("#")).map(([k]) => k);
    expect(colours.filter((k) => !own.has(k))).toEqual([]);
  });
});
