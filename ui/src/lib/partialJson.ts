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

/** What one pass over the text finds outside its strings. */
interface Scan {
  /** The closers the text needs, innermost first; BROKEN when a bracket does not match. */
  open: string[] | typeof BROKEN;
  inString: boolean;
  /** It ends in a string's `\`, whose escape is not written yet. */
  escaping: boolean;
  /** Where it may be cut: after each `{` and `[`, and before each `,`. */
  cuts: number[];
}

function scan(text: string): Scan {
  const open: string[] = [];
  const cuts: number[] = [];
  let inString = false;
  let escaping = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaping) escaping = false;
      else if (c === "\\") escaping = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      open.push(c === "{" ? "}" : "]");
      cuts.push(i + 1);
    } else if (c === ",") cuts.push(i);
    else if ((c === "}" || c === "]") && open.pop() !== c) return { open: BROKEN, inString, escaping, cuts };
  }
  return { open, inString, escaping, cuts };
}

/** The closers `text` needs; null when it ends where it cannot be closed (after a `\`). */
function closers(text: string): string | null | typeof BROKEN {
  const { open, inString, escaping } = scan(text);
  if (open === BROKEN) return BROKEN;
  if (inString && escaping) return null;
  return (inString ? '"' : "") + [...open].reverse().join("");
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

/**
 * `text` without an escape a string it ends in has only begun (`\` or `\u00`), so
 * the string can be closed with what came before it.
 */
function withoutOpenEscape(text: string): string {
  const { inString } = scan(text);
  if (!inString) return text;
  const open = /\\(u[0-9a-fA-F]{0,3})?$/.exec(text);
  if (!open) return text;
  // An even run of backslashes before it is escaped backslashes, not an escape begun.
  let run = 0;
  for (let i = open.index; i >= 0 && text[i] === "\\"; i--) run++;
  return run % 2 === 1 ? text.slice(0, open.index) : text;
}

/** The object `text` (a prefix of a JSON object) says so far; null before it says anything whole. */
export function partialObject(text: string): Json | null {
  const trimmed = withoutOpenEscape(text.trimEnd());
  if (closers(trimmed) === BROKEN) return null;
  const whole = parse(trimmed);
  if (whole) return whole;
  const points = scan(trimmed).cuts.reverse().slice(0, MAX_CUTS);
  for (const at of points) {
    const cut = parse(trimmed.slice(0, at));
    if (cut) return cut;
  }
  return null;
}
