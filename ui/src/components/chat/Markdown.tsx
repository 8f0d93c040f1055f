// Markdown for messages: GFM through react-markdown, highlighted code blocks
// with a copy button. While a reply streams its text is split into top-level
// blocks and each block is memoised, so only its last block re-renders: earlier
// blocks keep their DOM nodes (no flicker, no layout jumps, no re-highlighting).
import { memo, useMemo, type ReactNode } from "react";
import ReactMarkdown, { type Components, type Options } from "react-markdown";
import remarkGfm from "remark-gfm";
import remarkMath from "remark-math";
import rehypeKatex from "rehype-katex";
import "katex/dist/katex.min.css";
import { useI18n } from "../../lib/i18n";
import { normalizeMath } from "./math";
import { CodeBlock } from "./CodeBlock";
import { Diagram } from "./Diagram";

/**
 * Splits markdown at blank lines that are outside fenced code blocks. A blank
 * line followed by an indented line does not split: that is a list item's
 * continuation (a second paragraph, a nested code block).
 */
export function splitBlocks(text: string): string[] {
  const blocks: string[] = [];
  let current: string[] = [];
  let fence: string | null = null;
  let blank = false;
  const flush = () => {
    if (current.length > 0) blocks.push(current.join("\n"));
    current = [];
  };
  for (const line of text.split("\n")) {
    if (fence === null && line.trim() === "") {
      if (current.length > 0) blank = true;
      continue;
    }
    if (blank) {
      if (/^\s/.test(line)) current.push("");
      else flush();
      blank = false;
    }
    current.push(line);
    const m = /^\s{0,3}(`{3,}|~{3,}|\$\$(?=\s*$))/.exec(line);
    if (m?.[1]) {
      const marker = m[1];
      if (fence === null) fence = marker;
      else if (marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = null;
    }
  }
  flush();
  return blocks;
}

function textOf(node: ReactNode): string {
  if (typeof node === "string" || typeof node === "number") return String(node);
  if (Array.isArray(node)) return node.map(textOf).join("");
  return "";
}

interface MdNode {
  type: string;
  value?: string;
  url?: string;
  children?: MdNode[];
}

/** A remark plugin: `[n]` in text becomes a link to `#cite-n` (rendered as a citation chip). */
function remarkCitations() {
  const walk = (node: MdNode) => {
    if (!node.children || node.type === "link" || node.type === "linkReference") return;
    node.children = node.children.flatMap((child) => {
      if (child.type !== "text" || !child.value) {
        walk(child);
        return [child];
      }
      const out: MdNode[] = [];
      let last = 0;
      for (const m of child.value.matchAll(/\[(\d{1,3})\]/g)) {
        const at = m.index ?? 0;
        if (at > last) out.push({ type: "text", value: child.value.slice(last, at) });
        out.push({ type: "link", url: `#cite-${m[1]}`, children: [{ type: "text", value: m[0] }] });
        last = at + m[0].length;
      }
      if (out.length === 0) return [child];
      if (last < child.value.length) out.push({ type: "text", value: child.value.slice(last) });
      return out;
    });
  };
  return (tree: MdNode) => walk(tree);
}

function makeComponents(onCite: ((n: number) => void) | undefined, streaming: boolean): Components {
  return {
    // Fenced code is rendered by CodeBlock (a Mermaid block by Diagram); `pre` only wraps it.
    pre: ({ children }) => <>{children}</>,
    code: ({ className, children }) => {
      const lang = /language-([\w+#-]+)/.exec(className ?? "")?.[1] ?? null;
      const text = textOf(children);
      if (lang === null && !text.includes("\n")) return <code>{children}</code>;
      if (lang === "mermaid") return <Diagram code={text.replace(/\n$/, "")} streaming={streaming} />;
      return <CodeBlock code={text.replace(/\n$/, "")} language={lang} />;
    },
    a: ({ href, children }) => {
      const cite = onCite && href?.startsWith("#cite-") ? Number(href.slice(6)) : null;
      if (cite !== null && onCite) {
        return (
          <button type="button" className="cite-marker" data-testid="cite-marker" onClick={() => onCite(cite)}>
            {children}
          </button>
        );
      }
      // Markdown leaves out an address that is not a web or mail one (file:, javascript:).
      if (!href) return <UnopenedLink>{children}</UnopenedLink>;
      return (
        <a href={href} target="_blank" rel="noreferrer noopener">
          {children}
        </a>
      );
    },
  };
}

/** A link in an answer to something the window does not open: its text, and why. */
function UnopenedLink({ children }: { children: ReactNode }) {
  const { t } = useI18n();
  return (
    <span className="unopened-link" data-testid="unopened-link" title={t("chat.linkNotOpened")}>
      {children}
    </span>
  );
}

const PLAIN = makeComponents(undefined, false);
const PLAIN_STREAMING = makeComponents(undefined, true);

/** TeX as `$$…$$` only (see `math.ts`); a formula KaTeX cannot read shows as its source, in red. */
type PluggableList = NonNullable<Options["remarkPlugins"]>;
const MATH: PluggableList[number] = [remarkMath, { singleDollarTextMath: false }];
const REHYPE: PluggableList = [[rehypeKatex, { throwOnError: false, strict: "ignore" }]];
const PLAIN_PLUGINS: PluggableList = [remarkGfm, MATH];
const CITING_PLUGINS: PluggableList = [remarkGfm, MATH, remarkCitations];

const Block = memo(function Block({ text, components, citing }: { text: string; components: Components; citing: boolean }) {
  return (
    <ReactMarkdown
      remarkPlugins={citing ? CITING_PLUGINS : PLAIN_PLUGINS}
      rehypePlugins={REHYPE}
      components={components}
    >
      {text}
    </ReactMarkdown>
  );
});

/**
 * Renders `text`; with `onCite`, `[n]` markers become buttons that call it. While `streaming`
 * the text is parsed block by block, so each new chunk re-parses only the last block; settled
 * text is parsed in one pass, which costs less than one parser run per block (opening a
 * conversation renders only settled text).
 */
export function Markdown({ text, onCite, streaming = false }: { text: string; onCite?: (n: number) => void; streaming?: boolean }) {
  const blocks = useMemo(() => {
    const source = normalizeMath(text);
    return streaming ? splitBlocks(source) : [source];
  }, [text, streaming]);
  const components = useMemo(
    () => (onCite ? makeComponents(onCite, streaming) : streaming ? PLAIN_STREAMING : PLAIN),
    [onCite, streaming],
  );
  return (
    <div className="markdown">
      {blocks.map((b, i) => (
        <div className="md-block" key={i}>
          <Block text={b} components={components} citing={onCite !== undefined} />
        </div>
      ))}
    </div>
  );
}
