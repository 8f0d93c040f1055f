import type { IpcError } from "../lib/ipc";
import { useI18n } from "../lib/i18n";

/** Shows a backend error as a sentence with the action to take, never as raw JSON. */
export function ErrorBanner({ error, onDismiss }: { error: IpcError; onDismiss?: () => void }) {
  const { t } = useI18n();
  return (
    <div className="error-banner" role="alert" data-kind={error.kind}>
      <strong>{t("error.title")}</strong>
      <p>{t(`error.${error.kind}`, { message: error.message })}</p>
      <p className="muted">{t(`error.action.${error.kind}`)}</p>
      {onDismiss && (
        <button type="button" className="link" onClick={onDismiss}>
          {t("common.dismiss")}
        </button>
      )}
    </div>
  );
}
