// Renders MCP tool result content: text as markdown, images inline, resource
// links as links, structured content as pretty JSON.
import { useI18n } from "../../lib/i18n";
import type { ContentPart, ToolResult } from "../../lib/ipc";
import { Markdown } from "./LazyMarkdown";

export function pretty(value: unknown): string {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? "";
}

/** One part of a tool's result, or of what the user attached (`attached`). */
export function PartView({ part, attached = false }: { part: ContentPart; attached?: boolean }) {
  const { t } = useI18n();
  switch (part.type) {
    case "text":
      return <Markdown text={part.text} />;
    case "image":
      return (
        <img className="result-image" src={`data:${part.mime_type};base64,${part.data}`} alt={t(attached ? "chat.attachedImage" : "trace.image")} />
      );
    case "audio":
      return <audio controls src={`data:${part.mime_type};base64,${part.data}`} aria-label={t("trace.audio")} />;
    case "resource_link":
      return (
        <a className="resource-link" href={part.uri} target="_blank" rel="noreferrer noopener">
          {part.name ?? part.uri}
        </a>
      );
  }
}

export function ToolResultView({ result }: { result: ToolResult }) {
  const { t } = useI18n();
  return (
    <div className={result.is_error ? "tool-result is-error" : "tool-result"} data-testid="tool-result">
      {result.is_error && <strong className="error-text">{t("trace.isError")}</strong>}
      {result.content.map((p, i) => (
        <PartView key={i} part={p} />
      ))}
      {result.structured_content !== null && result.structured_content !== undefined && (
        <details>
          <summary>{t("trace.structured")}</summary>
          <pre className="json">{pretty(result.structured_content)}</pre>
        </details>
      )}
    </div>
  );
}
