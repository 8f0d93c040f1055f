// The keyboard shortcuts, listed in a dialog that Ctrl+/ (Cmd+/) or the nav's keyboard button
// opens and Ctrl+/ closes; Ctrl+,
// opens Settings. The list is the one place that names them: a shortcut added elsewhere is
// added here.
import { useEffect, useState } from "react";
import { useI18n, type MessageKey } from "../lib/i18n";
import { Keyboard } from "lucide-react";
import { Dialog } from "./common/Dialog";
import { IconButton } from "./common/IconButton";

const SHORTCUTS: [string[], MessageKey][] = [
  [["Ctrl", "N"], "shortcuts.newChat"],
  [["Ctrl", "K"], "shortcuts.search"],
  [["Enter"], "shortcuts.send"],
  [["Shift", "Enter"], "shortcuts.newLine"],
  [["/"], "shortcuts.prompts"],
  [["Esc"], "shortcuts.stop"],
  [["F8"], "shortcuts.notifications"],
  [["Ctrl", ","], "shortcuts.settings"],
  [["Ctrl", "="], "shortcuts.zoomIn"],
  [["Ctrl", "-"], "shortcuts.zoomOut"],
  [["Ctrl", "0"], "shortcuts.zoomReset"],
  [["Ctrl", "/"], "shortcuts.sheet"],
];

/** A modal dialog is open: the page's shortcuts do not act behind it. */
export function modalOpen(): boolean {
  return document.querySelector('[role="dialog"][aria-modal="true"]') !== null;
}

/** Ctrl on Linux and Windows, Cmd on macOS. */
const MOD = typeof navigator !== "undefined" && /Mac/.test(navigator.platform) ? "Cmd" : "Ctrl";

export function Shortcuts({ onSettings }: { onSettings: () => void }) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.repeat) return;
      // Behind another dialog the page's shortcuts wait; this sheet's own key closes it.
      if (!open && modalOpen()) return;
      if (e.key === "/") {
        e.preventDefault();
        setOpen((o) => !o);
      } else if (e.key === ",") {
        e.preventDefault();
        onSettings();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onSettings, open]);
  return (
    <>
      <IconButton icon={Keyboard} label={t("shortcuts.title")} shortcut={`${MOD}+/`} className="nav-shortcuts" onClick={() => setOpen(true)} />
      {open && (
        <Dialog title={t("shortcuts.title")} onClose={() => setOpen(false)} testId="shortcuts">
          <table className="shortcuts">
            <tbody>
              {SHORTCUTS.map(([keys, what]) => (
                <tr key={what}>
                  <td>
                    {keys.map((k, i) => (
                      <span key={k}>
                        {i > 0 && "+"}
                        <kbd>{k === "Ctrl" ? MOD : k}</kbd>
                      </span>
                    ))}
                  </td>
                  <td>{t(what)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="muted small">{t("shortcuts.quickAsk")}</p>
        </Dialog>
      )}
    </>
  );
}
