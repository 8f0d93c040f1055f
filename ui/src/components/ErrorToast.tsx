// An error shown over the page (a link refused, a server's request that could not be answered),
// until dismissed: a Radix toast in the labelled notifications region. While it is shown, Esc
// closes it and does nothing else (not an answer, a dialog, a tooltip or full screen): it is
// taken before any other handler sees it. F8 moves the focus to it; when it closes, the focus
// goes back to where it came from. A new error is a new toast, so each one is announced. Its
// text can be selected (no swipe to dismiss).
import { useEffect, useLayoutEffect, useRef } from "react";
import * as Toast from "@radix-ui/react-toast";
import { useI18n } from "../lib/i18n";
import type { IpcError } from "../lib/ipc";

/** An error to show, numbered: each new one is a toast of its own. */
export interface Problem {
  n: number;
  error: IpcError;
}

/** The toast, its region and Radix's focus guards. */
const AREA = ".toast-area";

export function ErrorToast({ problem, onClose }: { problem: Problem | null; onClose: () => void }) {
  const { t } = useI18n();
  // Where the focus was before it came into the toast (by F8, Tab or a click).
  const before = useRef<HTMLElement | null>(null);
  const close = useRef(() => {});
  useLayoutEffect(() => {
    close.current = () => {
      const back = before.current;
      before.current = null;
      const at = document.activeElement;
      if (back?.isConnected && (at === null || at === document.body || at.closest(AREA))) back.focus();
      onClose();
    };
  });
  useEffect(() => {
    const onFocusIn = (e: FocusEvent) => {
      const from = e.relatedTarget;
      if (e.target instanceof Element && e.target.closest(AREA) && from instanceof HTMLElement && !from.closest(AREA)) before.current = from;
    };
    document.addEventListener("focusin", onFocusIn);
    return () => document.removeEventListener("focusin", onFocusIn);
  }, []);
  const shown = problem !== null;
  useEffect(() => {
    if (!shown) return;
    // First of all (the window, capturing): no other Esc handler runs while an error is shown.
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "Escape" || e.isComposing) return;
      e.preventDefault();
      e.stopImmediatePropagation();
      close.current();
    };
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, [shown]);
  return (
    <div className="toast-area">
      <Toast.Provider label={t("toast.label")}>
        <Toast.Root
          key={problem?.n}
          className="toast"
          data-testid="link-error"
          type="foreground"
          duration={Infinity}
          open={shown}
          onOpenChange={(open) => !open && close.current()}
          onSwipeEnd={(e) => e.preventDefault()}
          style={{ userSelect: "text" }}
        >
          {/* A press here is not the start of a swipe: a drag selects the text, a click dismisses. */}
          <div className="toast-body" onPointerDown={(e) => e.stopPropagation()}>
            <Toast.Description>{problem?.error.message}</Toast.Description>
            <Toast.Close className="link">{t("common.dismiss")}</Toast.Close>
          </div>
        </Toast.Root>
        <Toast.Viewport className="toast-viewport" label={t("toast.region")} />
      </Toast.Provider>
    </div>
  );
}
