// Markdown loaded on first use: react-markdown, remark-gfm and highlight.js are most
// of the UI's code, and a window with no conversation open does not need them. Until
// they are loaded the text shows as it is, so nothing waits for them.
import { lazy, Suspense } from "react";

const Loaded = lazy(() => import("./Markdown").then((m) => ({ default: m.Markdown })));

export function Markdown({ text, onCite, streaming }: { text: string; onCite?: (n: number) => void; streaming?: boolean }) {
  return (
    <Suspense fallback={<div className="markdown markdown-plain">{text}</div>}>
      <Loaded text={text} onCite={onCite} streaming={streaming} />
    </Suspense>
  );
}
