// A newer version of Patchbay: what is new, and installing it on the user's word (downloaded,
// verified against the key built into the app, then installed), or, where this install cannot
// replace itself, why and where to get it.
import { useState } from "react";
import { useI18n } from "../lib/i18n";
import { toIpcError, type Ipc, type IpcError, type UpdateProgress, type UpdateView } from "../lib/ipc";

export type UpdateIpc = Pick<Ipc, "installUpdate" | "restartApp" | "openLink">;

type Step = { kind: "offered" } | { kind: "busy"; progress: UpdateProgress | null } | { kind: "installed" };

export function UpdateCard({ update, ipc, onLater }: { update: UpdateView; ipc: UpdateIpc; onLater?: () => void }) {
  const { t } = useI18n();
  const [step, setStep] = useState<Step>({ kind: "offered" });
  const [error, setError] = useState<IpcError | null>(null);
  const install = () => {
    setError(null);
    setStep({ kind: "busy", progress: null });
    ipc.installUpdate(update.version, (progress) => setStep({ kind: "busy", progress })).then(
      () => setStep({ kind: "installed" }),
      (e: unknown) => {
        setError(toIpcError(e));
        setStep({ kind: "offered" });
      },
    );
  };
  const progress = step.kind === "busy" ? step.progress : null;
  return (
    <section className="update-card" data-testid="update" aria-labelledby="update-title">
      <h2 id="update-title">{t("update.available", { version: update.version, current: update.current_version })}</h2>
      {update.date && <p className="muted small">{t("update.released", { date: update.date.slice(0, 10) })}</p>}
      {update.notes && (
        <div className="update-notes" data-testid="update-notes">
          {update.notes}
        </div>
      )}
      {error && (
        <p className="error-text" role="alert" data-testid="update-error">
          {error.message}
        </p>
      )}
      {update.install.kind === "elsewhere" ? (
        <>
          <p data-testid="update-elsewhere">{t("update.elsewhere", { why: update.install.why })}</p>
          <div className="row">
            <button type="button" className="primary" onClick={() => void ipc.openLink(update.install.kind === "elsewhere" ? update.install.release_url : "").catch((e: unknown) => setError(toIpcError(e)))}>
              {t("update.openRelease")}
            </button>
            {onLater && (
              <button type="button" onClick={onLater}>
                {t("update.later")}
              </button>
            )}
          </div>
        </>
      ) : step.kind === "installed" ? (
        <div className="row">
          <span role="status" data-testid="update-installed">
            {t("update.installed", { version: update.version })}
          </span>
          <button type="button" className="primary" id="update-restart" onClick={() => void ipc.restartApp().catch((e: unknown) => setError(toIpcError(e)))}>
            {t("update.restart")}
          </button>
        </div>
      ) : (
        <div className="row">
          <button type="button" className="primary" id="update-install" disabled={step.kind === "busy"} onClick={install}>
            {t("update.install")}
          </button>
          {step.kind === "busy" && (
            <span role="status" data-testid="update-progress">
              {progress?.kind === "installing"
                ? t("update.installing")
                : progress?.kind === "downloading" && progress.total
                  ? t("update.downloading", { percent: Math.floor((progress.done / progress.total) * 100) })
                  : t("update.starting")}
            </span>
          )}
          {onLater && step.kind !== "busy" && (
            <button type="button" onClick={onLater}>
              {t("update.later")}
            </button>
          )}
        </div>
      )}
    </section>
  );
}
