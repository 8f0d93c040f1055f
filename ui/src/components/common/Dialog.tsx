// A modal dialog on Radix Dialog: labelled by its title, focus kept inside it while open and
// given back when it closes, the page behind hidden from screen readers. Only Escape and the
// close button close it (a click beside it would lose a half-filled form). Escape in a field
// that closes its own list first (`data-owns-escape`) stays the field's; an Escape that closes
// the dialog is marked taken (Radix does), so the page's Esc (stop the answer) does not also act.
import * as RadixDialog from "@radix-ui/react-dialog";
import { X } from "lucide-react";
import { useRef, type ReactNode } from "react";
import { useI18n } from "../../lib/i18n";
import { IconButton } from "./IconButton";

export function Dialog({ title, onClose, children, testId }: { title: string; onClose: () => void; children: ReactNode; testId?: string }) {
  const { t } = useI18n();
  const content = useRef<HTMLDivElement>(null);
  return (
    <RadixDialog.Root open onOpenChange={(open) => !open && onClose()}>
      <RadixDialog.Portal>
        <RadixDialog.Overlay className="dialog-backdrop" />
        <RadixDialog.Content
          ref={content}
          className="dialog"
          data-testid={testId}
          aria-describedby={undefined}
          // The dialog itself takes the focus, so that its title is read first.
          onOpenAutoFocus={(e) => {
            e.preventDefault();
            content.current?.focus();
          }}
          // Radix closes on Escape and marks the key taken; a field that owns it keeps the dialog open.
          onEscapeKeyDown={(e) => {
            if (e.target instanceof Element && e.target.closest("[data-owns-escape]")) e.preventDefault();
          }}
          onInteractOutside={(e) => e.preventDefault()}
        >
          <header className="dialog-head">
            <RadixDialog.Title>{title}</RadixDialog.Title>
            <IconButton icon={X} label={t("common.close")} onClick={onClose} />
          </header>
          <div className="dialog-body">{children}</div>
        </RadixDialog.Content>
      </RadixDialog.Portal>
    </RadixDialog.Root>
  );
}
