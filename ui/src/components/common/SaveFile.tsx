// Saving MCP content as files: "Save" puts it in the downloads folder, "Save
// to…" in a folder the user picks; once saved, the note says where it went,
// with "Show in folder". Links are read from their server by the core, so a
// resource is saved whole even when only part of it is shown.
import { createContext, useContext, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { ipc, toIpcError, type Ipc, type SavedFile } from "../../lib/ipc";

/** The commands saving uses: the app's own, or a test's fakes. */
export type SaveIpc = Pick<Ipc, "saveFiles" | "showInFolder">;

export const FileSaver = createContext<SaveIpc>(ipc);

/** The folder a saved file is in. */
const folderOf = (path: string) => path.replace(/[\\/][^\\/]*$/, "") || path;

/** Where saved files went, with the way to them. */
export function SavedFiles({ files, onError }: { files: SavedFile[]; onError: (message: string) => void }) {
  const { t } = useI18n();
  const saver = useContext(FileSaver);
  const first = files[0];
  if (!first) return null;
  return (
    <span className="ok-text small saved-files" role="status" data-testid="saved-files">
      {t("files.saved", { files: files.map((f) => f.name).join(", "), folder: folderOf(first.path) })}{" "}
      <button type="button" className="link" data-testid="show-in-folder" onClick={() => void saver.showInFolder(first.path).catch((e: unknown) => onError(toIpcError(e).message))}>
        {t("files.showInFolder")}
      </button>
    </span>
  );
}

type Saving = { saved: SavedFile[] } | { error: string } | "saving" | null;

/** Save buttons for `contents` (MCP `resource` and `resource_link` blocks; links read from `server`). */
export function SaveFile({ server, contents }: { server: string | null; contents: unknown[] }) {
  const { t } = useI18n();
  const saver = useContext(FileSaver);
  const [state, setState] = useState<Saving>(null);
  const save = (choose: boolean) => {
    setState("saving");
    saver.saveFiles(server, contents, choose).then(
      (files) => setState(files ? { saved: files } : null),
      (e: unknown) => setState({ error: toIpcError(e).message }),
    );
  };
  return (
    <div className="save-file row small" data-testid="save-file">
      <button type="button" className="link" data-testid="save-file-save" disabled={state === "saving"} onClick={() => save(false)}>
        {t("files.save")}
      </button>
      <button type="button" className="link" data-testid="save-file-choose" disabled={state === "saving"} onClick={() => save(true)}>
        {t("files.saveTo")}
      </button>
      {state === "saving" && <span className="muted">{t("common.saving")}</span>}
      {state !== null && state !== "saving" && "saved" in state && <SavedFiles files={state.saved} onError={(error) => setState({ error })} />}
      {state !== null && state !== "saving" && "error" in state && (
        <span className="error-text" role="alert">
          {t("files.saveFailed", { error: state.error })}
        </span>
      )}
    </div>
  );
}
