// MCP servers: list with live status dots, tool count and enable switch; per
// server its security policy in one line (hosts its proxy refused, to allow in
// one click), the edit form, restart, live logs (and the level a server that logs
// sends), the doctor report, its tools
// with enable, approval policy, stats and "test a tool", and its prompts,
// resources and resource templates to try (`ServerContent`); adding a server from
// scratch, a preset or an MCP Registry entry, or installing an MCP bundle
// (.mcpb) from a file or the registry.
import { useCallback, useEffect, useState } from "react";
import { copyText } from "../../../lib/clipboard";
import { isMessageKey, useI18n, type MessageKey } from "../../../lib/i18n";
import { ResourceReader } from "../../../lib/resources";
import { ViewCommands, type ViewIpc } from "../../../lib/mcpApps";
import { ToolCatalogue, toolMap } from "../../../lib/toolCatalogue";
import {
  toIpcError,
  type ApprovalMode,
  type BundleInfo,
  type CallEvent,
  type DoctorCheck,
  type DoctorReport,
  type Ipc,
  type IpcError,
  type JsonSchema,
  type LogLevel,
  LOG_LEVELS,
  type McpServerConfig,
  type RegistryEntry,
  type ServerAbout,
  type ServerPreset,
  type ServerState,
  type ServerView,
  type ToolInfo,
  type ToolProgress,
  type ToolResult,
  type ToolTrace,
} from "../../../lib/ipc";
import { ErrorBanner } from "../../ErrorBanner";
import { AppView } from "../../chat/AppView";
import { CallProgress, formatDuration } from "../../chat/ToolTraceCard";
import { ToolResultView } from "../../chat/ToolResultView";
import { Dialog } from "../../common/Dialog";
import { SchemaForm } from "../../common/SchemaForm";
import { Tabs } from "../../common/Tabs";
import { BundleInstall, type BundleIpc } from "./BundleInstall";
import { RegistryBrowser } from "./RegistryBrowser";
import { ServerContent, type ContentIpc } from "./ServerContent";
import { ServerEditor, type PolicyIpc } from "./ServerEditor";
import { useLoad } from "../useLoad";
import { useAborts } from "../../../lib/aborts";
import { McpIcons } from "../../common/McpIcons";
import { ToolHints } from "../../common/ToolHints";

export type ServersIpc = ViewIpc &
  Pick<
    Ipc,
    | "listServers"
    | "serverPresets"
    | "registrySearch"
    | "registryBundle"
    | "registryFill"
    | "saveServer"
    | "deleteServer"
    | "setServerEnabled"
    | "restartServer"
    | "authorizeServer"
    | "serverLogs"
    | "setServerLogLevel"
    | "exportServer"
    | "serverDoctor"
    | "listTools"
    | "setToolEnabled"
    | "setToolApproval"
    | "callTool"
    | "onServerStatus"
    | "onServerLog"
    | "onConnectionBlocked"
    | "allowDomain"
    | "pickBundle"
    | "bundlePreview"
  > &
  BundleIpc &
  ContentIpc &
  PolicyIpc;

const STATE: Record<ServerState, MessageKey> = {
  stopped: "servers.stopped",
  starting: "servers.starting",
  ready: "servers.ready",
  failed: "servers.failed",
  restarting: "servers.restarting",
};

export function StatusDot({ state }: { state: ServerState }) {
  const { t } = useI18n();
  return (
    <span className={`status-dot ${state}`} data-testid="status-dot" data-state={state} role="img" aria-label={t(STATE[state])}>
      <span className="status-text">{t(STATE[state])}</span>
    </span>
  );
}

/** A new server's settings before the user fills them in. */
export function blankServer(): McpServerConfig {
  return {
    name: "",
    transport: { type: "stdio", command: "", args: [], env: {}, cwd: null },
    enabled: true,
    timeouts: { startup_secs: 30, call_secs: 60 },
    approval: "ask",
    tool_approval: {},
    disabled_tools: [],
    share_roots: false,
    read_only_auto_allow: false,
    extra: {},
  };
}

/** The server's stderr and log messages, live; and, for a server that logs, the level it sends. */
function Logs({ ipc, server, level, onLevel }: { ipc: ServersIpc; server: string; level: LogLevel | null; onLevel: (l: LogLevel) => void }) {
  const { t } = useI18n();
  const [lines, setLines] = useState<string[]>([]);
  useEffect(() => {
    let live = true;
    ipc.serverLogs(server).then((l) => live && setLines(l), () => undefined);
    const un = ipc.onServerLog((l) => {
      if (live && l.server === server) setLines((x) => [...x.slice(-499), l.line]);
    });
    return () => {
      live = false;
      void un.then((f) => f());
    };
  }, [ipc, server]);
  return (
    <>
      {level && (
        <label className="row small">
          {t("servers.logLevel")}
          <select aria-label={t("servers.logLevel")} value={level} onChange={(e) => onLevel(e.target.value as LogLevel)}>
            {LOG_LEVELS.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
        </label>
      )}
      <pre className="logs" data-testid="server-logs" aria-label={t("servers.logs")} tabIndex={0}>
        {lines.length ? lines.join("\n") : t("servers.noLogs")}
      </pre>
    </>
  );
}

/** The policy the server runs under in one line, and the hosts its proxy refused, each to allow in one click. */
function ServerPolicy({ view, onAllow }: { view: ServerView; onAllow: (host: string) => void }) {
  const { t } = useI18n();
  return (
    <>
      <p className="muted small" data-testid="server-policy">
        {view.policy}
      </p>
      {view.blocked.length > 0 && (
        <ul className="blocked-connections" data-testid="blocked-connections">
          {view.blocked.map((host) => (
            <li key={host} className="row small" data-testid="blocked-connection" data-host={host}>
              <code>{t("policy.blocked", { host })}</code>
              <button type="button" data-testid="allow-domain" onClick={() => onAllow(host)}>
                {t("policy.allowDomain")}
              </button>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** A doctor check's name, and its hint, in the window's language where the catalogue has them. */
function doctorText(t: (key: MessageKey) => string, kind: "name" | "hint", check: DoctorCheck): string | null {
  const key = `doctor.${kind}.${check.name}`;
  const given = kind === "name" ? check.name : check.hint;
  return given !== null && isMessageKey(key) ? t(key) : given;
}

function Doctor({ report }: { report: DoctorReport }) {
  const { t } = useI18n();
  return (
    <ul className="doctor" data-testid="doctor-report">
      {report.checks.map((c) => (
        <li key={c.name} className={c.ok ? "ok-text" : "error-text"}>
          {c.ok ? "✓" : "✗"} <strong>{doctorText(t, "name", c)}</strong>: {c.detail.includes("\n") ? <pre className="stderr">{c.detail}</pre> : c.detail}
          {c.hint && <div className="muted">{doctorText(t, "hint", c)}</div>}
        </li>
      ))}
    </ul>
  );
}

/** Who a ready server says it is, how it is reached and what it offers. */
function About({ about }: { about: ServerAbout }) {
  const { t } = useI18n();
  const capability = (c: string) => {
    const key = `servers.cap.${c}`;
    return isMessageKey(key) ? t(key) : c;
  };
  return (
    <div className="server-about small" data-testid="server-about">
      <p>
        <strong>{about.title ?? about.name ?? t("servers.unnamed")}</strong> {about.title && about.name && <code>{about.name}</code>}{" "}
        {about.version && <span className="muted">{t("servers.version", { version: about.version })}</span>}{" "}
        {about.website && (
          <a href={about.website} target="_blank" rel="noreferrer noopener" data-testid="server-website">
            {t("servers.website")}
          </a>
        )}
      </p>
      {about.description && <p className="muted">{about.description}</p>}
      <p className="muted" data-testid="server-reached">
        {t("servers.reached", { protocol: about.protocol_version, transport: t(`servers.via.${about.transport}`) })}
        {about.pid !== null && ` · ${t("servers.pid", { pid: about.pid })}`}
        {about.command && (
          <>
            {" · "}
            <code>{about.command}</code>
          </>
        )}
      </p>
      <p data-testid="server-offers">
        {t("servers.offers")}{" "}
        {about.capabilities.length === 0
          ? t("servers.offersNothing")
          : about.capabilities.map((c) => (
              <span key={c} className="badge" data-capability={c}>
                {capability(c)}
              </span>
            ))}
      </p>
    </div>
  );
}

/**
 * "Test a tool": its form, then its result (and its view, for a tool that has one, as a chat
 * shows it). `onDone` once a test ended (its call is counted in the tool's statistics).
 */
function TestTool({ ipc, tool, tools, onDone }: { ipc: ServersIpc; tool: ToolInfo; tools: ToolInfo[]; onDone: () => void }) {
  const { t } = useI18n();
  const [result, setResult] = useState<ToolResult | null>(null);
  const [run, setRun] = useState<{ n: number; args: Record<string, unknown> }>({ n: 0, args: {} });
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);
  // The running test's last progress (a task's stage, too).
  const [progress, setProgress] = useState<ToolProgress | null>(null);
  // Leaving the tool (or the page) calls a running test off.
  const aborts = useAborts({ onUnmount: true });
  const view = result && tool.view.resource_uri;
  return (
    <div className="test-tool" data-testid="test-tool">
      <SchemaForm
        schema={tool.input_schema}
        submitLabel={busy ? t("common.running") : t("tools.run")}
        busy={busy}
        onCancel={busy ? () => aborts.cancel("run") : undefined}
        onSubmit={(args) => {
          setBusy(true);
          setError(null);
          setProgress(null);
          const signal = aborts.start("run");
          const onEvent = (e: CallEvent) => {
            if (e.kind === "progress" && !signal.aborted) setProgress({ progress: e.progress, total: e.total, message: e.message });
          };
          ipc
            .callTool(tool.server, tool.name, args, signal, onEvent)
            .then((r) => {
              setRun((now) => ({ n: now.n + 1, args }));
              setResult(r);
            })
            .catch((e: unknown) => setError(toIpcError(e)))
            .finally(() => {
              aborts.end("run", signal);
              setBusy(false);
              setProgress(null);
              onDone();
            });
        }}
      />
      {busy && progress && <CallProgress progress={progress} />}
      {error?.kind === "cancelled" ? (
        <p className="muted" role="status" data-testid="test-tool-cancelled">
          {t("tools.cancelled")}
        </p>
      ) : (
        error && <ErrorBanner error={error} />
      )}
      {view && (
        <ViewCommands.Provider value={ipc}>
          <ToolCatalogue.Provider value={toolMap(tools)}>
            <AppView key={run.n} trace={testTrace(tool, run.n, run.args, result)} tool={tool} uri={view} />
          </ToolCatalogue.Provider>
        </ViewCommands.Provider>
      )}
      {result && (
        <ResourceReader.Provider value={ipc.readResource}>
          <ToolResultView result={result} server={tool.server} />
        </ResourceReader.Provider>
      )}
    </div>
  );
}

/** A finished test call as its view reads it. */
function testTrace(tool: ToolInfo, n: number, args: Record<string, unknown>, result: ToolResult): ToolTrace {
  return {
    call_id: `test-${tool.server}-${tool.name}-${n}`,
    server: tool.server,
    tool: tool.name,
    arguments: args,
    status: "done",
    duration_ms: null,
    progress: null,
    result,
    error: null,
    stderr_tail: null,
    logs: [],
  };
}

function Tools({ ipc, server }: { ipc: ServersIpc; server: string }) {
  const { t } = useI18n();
  const load = useCallback(() => ipc.listTools(server), [ipc, server]);
  const { data, error, act, reload } = useLoad<ToolInfo[]>(load);
  const [testing, setTesting] = useState<string | null>(null);
  return (
    <div>
      {error && <ErrorBanner error={error} />}
      <table className="tools-table" data-testid="tools-table">
        <thead>
          <tr>
            <th>{t("tools.enabled")}</th>
            <th>{t("tools.name")}</th>
            <th>{t("tools.approval")}</th>
            <th>{t("tools.stats")}</th>
            <th>{t("tools.tokens")}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(data ?? []).map((tool) => (
            <tr key={tool.name} data-tool={tool.name}>
              <td>
                <input
                  type="checkbox"
                  aria-label={t("tools.enableTool", { tool: tool.name })}
                  checked={tool.enabled}
                  onChange={(e) => void act(() => ipc.setToolEnabled(server, tool.name, e.target.checked))}
                />
              </td>
              <td>
                <McpIcons icons={tool.icons} /> <strong>{tool.title ?? tool.name}</strong> {tool.title && <code className="small">{tool.name}</code>}{" "}
                <ToolHints hints={tool.hints} />
                {tool.view.resource_uri && (
                  <span className="badge hint" title={t("servers.hasViewTitle")} data-testid="tool-has-view">
                    {t("servers.hasView")}
                  </span>
                )}
                {!tool.view.for_model && (
                  <span className="badge hint" title={t("servers.viewOnlyTitle")} data-testid="tool-view-only">
                    {t("servers.viewOnly")}
                  </span>
                )}
                <div className="muted small">{tool.description}</div>
              </td>
              <td>
                <select
                  aria-label={t("tools.approvalFor", { tool: tool.name })}
                  value={tool.approval}
                  onChange={(e) => void act(() => ipc.setToolApproval(server, tool.name, e.target.value as ApprovalMode))}
                >
                  <option value="ask">{t("tools.ask")}</option>
                  <option value="allow">{t("tools.allow")}</option>
                  <option value="deny">{t("tools.deny")}</option>
                </select>
              </td>
              <td className="tool-stats" data-testid="tool-stats">
                {tool.stats
                  ? t("tools.statsValue", {
                      count: tool.stats.calls,
                      rate: Math.round(tool.stats.success_rate * 100),
                      median: formatDuration(tool.stats.median_ms),
                    })
                  : t("tools.noCalls")}
              </td>
              <td>{tool.schema_tokens}</td>
              <td>
                <button type="button" aria-expanded={testing === tool.name} onClick={() => setTesting(testing === tool.name ? null : tool.name)}>
                  {t("tools.test")}
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {testing && data?.find((x) => x.name === testing) && <TestTool ipc={ipc} tool={data.find((x) => x.name === testing) as ToolInfo} tools={data} onDone={reload} />}
    </div>
  );
}

/** The form of a registry entry's placeholders: secrets masked, choices as a list. */
function placeholderSchema(entry: RegistryEntry): JsonSchema {
  const asked = entry.settings.filter((x) => x.placeholder);
  return {
    type: "object",
    properties: Object.fromEntries(
      asked.map((x) => [
        x.name,
        {
          type: "string",
          description: x.description || undefined,
          default: x.default ?? undefined,
          enum: x.choices.length > 0 ? x.choices : undefined,
          format: x.secret ? "password" : undefined,
        },
      ]),
    ),
    required: asked.filter((x) => x.required).map((x) => x.name),
  };
}

type Tab = "tools" | "content" | "logs" | "doctor" | "edit";

function ServerDetail({ ipc, view, onSaved, act }: { ipc: ServersIpc; view: ServerView; onSaved: () => void; act: (f: () => Promise<unknown>) => Promise<boolean> }) {
  const { t, lang } = useI18n();
  // The settings form of the bundle the server was installed from, while open.
  const [bundleSettings, setBundleSettings] = useState<BundleInfo | null>(null);
  const openBundleSettings = () =>
    void act(async () => setBundleSettings(await ipc.bundleSettings(view.config.name, lang === "zh" ? "zh-CN" : "en-US")));
  const [tab, setTab] = useState<Tab>(view.status.state === "failed" ? "doctor" : "tools");
  const [doctor, setDoctor] = useState<DoctorReport | null>(null);
  // The entry in the Claude Desktop shape goes to the clipboard, to share the server.
  const [copied, setCopied] = useState(false);
  const copy = () =>
    void act(async () => {
      await copyText(await ipc.exportServer(view.config.name));
      setCopied(true);
    });
  const [doctorError, setDoctorError] = useState<IpcError | null>(null);
  useEffect(() => {
    if (tab !== "doctor") return;
    let live = true;
    ipc
      .serverDoctor(view.config.name)
      .then((r) => live && setDoctor(r))
      .catch((e: unknown) => live && setDoctorError(toIpcError(e)));
    return () => {
      live = false;
    };
  }, [tab, ipc, view.config.name]);
  const tabs: [Tab, MessageKey][] = [
    ["tools", "servers.tools"],
    ["content", "servers.content"],
    ["logs", "servers.logs"],
    ["doctor", "servers.doctor"],
    ["edit", "common.edit"],
  ];
  return (
    <div className="server-detail card" data-testid="server-detail">
      <div className="row">
        <McpIcons icons={view.icons} />
        <h3>{view.config.name}</h3>
        <StatusDot state={view.status.state} />
        <span className="spacer" />
        {view.bundle && (
          <button type="button" data-testid="server-bundle-settings" onClick={openBundleSettings}>
            {t("servers.bundleSettings")}
          </button>
        )}
        <button type="button" data-testid="server-copy" onClick={copy}>
          {copied ? t("chat.copied") : t("servers.copyJson")}
        </button>
        <button type="button" data-testid="server-restart" onClick={() => void act(() => ipc.restartServer(view.config.name))}>
          {t("servers.restart")}
        </button>
        <button type="button" className="danger" onClick={() => void act(() => ipc.deleteServer(view.config.name))}>
          {t("common.delete")}
        </button>
      </div>
      {view.status.error && <p className="error-text">{view.status.error}</p>}
      <ServerPolicy view={view} onAllow={(host) => void act(() => ipc.allowDomain(view.config.name, host))} />
      {view.about && <About about={view.about} />}
      {view.instructions && (
        <details data-testid="server-instructions">
          <summary>{t("servers.instructions")}</summary>
          <pre className="server-instructions">{view.instructions}</pre>
        </details>
      )}
      <Tabs tabs={tabs.map(([id, label]) => ({ id, label: t(label) }))} selected={tab} onSelect={setTab} label={view.config.name} />
      {tab === "tools" && (
        // Listed again when the server becomes ready or its tools change (a server
        // selected while it starts has none yet).
        <Tools key={`${view.status.state}-${view.status.tool_count}`} ipc={ipc} server={view.config.name} />
      )}
      {tab === "content" && <ServerContent key={`${view.status.state}`} ipc={ipc} server={view.config.name} />}
      {tab === "logs" && (
        <Logs ipc={ipc} server={view.config.name} level={view.log_level} onLevel={(l) => void act(() => ipc.setServerLogLevel(view.config.name, l))} />
      )}
      {tab === "doctor" && (doctorError ? <ErrorBanner error={doctorError} /> : doctor ? <Doctor report={doctor} /> : <p>{t("common.loading")}</p>)}
      {bundleSettings && (
        <BundleInstall
          ipc={ipc}
          target={{ kind: "configure", server: view.config.name }}
          info={bundleSettings}
          onClose={() => setBundleSettings(null)}
          onInstalled={() => {
            setBundleSettings(null);
            onSaved();
          }}
        />
      )}
      {tab === "edit" && (
        <ServerEditor
          ipc={ipc}
          initial={view.config}
          isNew={false}
          onCancel={() => setTab("tools")}
          onSave={(c, s) => void act(() => ipc.saveServer(c, s)).then((ok) => ok && onSaved())}
        />
      )}
    </div>
  );
}

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
  // A sign-in goes on in the browser while the user is elsewhere in the app: only the user calls it off.
  const signIns = useAborts({ onUnmount: false });
  const [signingIn, setSigningIn] = useState<string | null>(null);
  const signIn = (name: string) => {
    const signal = signIns.start(name);
    setSigningIn(name);
    const run = () =>
      ipc.authorizeServer(name, signal).catch((e: unknown) => {
        if (toIpcError(e).kind !== "cancelled") throw e;
      });
    void act(run).finally(() => {
      signIns.end(name, signal);
      setSigningIn((now) => (now === name ? null : now));
    });
  };
  const [selected, setSelected] = useState<string | null>(initialSelected);
  const [adding, setAdding] = useState(false);
  const [browsing, setBrowsing] = useState(false);
  const [template, setTemplate] = useState<RegistryEntry | null>(null);
  // A registry entry whose placeholders are being filled in, and the secrets filling them made.
  const [setup, setSetup] = useState<RegistryEntry | null>(null);
  const [setupError, setSetupError] = useState<IpcError | null>(null);
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
      <ul className="list server-list">
        {(data ?? []).map((v) => (
          <li key={v.config.name} className={v.config.name === selected ? "card active" : "card"} data-testid="server-row" data-server={v.config.name}>
            <div className="row">
              <StatusDot state={v.status.state} />
              <McpIcons icons={v.icons} />
              <button type="button" className="link" onClick={() => setSelected(v.config.name === selected ? null : v.config.name)} aria-expanded={v.config.name === selected}>
                <strong>{v.config.name}</strong>
              </button>
              {v.about && (v.about.title ?? v.about.name) && (
                <span className="muted small" data-testid="server-identity">
                  {[v.about.title ?? v.about.name, v.about.version].filter(Boolean).join(" ")}
                </span>
              )}
              <span className="muted" data-testid="tool-count">
                {t("servers.toolCount", { count: v.status.tool_count })}
              </span>
              <span className="spacer" />
              <label className="switch">
                <input
                  type="checkbox"
                  role="switch"
                  aria-label={t("servers.enable", { name: v.config.name })}
                  checked={v.config.enabled}
                  onChange={(e) => void act(() => ipc.setServerEnabled(v.config.name, e.target.checked))}
                />
              </label>
            </div>
            {v.status.state === "failed" && v.status.error && (
              <p className="error-text clamp-2" data-testid="server-error" title={v.status.error}>
                {v.status.error}
              </p>
            )}
            {v.status.state === "failed" && v.config.transport.type !== "stdio" && !v.config.client_credentials && (
              signingIn === v.config.name ? (
                <p className="row" role="status">
                  <span className="muted">{t("servers.signingIn")}</span>
                  <button type="button" data-testid="server-sign-in-cancel" onClick={() => signIns.cancel(v.config.name)}>
                    {t("servers.cancelSignIn")}
                  </button>
                </p>
              ) : (
                <button type="button" data-testid="server-sign-in" onClick={() => signIn(v.config.name)}>
                  {t("servers.signIn")}
                </button>
              )
            )}
          </li>
        ))}
      </ul>
      {data && data.length === 0 && <p className="muted">{t("servers.empty")}</p>}
      {view && <ServerDetail key={view.config.name} ipc={ipc} view={view} act={act} onSaved={() => undefined} />}
      {adding ? (
        <>
          {template && (
            <div className="muted small" data-testid="registry-template">
              <p>{t("registry.from", { name: template.name, version: template.version })}</p>
              {template.settings.some((v) => !v.placeholder) && (
                <ul data-testid="registry-settings">
                  {template.settings.filter((v) => !v.placeholder).map((v) => (
                    <li key={v.name}>
                      <code>{v.name}</code>
                      {v.description && ` ${v.description}`}
                      {(v.required || v.secret) &&
                        ` (${[v.required && t("registry.required"), v.secret && t("registry.secret")].filter(Boolean).join(", ")})`}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          )}
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
              setSetupError(null);
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
        <Dialog title={t("registry.setUp", { name: setup.label })} onClose={() => setSetup(null)} testId="registry-setup">
          <p className="muted">{t("registry.setUpAbout")}</p>
          {setupError && <ErrorBanner error={setupError} />}
          <SchemaForm
            schema={placeholderSchema(setup)}
            submitLabel={t("registry.continue")}
            onSubmit={(v) => {
              ipc.registryFill(setup, v as Record<string, string>).then(
                (filled) => {
                  setTemplate({ ...setup, config: filled.config });
                  setPendingSecrets(filled.secrets);
                  setSetup(null);
                  setAdding(true);
                },
                (e: unknown) => setSetupError(toIpcError(e)),
              );
            }}
          />
        </Dialog>
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
