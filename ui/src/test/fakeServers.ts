// The servers page's fixtures for its tests: a server, a tool, presets, a bundle,
// registry entries, and `fake`, a backend whose list follows the statuses it reports.
import { act } from "@testing-library/react";
import { vi } from "vitest";
import type { ConnectionBlocked, McpServerConfig, PolicyOutline, RegistryEntry, ResourceUpdated, ServerLogLine, ServerAbout, ServerPreset, ServerStatus, ServerView, ToolInfo } from "../lib/ipc";
import { bundleInfo } from "./render";
import type { ServersIpc } from "../components/settings/servers/ServersSettings";

/** A policy line as the core writes it. */
export const POLICY: PolicyOutline = { kind: "local", level: "normal", read: [], write: [], network: "any", rate: {} };

export const config: McpServerConfig = {
  name: "files",
  transport: { type: "stdio", command: "npx", args: ["-y", "server-fs"], env: { TOKEN: { secret: "mcp/files/env/TOKEN" }, MODE: { plain: "ro" } }, cwd: null },
  enabled: true,
  timeouts: { startup_secs: 30, call_secs: 60 },
  approval: "ask",
  tool_approval: {},
  disabled_tools: [],
  share_roots: true,
  read_only_auto_allow: false,
  extra: {},
};

export const tool: ToolInfo = {
  server: "files",
  name: "read_file",
  title: "Read a file",
  description: "Reads the text of a file",
  input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  enabled: true,
  pinned: false,
  approval: "ask",
  schema_tokens: 64,
  stats: { calls: 12, success_rate: 0.75, median_ms: 40 },
  icons: [],
  hints: ["read_only", "open_world"],
  view: { resource_uri: null, for_model: true, for_app: true },
};

const presets: ServerPreset[] = [
  {
    id: "filesystem",
    label: "Filesystem",
    needs: "npx",
    config: {
      ...config,
      name: "filesystem",
      transport: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem"], env: {}, cwd: null },
      share_roots: true,
    },
  },
  {
    id: "github",
    label: "GitHub",
    needs: null,
    config: {
      ...config,
      name: "github",
      transport: { type: "streamable_http", url: "https://api.githubcopilot.com/mcp/", headers: { Authorization: { secret: "" } } },
      share_roots: false,
    },
  },
];

const bundle = bundleInfo({
  version: "2.0.0",
  description: "Reads notes from folders.",
  icon: "data:image/png;base64,iVBORw0KGgo=",
  kind: "python",
  runtime: "python >=3.10",
  tools: [{ name: "search_notes", description: "Searches notes." }],
  settings: [
    { key: "token", kind: "string", title: "Token", description: "", required: true, sensitive: true, multiple: false, min: null, max: null, default: null, kept: true, value: null },
    { key: "folders", kind: "directory", title: "Folders", description: "Where notes are", required: true, sensitive: false, multiple: true, min: null, max: null, default: ["/home/ada/Notes"], kept: false, value: null },
    { key: "limit", kind: "number", title: "Limit", description: "", required: false, sensitive: false, multiple: false, min: 1, max: 100, default: 10, kept: false, value: null },
    { key: "verbose", kind: "boolean", title: "Verbose", description: "", required: false, sensitive: false, multiple: false, min: null, max: null, default: false, kept: false, value: null },
    { key: "region", kind: "string", title: "Region", description: "", required: false, sensitive: false, multiple: false, min: null, max: null, default: null, kept: false, value: null },
  ],
  installed_version: "1.0.0",
});

export const notesBundle = { url: "https://example.com/notes.mcpb", sha256: "ab".repeat(32) };

/** The MCP Registry's Weather server, run from npm or PyPI, with a key to type. */
function registryEntry(via: "npm" | "pypi"): RegistryEntry {
  const [command, args]: [string, string[]] = via === "npm" ? ["npx", ["-y", "@acme/weather-mcp@1.2.0"]] : ["uvx", ["acme-weather==1.2.0"]];
  return {
    id: "weather",
    label: `Weather (${via})`,
    name: "io.github.acme/weather",
    description: "Forecasts.",
    version: "1.2.0",
    website: null,
    via,
    needs: via === "npm" ? "npx" : "uvx",
    config: { ...config, name: "weather", transport: { type: "stdio", command, args, env: { WEATHER_API_KEY: { secret: "" } }, cwd: null } },
    bundle: null,
    settings: [{ name: "WEATHER_API_KEY", description: "Your key from acme.example", required: true, secret: true, placeholder: false, default: null, choices: [] }],
  };
}

/** A remote entry whose URL and Authorization header leave parts to the user. */
export const vaultEntry: RegistryEntry = {
  id: "vault",
  label: "Vault (streamable-http)",
  name: "io.github.acme/vault",
  description: "Secrets.",
  version: "2.0.0",
  website: null,
  via: "streamable-http",
  needs: null,
  config: {
    ...config,
    name: "vault",
    transport: { type: "streamable_http", url: "https://{tenant}.vault.example/mcp", headers: { Authorization: { plain: "Bearer {key}" } } },
  },
  bundle: null,
  settings: [
    { name: "tenant", description: "Your tenant", required: true, secret: false, placeholder: true, default: null, choices: [] },
    { name: "region", description: "", required: false, secret: false, placeholder: true, default: "eu", choices: ["eu", "us"] },
    { name: "key", description: "An API key", required: true, secret: true, placeholder: true, default: null, choices: [] },
  ],
};

export function fake(initial: ServerView[]) {
  // The backend's list follows the statuses it reports.
  let views = initial;
  let status: (s: ServerStatus) => void = () => undefined;
  let log: (l: ServerLogLine) => void = () => undefined;
  let updated: (r: ResourceUpdated) => void = () => undefined;
  let blocked: (b: ConnectionBlocked) => void = () => undefined;
  let watching = false;
  const ipc: ServersIpc = {
    listServers: vi.fn(() => Promise.resolve(views)),
    serverPresets: vi.fn(() => Promise.resolve(presets)),
    registrySearch: vi.fn((query: string, cursor: string | null) =>
      Promise.resolve(
        query === "weather"
          ? { entries: cursor ? [registryEntry("pypi")] : [registryEntry("npm")], next_cursor: cursor ? null : "page-2" }
          : query === "notes"
            ? { entries: [{ ...registryEntry("npm"), label: "Notes (mcpb)", via: "mcpb" as const, bundle: notesBundle }], next_cursor: null }
            : query === "vault"
              ? { entries: [vaultEntry], next_cursor: null }
              : { entries: [], next_cursor: null },
      ),
    ),
    registryBundle: vi.fn(() => Promise.resolve("/data/downloads/ab12.mcpb")),
    registryFill: vi.fn((entry: RegistryEntry, values: Record<string, string>) =>
      values.tenant === "nope"
        ? Promise.reject({ kind: "invalid_input", message: "tenant: no such tenant" })
        : Promise.resolve({
            config: {
              ...entry.config,
              transport: {
                type: "streamable_http" as const,
                url: `https://${values.tenant}.vault.example/mcp`,
                headers: { Authorization: { secret: "mcp/vault/Authorization" } },
              },
            },
            secrets: { "mcp/vault/Authorization": `Bearer ${values.key}` },
          }),
    ),
    saveServer: vi.fn(() => Promise.resolve()),
    policySettings: vi.fn(() => Promise.resolve({ defaults: { level: "normal" as const, turn_tool_calls: 50 }, offered: ["strict" as const, "normal" as const, "permissive" as const] })),
    policyPreview: vi.fn(() => Promise.resolve({ summary: POLICY, problems: [] })),
    // As the core does: the host joins the allowed domains, and is no longer listed as refused.
    allowDomain: vi.fn((server: string, host: string) => {
      views = views.map((v) => (v.config.name === server ? { ...v, policy: { ...POLICY, level: "strict", network: { domains: [host] } }, blocked: v.blocked.filter((h) => h !== host) } : v));
      return Promise.resolve();
    }),
    onConnectionBlocked: vi.fn((h: (b: ConnectionBlocked) => void) => {
      blocked = h;
      return Promise.resolve(() => undefined);
    }),
    deleteServer: vi.fn(() => Promise.resolve()),
    setServerEnabled: vi.fn(() => Promise.resolve()),
    restartServer: vi.fn(() => Promise.resolve()),
    authorizeServer: vi.fn(() => Promise.resolve()),
    serverLogs: vi.fn(() => Promise.resolve(["booting"])),
    setServerLogLevel: vi.fn(() => Promise.resolve()),
    exportServer: vi.fn(() => Promise.resolve('{"mcpServers": {"files": {}}}')),
    checkServerHealth: vi.fn(() => Promise.resolve({ at_ms: Date.UTC(2026, 10, 28, 5, 30), round_trip_ms: 4, error: null })),
    serverDoctor: vi.fn(() =>
      Promise.resolve({
        server: "files",
        checks: [
          { name: "command on PATH", ok: false, detail: "npx not found", hint: "Install Node.js" },
          { name: "stderr", ok: false, detail: "Error: boom\n    at main.js:3", hint: null },
        ],
        policy: POLICY,
      }),
    ),
    listTools: vi.fn(() => Promise.resolve([tool])),
    setToolEnabled: vi.fn(() => Promise.resolve()),
    setToolPinned: vi.fn(() => Promise.resolve()),
    setToolApproval: vi.fn(() => Promise.resolve()),
    callTool: vi.fn(() => Promise.resolve({ content: [{ type: "text" as const, text: "hello from file" }], structured_content: null, is_error: false })),
    openAppView: vi.fn((_server: string, uri: string) =>
      Promise.resolve({ url: "mcp-app://localhost/t1", uri, csp: { connect: [], resources: [], frames: [], base_uris: [] }, prefers_border: null, clipboard_write: false, withheld: [] }),
    ),
    callToolForView: vi.fn(() => Promise.resolve({ content: [] })),
    readResourceForView: vi.fn(() => Promise.resolve({ contents: [] })),
    listResourcesForView: vi.fn(() => Promise.resolve({ resources: [] })),
    downloadNames: vi.fn(() => Promise.resolve([])),
    saveFiles: vi.fn(() => Promise.resolve([])),
    showInFolder: vi.fn(() => Promise.resolve()),
    sampleForView: vi.fn(() => Promise.resolve({})),
    openLink: vi.fn(() => Promise.resolve()),
    onServerStatus: vi.fn((h: (s: ServerStatus) => void) => {
      status = h;
      return Promise.resolve(() => undefined);
    }),
    onServerLog: vi.fn((h: (l: ServerLogLine) => void) => {
      log = h;
      return Promise.resolve(() => undefined);
    }),
    pickBundle: vi.fn(() => Promise.resolve("/tmp/notes-2.0.0.mcpb")),
    bundlePreview: vi.fn(() => Promise.resolve(bundle)),
    installBundle: vi.fn(() => Promise.resolve("notes")),
    bundleSettings: vi.fn(() =>
      Promise.resolve({
        ...bundle,
        installed_version: null,
        settings: bundle.settings.map((x) => (x.key === "folders" ? { ...x, value: ["/home/ada/Work"] } : x.key === "limit" ? { ...x, value: 40 } : x)),
      }),
    ),
    configureBundle: vi.fn(() => Promise.resolve()),
    pickSettingFile: vi.fn(() => Promise.resolve(null)),
    kbPickFolder: vi.fn(() => Promise.resolve("/srv/shared notes")),
    listPrompts: vi.fn(() =>
      Promise.resolve([
        { server: "files", name: "summarize", title: "Summarise", description: "Summarise a file", arguments: [{ name: "path", title: "File", description: "Which file", required: true }], icons: [{ src: "data:image/png;base64,iVBORw0KGgo=", theme: null }] },
        { server: "other", name: "elsewhere", title: null, description: null, arguments: [], icons: [] },
      ]),
    ),
    getPrompt: vi.fn((_s: string, _n: string, args: Record<string, string>) => Promise.resolve(`Please summarise ${args.path}`)),
    listResources: vi.fn(() =>
      Promise.resolve([
        { server: "files", uri: "file:///notes.md", name: "notes.md", title: "My notes", mime_type: "text/markdown", watchable: true, watched: watching, icons: [] },
        { server: "files", uri: "file:///dot.png", name: "dot.png", title: null, mime_type: "image/png", watchable: true, watched: false, icons: [] },
      ]),
    ),
    listResourceTemplates: vi.fn(() =>
      Promise.resolve([{ server: "files", uri_template: "file:///{name}", name: "A file", description: null, mime_type: null, variables: ["name"], icons: [] }]),
    ),
    expandResourceTemplate: vi.fn((_t: string, v: Record<string, string>) => Promise.resolve(`file:///${v.name}`)),
    completeArgument: vi.fn(() => Promise.resolve({ values: ["/tmp/a", "/tmp/b"], total: null, has_more: false })),
    watchResource: vi.fn((_s: string, _uri: string, on: boolean) => {
      watching = on;
      return Promise.resolve();
    }),
    onResourceUpdated: vi.fn((h: (r: ResourceUpdated) => void) => {
      updated = h;
      return Promise.resolve(() => undefined);
    }),
    readResource: vi.fn((_s: string, uri: string) =>
      uri === "file:///dot.png"
        ? Promise.resolve([{ uri, mime_type: "image/png", text: null, blob: "iVBORw==", size: 8, truncated: false }])
        : uri === "file:///missing"
          ? Promise.reject({ kind: "mcp", message: "MCP server \"files\" returned error -32002: not found" })
          : Promise.resolve([{ uri, mime_type: "text/markdown", text: "# Notes", blob: null, size: 7, truncated: false }]),
    ),
  };
  const report = (s: ServerStatus) => {
    // As the backend lists them: a server that is not ready has no identity.
    views = views.map((v) => (v.config.name === s.server ? { ...v, status: s, about: s.state === "ready" ? v.about : null } : v));
    return act(() => status(s));
  };
  // As the backend lists them: a refused host is on its server's view.
  const block = (b: ConnectionBlocked) => {
    views = views.map((v) => (v.config.name === b.server ? { ...v, blocked: [...v.blocked, b.host] } : v));
    return act(() => blocked(b));
  };
  return { ipc, status: report, block, log: (l: ServerLogLine) => act(() => log(l)), updated: (r: ResourceUpdated) => act(() => updated(r)) };
}

const about: ServerAbout = {
  name: "files-server",
  title: "Files",
  version: "1.4.2",
  description: "Reads and writes your files.",
  website: "https://files.example.com/",
  protocol_version: "2025-06-18",
  transport: "stdio",
  pid: 4711,
  command: "/usr/local/bin/files-server",
  capabilities: ["tools", "tools.list_changed", "resources", "resources.subscribe", "io.example/apps"],
};

export const view = (state: ServerStatus["state"], instructions: string | null = null): ServerView => ({
  config,
  status: { server: "files", state, tool_count: 3, error: null },
  about: state === "ready" ? about : null,
  bundle: false,
  instructions,
  log_level: state === "ready" ? "info" : null,
  icons: [],
  policy: POLICY,
  blocked: [],
  health: null,
});

/** A server as listed, with nothing said about it beyond its config and status. */
export const plainView = (server: McpServerConfig, status: Omit<ServerStatus, "server">): ServerView => ({
  config: server,
  status: { server: server.name, ...status },
  about: null,
  bundle: false,
  instructions: null,
  log_level: null,
  icons: [],
  policy: POLICY,
  blocked: [],
  health: null,
});
