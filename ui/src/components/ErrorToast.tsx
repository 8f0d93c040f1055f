// An error shown over the page (a link refused, a server's request that could not be answered),
// until dismissed: a Radix toast in the labelled notifications region. While shown it is the
// top layer: Esc closes it first (and only it, not the answer or a dialog under it), wherever
// the focus is; F8 moves the focus to it, and closing it gives the focus back. A new error is a
// new toast, so each one is announced. Its text can be selected (no swipe to dismiss).
import { useEffect, useRef } from "react";
import * as Toast from "@radix-ui/react-toast";
import { useI18n } from "../lib/i18n";
import type { IpcError } from "../lib/ipc";

/** An error to show, numbered: each new one is a toast of its own. */
export interface Problem {
  n: number;
  error: IpcError;
}

export function ErrorToast({ problem, onClose }: { problem: Problem | null; onClose: () => void }) {
  const { t } = useI18n();
  // Where the focus was when F8 took it to the toast.
  const before = useRef<HTMLElement | null>(null);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const at = document.activeElement;
      if (e.key === "F8" && at instanceof HTMLElement && !at.closest(".toast-viewport")) before.current = at;
    };
    // Before Radix's own F8, which moves the focus.
    window.addEventListener("keydown", onKey, true);
    return () => window.removeEventListener("keydown", onKey, true);
  }, []);
  const close = () => {
    const back = before.current;
    before.current = null;
    const at = document.activeElement;
    if (back?.isConnected && (at === document.body || at?.closest(".toast-viewport"))) back.focus();
    onClose();
  };
  return (
    <Toast.Provider label={t("toast.label")}>
      <Toast.Root
        key={problem?.n}
        className="toast"
        data-testid="link-error"
        type="foreground"
        duration={Infinity}
        open={problem !== null}
        onOpenChange={(open) => !open && close()}
        onEscapeKeyDown={(e) => {
          e.preventDefault();
          close();
        }}
        onSwipeEnd={(e) => e.preventDefault()}
        style={{ userSelect: "text" }}
      >
        {/* A drag over the text selects it: Radix does not see it start a swipe. */}
        <Toast.Description onPointerDown={(e) => e.stopPropagation()}>{problem?.error.message}</Toast.Description>
        <Toast.Close className="link">{t("common.dismiss")}</Toast.Close>
      </Toast.Root>
      <Toast.Viewport className="toast-viewport" label={t("toast.region")} />
    </Toast.Provider>
  );
}
