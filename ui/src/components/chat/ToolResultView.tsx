// Renders MCP tool result content: text as markdown, images and sounds inline
// (each can be saved as a file), resource
// links (a web page opens in the browser; another resource is read from the
// server that gave it, and shown in place), structured content as pretty JSON.
import { useContext, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type ContentPart, type IpcError, type ResourcePreview, type ToolResult } from "../../lib/ipc";
import { ResourceReader } from "../../lib/resources";
import { ErrorBanner } from "../ErrorBanner";
import { ResourceParts } from "../common/ResourceParts";
import { SaveFile } from "../common/SaveFile";
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

type LinkPart = Extract<ContentPart, { type: "resource_link" }>;

/**
 * A resource link: a web page is a link (the browser opens it); another
 * resource is a button that reads it from `server`, the server that gave it,
 * and shows it below; without one (an attachment) it is its name and URI.
 */
function ResourceLink({ part, server }: { part: LinkPart; server?: string }) {
  const { t } = useI18n();
  const read = useContext(ResourceReader);
  const [shown, setShown] = useState<{ parts: ResourcePreview[] } | { error: IpcError } | "reading" | null>(null);
  const name = part.name ?? part.uri;
  if (/^https?:\/\//i.test(part.uri)) {
    return (
      <a className="resource-link" href={part.uri} target="_blank" rel="noreferrer noopener">
        {name}
      </a>
    );
  }
  if (!server || !read) {
    return (
      <span className="resource-link" title={part.uri}>
        {name}
      </span>
    );
  }
  const toggle = () => {
    // Closed while its answer is on the way, it would open again when the answer came.
    if (shown === "reading") return;
    if (shown !== null) return setShown(null);
    setShown("reading");
    read(server, part.uri).then(
      (parts) => setShown({ parts }),
      (e: unknown) => setShown({ error: toIpcError(e) }),
    );
  };
  return (
    <div className="resource-link-block" data-testid="resource-link">
      <button type="button" className="link resource-link" aria-expanded={shown !== null} title={part.uri} onClick={toggle}>
        {name}
      </button>{" "}
      <small className="muted">{t("trace.readResource", { server })}</small>
      {shown === "reading" && <p className="muted">{t("common.loading")}</p>}
      {shown !== null && shown !== "reading" && ("parts" in shown ? <ResourceParts parts={shown.parts} server={server} /> : <ErrorBanner error={shown.error} />)}
    </div>
  );
}

/**
 * One part of a tool's result (from `server`), or of what the user attached
 * (`attached`).
 */
export function PartView({ part, server, attached = false }: { part: ContentPart; server?: string; attached?: boolean }) {
  const { t } = useI18n();
  switch (part.type) {
    case "text":
      return <Markdown text={part.text} />;
    case "image":
    case "audio": {
      const src = `data:${part.mime_type};base64,${part.data}`;
      const media =
        part.type === "image" ? (
          <img className="result-image" src={src} alt={t(attached ? "chat.attachedImage" : "trace.image")} />
        ) : (
          <audio controls src={src} aria-label={t("trace.audio")} />
        );
      // What the user attached is theirs already; what a tool made can be saved.
      if (attached) return media;
      return (
        <div className="result-media">
          {media}
          <SaveFile server={null} contents={[{ type: "resource", resource: { uri: part.type, mimeType: part.mime_type, blob: part.data } }]} />
        </div>
      );
    }
    case "resource_link":
      return <ResourceLink part={part} server={server} />;
  }
}

/**
 * A tool's result as text, for the clipboard: its text parts, its resource
 * links as `name <uri>`, and its structured content as JSON when it has
 * nothing else to say; pictures and sounds are left out.
 */
export function resultText(result: ToolResult): string {
  const parts = result.content.flatMap((p) =>
    p.type === "text" ? [p.text] : p.type === "resource_link" ? [`${p.name ?? p.uri} <${p.uri}>`] : [],
  );
  if (parts.length === 0 && result.structured_content !== null && result.structured_content !== undefined) {
    return pretty(result.structured_content);
  }
  return parts.join("\n\n");
}

/** A tool's result; `server` gave it, and is asked for the resources it links to. */
export function ToolResultView({ result, server }: { result: ToolResult; server: string }) {
  const { t } = useI18n();
  return (
    <div className={result.is_error ? "tool-result is-error" : "tool-result"} data-testid="tool-result">
      {result.is_error && <strong className="error-text">{t("trace.isError")}</strong>}
      {result.content.map((p, i) => (
        <PartView key={i} part={p} server={server} />
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
