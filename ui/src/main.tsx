import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import { App } from "./App";
import { QuickAsk } from "./quick/QuickAsk";
import { I18nProvider } from "./lib/i18n";
import { TooltipProvider } from "./components/common/IconButton";
import { ipc, windowLabel } from "./lib/ipc";
import { applyTheme, storedTheme } from "./lib/theme";
import { setZoom, stepZoom, storedZoom, zoomDirection } from "./lib/zoom";
import "./styles.css";

const root = document.getElementById("root");
if (!root) throw new Error("index.html has no #root element");

applyTheme(storedTheme());
// "Follow the system" keeps following it while the app runs.
matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => applyTheme(storedTheme()));

// The page zoom chosen last time, and Ctrl/Cmd with = - 0 to change it. A failure
// leaves the page as it is; Settings → General shows the error when chosen there.
if (storedZoom() !== 1) void ipc.setZoom(storedZoom()).catch(() => undefined);
window.addEventListener("keydown", (e) => {
  const direction = zoomDirection(e);
  if (direction === null) return;
  e.preventDefault();
  void setZoom(stepZoom(storedZoom(), direction), ipc.setZoom).catch(() => undefined);
});

// The quick-ask window loads this page too, under its own label (src-tauri/src/quick_ask.rs).
const quickAsk = windowLabel() === "quick-ask";

createRoot(root).render(
  <StrictMode>
    <I18nProvider>
      {/* App holds the main window's tooltip provider; quick ask's answers have icon buttons too (code blocks' copy). */}
      {quickAsk ? (
        <TooltipProvider>
          <QuickAsk ipc={ipc} />
        </TooltipProvider>
      ) : (
        <App />
      )}
    </I18nProvider>
  </StrictMode>,
);
