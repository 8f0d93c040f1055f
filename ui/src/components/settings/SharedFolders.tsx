// Shared folders: the folders MCP servers may work in (their roots). Every
// knowledge-base folder is shared too; those are listed, read-only.
import { useCallback, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type Ipc, type RootsView } from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { useLoad } from "./useLoad";

export type SharedFoldersIpc = Pick<Ipc, "listRoots" | "addSharedFolder" | "removeSharedFolder" | "kbPickFolder">;

export function SharedFolders({ ipc }: { ipc: SharedFoldersIpc }) {
  const { t } = useI18n();
  const load = useCallback(() => ipc.listRoots(), [ipc]);
  const { data, error, setError, act } = useLoad<RootsView>(load);
  const [path, setPath] = useState("");

  return (
    <div data-testid="shared-folders">
      <p className="muted">{t("roots.intro")}</p>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <ul className="list">
        {(data?.shared ?? []).map((folder) => (
          <li key={folder} className="card" data-testid="shared-folder">
            <div className="row">
              <strong>{folder}</strong>
              <span className="spacer" />
              <button type="button" className="danger" onClick={() => void act(() => ipc.removeSharedFolder(folder))}>
                {t("common.remove")}
              </button>
            </div>
          </li>
        ))}
      </ul>
      {data && data.shared.length === 0 && <p className="muted">{t("roots.empty")}</p>}
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) void act(() => ipc.addSharedFolder(path.trim())).then((ok) => ok && setPath(""));
        }}
      >
        <input id="shared-folder-path" aria-label={t("roots.folderPath")} placeholder={t("roots.folderPath")} value={path} onChange={(e) => setPath(e.target.value)} />
        <button type="button" onClick={() => ipc.kbPickFolder().then((p) => p && setPath(p), (e: unknown) => setError(toIpcError(e)))}>
          {t("common.browse")}
        </button>
        <button type="submit" id="shared-folder-add" className="primary">
          {t("roots.add")}
        </button>
      </form>
      {data && data.knowledge.length > 0 && (
        <>
          <h2>{t("roots.knowledge")}</h2>
          <ul className="list" data-testid="shared-kb-folders">
            {data.knowledge.map((folder) => (
              <li key={folder}>{folder}</li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
