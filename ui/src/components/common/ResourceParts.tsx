// What reading an MCP resource gave: each part's text, picture or sound, with
// its URI and type; a part cut to size says so. Each part can be saved as a
// file, read whole from `server` again.
import { useI18n } from "../../lib/i18n";
import type { ResourcePreview } from "../../lib/ipc";
import { SaveFile } from "./SaveFile";

export function ResourceParts({ parts, server }: { parts: ResourcePreview[]; server: string }) {
  const { t } = useI18n();
  return (
    <div data-testid="resource-preview">
      {parts.map((p, i) => (
        <div key={`${p.uri}-${i}`} className="resource-part">
          <div className="muted small">
            {p.uri} · {p.mime_type ?? t("content.unknownType")}
          </div>
          {p.text !== null ? (
            <pre className="resource-text">{p.text}</pre>
          ) : p.blob !== null && p.mime_type?.startsWith("image/") ? (
            <img src={`data:${p.mime_type};base64,${p.blob}`} alt={p.uri} className="resource-image" />
          ) : p.blob !== null && p.mime_type?.startsWith("audio/") ? (
            <audio controls src={`data:${p.mime_type};base64,${p.blob}`} />
          ) : (
            <p className="muted">{t("content.binary", { size: p.size })}</p>
          )}
          {p.truncated && <p className="muted small">{t("content.truncated", { size: p.size })}</p>}
          <SaveFile server={server} contents={[{ type: "resource_link", uri: p.uri, ...(p.mime_type ? { mimeType: p.mime_type } : {}) }]} />
        </div>
      ))}
    </div>
  );
}
