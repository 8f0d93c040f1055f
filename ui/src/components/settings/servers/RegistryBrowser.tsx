// Searching the MCP Registry for servers to add: each result is one way of
// running a listed server (an npm or PyPI package, a container image, a
// remote URL), picked to open the server editor filled in from it (secrets
// the server needs are left to type there, into the keyring), or an MCP
// bundle, picked to download it and open the bundle installer.
import { useState } from "react";
import { useI18n } from "../../../lib/i18n";
import { toIpcError, type Ipc, type IpcError, type RegistryEntry } from "../../../lib/ipc";
import { useAborts } from "../../../lib/aborts";
import { ErrorBanner } from "../../ErrorBanner";
import { Dialog } from "../../common/Dialog";

export type RegistryIpc = Pick<Ipc, "registrySearch">;

export function RegistryBrowser({
  ipc,
  onPick,
  onClose,
}: {
  ipc: RegistryIpc;
  onPick: (entry: RegistryEntry) => void;
  onClose: () => void;
}) {
  const { t } = useI18n();
  const [query, setQuery] = useState("");
  const [found, setFound] = useState<{ query: string; entries: RegistryEntry[]; next: string | null } | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);
  // A new search calls off the one still running, and closing the browser calls off both.
  const searches = useAborts({ onUnmount: true });
  const search = (q: string, cursor: string | null) => {
    setBusy(true);
    setError(null);
    const signal = searches.start("search");
    ipc.registrySearch(q, cursor, signal).then(
      (page) => {
        setFound((before) => ({
          query: q,
          entries: cursor && before ? [...before.entries, ...page.entries] : page.entries,
          next: page.next_cursor,
        }));
        setBusy(false);
      },
      (e: unknown) => {
        if (signal.aborted) return;
        setError(toIpcError(e));
        setBusy(false);
      },
    );
  };
  return (
    <Dialog title={t("registry.title")} onClose={onClose} testId="registry-browser">
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (query.trim() !== "") search(query.trim(), null);
        }}
      >
        <input
          id="registry-query"
          aria-label={t("registry.query")}
          placeholder={t("registry.query")}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="submit" className="primary">
          {t("registry.search")}
        </button>
      </form>
      {busy && (
        <p className="muted row" role="status" data-testid="registry-searching">
          <span>{t("registry.searching")}</span>
          <button
            type="button"
            className="link"
            data-testid="registry-search-cancel"
            onClick={() => {
              searches.cancel("search");
              setBusy(false);
            }}
          >
            {t("common.cancel")}
          </button>
        </p>
      )}
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {found && found.entries.length === 0 && (
        <p className="muted" data-testid="registry-none">
          {t("registry.none", { query: found.query })}
        </p>
      )}
      {found && found.entries.length > 0 && (
        <ul className="list registry-results">
          {found.entries.map((entry, i) => (
            <li key={`${entry.name}/${entry.via}/${i}`} data-testid="registry-entry">
              <div>
                <strong>{entry.label}</strong> <span className="muted small">{entry.version}</span>
                <div className="small">{entry.description}</div>
                <div className="muted small">
                  {entry.name}
                  {entry.needs && ` · ${t("servers.presetNeeds", { program: entry.needs })}`}
                </div>
              </div>
              <button type="button" onClick={() => onPick(entry)}>
                {entry.bundle ? t("registry.install") : t("registry.use")}
              </button>
            </li>
          ))}
        </ul>
      )}
      {found?.next && (
        <button type="button" disabled={busy} onClick={() => search(found.query, found.next)}>
          {t("registry.more")}
        </button>
      )}
      <div className="row">
        <button type="button" onClick={onClose}>
          {t("common.close")}
        </button>
      </div>
    </Dialog>
  );
}
