// TeX in model answers, in the three ways models write it, made into the one
// form remark-math reads with single dollars off: `$$…$$` (inline when inside a
// line, display when on lines of its own). Single dollars count as math only by
// Pandoc's rule (no space inside either dollar, no digit after the closing one),
// so "$5 and $10" stays text. Code (fenced blocks and inline spans) is left as it is.

/** `$x$` by Pandoc's rule, not escaped, on one line. */
const SINGLE_DOLLAR = /(?<![\\$])\$(?![\s$])([^$\n]*?[^\s\\$])\$(?![\d$])/g;
/** `\(x\)` on one line. */
const PAREN = /\\\(([^\n]+?)\\\)/g;
/** `\[x\]` over one or more lines. */
const BRACKET = /\\\[([\s\S]+?)\\\]/g;
/** What marks text as TeX: a command, a sub- or superscript, braces, an equals sign. */
const TEX_SIGN = /[\\^_={}]/;
/** Inline code spans: a run of backticks to the same run. */
const CODE_SPAN = /(`+)[\s\S]*?\1/g;

function prose(text: string): string {
  return text
    // An escaped bracket pair around plain text ("\[1\]") is not math.
    .replace(BRACKET, (all: string, tex: string) => (TEX_SIGN.test(tex) ? `\n$$\n${tex.trim()}\n$$\n` : all))
    .replace(PAREN, (_, tex: string) => `$$${tex.trim()}$$`)
    .replace(SINGLE_DOLLAR, (_, tex: string) => `$$${tex}$$`);
}

/** Rewrites the TeX of prose outside code; code is kept byte for byte. */
function outsideCodeSpans(text: string): string {
  let out = "";
  let last = 0;
  for (const m of text.matchAll(CODE_SPAN)) {
    out += prose(text.slice(last, m.index)) + m[0];
    last = (m.index ?? 0) + m[0].length;
  }
  return out + prose(text.slice(last));
}

/** `text` with its TeX in `$$` form, fenced code blocks untouched. */
export function normalizeMath(text: string): string {
  if (!text.includes("$") && !text.includes("\\(") && !text.includes("\\[")) return text;
  const parts: string[] = [];
  let pending: string[] = [];
  let fence: string | null = null;
  const flushProse = () => {
    if (pending.length > 0) parts.push(outsideCodeSpans(pending.join("\n")));
    pending = [];
  };
  for (const line of text.split("\n")) {
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && marker) {
      flushProse();
      fence = marker;
      parts.push(line);
    } else if (fence !== null) {
      parts.push(line);
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    } else {
      pending.push(line);
    }
  }
  flushProse();
  return parts.join("\n");
}
