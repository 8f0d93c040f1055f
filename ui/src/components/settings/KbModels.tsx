// Local embedding models to get in one click: languages, size, whether downloaded, the suggested
// one (multilingual for Chinese), a download's progress (stopped downloads resume), and the hub
// they come from (a mirror such as https://hf-mirror.com). "Use" hands the model's folder on.
import { useCallback, useEffect, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type Ipc, type IpcError, type KbModels as List, type KbModelView } from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";

export type KbModelsIpc = Pick<Ipc, "kbModels" | "kbGetModel" | "kbCancelModel" | "kbSetModelHub" | "onKbModelProgress">;

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

export function KbModels({ ipc, onUse, busy }: { ipc: KbModelsIpc; onUse: (folder: string) => Promise<unknown>; busy: boolean }) {
  const { t } = useI18n();
  const [list, setList] = useState<List | null>(null);
  const [hub, setHub] = useState("");
  const [error, setError] = useState<IpcError | null>(null);
  const fail = (e: unknown) => setError(toIpcError(e));

  const reload = useCallback(() => ipc.kbModels().then(setList, (e: unknown) => setError(toIpcError(e))), [ipc]);
  useEffect(() => {
    // The hub field starts from the saved address; later reloads leave what is being typed.
    ipc.kbModels().then(
      (l) => {
        setList(l);
        setHub(l.hub_setting ?? "");
      },
      (e: unknown) => setError(toIpcError(e)),
    );
  }, [ipc]);
  useEffect(() => {
    const un = ipc.onKbModelProgress((p) => {
      setList((l) => l && { ...l, models: l.models.map((m) => (m.name === p.model ? { ...m, download: p } : m)) });
      if (p.finished) void reload();
    });
    return () => {
      void un.then((f) => f());
    };
  }, [ipc, reload]);

  const state = (m: KbModelView) =>
    m.in_use ? t("kb.models.inUse") : m.state === "ready" ? t("kb.models.ready") : m.state === "partial" ? t("kb.models.partial") : t("kb.models.absent");
  const running = (m: KbModelView) => m.download !== null && !m.download.finished;

  return (
    <div data-testid="kb-models">
      <p className="muted">{t("kb.models.intro")}</p>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <ul className="plain">
        {list?.models.map((m) => (
          <li key={m.name} className="card" data-testid={`kb-model-${m.name}`}>
            <div className="row">
              <strong>{m.name}</strong>
              {m.suggested && <span className="badge">{t("kb.models.suggested")}</span>}
              <span className="muted">
                {m.languages} · {t("kb.models.size", { mb: m.megabytes })}
              </span>
              <span data-testid={`kb-model-state-${m.name}`}>{state(m)}</span>
            </div>
            {m.download && running(m) && (
              <div className="row">
                <progress aria-label={t("kb.models.progress", { name: m.name })} value={m.download.done_bytes} max={Math.max(m.download.total_bytes, 1)} />
                <span className="muted">
                  {t("kb.models.bytes", { done: mb(m.download.done_bytes), total: mb(m.download.total_bytes) })}
                </span>
                <button type="button" onClick={() => ipc.kbCancelModel(m.name).catch(fail)}>
                  {t("common.cancel")}
                </button>
              </div>
            )}
            {m.download?.error && (
              <p className="error-text" role="alert">
                {m.download.error}
              </p>
            )}
            <div className="row">
              {m.state !== "ready" && !running(m) && (
                <button type="button" onClick={() => ipc.kbGetModel(m.name).then(reload, fail)}>
                  {m.state === "partial" ? t("kb.models.resume", { name: m.name }) : t("kb.models.get", { name: m.name })}
                </button>
              )}
              {m.state === "ready" && !m.in_use && (
                <button type="button" className="primary" disabled={busy} onClick={() => void onUse(m.folder).then(reload)}>
                  {t("kb.models.use", { name: m.name })}
                </button>
              )}
            </div>
          </li>
        ))}
      </ul>
      <form
        className="row"
        onSubmit={(e) => {
          e.preventDefault();
          ipc.kbSetModelHub(hub.trim() || null).then((l) => {
            setList(l);
            setError(null);
          }, fail);
        }}
      >
        <label className="field">
          <span>{t("kb.models.hub")}</span>
          <input id="kb-model-hub" placeholder={list?.hub ?? ""} value={hub} onChange={(e) => setHub(e.target.value)} />
        </label>
        <button type="submit">{t("kb.models.saveHub")}</button>
      </form>
      {list && <p className="muted" data-testid="kb-model-hub-now">{t("kb.models.hubNow", { hub: list.hub })}</p>}
    </div>
  );
}
