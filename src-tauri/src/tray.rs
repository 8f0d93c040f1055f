//! The tray icon, where the desktop shows one: the servers' state at a
//! glance, New chat, Quick ask and Quit. With "keep in the tray" on, closing
//! the window hides it and Patchbay runs on here (its servers, its schedules)
//! until Quit.
//!
//! The menu speaks the window's language (made again when the window changes
//! it: `set_language`); the state line is rewritten on each
//! server status event.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Emitter, Manager, Runtime};

use crate::state::AppState;

/// The tray's id (one icon).
const TRAY: &str = "patchbay";

/// The event the main window hears when the tray asks for a new chat.
pub const NEW_CHAT_EVENT: &str = "new_chat";

/// Whether closing the main window keeps Patchbay running in the tray.
#[derive(Debug, Default)]
pub struct KeepInTray(AtomicBool);

impl KeepInTray {
    pub fn set(&self, keep: bool) {
        self.0.store(keep, Ordering::SeqCst);
    }

    /// Whether a close of the main window only hides it: asked for, and a tray holds the app.
    pub fn hides<R: Runtime>(&self, app: &AppHandle<R>) -> bool {
        self.0.load(Ordering::SeqCst) && app.tray_by_id(TRAY).is_some()
    }
}

/// The tray's texts in `language` (`en` or `zh`).
struct Labels {
    new_chat: &'static str,
    quick_ask: &'static str,
    show: &'static str,
    quit: &'static str,
}

fn labels(language: &str) -> Labels {
    match language {
        "zh" => Labels { new_chat: "新对话", quick_ask: "快速提问", show: "打开 Patchbay", quit: "退出" },
        _ => Labels { new_chat: "New chat", quick_ask: "Quick ask", show: "Open Patchbay", quit: "Quit" },
    }
}

/// One line for the servers' states (`ready`, `failed`, `starting`, …; disabled
/// servers are `stopped` and not counted).
pub fn summary(states: &[&str], language: &str) -> String {
    let running: Vec<&&str> = states.iter().filter(|s| **s != "stopped").collect();
    let failed = running.iter().filter(|s| ***s == "failed").count();
    let ready = running.iter().filter(|s| ***s == "ready").count();
    let total = running.len();
    let zh = language == "zh";
    match (total, failed) {
        (0, _) if zh => "没有运行的服务器".to_owned(),
        (0, _) => "No servers running".to_owned(),
        (_, 0) if ready == total && zh => format!("{total} 个服务器全部就绪"),
        (_, 0) if ready == total => format!("All {total} servers ready"),
        (_, 0) if zh => format!("{ready}/{total} 个服务器就绪，其余正在启动"),
        (_, 0) => format!("{ready} of {total} servers ready, the rest starting"),
        (_, failed) if zh => format!("{failed}/{total} 个服务器失败"),
        (_, failed) => format!("{failed} of {total} servers failed"),
    }
}

/// The servers' state line now, or why it cannot be read.
fn state_line(state: &AppState, language: &str) -> String {
    match state.app().and_then(|app| app.list_servers().map_err(Into::into)) {
        Ok(servers) => summary(&servers.iter().map(|s| s.status.state).collect::<Vec<_>>(), language),
        Err(e) => e.message,
    }
}

/// The window's language, English when it cannot be read.
fn language(state: &AppState) -> String {
    state.app().ok().and_then(|app| app.get_settings().ok()).map_or_else(|| "en".to_owned(), |s| s.language)
}

/// The state item, kept to be rewritten, and the language the menu was made in.
pub struct StateItem<R: Runtime>(Mutex<(MenuItem<R>, String)>);

/// Whether the desktop shows tray icons: on Linux, a StatusNotifier host on
/// the session bus (stock GNOME has none without its extension; Xvfb none).
#[cfg(target_os = "linux")]
fn desktop_has_tray() -> bool {
    let Ok(bus) = zbus::blocking::Connection::session() else { return false };
    let Ok(watcher) = zbus::names::BusName::try_from("org.kde.StatusNotifierWatcher") else { return false };
    let proxy = zbus::blocking::fdo::DBusProxy::new(&bus).ok();
    proxy.and_then(|proxy| proxy.name_has_owner(watcher).ok()).unwrap_or(false)
}

#[cfg(not(target_os = "linux"))]
fn desktop_has_tray() -> bool {
    true
}

/// Adds the tray icon where the desktop shows one. Elsewhere (or where the
/// library it loads is missing, which panics in it) there is none, and closing
/// the window then ends Patchbay as before.
pub fn install<R: Runtime>(app: &AppHandle<R>) -> Result<(), String> {
    if !desktop_has_tray() {
        return Err("the desktop shows no tray icons (no StatusNotifier host)".to_owned());
    }
    let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| build(app)));
    match built {
        Ok(result) => result.map_err(|e| e.to_string()),
        Err(_) => Err("the tray library (libayatana-appindicator3) could not be loaded".to_owned()),
    }
}

/// The menu in `language`, and its state line.
fn menu<R: Runtime>(app: &AppHandle<R>, language: &str) -> tauri::Result<(Menu<R>, MenuItem<R>)> {
    let text = labels(language);
    let status = MenuItem::with_id(app, "status", state_line(&app.state::<AppState>(), language), false, None::<&str>)?;
    let menu = Menu::with_items(
        app,
        &[
            &status,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, "show", text.show, true, None::<&str>)?,
            &MenuItem::with_id(app, "new_chat", text.new_chat, true, None::<&str>)?,
            &MenuItem::with_id(app, "quick_ask", text.quick_ask, true, None::<&str>)?,
            &PredefinedMenuItem::separator(app)?,
            &MenuItem::with_id(app, "quit", text.quit, true, None::<&str>)?,
        ],
    )?;
    Ok((menu, status))
}

fn build<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let language = language(&app.state::<AppState>());
    let (menu, status) = menu(app, &language)?;
    let mut tray = TrayIconBuilder::with_id(TRAY).menu(&menu).tooltip("Patchbay").show_menu_on_left_click(true);
    if let Some(icon) = app.default_window_icon() {
        tray = tray.icon(icon.clone());
    }
    tray.on_menu_event(|app, event| match event.id().as_ref() {
        "show" => crate::instance::focus_main_window(app),
        "new_chat" => {
            crate::instance::focus_main_window(app);
            if let Err(e) = app.emit_to(crate::MAIN_WINDOW, NEW_CHAT_EVENT, ()) {
                tracing::warn!("could not ask the window for a new chat: {e}");
            }
        }
        "quick_ask" => crate::quick_ask::show(app),
        "quit" => app.exit(0),
        _ => {}
    })
    .build(app)?;
    app.manage(StateItem(Mutex::new((status, language))));
    Ok(())
}

/// Makes the menu again in the window's language, if it changed.
pub fn relabel<R: Runtime>(app: &AppHandle<R>) {
    let (Some(tray), Some(item)) = (app.tray_by_id(TRAY), app.try_state::<StateItem<R>>()) else { return };
    let language = language(&app.state::<AppState>());
    let mut item = item.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if item.1 == language {
        return;
    }
    match menu(app, &language).and_then(|(menu, status)| tray.set_menu(Some(menu)).map(|()| status)) {
        Ok(status) => *item = (status, language),
        Err(e) => tracing::warn!("could not make the tray's menu in {language}: {e}"),
    }
}

/// Rewrites the servers' state line (after a status event).
pub fn refresh<R: Runtime>(app: &AppHandle<R>) {
    let Some(item) = app.try_state::<StateItem<R>>() else { return };
    // Not held while the text is set: that waits on the main thread, which may be relabelling.
    let (status, language) = item.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    if let Err(e) = status.set_text(state_line(&app.state::<AppState>(), &language)) {
        tracing::warn!("could not update the tray's server line: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn the_state_line_counts_what_runs() {
        assert_eq!(summary(&[], "en"), "No servers running");
        assert_eq!(summary(&["stopped", "stopped"], "en"), "No servers running");
        assert_eq!(summary(&["ready", "ready", "stopped"], "en"), "All 2 servers ready");
        assert_eq!(summary(&["ready", "starting"], "en"), "1 of 2 servers ready, the rest starting");
        assert_eq!(summary(&["ready", "failed", "restarting"], "en"), "1 of 3 servers failed");
        assert_eq!(summary(&["ready", "failed"], "zh"), "1/2 个服务器失败");
    }
}
