import { useEffect, useState } from "react";
import { ErrorBanner } from "../components/ErrorBanner";
import { useI18n, type Lang } from "../lib/i18n";
import { ipc as defaultIpc, toIpcError, type AppInfo, type IpcError, type Ipc } from "../lib/ipc";

export function SettingsPage({ ipc = defaultIpc }: { ipc?: Pick<Ipc, "appInfo"> }) {
  const { t, lang, setLang } = useI18n();
  const [info, setInfo] = useState<AppInfo | null>(null);
  const [error, setError] = useState<IpcError | null>(null);

  useEffect(() => {
    let live = true;
    ipc
      .appInfo()
      .then((i) => live && setInfo(i))
      .catch((e: unknown) => live && setError(toIpcError(e)));
    return () => {
      live = false;
    };
  }, [ipc]);

  return (
    <section className="page" id="page-settings">
      <h1>{t("settings.title")}</h1>
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
        </dl>
      )}
      <label className="field">
        <span>{t("settings.language")}</span>
        <select id="language" value={lang} onChange={(e) => setLang(e.target.value as Lang)}>
          <option value="en">English</option>
          <option value="zh">中文</option>
        </select>
      </label>
    </section>
  );
}
