// Text with ranges marked (the words a search matched): `marks` are
// [start, end) in UTF-16 code units, in order, as the backend gives them.
import type { ReactNode } from "react";

export function Marked({ text, marks }: { text: string; marks: [number, number][] }) {
  const parts: ReactNode[] = [];
  let at = 0;
  marks.forEach(([start, end], i) => {
    // A range out of order or past the end is passed over rather than cut wrongly.
    if (start < at || end > text.length || start >= end) return;
    parts.push(text.slice(at, start), <mark key={i}>{text.slice(start, end)}</mark>);
    at = end;
  });
  parts.push(text.slice(at));
  return <>{parts}</>;
}
