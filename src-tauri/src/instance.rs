//! One app per data directory, and the window where the user left it.
//!
//! The single-instance lock is keyed on the data directory asked for (also when the core could not
//! open there): a second launch on it hands its arguments to the first and exits, and the first
//! comes to the front; a launch on another data dir runs on its own. Keying works on Linux (a D-Bus
//! name); on macOS and Windows the plugin keys on the bundle identifier only.
//!
//! The window's geometry is saved in `window-state.json` in the data directory shortly after a move
//! or resize and at exit, so a killed app keeps it too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use patchbay_core::paths::DataDir;
use tauri::{AppHandle, Manager, Runtime, Window, WindowEvent, plugin::TauriPlugin};
use tauri_plugin_window_state::{AppHandleExt, StateFlags};

/// The file, inside the data directory, that keeps the window's geometry.
const WINDOW_STATE_FILE: &str = "window-state.json";

/// What is remembered of the window.
const FLAGS: StateFlags = StateFlags::SIZE.union(StateFlags::POSITION).union(StateFlags::MAXIMIZED);

/// How long the window must stay put before its geometry is written.
const SAVE_DELAY: Duration = Duration::from_millis(400);

/// Counts moves and resizes; a delayed save runs only if no newer change came after it.
static CHANGES: AtomicU64 = AtomicU64::new(0);

/// The D-Bus base name of the instance that owns `dir` (the plugin appends `.SingleInstance`).
pub fn instance_id(identifier: &str, dir: Option<&DataDir>) -> String {
    match dir {
        // A D-Bus name element may not start with a digit: prefix the hex fingerprint.
        Some(dir) => format!("{identifier}.d{}", dir.fingerprint()),
        None => identifier.to_owned(),
    }
}

/// The single-instance plugin: a second launch on the same data dir focuses the
/// first window, handing over the bundle or install link it was given.
pub fn single_instance<R: Runtime>(identifier: &str, dir: Option<&DataDir>) -> TauriPlugin<R> {
    tauri_plugin_single_instance::Builder::new()
        .dbus_id(instance_id(identifier, dir))
        .callback(|app, args, cwd| {
            // A bundle or link opened while Patchbay runs: this window shows what it installs.
            // `--quick-ask` (a desktop's own shortcut runs it) opens only the quick-ask window.
            if args.iter().any(|a| a == crate::quick_ask::ARG) {
                return crate::quick_ask::show(app);
            }
            if let Some(opened) = crate::opened::from_args(args.into_iter().skip(1), std::path::Path::new(&cwd)) {
                crate::opened::offer(app, &app.state::<crate::state::AppState>().opened, opened);
            }
            focus_main_window(app)
        })
        .build()
}

/// Hands this launch over to the instance that owns the data dir, if one
/// runs: the call the single-instance plugin would make once the app is
/// built (`ExecuteCallback` with the arguments and working directory), made
/// before Patchbay opens its database or starts GTK, so that a second launch
/// exits having started nothing. Returns whether it handed over; when it did
/// not (no instance, no session bus), the plugin decides as before.
#[cfg(target_os = "linux")]
pub fn hand_over(identifier: &str, dir: Option<&DataDir>) -> bool {
    let name = format!("{}.SingleInstance", instance_id(identifier, dir));
    let path = format!("/{}", name.replace('.', "/").replace('-', "_"));
    let Ok(connection) = zbus::blocking::Connection::session() else { return false };
    let owned = zbus::names::BusName::try_from(name.as_str())
        .ok()
        .and_then(|bus| zbus::blocking::fdo::DBusProxy::new(&connection).ok()?.name_has_owner(bus).ok());
    if owned != Some(true) {
        return false;
    }
    let argv: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    let cwd = std::env::current_dir().unwrap_or_default().to_string_lossy().into_owned();
    let handed = connection.call_method(
        Some(name.as_str()),
        path.as_str(),
        Some("org.SingleInstance.DBus"),
        "ExecuteCallback",
        &(argv, cwd),
    );
    if let Err(e) = &handed {
        tracing::warn!("could not hand over to the running Patchbay, starting another: {e}");
    }
    handed.is_ok()
}

/// Other platforms leave it to the single-instance plugin.
#[cfg(not(target_os = "linux"))]
pub fn hand_over(_identifier: &str, _dir: Option<&DataDir>) -> bool {
    false
}

/// Gives up the data dir's single-instance lock. Called first on exit: stopping
/// the MCP servers can take seconds, and a launch meanwhile must open its own
/// window rather than hand over to an instance on its way out (which has no
/// window left to show, so the launch would end with nothing on screen).
pub fn release<R: Runtime>(app: &AppHandle<R>) {
    tauri_plugin_single_instance::destroy(app);
}

/// Brings the main window back from minimised or hidden, to the front.
pub fn focus_main_window<R: Runtime>(app: &AppHandle<R>) {
    let Some(window) = app.get_webview_window(crate::MAIN_WINDOW) else { return };
    for step in [window.unminimize(), window.show(), window.set_focus()] {
        if let Err(e) = step {
            tracing::warn!("could not bring the window to the front: {e}");
        }
    }
}

/// The window-state plugin, storing the geometry in the data directory when there is one.
pub fn window_state<R: Runtime>(dir: Option<&DataDir>) -> TauriPlugin<R> {
    let builder = tauri_plugin_window_state::Builder::new().with_state_flags(FLAGS);
    match dir {
        // An absolute file name replaces the plugin's default folder (the app config dir).
        Some(dir) => builder.with_filename(dir.path().join(WINDOW_STATE_FILE).to_string_lossy()),
        None => builder,
    }
    .build()
}

/// Writes the geometry once the window has stopped moving or resizing for [`SAVE_DELAY`].
pub fn save_geometry_when_settled<R: Runtime>(window: &Window<R>, event: &WindowEvent) {
    if !matches!(event, WindowEvent::Moved(_) | WindowEvent::Resized(_)) {
        return;
    }
    let change = CHANGES.fetch_add(1, Ordering::Relaxed) + 1;
    let app = window.app_handle().clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SAVE_DELAY).await;
        if CHANGES.load(Ordering::Relaxed) == change
            && let Err(e) = app.save_window_state(FLAGS)
        {
            tracing::warn!("could not save the window's size and position: {e}");
        }
    });
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
