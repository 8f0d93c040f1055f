// A Mermaid diagram in an answer (a ```mermaid fenced block), drawn once the
// answer has stopped streaming. Mermaid is loaded on first use; it runs at its
// strictest (labels are text, no clicks or scripts) and its SVG is sanitised.
// The source is one click away, and a diagram Mermaid cannot read shows its
// source with the reason.
import { useEffect, useId, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { currentTheme } from "../../lib/mcpApps";
import { CopyButton } from "../common/CopyButton";
import { CodeBlock } from "./CodeBlock";

type Drawn = { svg: string; error?: undefined } | { svg?: undefined; error: string };

let initialised: string | null = null;

/** Draws `code` as SVG, with Mermaid set up for the window's theme. */
async function draw(id: string, code: string): Promise<string> {
  const mermaid = (await import("mermaid")).default;
  const theme = currentTheme();
  if (initialised !== theme) {
    mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: theme === "dark" ? "dark" : "default" });
    initialised = theme;
  }
  return (await mermaid.render(id, code)).svg;
}

export function Diagram({ code, streaming }: { code: string; streaming: boolean }) {
  const { t } = useI18n();
  const id = `mermaid-${useId().replace(/[^a-zA-Z0-9_-]/g, "")}`;
  const [drawn, setDrawn] = useState<Drawn | null>(null);
  const [source, setSource] = useState(false);
  useEffect(() => {
    if (streaming) return;
    let live = true;
    draw(id, code).then(
      (svg) => live && setDrawn({ svg }),
      (e: unknown) => live && setDrawn({ error: e instanceof Error ? e.message : String(e) }),
    );
    return () => {
      live = false;
    };
  }, [id, code, streaming]);

  if (streaming || drawn === null) return <CodeBlock code={code} language="mermaid" />;
  if (drawn.error !== undefined) {
    return (
      <div className="diagram" data-testid="mermaid-error">
        <p className="warning-text small">{t("chat.diagramFailed", { error: drawn.error })}</p>
        <CodeBlock code={code} language="mermaid" />
      </div>
    );
  }
  return (
    <div className="diagram code-block" data-testid="mermaid">
      <div className="code-head">
        <span className="code-lang">{t("chat.diagram")}</span>
        <button type="button" className="link" aria-pressed={source} data-testid="mermaid-source" onClick={() => setSource(!source)}>
          {t(source ? "chat.diagramShow" : "chat.diagramSource")}
        </button>
        <CopyButton text={() => code} className="code-copy" testId="code-copy" />
      </div>
      {source ? (
        <pre>
          <code className="hljs">{code}</code>
        </pre>
      ) : (
        // Mermaid's own output at securityLevel "strict", sanitised by its DOMPurify.
        <div className="diagram-svg" dangerouslySetInnerHTML={{ __html: drawn.svg }} />
      )}
    </div>
  );
}
