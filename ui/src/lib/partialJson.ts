// A JSON object the model is still writing, made whole: an open string is
// closed, open arrays and objects too, and a trailing piece that cannot stand
// on its own (a key without its value, half a number or `true`) is dropped.
// What tools' views are told as a call's arguments stream in (MCP Apps
// `ui/notifications/tool-input-partial`).

type Json = Record<string, unknown>;

/** How far back a cut is tried before giving up: each try scans the text again. */
const MAX_CUTS = 8;

/** A bracket closes what it did not open: no prefix of the text is JSON. */
const BROKEN = Symbol("broken");

/** The closers `text` needs; null when it ends where it cannot be closed (after a `\`). */
function closers(text: string): string | null | typeof BROKEN {
  const open: string[] = [];
  let inString = false;
  let escaped = false;
  for (const c of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{") open.push("}");
    else if (c === "[") open.push("]");
    else if (c === "}" || c === "]") {
      if (open.pop() !== c) return BROKEN;
    }
  }
  if (inString && escaped) return null;
  return (inString ? '"' : "") + open.reverse().join("");
}

/** Where the text may be cut: after each `{` and `[`, and before each `,`, outside strings. */
function cuts(text: string): number[] {
  const at: number[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") at.push(i + 1);
    else if (c === ",") at.push(i);
  }
  return at;
}

function parse(text: string): Json | null {
  const close = closers(text);
  if (close === null || close === BROKEN) return null;
  try {
    const value: unknown = JSON.parse(text + close);
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** The object `text` (a prefix of a JSON object) says so far; null before it says anything whole. */
export function partialObject(text: string): Json | null {
  const trimmed = text.trimEnd();
  if (closers(trimmed) === BROKEN) return null;
  const whole = parse(trimmed);
  if (whole) return whole;
  const points = cuts(trimmed).reverse().slice(0, MAX_CUTS);
  for (const at of points) {
    const cut = parse(trimmed.slice(0, at));
    if (cut) return cut;
  }
  return null;
}
