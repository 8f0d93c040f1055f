//! WebKitGTK settings of the window (Linux).
//!
//! Accelerated compositing is turned off: the window is text, lists and forms, which
//! WebKit paints well on the CPU, while compositing keeps a GL context and layer
//! buffers in the web process. Without a GPU (Mesa's software GL, as under Xvfb) that
//! costs about 80 MB at start and more once a long conversation has scrolled by
//! (`docs/BENCHMARKS.md`, "Desktop app"). Other platforms keep their webview's defaults.
//!
//! `PATCHBAY_WEBKIT_COMPOSITING=on` keeps WebKit's default. The end-to-end tests set it:
//! WebKitWebDriver's screenshots never answer without compositing (WebKitGTK 2.50, Xvfb).

use tauri::{Runtime, WebviewWindow};

/// The variable that keeps accelerated compositing on.
#[cfg(target_os = "linux")]
const COMPOSITING_ENV: &str = "PATCHBAY_WEBKIT_COMPOSITING";

/// Applies Patchbay's WebKit settings to `window`'s webview.
#[cfg(target_os = "linux")]
pub fn configure<R: Runtime>(window: &WebviewWindow<R>) -> tauri::Result<()> {
    use webkit2gtk::{HardwareAccelerationPolicy, SettingsExt, WebViewExt};
    if std::env::var_os(COMPOSITING_ENV).is_some_and(|v| v == "on") {
        return Ok(());
    }
    window.with_webview(|webview| match webview.inner().settings() {
        Some(settings) => settings.set_hardware_acceleration_policy(HardwareAccelerationPolicy::Never),
        None => tracing::warn!("the webview has no settings; accelerated compositing stays on"),
    })
}

/// Applies Patchbay's WebKit settings to `window`'s webview (nothing to change here).
#[cfg(not(target_os = "linux"))]
pub fn configure<R: Runtime>(_window: &WebviewWindow<R>) -> tauri::Result<()> {
    Ok(())
}
