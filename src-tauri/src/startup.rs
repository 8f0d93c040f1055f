//! Start-up probe for the benchmarks (`scripts/bench-desktop.sh`).
//!
//! With `PATCHBAY_STARTUP_PROBE=1`, once the page has loaded the app asks the
//! page to call `app_info` over the real IPC path, and prints
//! `patchbay-startup-probe answered_unix_ns=<N>` on stderr the first time that
//! command answers. Without the variable nothing happens.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tauri::webview::{PageLoadEvent, PageLoadPayload};
use tauri::{Runtime, Webview};

/// The variable that turns the probe on.
pub const PROBE_ENV: &str = "PATCHBAY_STARTUP_PROBE";

static ANSWERED: AtomicBool = AtomicBool::new(false);

fn enabled() -> bool {
    std::env::var_os(PROBE_ENV).is_some_and(|v| v == "1")
}

/// On the first finished page load, makes the page invoke `app_info`.
pub fn on_page_load<R: Runtime>(webview: &Webview<R>, payload: &PageLoadPayload<'_>) {
    if payload.event() == PageLoadEvent::Finished && enabled() && !ANSWERED.load(Ordering::Relaxed) {
        // Evaluated by the webview itself, so the page's CSP does not apply.
        if let Err(e) = webview.eval("window.__TAURI_INTERNALS__.invoke('app_info')") {
            eprintln!("patchbay-startup-probe failed: {e}");
        }
    }
}

/// Called when `app_info` answers: prints the time of the first answer.
pub fn answered() {
    if enabled() && !ANSWERED.swap(true, Ordering::Relaxed) {
        let ns = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        eprintln!("patchbay-startup-probe answered_unix_ns={ns}");
    }
}
