// A modal dialog: labelled, focus moves in on open, Escape closes.
import { useEffect, useId, useRef, type ReactNode } from "react";
import { useI18n } from "../../lib/i18n";

export function Dialog({ title, onClose, children, testId }: { title: string; onClose: () => void; children: ReactNode; testId?: string }) {
  const { t } = useI18n();
  const id = useId();
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    // Focus moves into the dialog and back to where it was when it closes.
    const before = document.activeElement as HTMLElement | null;
    ref.current?.focus();
    return () => before?.focus?.();
  }, []);
  return (
    <div className="dialog-backdrop">
      <div
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={id}
        tabIndex={-1}
        ref={ref}
        data-testid={testId}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            e.stopPropagation();
            onClose();
          }
        }}
      >
        <header className="dialog-head">
          <h2 id={id}>{title}</h2>
          <button type="button" className="icon" aria-label={t("common.close")} onClick={onClose}>
            ×
          </button>
        </header>
        <div className="dialog-body">{children}</div>
      </div>
    </div>
  );
}
