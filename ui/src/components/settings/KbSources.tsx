// Settings → Knowledge base → Sources: retrieval tools of MCP servers (RAGFlow, another Patchbay,
// any search tool) that "auto" asks beside the local knowledge base. A known tool is added as it
// is; any other is read through a mapping of its answer's fields, chosen on a preview of a real
// answer. "Try" shows what a source finds, as a chat would read it, before it is saved.
import { useCallback, useEffect, useRef, useState } from "react";
import { useI18n } from "../../lib/i18n";
import {
  toIpcError,
  type Ipc,
  type IpcError,
  type KbHit,
  type KbSourceCandidate,
  type KbSourcePreview,
  type KnowledgeSource,
  type SourceShape,
} from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";

export type KbSourcesIpc = Pick<
  Ipc,
  "kbSources" | "kbSourceCandidates" | "kbPutSource" | "kbRemoveSource" | "kbPreviewSource" | "kbTrySource"
>;

const key = (c: KbSourceCandidate) => `${c.server}/${c.tool}`;

export function KbSources({ ipc }: { ipc: KbSourcesIpc }) {
  const { t } = useI18n();
  const [sources, setSources] = useState<KnowledgeSource[]>([]);
  const [candidates, setCandidates] = useState<KbSourceCandidate[]>([]);
  const [chosen, setChosen] = useState("");
  const [name, setName] = useState("");
  const [question, setQuestion] = useState("");
  const [queryArg, setQueryArg] = useState("");
  const [preview, setPreview] = useState<KbSourcePreview | null>(null);
  const [text, setText] = useState("");
  const [title, setTitle] = useState("");
  const [origin, setOrigin] = useState("");
  const [hits, setHits] = useState<KbHit[] | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);

  // Preview and Try stop when the page closes.
  const calls = useRef(new AbortController());
  useEffect(() => {
    const controller = new AbortController();
    calls.current = controller;
    return () => controller.abort();
  }, []);

  const fail = useCallback((e: unknown) => {
    setError(toIpcError(e));
    setBusy(false);
  }, []);

  useEffect(() => {
    Promise.all([ipc.kbSources(), ipc.kbSourceCandidates()]).then(([s, c]) => {
      setSources(s);
      setCandidates(c);
    }, fail);
  }, [ipc, fail]);

  const candidate = candidates.find((c) => key(c) === chosen) ?? null;
  const choose = (k: string) => {
    const c = candidates.find((x) => key(x) === k) ?? null;
    setChosen(k);
    // The server's name, unless a source has it already (saving would replace that source).
    const taken = sources.some((s) => s.name === c?.server);
    setName(c ? (taken ? `${c.server} ${c.tool}` : c.server) : "");
    setQueryArg(c?.text_args[0] ?? "");
    setPreview(null);
    setHits(null);
    setText("");
    setTitle("");
    setOrigin("");
  };

  const shape = (): SourceShape | null =>
    candidate?.shape ?? (queryArg && text ? { kind: "mapped", query_arg: queryArg, text, title: title || null, source: origin || null } : null);
  const source = (): KnowledgeSource | null => {
    const s = shape();
    return candidate && s ? { name: name.trim(), server: candidate.server, tool: candidate.tool, shape: s } : null;
  };

  const run = <T,>(action: () => Promise<T>, done: (value: T) => void) => {
    setBusy(true);
    setError(null);
    return action().then((v) => {
      done(v);
      setBusy(false);
    }, fail);
  };

  const shapeLabel = (s: SourceShape) =>
    s.kind === "ragflow" ? t("kb.sources.ragflow") : s.kind === "patchbay" ? t("kb.sources.patchbay") : t("kb.sources.mapped", { field: s.text });

  return (
    <section className="card" data-testid="kb-sources">
      <h2>{t("kb.sources.title")}</h2>
      <p className="muted">{t("kb.sources.intro")}</p>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {sources.length === 0 && <p className="muted">{t("kb.sources.none")}</p>}
      <ul className="list">
        {sources.map((s) => (
          <li key={s.name} className="row" data-testid="kb-source">
            <strong>{s.name}</strong>
            <span className="muted">
              {s.server} › {s.tool} · {shapeLabel(s.shape)}
            </span>
            <span className="spacer" />
            <button
              type="button"
              className="danger"
              aria-label={t("kb.sources.remove", { name: s.name })}
              onClick={() => void run(() => ipc.kbRemoveSource(s.name), setSources)}
            >
              {t("common.remove")}
            </button>
          </li>
        ))}
      </ul>
      <h3>{t("kb.sources.add")}</h3>
      {candidates.length === 0 ? (
        <p className="muted">
          {t("kb.sources.noCandidates")}{" "}
          <button type="button" className="link" onClick={() => void ipc.kbSourceCandidates().then(setCandidates, fail)}>
            {t("kb.sources.lookAgain")}
          </button>
        </p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const s = source();
            if (s) void run(() => ipc.kbPutSource(s), (all) => (setSources(all), choose("")));
          }}
        >
          <label className="row">
            {t("kb.sources.tool")}
            <select
              value={chosen}
              onChange={(e) => choose(e.target.value)}
              data-testid="kb-source-tool"
            >
              <option value="">{t("kb.sources.pick")}</option>
              {candidates.map((c) => (
                <option key={key(c)} value={key(c)}>
                  {c.server} › {c.tool}
                  {c.shape ? ` (${shapeLabel(c.shape)})` : ""}
                </option>
              ))}
            </select>
          </label>
          {candidate && (
            <>
              <label className="row">
                {t("kb.sources.name")}
                <input value={name} onChange={(e) => setName(e.target.value)} data-testid="kb-source-name" />
              </label>
              <label className="row">
                {t("kb.sources.question")}
                <input value={question} onChange={(e) => setQuestion(e.target.value)} data-testid="kb-source-question" />
              </label>
              {!candidate.shape && (
                <>
                  <p className="muted">{t("kb.sources.mapHint")}</p>
                  <label className="row">
                    {t("kb.sources.queryArg")}
                    <select value={queryArg} onChange={(e) => setQueryArg(e.target.value)} data-testid="kb-source-query-arg">
                      {candidate.text_args.map((a) => (
                        <option key={a} value={a}>
                          {a}
                        </option>
                      ))}
                    </select>
                  </label>
                  <button
                    type="button"
                    disabled={busy || !question.trim() || !queryArg}
                    data-testid="kb-source-preview"
                    onClick={() => void run(() => ipc.kbPreviewSource(candidate.server, candidate.tool, queryArg, question.trim(), calls.current.signal), setPreview)}
                  >
                    {t("kb.sources.preview")}
                  </button>
                  {preview && (
                    <>
                      {(
                        [
                          ["kb.sources.textField", text, setText, "kb-source-text"],
                          ["kb.sources.titleField", title, setTitle, "kb-source-title"],
                          ["kb.sources.sourceField", origin, setOrigin, "kb-source-origin"],
                        ] as const
                      ).map(([label, value, set, testId]) => (
                        <label className="row" key={testId}>
                          {t(label)}
                          <select value={value} onChange={(e) => set(e.target.value)} data-testid={testId}>
                            <option value="">{t("kb.sources.noField")}</option>
                            {preview.fields.map((f) => (
                              <option key={f} value={f}>
                                {f}
                              </option>
                            ))}
                          </select>
                        </label>
                      ))}
                      <details>
                        <summary>{t("kb.sources.answer")}</summary>
                        <pre className="json">{preview.answer}</pre>
                      </details>
                    </>
                  )}
                </>
              )}
              <div className="row">
                <button
                  type="button"
                  disabled={busy || !question.trim() || !source()}
                  data-testid="kb-source-try"
                  onClick={() => {
                    const s = source();
                    if (s) void run(() => ipc.kbTrySource(s, question.trim(), calls.current.signal), setHits);
                  }}
                >
                  {t("kb.sources.try")}
                </button>
                <button type="submit" className="primary" disabled={busy || !source() || !name.trim()} data-testid="kb-source-save">
                  {t("common.save")}
                </button>
              </div>
              {hits && hits.length === 0 && <p className="muted">{t("kb.noHits")}</p>}
              {hits && hits.length > 0 && (
                <ol className="kb-hits" data-testid="kb-source-hits">
                  {hits.map((h, i) => (
                    <li key={i} className="card">
                      <div className="row">
                        <strong>{h.document}</strong>
                        <span className="badge">{t("kb.relevance", { percent: Math.round(h.relevance * 100) })}</span>
                      </div>
                      <p className="kb-hit-text">{h.text}</p>
                    </li>
                  ))}
                </ol>
              )}
            </>
          )}
        </form>
      )}
    </section>
  );
}
