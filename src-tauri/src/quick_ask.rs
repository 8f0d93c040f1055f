//! Quick ask: a small window over other apps for one question to the default
//! assistant, opened by a global shortcut, the tray, or
//! `patchbay-desktop --quick-ask` (what to bind where the desktop keeps global
//! shortcuts to itself and offers no GlobalShortcuts portal). "Open in
//! Patchbay" hands its conversation to the main window.
//!
//! The shortcut is taken by Patchbay itself where it can (X11, macOS, Windows);
//! on Wayland it is asked of the desktop's portal ([`crate::shortcut_portal`]),
//! which answers later, so Settings shows how it is held ([`ShortcutStatus`]).
//!
//! The window is made on first use and hidden, not closed, afterwards, so it
//! opens at once the next time.

use std::str::FromStr;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde::Serialize;
use tauri::webview::{PageLoadEvent, PageLoadPayload};
use tauri::{AppHandle, Emitter, Manager, Runtime, Webview, WebviewUrl, WebviewWindow, WebviewWindowBuilder, Window};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, Shortcut, ShortcutState};
use tokio_util::sync::CancellationToken;

use crate::error::{IpcError, IpcErrorKind};
use crate::state::AppState;

/// The quick-ask window's label; the page renders the quick ask under it.
pub const LABEL: &str = "quick-ask";

/// The event the main window hears when it should show a conversation.
const OPEN_CONVERSATION_EVENT: &str = "open_conversation";

/// The event the quick-ask window hears each time it is shown.
const SHOWN_EVENT: &str = "quick_ask_shown";

/// The command-line flag that opens the quick-ask window.
pub const ARG: &str = "--quick-ask";

/// The event the main window hears when the shortcut is held another way.
const STATUS_EVENT: &str = "quick_ask_shortcut";

/// How the quick-ask shortcut is held now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ts_rs::TS)]
// Only Linux asks a desktop's portal (the waiting and the desktop's states).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum ShortcutStatus {
    /// No shortcut is set.
    None,
    /// Patchbay takes the key itself, in every app.
    Held,
    /// Asked of the desktop's GlobalShortcuts portal, which has not answered (it may be asking the user).
    Waiting,
    /// The desktop holds it; `trigger` is the key as the desktop names it, when it says.
    Desktop { trigger: Option<String> },
    /// Not held: why, and what to do instead.
    Unbound { why: String },
}

/// The shortcut's status and the portal session it comes from, under one lock: a session
/// replaced (its token cancelled under the lock) can no longer write the status.
pub struct Holding {
    now: Mutex<(ShortcutStatus, CancellationToken)>,
    /// The task holding the portal's session: a new session waits until it has closed, as
    /// both name the same shortcut to the desktop.
    #[cfg(target_os = "linux")]
    task: Mutex<Option<tauri::async_runtime::JoinHandle<()>>>,
}

impl Default for Holding {
    fn default() -> Self {
        Self {
            now: Mutex::new((ShortcutStatus::None, CancellationToken::new())),
            #[cfg(target_os = "linux")]
            task: Mutex::new(None),
        }
    }
}

/// How the quick-ask shortcut is held now (Settings → General shows it).
#[tauri::command]
pub fn quick_ask_shortcut_status(holding: tauri::State<'_, Holding>) -> ShortcutStatus {
    holding.now.lock().unwrap_or_else(PoisonError::into_inner).0.clone()
}

/// Asks for the saved shortcut again: after the desktop's dialog was cancelled, or the key
/// was taken by another app, say ("Try again" beside the status).
#[tauri::command]
pub fn retry_quick_ask_shortcut(app: AppHandle, state: tauri::State<'_, AppState>) -> Result<(), IpcError> {
    let text = state.app()?.get_settings()?.quick_ask_shortcut;
    register(&app, &text)
}

/// Whose word a status is: Patchbay's own (it ends the portal's session, if any), a new
/// portal session's (it replaces the one before), or that session's later.
// Only Linux has portal sessions.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
enum Said<'a> {
    Patchbay,
    NewSession(CancellationToken),
    Session(&'a CancellationToken),
}

/// Records `status` and tells the main window, in the order they happen (under the lock),
/// unless it comes from a session replaced since.
fn set_status<R: Runtime>(app: &AppHandle<R>, status: ShortcutStatus, said: Said<'_>) {
    let holding = app.state::<Holding>();
    let mut now = holding.now.lock().unwrap_or_else(PoisonError::into_inner);
    match said {
        Said::Session(session) if session.is_cancelled() => return,
        Said::Session(_) => {}
        Said::Patchbay => now.1.cancel(),
        Said::NewSession(session) => {
            now.1.cancel();
            now.1 = session;
        }
    }
    now.0 = status.clone();
    if let Err(e) = app.emit_to(crate::MAIN_WINDOW, STATUS_EVENT, status) {
        tracing::warn!("could not tell the main window how the quick-ask shortcut is held: {e}");
    }
}

/// Shows the quick-ask window over other apps. The first time it is made hidden and shows
/// once its page says it is ready ([`quick_ask_ready`]): shown before, it would take the
/// keyboard while nothing in it can read the first keys typed.
pub fn show<R: Runtime>(app: &AppHandle<R>) {
    match app.get_webview_window(LABEL) {
        Some(window) => reveal(app, &window),
        None => {
            if let Err(e) = create(app) {
                tracing::warn!("could not open the quick-ask window: {e}");
            }
        }
    }
}

/// The quick-ask page is ready for the keyboard: the window it was made for shows.
#[tauri::command]
pub fn quick_ask_ready<R: Runtime>(app: AppHandle<R>, window: Window<R>) -> Result<(), IpcError> {
    if window.label() != LABEL {
        return Err(IpcError::new(IpcErrorKind::InvalidInput, "only the quick-ask window says it is ready"));
    }
    if let Some(window) = app.get_webview_window(LABEL) {
        reveal(&app, &window);
    }
    Ok(())
}

fn reveal<R: Runtime>(app: &AppHandle<R>, window: &WebviewWindow<R>) {
    for step in [window.show(), window.unminimize(), window.set_focus()] {
        if let Err(e) = step {
            tracing::warn!("could not bring the quick-ask window to the front: {e}");
        }
    }
    if let Err(e) = app.emit_to(LABEL, SHOWN_EVENT, ()) {
        tracing::warn!("could not tell the quick-ask window it shows: {e}");
    }
}

fn create<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<WebviewWindow<R>> {
    let window = WebviewWindowBuilder::new(app, LABEL, WebviewUrl::App("index.html".into()))
        .title("Patchbay · Quick ask")
        .inner_size(640.0, 440.0)
        .min_inner_size(420.0, 240.0)
        .always_on_top(true)
        .skip_taskbar(true)
        .center()
        .visible(false)
        .build()?;
    crate::webview::configure(&window)?;
    Ok(window)
}

/// A shortcut as the settings write it (`Ctrl+Alt+Space`); empty is none. A
/// global shortcut needs a modifier: a bare key would be taken from every app.
pub fn parse_shortcut(text: &str) -> Result<Option<Shortcut>, IpcError> {
    let text = text.trim();
    if text.is_empty() {
        return Ok(None);
    }
    let invalid = |why: String| {
        IpcError::new(
            IpcErrorKind::InvalidInput,
            format!("the quick-ask shortcut {text:?} {why}; write it like Ctrl+Alt+Space"),
        )
    };
    let shortcut = Shortcut::from_str(text).map_err(|e| invalid(format!("is not a shortcut ({e})")))?;
    if shortcut.mods.is_empty() {
        return Err(invalid("has no Ctrl, Alt, Shift or Super".to_owned()));
    }
    Ok(Some(shortcut))
}

/// Whether the session is Wayland's, where an app cannot take a global shortcut itself.
fn wayland() -> bool {
    std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland")
}

/// What to do where the shortcut cannot be held, after why.
fn instead(text: &str, why: impl std::fmt::Display) -> String {
    format!(
        "the quick-ask shortcut {} is saved, but {why}. Bind the command `patchbay-desktop {ARG}` to a key in your desktop's keyboard settings instead",
        text.trim()
    )
}

/// Makes `text` the quick-ask shortcut (none when empty), replacing the one before. On
/// Wayland it is asked of the desktop's portal, which answers later ([`ShortcutStatus`]).
pub fn register<R: Runtime>(app: &AppHandle<R>, text: &str) -> Result<(), IpcError> {
    let shortcut = parse_shortcut(text)?;
    let shortcuts = app.global_shortcut();
    shortcuts.unregister_all().map_err(|e| IpcError::new(IpcErrorKind::Internal, e))?;
    let Some(shortcut) = shortcut else {
        set_status(app, ShortcutStatus::None, Said::Patchbay);
        return Ok(());
    };
    if wayland() {
        return ask_the_desktop(app, text, &shortcut);
    }
    match shortcuts.register(shortcut) {
        Ok(()) => {
            set_status(app, ShortcutStatus::Held, Said::Patchbay);
            Ok(())
        }
        Err(e) => {
            let why = instead(text, format_args!("the desktop refused it ({e})"));
            set_status(app, ShortcutStatus::Unbound { why: why.clone() }, Said::Patchbay);
            Err(IpcError::new(IpcErrorKind::InvalidInput, why))
        }
    }
}

/// Asks the desktop's GlobalShortcuts portal to hold `shortcut`, in the background: the
/// status says when it has (or why not); its presses show the quick-ask window.
#[cfg(target_os = "linux")]
fn ask_the_desktop<R: Runtime>(app: &AppHandle<R>, text: &str, shortcut: &Shortcut) -> Result<(), IpcError> {
    let session = CancellationToken::new();
    set_status(app, ShortcutStatus::Waiting, Said::NewSession(session.clone()));
    let trigger = crate::shortcut_portal::xdg_trigger(shortcut);
    let holding = app.state::<Holding>();
    let mut task = holding.task.lock().unwrap_or_else(PoisonError::into_inner);
    let before = task.take();
    let (app, text) = (app.clone(), text.to_owned());
    *task = Some(tauri::async_runtime::spawn(async move {
        // The session before ends first (it was cancelled; closing it is bounded).
        if let Some(before) = before {
            let _ = before.await;
        }
        let held = |trigger| set_status(&app, ShortcutStatus::Desktop { trigger }, Said::Session(&session));
        if let Err(e) = crate::shortcut_portal::hold(trigger, held, || show(&app), session.clone()).await {
            tracing::warn!("the quick-ask shortcut is not held: {e}");
            set_status(&app, ShortcutStatus::Unbound { why: instead(&text, e) }, Said::Session(&session));
        }
    }));
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn ask_the_desktop<R: Runtime>(app: &AppHandle<R>, text: &str, _shortcut: &Shortcut) -> Result<(), IpcError> {
    let why = instead(text, "on Wayland only the desktop can set global shortcuts");
    set_status(app, ShortcutStatus::Unbound { why: why.clone() }, Said::Patchbay);
    Err(IpcError::new(IpcErrorKind::InvalidInput, why))
}

/// The shortcut the settings held at start, taken once the main window's page has loaded:
/// grabbed while WebKit started the page, it held the window's first answer back by half a
/// second (X11; docs/BENCHMARKS.md, 2026-11-28).
#[derive(Default)]
pub struct AtStart(Mutex<Option<String>>);

impl AtStart {
    /// `text` is registered when the main window's page has loaded.
    pub fn wait(&self, text: String) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(text);
    }

    /// The shortcut still waiting, if any; none waits afterwards (a shortcut saved in
    /// Settings replaces it).
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }
}

/// How long after the main window's page has loaded the shortcut read at start is registered.
/// The registration holds the main thread for 50–90 ms (the plugin waits there for its X11
/// thread); queued at once, it came before the page's first requests, whose answers the main
/// thread also gives, and held the first one back by about 150 ms (docs/BENCHMARKS.md,
/// 2026-11-29).
const AFTER_PAGE: Duration = Duration::from_secs(1);

/// On the main window's first finished page load, registers the shortcut read at start
/// [`AFTER_PAGE`] later, on the main thread's queue: there it is ordered with a Settings save
/// (also on the main thread), which takes a shortcut still waiting, and cannot wait on the
/// plugin's lock against it.
pub fn on_page_load<R: Runtime>(webview: &Webview<R>, payload: &PageLoadPayload<'_>) {
    if webview.label() != crate::MAIN_WINDOW || payload.event() != PageLoadEvent::Finished {
        return;
    }
    let app = webview.app_handle().clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(AFTER_PAGE).await;
        let handle = app.clone();
        let queued = app.run_on_main_thread(move || {
            if let Some(text) = handle.state::<AtStart>().take()
                && let Err(e) = register(&handle, &text)
            {
                tracing::warn!("{e}");
            }
        });
        if let Err(e) = queued {
            tracing::warn!("the quick-ask shortcut was not registered: {e}");
        }
    });
}

/// The global-shortcut plugin: its shortcut opens the quick-ask window.
pub fn plugin<R: Runtime>() -> tauri::plugin::TauriPlugin<R> {
    tauri_plugin_global_shortcut::Builder::new()
        .with_handler(|app, _shortcut, event| {
            if event.state == ShortcutState::Pressed {
                show(app);
            }
        })
        .build()
}

/// Hides the quick-ask window (Escape, or after "Open in Patchbay").
#[tauri::command]
pub fn hide_quick_ask(window: Window) -> Result<(), IpcError> {
    if window.label() != LABEL {
        return Err(IpcError::new(IpcErrorKind::InvalidInput, "only the quick-ask window hides itself this way"));
    }
    window.hide().map_err(|e| IpcError::new(IpcErrorKind::Internal, e))
}

/// Shows a conversation in the main window and hides the quick-ask window.
#[tauri::command(rename_all = "snake_case")]
pub fn open_in_main(app: AppHandle, conversation_id: String) -> Result<(), IpcError> {
    app.state::<AppState>().app()?.get_conversation(&conversation_id, Some(0))?;
    crate::instance::focus_main_window(&app);
    app.emit_to(crate::MAIN_WINDOW, OPEN_CONVERSATION_EVENT, conversation_id)
        .map_err(|e| IpcError::new(IpcErrorKind::Internal, e))?;
    if let Some(window) = app.get_webview_window(LABEL) {
        window.hide().map_err(|e| IpcError::new(IpcErrorKind::Internal, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_shortcut;
    use crate::error::IpcErrorKind;

    #[test]
    fn a_shortcut_needs_a_modifier_and_a_key() {
        assert!(parse_shortcut("").unwrap().is_none(), "empty is none");
        assert!(parse_shortcut("Ctrl+Alt+Space").unwrap().is_some());
        assert!(parse_shortcut(" Super+Shift+K ").unwrap().is_some());
        let bare = parse_shortcut("Space").unwrap_err();
        assert_eq!(bare.kind, IpcErrorKind::InvalidInput);
        assert!(bare.message.contains("no Ctrl, Alt, Shift or Super"), "{}", bare.message);
        let bad = parse_shortcut("Ctrl+Banana").unwrap_err();
        assert!(bad.message.contains("\"Ctrl+Banana\" is not a shortcut"), "{}", bad.message);
    }
}
