// Knowledge base: folders, index progress, documents and chunk counts,
// re-index, embeddings (KbEmbeddings), other machines' knowledge (KbSources), sharing with
// other apps (KbShare) and a search box that shows scored passages.
import { useCallback, useEffect, useRef, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type Ipc, type IpcError, type KbDocument, type KbFolder, type KbHit } from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { KbEmbeddings, type KbEmbeddingsIpc } from "./KbEmbeddings";
import { KbShare, type KbShareIpc } from "./KbShare";
import { KbSources, type KbSourcesIpc } from "./KbSources";
import { useLoad } from "./useLoad";
import { Marked } from "../common/Marked";

export type KbIpc = Pick<
  Ipc,
  "kbStatus" | "kbPickFolder" | "kbAddFolder" | "kbRemoveFolder" | "kbReindex" | "kbDocuments" | "kbSearch" | "onKbProgress"
> &
  KbEmbeddingsIpc &
  KbSourcesIpc &
  KbShareIpc;

function Documents({ ipc, folder }: { ipc: KbIpc; folder: string }) {
  const { t } = useI18n();
  const [docs, setDocs] = useState<KbDocument[] | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  useEffect(() => {
    ipc.kbDocuments(folder).then(setDocs, (e: unknown) => setError(toIpcError(e)));
  }, [ipc, folder]);
  if (error) return <ErrorBanner error={error} />;
  if (!docs) return <p>{t("common.loading")}</p>;
  return (
    <ul className="kb-docs">
      {docs.map((d) => (
        <li key={d.path}>
          {d.title} <small className="muted">{t("kb.chunks", { count: d.chunks })}</small>
        </li>
      ))}
    </ul>
  );
}

export function KnowledgeBase({ ipc }: { ipc: KbIpc }) {
  const { t } = useI18n();
  const load = useCallback(() => ipc.kbStatus(), [ipc]);
  const { data, setData, error, setError, act, reload } = useLoad<KbFolder[]>(load);
  const [path, setPath] = useState("");
  const [open, setOpen] = useState<string | null>(null);
  const [query, setQuery] = useState("");
  const [hits, setHits] = useState<KbHit[] | null>(null);
  // When each folder's run was first seen, to estimate the time left from its pace.
  const started = useRef(new Map<string, { at: number; done: number }>());
  const [left, setLeft] = useState<Record<string, number>>({});

  useEffect(() => {
    const un = ipc.onKbProgress((p) => {
      const now = Date.now();
      const start = started.current.get(p.folder);
      if (!start || p.done < start.done || p.done >= p.total) {
        started.current.set(p.folder, { at: now, done: p.done });
      }
      const from = started.current.get(p.folder)!;
      const seconds = p.done > from.done && now - from.at >= 2000 ? ((now - from.at) / 1000 / (p.done - from.done)) * (p.total - p.done) : NaN;
      setLeft((l) => ({ ...l, [p.folder]: seconds }));
      setData(
        (fs) =>
          fs?.map((f) =>
            f.path === p.folder
              ? { ...f, state: p.done < p.total ? "indexing" : "idle", progress: p.done < p.total ? { done: p.done, total: p.total } : null }
              : f,
          ) ?? fs,
      );
    });
    return () => {
      void un.then((f) => f());
    };
  }, [ipc, setData]);

  return (
    <div data-testid="kb-settings">
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <ul className="list">
        {(data ?? []).map((f) => (
          <li key={f.path} className="card" data-testid="kb-folder">
            <div className="row">
              <strong>{f.path}</strong>
              <span className="muted">{t("kb.counts", { documents: f.documents, chunks: f.chunks })}</span>
              <span className="spacer" />
              <button type="button" onClick={() => setOpen(open === f.path ? null : f.path)} aria-expanded={open === f.path}>
                {t("kb.documents")}
              </button>
              <button type="button" disabled={f.state === "indexing"} onClick={() => void act(() => ipc.kbReindex(f.path))}>
                {t("kb.reindex")}
              </button>
              <button type="button" className="danger" onClick={() => void act(() => ipc.kbRemoveFolder(f.path))}>
                {t("common.remove")}
              </button>
            </div>
            {f.state === "indexing" && (
              <div className="row">
                <progress
                  max={f.progress?.total}
                  value={f.progress?.done}
                  aria-label={t("kb.indexing", { path: f.path })}
                  data-testid="kb-progress"
                />
                {f.progress && (
                  <small>
                    {f.progress.done}/{f.progress.total}
                  </small>
                )}
                {f.progress && Number.isFinite(left[f.path]) && (
                  <small className="muted" data-testid="kb-time-left">
                    {left[f.path]! < 90
                      ? t("kb.leftSeconds", { n: Math.max(1, Math.round(left[f.path]!)) })
                      : t("kb.leftMinutes", { n: Math.round(left[f.path]! / 60) })}
                  </small>
                )}
              </div>
            )}
            {f.error && <p className="error-text">{f.error}</p>}
            {open === f.path && <Documents ipc={ipc} folder={f.path} />}
          </li>
        ))}
      </ul>
      {data && data.length === 0 && <p className="muted">{t("kb.empty")}</p>}
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) void act(() => ipc.kbAddFolder(path.trim())).then((ok) => ok && setPath(""));
        }}
      >
        <input id="kb-folder-path" aria-label={t("kb.folderPath")} placeholder={t("kb.folderPath")} value={path} onChange={(e) => setPath(e.target.value)} />
        <button type="button" onClick={() => ipc.kbPickFolder().then((p) => p && setPath(p), (e: unknown) => setError(toIpcError(e)))}>
          {t("common.browse")}
        </button>
        <button type="submit" id="kb-add" className="primary">
          {t("kb.add")}
        </button>
      </form>
      <KbEmbeddings ipc={ipc} onSaved={reload} />
      <KbSources ipc={ipc} />
      <KbShare ipc={ipc} />
      <h2>{t("kb.search")}</h2>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          if (query.trim()) ipc.kbSearch(query.trim(), 10).then(setHits, (err: unknown) => setError(toIpcError(err)));
        }}
      >
        <input id="kb-search" type="search" aria-label={t("kb.search")} value={query} onChange={(e) => setQuery(e.target.value)} />
        <button type="submit" className="primary">
          {t("kb.searchButton")}
        </button>
      </form>
      {hits && hits.length === 0 && <p className="muted">{t("kb.noHits")}</p>}
      <ol className="kb-hits" data-testid="kb-hits">
        {(hits ?? []).map((h, i) => (
          <li key={i} className="card">
            <div className="row">
              <strong>{h.document}</strong>
              <span className="badge">{t("kb.score", { score: h.score.toFixed(3) })}</span>
              <span className="badge">{t("kb.relevance", { percent: Math.round(h.relevance * 100) })}</span>
            </div>
            <p className="kb-hit-text">
              <Marked text={h.text} marks={h.marks} />
            </p>
            <small className="muted">{h.path}</small>
          </li>
        ))}
      </ol>
    </div>
  );
}
