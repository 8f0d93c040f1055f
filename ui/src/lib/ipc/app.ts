// The app itself: what it is and where its data lives, its window, backups,
// the clipboard, links and the file manager.
import { call, channel, on } from "./client";
import type { AppInfo, ShortcutStatus, UpdateProgress, UpdateView } from "./generated";

export type { AppInfo, Installable, KeyringStatus, ShortcutStatus, UpdateProgress, UpdateView } from "./generated";

export const appIpc = {
  ping: () => call<string>("ping"),
  appInfo: () => call<AppInfo>("app_info"),
  /** Opens the log file's folder in the file manager. */
  openLogFolder: () => call<void>("open_log_folder"),
  /** Closes the window (and the app): after `onWindowClosing`, once the views are torn down. */
  closeWindow: () => call<void>("close_window"),
  setZoom: (zoom: number) => call<void>("set_zoom", { zoom }),
  backupData: () => call<string | null>("backup_data"),
  restoreData: () => call<string | null>("restore_data"),
  /** Puts text on the system clipboard (WebKitGTK gives pages none; use `copyText`). */
  writeClipboard: (text: string) => call<void>("write_clipboard", { text }),
  /** Opens an `http(s)` or `mailto` link in the user's browser or mail program (the window never navigates). */
  openLink: (url: string) => call<void>("open_link", { url }),
  /** Shows a saved file in the file manager. */
  showInFolder: (path: string) => call<void>("show_in_folder", { path }),
  /** The user asked to close the window: tear the views down, then `closeWindow`. */
  onWindowClosing: (h: () => void) => on<null>("window_closing", () => h()),
  /** Hides the quick-ask window (the one calling). */
  hideQuickAsk: () => call<void>("hide_quick_ask"),
  quickAskReady: () => call<void>("quick_ask_ready"),
  /** How the quick-ask shortcut is held: by Patchbay, by the desktop's portal, or not (and why). */
  quickAskShortcutStatus: () => call<ShortcutStatus>("quick_ask_shortcut_status"),
  /** Asks for the saved quick-ask shortcut again (after the desktop's dialog was cancelled, say). */
  retryQuickAskShortcut: () => call<void>("retry_quick_ask_shortcut"),
  /** The quick-ask shortcut is now held another way (the desktop's portal answered, or let it go). */
  onQuickAskShortcut: (h: (s: ShortcutStatus) => void) => on<ShortcutStatus>("quick_ask_shortcut", h),
  /** Shows a conversation in the main window, and hides the quick-ask window. */
  openInMain: (conversationId: string) => call<void>("open_in_main", { conversation_id: conversationId }),
  /** The quick-ask window was shown (by its shortcut, the tray or `--quick-ask`). */
  onQuickAskShown: (h: () => void) => on<null>("quick_ask_shown", () => h()),
  /** The main window should show this conversation ("Open in Patchbay" in quick ask). */
  onOpenConversation: (h: (id: string) => void) => on<string>("open_conversation", h),
  /** The tray asked for a new chat. */
  onNewChat: (h: () => void) => on<null>("new_chat", () => h()),
  /** Looks for a newer version now: `null` when this one is the newest. */
  checkUpdate: () => call<UpdateView | null>("check_update"),
  /** Downloads, verifies and installs `version` (the one shown), with its progress. */
  installUpdate: (version: string, onEvent: (p: UpdateProgress) => void) => call<void>("install_update", { version, on_event: channel(onEvent) }),
  /** Restarts Patchbay (after an update). */
  restartApp: () => call<void>("restart_app"),
  /** The newer version the start-up or daily look found (it may have come before the window listened). */
  foundUpdate: () => call<UpdateView | null>("found_update"),
  /** The start-up or daily look found a newer version. */
  onUpdateAvailable: (h: (u: UpdateView) => void) => on<UpdateView>("update_available", h),
};
