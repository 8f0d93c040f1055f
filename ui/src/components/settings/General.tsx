// General: theme, zoom, language, titles, the network proxy, the security
// defaults (level of servers that set none, tool calls per turn), data folder,
// backups, and the About facts.
import { useEffect, useState, useSyncExternalStore } from "react";
import { useI18n, type Lang } from "../../lib/i18n";
import { applyTheme, storedTheme, storeTheme } from "../../lib/theme";
import { setZoom, storedZoom, subscribeZoom, ZOOM_STEPS } from "../../lib/zoom";
import {
  toIpcError,
  type AppInfo,
  type GeneralSettings,
  type Ipc,
  type IpcError,
  type PolicyDefaults,
  type PolicySettings,
  type ProxyChoice,
  type SecurityLevel,
  type ShortcutStatus,
  type Theme,
  type UpdateView,
} from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { UpdateCard, type UpdateIpc } from "../Update";
import { FormFooter } from "./FormFooter";

export type GeneralIpc = Pick<
  Ipc,
  | "appInfo"
  | "openLogFolder"
  | "pickDataDir"
  | "getSettings"
  | "saveSettings"
  | "setZoom"
  | "backupData"
  | "restoreData"
  | "policySettings"
  | "setPolicyDefaults"
  | "quickAskShortcutStatus"
  | "onQuickAskShortcut"
  | "retryQuickAskShortcut"
> &
  UpdateIpc & Pick<Ipc, "checkUpdate">;

/** A setting that is on or off, saved as it changes; `null` until the settings are loaded. */
function Toggle({ id, label, on, onChange }: { id: string; label: string; on: boolean | null; onChange: (on: boolean) => void }) {
  return (
    <label className="check">
      <input id={id} type="checkbox" disabled={on === null} checked={on ?? false} onChange={(e) => onChange(e.target.checked)} /> {label}
    </label>
  );
}

/**
 * How the quick-ask shortcut is held now, as the backend says (the desktop's portal answers
 * later), with "Try again" when it is not held. A live region, there from the start, so that
 * what the desktop answers is read out. `shown`: an error the page shows already.
 */
function ShortcutHeld({ ipc, shown, onError }: { ipc: Pick<Ipc, "quickAskShortcutStatus" | "onQuickAskShortcut" | "retryQuickAskShortcut">; shown: string | undefined; onError: (e: IpcError) => void }) {
  const { t } = useI18n();
  const [status, setStatus] = useState<ShortcutStatus | null>(null);
  useEffect(() => {
    let live = true;
    // An event heard first is newer than the status asked for.
    let heard = false;
    const un = ipc.onQuickAskShortcut((s) => {
      heard = true;
      if (live) setStatus(s);
    });
    ipc.quickAskShortcutStatus().then((s) => live && !heard && setStatus(s), () => undefined);
    return () => {
      live = false;
      void un.then((f) => f());
    };
  }, [ipc]);
  const text =
    !status || status.state === "none" || status.state === "held"
      ? ""
      : status.state === "waiting"
        ? t("settings.shortcutWaiting")
        : status.state === "desktop"
          ? status.trigger
            ? t("settings.shortcutDesktop", { trigger: status.trigger })
            : t("settings.shortcutDesktopNoKey")
          : status.why === shown
            ? ""
            : status.why;
  return (
    <small className={status?.state === "unbound" ? "warning-text" : "muted"} id="quick-ask-shortcut-status" data-state={status?.state ?? "none"} role="status">
      {text}
      {status?.state === "unbound" && (
        <>
          {" "}
          <button type="button" className="link" id="quick-ask-shortcut-retry" onClick={() => void ipc.retryQuickAskShortcut().catch((e: unknown) => onError(toIpcError(e)))}>
            {t("settings.shortcutRetry")}
          </button>
        </>
      )}
    </small>
  );
}

/** Updates: the automatic look on or off, and a look now, which shows what it found. */
function Updates({ ipc, on, onToggle }: { ipc: GeneralIpc; on: boolean | null; onToggle: (on: boolean) => void }) {
  const { t } = useI18n();
  const [found, setFound] = useState<UpdateView | "none" | null>(null);
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<IpcError | null>(null);
  const check = () => {
    setChecking(true);
    setError(null);
    ipc
      .checkUpdate()
      .then((u) => setFound(u ?? "none"), (e: unknown) => setError(toIpcError(e)))
      .finally(() => setChecking(false));
  };
  return (
    <>
      <h2>{t("settings.updates")}</h2>
      <Toggle id="check-updates" label={t("settings.checkUpdates")} on={on} onChange={onToggle} />
      <div className="row">
        <button type="button" id="check-update-now" disabled={checking} onClick={check}>
          {t("settings.checkNow")}
        </button>
        {found === "none" && (
          <span role="status" data-testid="up-to-date">
            {t("settings.upToDate")}
          </span>
        )}
      </div>
      {error && <ErrorBanner error={error} />}
      {found && found !== "none" && <UpdateCard update={found} ipc={ipc} />}
    </>
  );
}

/** The security defaults: the level of servers that set none (of those offered here), and tool calls per turn. */
function SecurityDefaults({ initial, onSave }: { initial: PolicySettings; onSave: (d: PolicyDefaults) => Promise<void> }) {
  const { t } = useI18n();
  const [level, setLevel] = useState<SecurityLevel>(initial.defaults.level);
  const [calls, setCalls] = useState(String(initial.defaults.turn_tool_calls));
  const [saved, setSaved] = useState(false);
  return (
    <form
      className="security-defaults"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        const n = Math.floor(Number(calls));
        void onSave({ level, turn_tool_calls: Number.isFinite(n) && n > 0 ? n : 0 }).then(() => setSaved(true), () => undefined);
      }}
    >
      <label className="field">
        <span>{t("policy.defaultLevel")}</span>
        <select id="policy-default-level" value={level} onChange={(e) => setLevel(e.target.value as SecurityLevel)}>
          {initial.offered.map((l) => (
            <option key={l} value={l}>
              {t(`policy.level.${l}`)}
            </option>
          ))}
        </select>
      </label>
      {level === "permissive" && <p className="error-text">{t("policy.permissiveWarning")}</p>}
      <label className="field">
        <span>{t("policy.turnToolCalls")}</span>
        <input id="policy-turn-calls" type="number" min="1" value={calls} onChange={(e) => setCalls(e.target.value)} />
      </label>
      <FormFooter saveId="policy-defaults-save" saved={saved ? t("policy.defaultsSaved") : null} />
    </form>
  );
}

/** Where a URL's authority starts, and where its userinfo's `@` is in it (-1: none). */
function userinfoAt(url: string): { start: number; at: number } {
  const scheme = url.indexOf("://");
  const start = scheme < 0 ? 0 : scheme + 3;
  const end = url.slice(start).search(/[/?#]/);
  return { start, at: url.slice(start, end < 0 ? undefined : start + end).lastIndexOf("@") };
}

/**
 * A proxy URL's password, split off so that the form shows it as dots:
 * `http://user:pw@host` is `http://user@host` and `pw` (the userinfo is what
 * comes before the last `@` of the authority, as the core reads it).
 */
export function splitProxyPassword(url: string): { url: string; password: string } {
  const { start, at } = userinfoAt(url);
  const colon = url.slice(start, start + Math.max(at, 0)).indexOf(":");
  if (at < 0 || colon < 0) return { url, password: "" };
  return { url: url.slice(0, start + colon) + url.slice(start + at), password: url.slice(start + colon + 1, start + at) };
}

/** `url` with `password` put back after its user name (none: as it is). */
export function joinProxyPassword(url: string, password: string): string {
  const { start, at } = userinfoAt(url);
  return !password || at < 0 ? url : `${url.slice(0, start + at)}:${password}${url.slice(start + at)}`;
}

/** The proxy form: which kind, and the URL of a custom one (its password as dots); saved on demand. */
function Proxy({ initial, onSave }: { initial: ProxyChoice; onSave: (p: ProxyChoice) => Promise<void> }) {
  const { t } = useI18n();
  const [mode, setMode] = useState<ProxyChoice["mode"]>(initial.mode);
  const given = splitProxyPassword(initial.mode === "custom" ? initial.url : "");
  const [url, setUrl] = useState(given.url);
  const [password, setPassword] = useState(given.password);
  const [saved, setSaved] = useState(false);
  const choice: ProxyChoice = mode === "custom" ? { mode, url: joinProxyPassword(url.trim(), password) } : { mode };
  return (
    <form
      className="proxy-settings"
      onSubmit={(e) => {
        e.preventDefault();
        setSaved(false);
        void onSave(choice).then(() => setSaved(true), () => undefined);
      }}
    >
      <label className="field">
        <span>{t("settings.proxy")}</span>
        <select id="proxy-mode" value={mode} onChange={(e) => setMode(e.target.value as ProxyChoice["mode"])}>
          <option value="environment">{t("settings.proxyEnvironment")}</option>
          <option value="off">{t("settings.proxyOff")}</option>
          <option value="custom">{t("settings.proxyCustom")}</option>
        </select>
      </label>
      {mode === "custom" && (
        <label className="field">
          <span>{t("settings.proxyUrl")}</span>
          <input id="proxy-url" required value={url} placeholder="http://127.0.0.1:7890" onChange={(e) => {
              // A password typed in the URL moves to its own field, as dots.
              const typed = splitProxyPassword(e.target.value);
              setUrl(typed.url);
              if (typed.password) setPassword(typed.password);
            }}
          />
        </label>
      )}
      {mode === "custom" && url.includes("@") && (
        <label className="field">
          <span>{t("settings.proxyPassword")}</span>
          <input id="proxy-password" type="password" autoComplete="off" value={password} onChange={(e) => setPassword(e.target.value)} />
        </label>
      )}
      <p className="muted small">{t("settings.proxyHelp")}</p>
      <FormFooter saveId="proxy-save" saved={saved ? t("settings.proxySaved") : null} />
    </form>
  );
}

export function General({ ipc }: { ipc: GeneralIpc }) {
  const { t, lang, setLang } = useI18n();
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [theme, setTheme] = useState<Theme>(storedTheme);
  const [movedTo, setMovedTo] = useState<string | null>(null);
  // Follows Ctrl/Cmd with = - 0 too.
  const zoom = useSyncExternalStore(subscribeZoom, storedZoom);

  // Settings kept by the backend (the auto-title switch).
  const [settings, setSettings] = useState<GeneralSettings | null>(null);
  // Remounts the uncontrolled fields after a refused save.
  const [fieldsKey, setFieldsKey] = useState(0);
  const [security, setSecurity] = useState<PolicySettings | null>(null);

  useEffect(() => {
    let live = true;
    ipc
      .appInfo()
      .then((i) => live && setInfo(i))
      .catch((e: unknown) => live && setError(toIpcError(e)));
    ipc
      .getSettings()
      .then((s) => live && setSettings(s))
      .catch((e: unknown) => live && setError(toIpcError(e)));
    ipc
      .policySettings()
      .then((s) => live && setSecurity(s))
      .catch((e: unknown) => live && setError(toIpcError(e)));
    return () => {
      live = false;
    };
  }, [ipc]);

  // What the last backup or restore did.
  const [backupNote, setBackupNote] = useState<string | null>(null);
  const backup = () =>
    ipc
      .backupData()
      .then((path) => path && setBackupNote(t("settings.backedUp", { path })))
      .catch((e: unknown) => setError(toIpcError(e)));
  const restore = () =>
    ipc
      .restoreData()
      .then((path) => {
        if (!path) return;
        setBackupNote(t("settings.restoreStaged", { path }));
        setSettings((s) => s && { ...s, restore_pending: true });
      })
      .catch((e: unknown) => setError(toIpcError(e)));

  const note = backupNote ?? (settings?.restore_pending ? t("settings.restorePending") : null);

  const save = (change: Partial<GeneralSettings>) => {
    if (!settings) return;
    // The language is the window's (kept by `setLanguage` as it changes), never the one loaded.
    const next = { ...settings, ...change, language: lang };
    ipc
      .saveSettings(next)
      .then(() => setSettings(next))
      .catch((e: unknown) => {
        setError(toIpcError(e));
        // Refused (or saved with a warning, as a shortcut the desktop refuses): the fields show what is stored.
        ipc.getSettings().then(setSettings, () => setSettings({ ...settings }));
        setFieldsKey((k) => k + 1);
      });
  };

  const saveProxy = (proxy: ProxyChoice) => {
    if (!settings) return Promise.reject(new Error("settings are not loaded"));
    const next = { ...settings, proxy, language: lang };
    return ipc.saveSettings(next).then(
      () => {
        setSettings(next);
        setError(null);
      },
      (e: unknown) => {
        setError(toIpcError(e));
        throw e;
      },
    );
  };

  const saveSecurity = (defaults: PolicyDefaults) =>
    ipc.setPolicyDefaults(defaults).then(
      () => {
        setSecurity((s) => s && { ...s, defaults });
        setError(null);
      },
      (e: unknown) => {
        setError(toIpcError(e));
        throw e;
      },
    );

  const chooseDataDir = async () => {
    try {
      const dir = await ipc.pickDataDir();
      if (!dir) return;
      const s = await ipc.getSettings();
      await ipc.saveSettings({ ...s, data_dir: dir });
      setMovedTo(dir);
    } catch (e) {
      setError(toIpcError(e));
    }
  };

  return (
    <div data-testid="general-settings">
      <h2>{t("settings.about")}</h2>
      {error && <ErrorBanner error={error} />}
      {!error && !info && <p className="muted">{t("common.loading")}</p>}
      {info && (
        <dl className="facts">
          <dt>{t("settings.version")}</dt>
          <dd id="app-version">{info.version}</dd>
          <dt>{t("settings.dataDir")}</dt>
          <dd id="app-data-dir">{info.data_dir}</dd>
          <dt>{t("settings.database")}</dt>
          <dd>{info.database}</dd>
          <dt>{t("settings.schema")}</dt>
          <dd>{info.schema_version}</dd>
          <dt>{t("settings.keyring")}</dt>
          <dd id="app-keyring">
            {info.keyring.available
              ? t("settings.keyringAvailable", { detail: info.keyring.detail })
              : t("settings.keyringUnavailable", { detail: info.keyring.detail })}
          </dd>
          <dt>{t("settings.logFile")}</dt>
          <dd id="app-log-file">
            {info.log_file}{" "}
            <button type="button" className="link" id="open-log-folder" onClick={() => void ipc.openLogFolder().catch((e: unknown) => setError(toIpcError(e)))}>
              {t("settings.openLogFolder")}
            </button>
          </dd>
        </dl>
      )}
      <button type="button" id="data-dir-change" onClick={() => void chooseDataDir()}>
        {t("settings.changeDataDir")}
      </button>
      {movedTo && (
        <p role="status" className="muted">
          {t("settings.dataDirRestart", { path: movedTo })}
        </p>
      )}
      <h2>{t("settings.backup")}</h2>
      <p className="muted small">{t("settings.backupHelp")}</p>
      <div className="row">
        <button type="button" id="backup-data" onClick={() => void backup()}>
          {t("settings.backupNow")}
        </button>
        <button type="button" id="restore-data" onClick={() => void restore()}>
          {t("settings.restoreFrom")}
        </button>
      </div>
      {note && (
        <p role="status" className="muted" data-testid="backup-note">
          {note}
        </p>
      )}
      <label className="field">
        <span>{t("settings.language")}</span>
        <select id="language" value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
          <option value="en">English</option>
          <option value="zh">中文</option>
        </select>
      </label>
      <label className="field">
        <span>{t("settings.theme")}</span>
        <select
          id="theme"
          value={theme}
          onChange={(e) => {
            const next = e.target.value as Theme;
            setTheme(next);
            storeTheme(next);
            applyTheme(next);
          }}
        >
          <option value="system">{t("settings.themeSystem")}</option>
          <option value="light">{t("settings.themeLight")}</option>
          <option value="dark">{t("settings.themeDark")}</option>
        </select>
      </label>
      <Toggle id="auto-title" label={t("settings.autoTitle")} on={settings?.auto_title ?? null} onChange={(on) => save({ auto_title: on })} />
      <label className="field">
        <span>{t("settings.toolShare")}</span>
        <input
          id="tool-share"
          type="number"
          min={1}
          max={100}
          disabled={!settings}
          key={`${fieldsKey}/${settings?.tool_share_percent}`}
          defaultValue={settings?.tool_share_percent ?? 10}
          onBlur={(e) => {
            const percent = Number(e.target.value);
            if (percent !== settings?.tool_share_percent) save({ tool_share_percent: percent });
          }}
          aria-describedby="tool-share-hint"
        />
      </label>
      <small className="muted" id="tool-share-hint">
        {t("settings.toolShareHint")}
      </small>
      <h2>{t("settings.desktop")}</h2>
      <Toggle id="keep-in-tray" label={t("settings.keepInTray")} on={settings?.keep_in_tray ?? null} onChange={(on) => save({ keep_in_tray: on })} />
      <label className="field">
        <span>{t("settings.quickAskShortcut")}</span>
        <input
          id="quick-ask-shortcut"
          disabled={!settings}
          key={`${fieldsKey}/${settings?.quick_ask_shortcut}`}
          defaultValue={settings?.quick_ask_shortcut ?? ""}
          placeholder="Ctrl+Alt+Space"
          onBlur={(e) => {
            const shortcut = e.target.value.trim();
            if (shortcut !== settings?.quick_ask_shortcut) save({ quick_ask_shortcut: shortcut });
          }}
          aria-describedby="quick-ask-shortcut-hint quick-ask-shortcut-status"
        />
      </label>
      <small className="muted" id="quick-ask-shortcut-hint">
        {t("settings.quickAskShortcutHint")}
      </small>
      <ShortcutHeld ipc={ipc} shown={error?.message} onError={setError} />
      <Updates ipc={ipc} on={settings ? settings.check_updates : null} onToggle={(on) => save({ check_updates: on })} />
      <h2>{t("settings.network")}</h2>
      {settings && <Proxy initial={settings.proxy} onSave={saveProxy} />}
      <label className="field">
        <span>{t("settings.clientMetadata")}</span>
        <input
          id="client-metadata"
          type="url"
          disabled={!settings}
          key={`${fieldsKey}/${settings?.client_metadata_url}`}
          defaultValue={settings?.client_metadata_url ?? ""}
          placeholder="https://example.com/patchbay/client.json"
          onBlur={(e) => {
            const url = e.target.value.trim();
            e.target.value = url;
            if (url !== settings?.client_metadata_url) save({ client_metadata_url: url });
          }}
          aria-describedby="client-metadata-hint"
        />
      </label>
      <small className="muted" id="client-metadata-hint">
        {t("settings.clientMetadataHint")}
      </small>
      <h2>{t("policy.defaults")}</h2>
      {security && <SecurityDefaults initial={security} onSave={saveSecurity} />}
      <label className="field">
        <span>{t("settings.zoom")}</span>
        <select
          id="zoom"
          value={zoom}
          onChange={(e) => void setZoom(Number(e.target.value), ipc.setZoom).catch((err: unknown) => setError(toIpcError(err)))}
        >
          {ZOOM_STEPS.map((z) => (
            <option key={z} value={z}>
              {Math.round(z * 100)}%
            </option>
          ))}
        </select>
      </label>
    </div>
  );
}
