//! One app per data directory, and the window where the user left it.
//!
//! The single-instance lock is keyed on the data directory: a second launch
//! on the same data dir hands its arguments to the first and exits, and the
//! first brings its window to the front; a launch on another data dir (a
//! second profile, an end-to-end test) runs on its own. Keying works on Linux,
//! where the lock is a D-Bus name; on macOS and Windows the plugin keys on the
//! bundle identifier only, so there every launch after the first focuses it.
//!
//! Window size, position and maximised state are saved in the data directory
//! (`window-state.json`) when the app exits and restored when the window opens.

use patchbay_core::paths::DataDir;
use tauri::{AppHandle, Manager, Runtime, plugin::TauriPlugin};
use tauri_plugin_window_state::StateFlags;

/// The file, inside the data directory, that keeps the window's geometry.
const WINDOW_STATE_FILE: &str = "window-state.json";

/// The D-Bus base name of the instance that owns `dir` (the plugin appends `.SingleInstance`).
pub fn instance_id(identifier: &str, dir: Option<&DataDir>) -> String {
    match dir {
        // A D-Bus name element may not start with a digit: prefix the hex fingerprint.
        Some(dir) => format!("{identifier}.d{}", dir.fingerprint()),
        None => identifier.to_owned(),
    }
}

/// The single-instance plugin: a second launch on the same data dir focuses the first window.
pub fn single_instance<R: Runtime>(identifier: &str, dir: Option<&DataDir>) -> TauriPlugin<R> {
    tauri_plugin_single_instance::Builder::new()
        .dbus_id(instance_id(identifier, dir))
        .callback(|app, _args, _cwd| focus_main_window(app))
        .build()
}

/// Brings the main window back from minimised or hidden, to the front.
fn focus_main_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window("main") else { return };
    for step in [window.unminimize(), window.show(), window.set_focus()] {
        if let Err(e) = step {
            tracing::warn!("could not bring the window to the front: {e}");
        }
    }
}

/// The window-state plugin, storing the geometry in the data directory when there is one.
pub fn window_state<R: Runtime>(dir: Option<&DataDir>) -> TauriPlugin<R> {
    let flags = StateFlags::SIZE | StateFlags::POSITION | StateFlags::MAXIMIZED;
    let builder = tauri_plugin_window_state::Builder::new().with_state_flags(flags);
    match dir {
        // An absolute file name replaces the plugin's default folder (the app config dir).
        Some(dir) => builder.with_filename(dir.path().join(WINDOW_STATE_FILE).to_string_lossy()),
        None => builder,
    }
    .build()
}

#[cfg(test)]
mod tests {
    use super::instance_id;
    use patchbay_core::paths::DataDir;

    #[test]
    fn each_data_dir_gets_its_own_valid_dbus_name() {
        let a = instance_id("dev.patchbay.desktop", Some(&DataDir::new("/home/u/.local/share/patchbay")));
        let b = instance_id("dev.patchbay.desktop", Some(&DataDir::new("/tmp/other")));
        assert_ne!(a, b);
        assert_eq!(a, instance_id("dev.patchbay.desktop", Some(&DataDir::new("/home/u/.local/share/patchbay"))));
        for name in [&a, &b] {
            let last = name.rsplit('.').next().unwrap();
            assert!(last.starts_with('d') && last[1..].chars().all(|c| c.is_ascii_hexdigit()), "{name}");
        }
        assert_eq!(instance_id("dev.patchbay.desktop", None), "dev.patchbay.desktop");
    }
}
