//! The desktop app: thin Tauri glue over `patchbay-core`.
//!
//! This is the only crate that knows Tauri. Commands deserialise their input,
//! make one core call and map the error once, into [`IpcError`]. The core is
//! opened at start-up; when that fails (unusable data dir, damaged or newer
//! database) the window still opens and every command answers with the error,
//! so the user sees why instead of a crash.

mod cancellable;
mod closing;
mod commands;
mod ending;
mod error;
mod instance;
#[cfg(test)]
mod ipc_types;
mod mcp_apps;
mod navigation;
mod opened;
mod quick_ask;
mod schedules;
#[cfg(target_os = "linux")]
mod shortcut_portal;
mod startup;
mod state;
mod tray;
mod updates;
mod webview;

pub use error::{IpcError, IpcErrorKind};

use std::path::PathBuf;

use tauri::Manager;

/// Reads `--data-dir DIR` (or `--data-dir=DIR`) from the command line.
fn data_dir_arg(args: impl IntoIterator<Item = String>) -> Option<PathBuf> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--data-dir" {
            return args.next().map(PathBuf::from);
        }
        if let Some(v) = arg.strip_prefix("--data-dir=") {
            return Some(PathBuf::from(v));
        }
    }
    None
}

/// The main window's label (tauri.conf.json).
pub const MAIN_WINDOW: &str = "main";

/// Whether the process was started under the command-line app's name
/// (`patchbay`, `/usr/bin/patchbay`, `patchbay.exe`).
pub fn is_cli_name(argv0: &std::ffi::OsStr) -> bool {
    std::path::Path::new(argv0).file_stem().is_some_and(|stem| stem == "patchbay")
}

/// macOS hands a clicked link to the running app as an event, not an argument.
#[cfg(target_os = "macos")]
fn on_open_url(app: &tauri::AppHandle) {
    use tauri_plugin_deep_link::DeepLinkExt;
    let handle = app.clone();
    app.deep_link().on_open_url(move |event| {
        if let Some(url) = event.urls().into_iter().next() {
            let pending = &handle.state::<state::AppState>().opened;
            opened::offer(&handle, pending, opened::Opened::Link { link: url.to_string() });
        }
    });
}

/// The tray icon, the quick-ask shortcut and "keep in the tray", as the
/// settings say; launched with `--quick-ask`, the quick-ask window too; the
/// look for updates. What
/// the desktop does not offer is logged, and the window works without it.
fn desktop_extras(app: &tauri::AppHandle) {
    if let Err(e) = tray::install(app) {
        tracing::info!("no tray icon: {e}");
    }
    match app.state::<state::AppState>().app().and_then(|a| a.get_settings().map_err(Into::into)) {
        Ok(settings) => {
            app.state::<tray::KeepInTray>().set(settings.keep_in_tray);
            app.state::<quick_ask::AtStart>().wait(settings.quick_ask_shortcut);
        }
        Err(e) => {
            tracing::warn!(kind = ?e.kind, "the tray and quick-ask settings could not be read, so both are off: {e}")
        }
    }
    if std::env::args_os().any(|a| a == quick_ask::ARG) {
        quick_ask::show(app);
    }
    updates::check_daily(app.clone());
}

/// SIGTERM (a session logging out, `kill`) and SIGINT (Ctrl+C in a terminal)
/// end the app as closing its window does, so the exit handler stops every MCP
/// server before the process ends.
#[cfg(unix)]
fn exit_on_terminate(handle: tauri::AppHandle) {
    use tokio::signal::unix::{SignalKind, signal};
    tauri::async_runtime::spawn(async move {
        let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
            tracing::warn!("SIGTERM and SIGINT will end Patchbay without stopping its servers first");
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
        handle.exit(0);
    });
}

/// What is logged unless `PATCHBAY_LOG` says otherwise: warnings, and
/// Patchbay's own information.
const DEFAULT_LOG: &str = "warn,patchbay_core=info,patchbay_desktop_lib=info";

/// Logs to stderr and to the data directory's log file (an app started from a
/// desktop menu has no stderr anyone reads). A log file that cannot be opened
/// is said on stderr, and the app runs on.
fn init_logging(dir: Option<&patchbay_core::paths::DataDir>) {
    use tracing_subscriber::prelude::*;
    use tracing_subscriber::{EnvFilter, fmt};
    let filter = EnvFilter::try_from_env("PATCHBAY_LOG").unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG));
    let file = dir.map(|dir| patchbay_core::logfile::LogFile::open(&dir.log_file()));
    let (file, unopened) = match file {
        Some(Ok(file)) => (Some(file), None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    tracing_subscriber::registry()
        .with(filter)
        .with(fmt::layer().with_writer(std::io::stderr))
        .with(file.map(|file| fmt::layer().with_ansi(false).with_writer(std::sync::Mutex::new(file))))
        .init();
    if let Some(e) = unopened {
        tracing::warn!("{e}; the log goes to stderr only");
    }
}

/// Builds and runs the app until its main window closes (or the tray's Quit).
pub fn run() {
    let data_dir_asked = data_dir_arg(std::env::args().skip(1));
    let resolved = patchbay_core::paths::DataDir::resolve(data_dir_asked.clone()).ok();
    init_logging(resolved.as_ref());
    let dir = resolved.as_ref().map(|d| d.path().display().to_string()).unwrap_or_default();
    tracing::info!(version = env!("CARGO_PKG_VERSION"), data_dir = dir, "Patchbay starts");
    let context = tauri::generate_context!();
    // A second launch on a data dir hands over and exits before anything opens.
    if let Ok(dir) = patchbay_core::paths::DataDir::resolve(data_dir_asked.clone())
        && instance::hand_over(&context.config().identifier, Some(&dir))
    {
        return;
    }
    let cwd = std::env::current_dir().unwrap_or_default();
    let state = state::AppState::open(data_dir_asked, opened::from_args(std::env::args().skip(1), &cwd));
    // The instance lock belongs to the data dir asked for, so that windows on
    // different data dirs never meet, even when the core could not open there;
    // the window geometry is kept in the data dir that opened.
    let requested_dir = state.requested_dir.clone();
    let data_dir = state.core().ok().map(|core| core.dir.clone());
    if let Err(e) = &state.core {
        tracing::error!("Patchbay started without its core: {e}");
    }
    let events = state.events.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
    let services = state.app().ok();
    let result = tauri::Builder::default()
        // Single instance first: a second launch must exit before anything else starts.
        .plugin(instance::single_instance(&context.config().identifier, requested_dir.as_ref()))
        .plugin(instance::window_state(data_dir.as_ref()))
        .plugin(tauri_plugin_dialog::init())
        .plugin(quick_ask::plugin())
        .plugin(tauri_plugin_updater::Builder::new().build())
        // Links are opened by `open_link`, which checks them; the plugin's own
        // click handler would need the window to call the plugin directly.
        .plugin(tauri_plugin_opener::Builder::new().open_js_links_on_click(false).build())
        .plugin(tauri_plugin_clipboard_manager::init())
        // The `patchbay` scheme (tauri.conf.json): the bundles register it; on macOS
        // a link arrives as an event, elsewhere as an argument (`opened::from_args`).
        .plugin(tauri_plugin_deep_link::init())
        // The window loads only Patchbay's pages and tools' views.
        .plugin(navigation::guard())
        .on_window_event(|window, event| {
            instance::save_geometry_when_settled(window, event);
            closing::on_window_event(window, event);
        })
        .on_page_load(|webview, payload| {
            startup::on_page_load(webview, payload);
            quick_ask::on_page_load(webview, payload);
        })
        .manage(state)
        .manage(mcp_apps::ViewPages::default())
        .manage(cancellable::Requests::default())
        .manage(closing::Closing::default())
        .manage(ending::Ending::default())
        .manage(tray::KeepInTray::default())
        .manage(quick_ask::AtStart::default())
        .manage(quick_ask::Holding::default())
        .manage(updates::Found::default())
        // Tools' views (MCP Apps), each in a sandboxed frame of this scheme.
        .register_uri_scheme_protocol(mcp_apps::SCHEME, |ctx, request| {
            ctx.app_handle().state::<mcp_apps::ViewPages>().serve(&request)
        })
        .setup(move |app| {
            for window in app.webview_windows().values() {
                webview::configure(window)?;
            }
            // Events reach the window from now on; start the MCP servers.
            if let Some(events) = events {
                state::forward_events(app.handle().clone(), events);
            }
            #[cfg(unix)]
            exit_on_terminate(app.handle().clone());
            #[cfg(target_os = "macos")]
            on_open_url(app.handle());
            if let Some(services) = &services
                && let Err(e) = tauri::async_runtime::block_on(async { services.start() })
            {
                tracing::error!("MCP servers were not started: {e}");
            }
            if let Ok(core) = app.state::<state::AppState>().core() {
                schedules::run_due_while_open(core.dir.clone(), core.store.clone());
                // New chats the window was closed on before anything was sent in them.
                match core.app.discard_unused_conversations() {
                    Ok(0) => {}
                    Ok(n) => tracing::info!("{n} unused new conversations discarded"),
                    Err(e) => tracing::warn!("unused new conversations were not discarded: {e}"),
                }
            }
            desktop_extras(app.handle());
            Ok(())
        })
        .invoke_handler(tauri::generate_handler![
            commands::ping,
            closing::close_window,
            quick_ask::hide_quick_ask,
            quick_ask::quick_ask_ready,
            quick_ask::quick_ask_shortcut_status,
            quick_ask::retry_quick_ask_shortcut,
            updates::check_update,
            updates::found_update,
            updates::install_update,
            updates::restart_app,
            quick_ask::open_in_main,
            commands::cancel_request,
            commands::app_info,
            commands::chat::list_conversations,
            commands::chat::create_conversation,
            commands::chat::rename_conversation,
            commands::chat::pin_conversation,
            commands::chat::delete_conversation,
            commands::chat::discard_conversation_if_unused,
            commands::chat::get_conversation,
            commands::chat::earlier_messages,
            commands::chat::update_conversation_settings,
            commands::chat::export_conversation,
            commands::chat::switch_branch,
            commands::chat::delete_message,
            commands::chat::fork_conversation,
            commands::chat::read_kept_result,
            commands::chat::send_message,
            commands::chat::regenerate,
            commands::chat::edit_message,
            commands::chat::cancel_turn,
            commands::chat::respond_approval,
            commands::servers::authorize_server,
            commands::servers::list_servers,
            commands::servers::save_server,
            commands::servers::server_presets,
            commands::servers::registry_search,
            commands::servers::registry_bundle,
            commands::servers::registry_fill,
            commands::servers::pick_bundle,
            commands::servers::pick_setting_file,
            commands::servers::bundle_preview,
            commands::servers::install_bundle,
            commands::servers::bundle_settings,
            commands::servers::configure_bundle,
            commands::servers::take_opened,
            commands::schedules::list_schedules,
            commands::schedules::add_schedule,
            commands::schedules::remove_schedule,
            commands::schedules::schedule_runs,
            commands::schedules::run_schedule_now,
            commands::servers::delete_server,
            commands::servers::set_server_enabled,
            commands::servers::restart_server,
            commands::servers::policy_preview,
            commands::servers::allow_domain,
            commands::servers::server_logs,
            commands::servers::set_server_log_level,
            commands::servers::export_server,
            commands::settings::write_clipboard,
            commands::settings::open_link,
            commands::settings::open_log_folder,
            commands::servers::server_doctor,
            commands::servers::check_server_health,
            commands::servers::list_tools,
            commands::servers::set_tool_enabled,
            commands::servers::set_tool_pinned,
            commands::servers::set_tool_approval,
            commands::servers::call_tool,
            commands::servers::get_trace,
            commands::servers::open_app_view,
            commands::servers::call_tool_for_view,
            commands::servers::read_resource_for_view,
            commands::servers::download_names,
            commands::servers::save_files,
            commands::servers::sample_for_view,
            commands::servers::list_resources_for_view,
            commands::servers::show_in_folder,
            commands::servers::waiting_server_requests,
            commands::servers::respond_server_request,
            commands::servers::list_prompts,
            commands::servers::get_prompt,
            commands::servers::complete_argument,
            commands::servers::list_resource_templates,
            commands::servers::read_resource,
            commands::servers::watch_resource,
            commands::servers::expand_resource_template,
            commands::servers::list_resources,
            commands::settings::list_providers,
            commands::settings::save_provider,
            commands::settings::delete_provider,
            commands::settings::test_provider,
            commands::settings::provider_presets,
            commands::settings::import_preview,
            commands::settings::import_apply,
            commands::settings::export_config,
            commands::settings::list_assistants,
            commands::settings::save_assistant,
            commands::settings::delete_assistant,
            commands::settings::get_settings,
            commands::settings::policy_settings,
            commands::settings::set_policy_defaults,
            commands::settings::save_settings,
            commands::settings::set_language,
            commands::settings::pick_data_dir,
            commands::settings::set_zoom,
            commands::settings::backup_data,
            commands::settings::restore_data,
            commands::knowledge::kb_status,
            commands::knowledge::kb_pick_folder,
            commands::knowledge::kb_add_folder,
            commands::knowledge::kb_remove_folder,
            commands::knowledge::kb_reindex,
            commands::knowledge::kb_documents,
            commands::knowledge::kb_search,
            commands::knowledge::kb_embeddings,
            commands::knowledge::kb_set_embeddings,
            commands::knowledge::kb_models,
            commands::knowledge::kb_get_model,
            commands::knowledge::kb_cancel_model,
            commands::knowledge::kb_set_model_hub,
            commands::knowledge::kb_share,
            commands::knowledge::kb_set_share,
            commands::knowledge::kb_share_new_token,
            commands::knowledge::kb_share_config,
            commands::knowledge::kb_sources,
            commands::knowledge::kb_source_candidates,
            commands::knowledge::kb_put_source,
            commands::knowledge::kb_remove_source,
            commands::knowledge::kb_preview_source,
            commands::knowledge::kb_try_source,
            commands::knowledge::list_roots,
            commands::knowledge::add_shared_folder,
            commands::knowledge::remove_shared_folder,
        ])
        .build(context);
    let app = match result {
        Ok(app) => app,
        Err(e) => {
            eprintln!("error: Patchbay could not start its window: {e}");
            std::process::exit(1);
        }
    };
    // Every server (and its process group) is stopped before the process ends.
    app.run(|handle, event| match event {
        tauri::RunEvent::ExitRequested { code, api, .. } => ending::on_exit_requested(handle, code, &api),
        tauri::RunEvent::Exit => ending::on_exit(handle),
        _ => {}
    });
}

#[cfg(test)]
mod tests {
    use super::{data_dir_arg, is_cli_name};
    use std::ffi::OsStr;
    use std::path::PathBuf;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn data_dir_is_read_in_both_spellings() {
        assert_eq!(data_dir_arg(args(&["--data-dir", "/x"])), Some(PathBuf::from("/x")));
        assert_eq!(data_dir_arg(args(&["-v", "--data-dir=/y"])), Some(PathBuf::from("/y")));
        assert_eq!(data_dir_arg(args(&["--other"])), None);
    }

    #[test]
    fn only_the_cli_name_runs_the_cli() {
        for name in ["patchbay", "/usr/bin/patchbay", "./patchbay", "patchbay.exe"] {
            assert!(is_cli_name(OsStr::new(name)), "{name}");
        }
        for name in ["patchbay-desktop", "/usr/bin/patchbay-desktop", "patchbay-desktop.exe", "/opt/patchbay/x", ""] {
            assert!(!is_cli_name(OsStr::new(name)), "{name}");
        }
    }
}
