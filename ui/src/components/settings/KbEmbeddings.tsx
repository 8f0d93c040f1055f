// Knowledge-base embeddings: off, a provider's OpenAI-compatible endpoint
// with an embeddings model, or a local model (downloaded here, see KbModels, or a folder). The small local model
// (all-MiniLM-L6-v2) understands English only; the section says so and points
// to multilingual models.
import { useEffect, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type Ipc, type IpcError, type KbEmbeddings as Current, type KbEmbeddingsChoice, type ProviderView } from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { KbModels, type KbModelsIpc } from "./KbModels";

export type KbEmbeddingsIpc = Pick<Ipc, "kbEmbeddings" | "kbSetEmbeddings" | "kbPickFolder" | "listProviders"> & KbModelsIpc;

type Kind = KbEmbeddingsChoice["kind"];

function kindOf(c: Current): Kind {
  return c.kind === "endpoint" ? "provider" : (c.kind as Kind);
}

export function KbEmbeddings({ ipc, onSaved }: { ipc: KbEmbeddingsIpc; onSaved?: () => void }) {
  const { t } = useI18n();
  const [current, setCurrent] = useState<Current | null>(null);
  const [providers, setProviders] = useState<ProviderView[]>([]);
  const [kind, setKind] = useState<Kind>("off");
  const [provider, setProvider] = useState("");
  const [model, setModel] = useState("");
  const [modelDir, setModelDir] = useState("");
  const [error, setError] = useState<IpcError | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    Promise.all([ipc.kbEmbeddings(), ipc.listProviders()]).then(([c, ps]) => {
      const usable = ps.filter((p) => p.profile.kind === "openai");
      setCurrent(c);
      setProviders(usable);
      setKind(kindOf(c));
      setProvider(c.provider ?? usable[0]?.profile.name ?? "");
      setModel(c.model ?? "");
      setModelDir(c.model_dir ?? "");
    }, (e: unknown) => setError(toIpcError(e)));
  }, [ipc]);

  const choice = (): KbEmbeddingsChoice =>
    kind === "provider" ? { kind, provider, model: model.trim() } : kind === "local" ? { kind, model_dir: modelDir.trim() } : { kind };

  const save = (chosen: KbEmbeddingsChoice = choice()) => {
    setBusy(true);
    setSaved(false);
    return ipc.kbSetEmbeddings(chosen).then(
      (c) => {
        setCurrent(c);
        setError(null);
        setSaved(true);
        setBusy(false);
        onSaved?.();
      },
      (e: unknown) => {
        setError(toIpcError(e));
        setBusy(false);
      },
    );
  };

  const describe = (c: Current) =>
    c.kind === "endpoint"
      ? t("kb.emb.nowEndpoint", { model: c.model ?? "", source: c.provider ?? c.base_url ?? "" })
      : c.kind === "local"
        ? t("kb.emb.nowLocal", { dir: c.model_dir ?? "" })
        : t("kb.emb.nowOff");

  return (
    <section className="card" data-testid="kb-embeddings">
      <h2>{t("kb.emb.title")}</h2>
      <p className="muted">{t("kb.emb.intro")}</p>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {current && <p data-testid="kb-embeddings-now">{describe(current)}</p>}
      {current?.english_only && (
        <p className="error-text" role="note" data-testid="kb-embeddings-english-only">
          {t("kb.emb.englishOnlyNow")}
        </p>
      )}
      <fieldset>
        <legend>{t("kb.emb.source")}</legend>
        {(["off", "provider", "local"] as const).map((k) => (
          <label key={k} className="row">
            <input type="radio" name="kb-embeddings-kind" value={k} checked={kind === k} onChange={() => setKind(k)} />
            {t(`kb.emb.kind.${k}`)}
          </label>
        ))}
      </fieldset>
      {kind === "provider" && (
        <div className="row">
          {providers.length === 0 ? (
            <span className="muted">{t("kb.emb.noProvider")}</span>
          ) : (
            <select aria-label={t("kb.emb.provider")} value={provider} onChange={(e) => setProvider(e.target.value)}>
              {providers.map((p) => (
                <option key={p.profile.name} value={p.profile.name}>
                  {p.profile.name}
                </option>
              ))}
            </select>
          )}
          <input aria-label={t("kb.emb.model")} placeholder="bge-m3" value={model} onChange={(e) => setModel(e.target.value)} />
        </div>
      )}
      {kind === "local" && (
        <KbModels
          ipc={ipc}
          busy={busy}
          onUse={(folder) => {
            setModelDir(folder);
            return save({ kind: "local", model_dir: folder });
          }}
        />
      )}
      {kind === "local" && (
        <div className="row">
          <input aria-label={t("kb.emb.modelDir")} placeholder={t("kb.emb.modelDir")} value={modelDir} onChange={(e) => setModelDir(e.target.value)} />
          <button type="button" onClick={() => ipc.kbPickFolder().then((p) => p && setModelDir(p), (e: unknown) => setError(toIpcError(e)))}>
            {t("common.browse")}
          </button>
        </div>
      )}
      <p className="muted" data-testid="kb-embeddings-note">
        {t("kb.emb.englishNote")}
      </p>
      <div className="row">
        <button type="button" className="primary" disabled={busy || (kind === "provider" && (!provider || !model.trim()))} onClick={() => save()}>
          {t("kb.emb.save")}
        </button>
        {saved && <span className="muted">{t("kb.emb.saved")}</span>}
      </div>
    </section>
  );
}
