// The footer every settings form shares: Save, which submits the form, then
// Cancel for an editor that can be left, or the note that the form was saved.
import { useI18n } from "../../lib/i18n";

export function FormFooter({
  saveId,
  primary = false,
  onCancel,
  cancelId,
  saved = null,
}: {
  /** The Save button's id. */
  saveId: string;
  /** Save is the page's main action (an editor's). */
  primary?: boolean;
  onCancel?: () => void;
  cancelId?: string;
  /** The note shown, as a status, once the form was saved. */
  saved?: string | null;
}) {
  const { t } = useI18n();
  return (
    <div className="row">
      <button type="submit" id={saveId} className={primary ? "primary" : undefined}>
        {t("common.save")}
      </button>
      {onCancel && (
        <button type="button" id={cancelId} onClick={onCancel}>
          {t("common.cancel")}
        </button>
      )}
      {saved && (
        <span role="status" className="ok-text">
          {saved}
        </span>
      )}
    </div>
  );
}
