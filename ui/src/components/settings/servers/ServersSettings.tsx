// MCP servers: the list (`ServerList`) and the open server's page
// (`ServerDetail`: its tools, prompts and resources, logs, doctor and edit form);
// adding a server from scratch, a preset or an MCP Registry entry
// (`RegistryBrowser`, `RegistrySetup`), or installing an MCP bundle (.mcpb) from
// a file or the registry (`BundleInstall`). Server statuses and refused hosts
// are heard here, for the list and the page alike.
import { ListDetail } from "../ListDetail";
import { useCallback, useEffect, useState } from "react";
import { useI18n } from "../../../lib/i18n";
import { useAborts } from "../../../lib/aborts";
import { toIpcError, type BundleInfo, type Ipc, type RegistryEntry, type ServerPreset, type ServerView } from "../../../lib/ipc";
import { ErrorBanner } from "../../ErrorBanner";
import { useLoad } from "../useLoad";
import { BundleInstall } from "./BundleInstall";
import { RegistryBrowser, type RegistryIpc } from "./RegistryBrowser";
import { RegistrySetup, RegistryTemplate, type RegistrySetupIpc } from "./RegistrySetup";
import { ServerDetail, type ServerDetailIpc } from "./ServerDetail";
import { blankServer, ServerEditor } from "./ServerEditor";
import { ServerList, type ServerListIpc } from "./ServerList";

export type ServersIpc = ServerDetailIpc &
  ServerListIpc &
  RegistryIpc &
  RegistrySetupIpc &
  Pick<
    Ipc,
    | "listServers"
    | "serverPresets"
    | "registryBundle"
    | "onServerStatus"
    | "onConnectionBlocked"
    | "pickBundle"
    | "bundlePreview"
  >;

export function ServersSettings({
  ipc,
  opened = null,
  onOpened,
  initialSelected = null,
}: {
  ipc: ServersIpc;
  /** A bundle file to show the installer for at once (Patchbay was opened with it). */
  opened?: string | null;
  onOpened?: () => void;
  /** The server whose page is open at first. */
  initialSelected?: string | null;
}) {
  const { t, lang } = useI18n();
  const load = useCallback(() => ipc.listServers(), [ipc]);
  const { data, setData, error, setError, act, reload } = useLoad<ServerView[]>(load);
  const [selected, setSelected] = useState<string | null>(initialSelected);
  const [adding, setAdding] = useState(false);
  const [browsing, setBrowsing] = useState(false);
  const [template, setTemplate] = useState<RegistryEntry | null>(null);
  // A registry entry whose placeholders are being filled in, and the secrets filling them made.
  const [setup, setSetup] = useState<RegistryEntry | null>(null);
  const [pendingSecrets, setPendingSecrets] = useState<Record<string, string>>({});
  const [downloading, setDownloading] = useState<string | null>(null);
  // A bundle still downloading when the page goes is called off with it.
  const downloads = useAborts({ onUnmount: true });
  const [presets, setPresets] = useState<ServerPreset[]>([]);
  // The bundle previewed: installing it installs this preview's copy, not the file again.
  const [bundle, setBundle] = useState<BundleInfo | null>(null);
  const [installed, setInstalled] = useState<string | null>(null);
  const preview = useCallback(
    (path: string) =>
      void act(async () => {
        setBundle(await ipc.bundlePreview(path, lang === "zh" ? "zh-CN" : "en-US"));
      }),
    [ipc, act, lang],
  );
  const openBundle = () => void ipc.pickBundle().then((path) => path && preview(path), (e: unknown) => setError(toIpcError(e)));
  useEffect(() => {
    if (opened) {
      preview(opened);
      onOpened?.();
    }
  }, [opened, onOpened, preview]);
  useEffect(() => {
    ipc.serverPresets().then(setPresets, (e: unknown) => setError(toIpcError(e)));
  }, [ipc, setError]);

  // A status is shown at once, and the list is read again: a list read before
  // the event can answer after it (a server just added or installed starts
  // while its list is on the way), and the latest read wins (`useLoad`).
  useEffect(() => {
    const un = ipc.onServerStatus((s) => {
      setData((views) => views?.map((v) => (v.config.name === s.server ? { ...v, status: s } : v)) ?? views);
      reload();
    });
    // A refused host is listed on its server's page (the list carries them).
    const blocked = ipc.onConnectionBlocked(reload);
    return () => {
      void un.then((f) => f());
      void blocked.then((f) => f());
    };
  }, [ipc, setData, reload]);

  const view = data?.find((v) => v.config.name === selected);
  return (
    <div className="servers-settings" data-testid="servers-settings">
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {downloading && (
        <p className="muted row" role="status" data-testid="bundle-downloading">
          <span>{t("registry.downloading", { url: downloading })}</span>
          <button type="button" className="link" data-testid="bundle-download-cancel" onClick={() => downloads.cancel("bundle")}>
            {t("common.cancel")}
          </button>
        </p>
      )}
      {installed && (
        <p className="ok-text" role="status" data-testid="bundle-installed">
          {t("servers.installed", { server: installed })}
        </p>
      )}
      {/* The list, and the open server's page beside it. */}
      <ListDetail detail={view && <ServerDetail key={view.config.name} ipc={ipc} view={view} act={act} onSaved={() => undefined} />}>
        <ServerList ipc={ipc} servers={data ?? []} selected={selected} onSelect={setSelected} act={act} />
        {data && data.length === 0 && <p className="muted empty-state">{t("servers.empty")}</p>}
      </ListDetail>
      {adding ? (
        <>
          {template && <RegistryTemplate template={template} />}
          <ServerEditor
            ipc={ipc}
            key={template ? `${template.name}/${template.via}` : "blank"}
            initial={template?.config ?? blankServer()}
            isNew
            presets={template ? [] : presets}
            onCancel={() => setAdding(false)}
            onSave={(c, s) => void act(() => ipc.saveServer(c, { ...pendingSecrets, ...s })).then((ok) => ok && setAdding(false))}
          />
        </>
      ) : (
        <div className="row">
          <button
            type="button"
            id="server-add"
            className="primary"
            onClick={() => {
              setTemplate(null);
              setPendingSecrets({});
              setAdding(true);
            }}
          >
            {t("servers.add")}
          </button>
          <button type="button" id="registry-open" onClick={() => setBrowsing(true)}>
            {t("registry.open")}
          </button>
          <button type="button" id="bundle-open" onClick={openBundle}>
            {t("servers.installBundle")}
          </button>
        </div>
      )}
      {browsing && (
        <RegistryBrowser
          ipc={ipc}
          onClose={() => setBrowsing(false)}
          onPick={(entry) => {
            setBrowsing(false);
            if (entry.bundle) {
              const url = entry.bundle.url;
              setDownloading(url);
              const signal = downloads.start("bundle");
              ipc.registryBundle(entry.bundle, signal).then(
                (path) => {
                  setDownloading(null);
                  preview(path);
                },
                (e: unknown) => {
                  setDownloading(null);
                  const error = toIpcError(e);
                  if (error.kind !== "cancelled") setError(error);
                },
              );
              return;
            }
            if (entry.settings.some((x) => x.placeholder)) {
              setSetup(entry);
              return;
            }
            setTemplate(entry);
            setPendingSecrets({});
            setAdding(true);
          }}
        />
      )}
      {setup && (
        <RegistrySetup
          ipc={ipc}
          entry={setup}
          onClose={() => setSetup(null)}
          onFilled={(filled) => {
            setTemplate({ ...setup, config: filled.config });
            setPendingSecrets(filled.secrets);
            setSetup(null);
            setAdding(true);
          }}
        />
      )}
      {bundle && (
        <BundleInstall
          ipc={ipc}
          target={{ kind: "install" }}
          info={bundle}
          onClose={() => setBundle(null)}
          onInstalled={(server) => {
            setBundle(null);
            setInstalled(server);
            setSelected(server);
            reload();
          }}
        />
      )}
    </div>
  );
}
