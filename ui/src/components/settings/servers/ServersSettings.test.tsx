import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CallEvent, ConnectionBlocked, McpServerConfig, RegistryEntry, ResourceUpdated, ServerLogLine, ServerAbout, ServerPreset, ServerStatus, ServerView, ToolInfo, ToolResult } from "../../../lib/ipc";
import { bundleInfo, renderIn, signalOf, untilCancelled } from "../../../test/render";
import { ServersSettings, type ServersIpc } from "./ServersSettings";

afterEach(cleanup);

/** A policy line as the core writes it. */
const POLICY = "normal: reads home (not its secrets) · writes nothing · network: any";

const config: McpServerConfig = {
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

const tool: ToolInfo = {
  server: "files",
  name: "read_file",
  title: "Read a file",
  description: "Reads the text of a file",
  input_schema: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  enabled: true,
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

const notesBundle = { url: "https://example.com/notes.mcpb", sha256: "ab".repeat(32) };

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
const vaultEntry: RegistryEntry = {
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

function fake(initial: ServerView[]) {
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
      views = views.map((v) => (v.config.name === server ? { ...v, policy: `strict: reads only its own files · writes nothing · network: ${host}`, blocked: v.blocked.filter((h) => h !== host) } : v));
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
    serverDoctor: vi.fn(() =>
      Promise.resolve({
        server: "files",
        checks: [
          { name: "command on PATH", ok: false, detail: "npx not found", hint: "Install Node.js" },
          { name: "stderr", ok: false, detail: "Error: boom\n    at main.js:3", hint: null },
        ],
      }),
    ),
    listTools: vi.fn(() => Promise.resolve([tool])),
    setToolEnabled: vi.fn(() => Promise.resolve()),
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

const view = (state: ServerStatus["state"], instructions: string | null = null): ServerView => ({
  config,
  status: { server: "files", state, tool_count: 3, error: null },
  about: state === "ready" ? about : null,
  bundle: false,
  instructions,
  log_level: state === "ready" ? "info" : null,
  icons: [],
  policy: POLICY,
  blocked: [],
});

describe("ServersSettings", () => {
  it("offers OAuth sign-in for a remote server that failed, never for a local one", async () => {
    const remote: ServerView = {
      config: { ...config, name: "remote", transport: { type: "streamable_http", url: "https://mcp.example.com/mcp", headers: {} } },
      status: { server: "remote", state: "failed", tool_count: 0, error: "HTTP 401: authorization required" },
      about: null,
      bundle: false,
      instructions: null,
      log_level: null,
      icons: [],
      policy: POLICY,
      blocked: [],
    };
    const local: ServerView = { config, status: { server: "files", state: "failed", tool_count: 0, error: "exited" }, about: null,
      bundle: false, instructions: null, log_level: null, icons: [], policy: POLICY, blocked: [] };
    const f = fake([remote, local]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const [remoteRow, localRow] = await screen.findAllByTestId("server-row");
    expect(within(localRow!).queryByTestId("server-sign-in")).toBeNull();
    f.ipc.authorizeServer = vi.fn(untilCancelled);
    fireEvent.click(within(remoteRow!).getByTestId("server-sign-in"));
    expect(f.ipc.authorizeServer).toHaveBeenCalledWith("remote", expect.any(AbortSignal));
    // While the browser is out, the sign-in can be called off; that is no error.
    expect(within(remoteRow!).getByRole("status").textContent).toContain("Waiting for you to sign in in the browser");
    fireEvent.click(within(remoteRow!).getByTestId("server-sign-in-cancel"));
    expect(signalOf(f.ipc.authorizeServer as never).aborted).toBe(true);
    await within(remoteRow!).findByTestId("server-sign-in");
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("shows the policy in one line, and a refused host with a button that allows it", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} initialSelected="files" />);
    expect((await screen.findByTestId("server-policy")).textContent).toBe(POLICY);
    expect(screen.queryByTestId("blocked-connection")).toBeNull();
    await f.block({ server: "files", host: "evil.example.com" });
    const line = await screen.findByTestId("blocked-connection");
    expect(line.textContent).toContain("blocked a connection to evil.example.com: not in the allowed domains");
    fireEvent.click(within(line).getByRole("button", { name: "Allow this domain" }));
    expect(f.ipc.allowDomain).toHaveBeenCalledWith("files", "evil.example.com");
    await waitFor(() => expect(screen.getByTestId("server-policy").textContent).toContain("network: evil.example.com"));
    expect(screen.queryByTestId("blocked-connection")).toBeNull();
  });

  it("says who a ready server is, how it is reached and what it offers, and names its tools by their titles", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    // The row says who the server is too.
    expect(screen.getByTestId("server-identity").textContent).toBe("Files 1.4.2");
    const shown = screen.getByTestId("server-about");
    expect(shown.querySelector("strong")?.textContent).toBe("Files");
    expect(shown.textContent).toContain("files-server");
    expect(shown.textContent).toContain("version 1.4.2");
    expect(shown.textContent).toContain("Reads and writes your files.");
    const website = within(shown).getByTestId("server-website");
    expect([website.getAttribute("href"), website.getAttribute("target")]).toEqual(["https://files.example.com/", "_blank"]);
    expect(within(shown).getByTestId("server-reached").textContent).toBe("MCP 2025-06-18 over stdio · process 4711 · /usr/local/bin/files-server");
    // Known capabilities in words; an extension by its id.
    expect(within(shown).getByTestId("server-offers").textContent).toBe("Offers: toolstool list updatesresourceswatching resourcesio.example/apps");
    const row = (await within(screen.getByTestId("tools-table")).findByText("Read a file")).closest("tr")!;
    expect(row.querySelector("code")?.textContent).toBe("read_file");
    // A server that is not ready says nothing of itself.
    await f.status({ server: "files", state: "failed", tool_count: 0, error: "exited" });
    await waitFor(() => expect(screen.queryByTestId("server-about")).toBeNull());
    expect(screen.queryByTestId("server-identity")).toBeNull();
  });

  it("shows what the server says about using it, the text the model reads with its tools", async () => {
    const f = fake([view("ready", "Call list_files before read_file.")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const shown = screen.getByTestId("server-instructions");
    expect(shown.textContent).toContain("The server's instructions (the model reads them with its tools)");
    expect(shown.textContent).toContain("Call list_files before read_file.");
  });

  it("shows the icons a server gives itself and its tools, one for each theme", async () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    const f = fake([{ ...view("ready"), icons: [{ src: png, theme: null }] }]);
    f.ipc.listTools = vi.fn(() =>
      Promise.resolve([{ ...tool, icons: [{ src: "data:image/gif;base64,R0lG", theme: "light" as const }, { src: png, theme: "dark" as const }] }]),
    );
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    const own = row.querySelector("img.mcp-icon");
    expect([own?.getAttribute("src"), own?.getAttribute("data-for"), own?.getAttribute("alt")]).toEqual([png, "any", ""]);
    fireEvent.click(within(row).getByRole("button", { name: "files" }));
    const table = await screen.findByTestId("tools-table");
    await waitFor(() => expect(table.querySelectorAll("img.mcp-icon")).toHaveLength(2));
    const drawn = [...table.querySelectorAll("img.mcp-icon")].map((i) => [i.getAttribute("data-for"), i.getAttribute("src")]);
    expect(drawn).toEqual([["light", "data:image/gif;base64,R0lG"], ["dark", png]]);
  });

  it("lists servers with live status dots, tool count and an enable switch", async () => {
    const f = fake([view("starting")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("starting");
    expect(within(row).getByTestId("tool-count").textContent).toBe("3 tools");
    f.status({ server: "files", state: "ready", tool_count: 5, error: null });
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("ready");
    expect(within(row).getByTestId("tool-count").textContent).toBe("5 tools");
    fireEvent.click(within(row).getByRole("switch", { name: "Enable files" }));
    await waitFor(() => expect(f.ipc.setServerEnabled).toHaveBeenCalledWith("files", false));
  });

  it("shows tools with stats, sets approval, and tests a tool through a generated form", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    expect((await screen.findByTestId("tool-stats")).textContent).toBe("12 calls · 75% ok · median 40 ms");
    expect([...screen.getByTestId("tools-table").querySelectorAll("[data-hint]")].map((h) => h.textContent)).toEqual([
      "only reads",
      "reaches outside (the web, other systems)",
    ]);
    fireEvent.change(screen.getByLabelText("Approval for read_file"), { target: { value: "allow" } });
    await waitFor(() => expect(f.ipc.setToolApproval).toHaveBeenCalledWith("files", "read_file", "allow"));
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    const form = screen.getByTestId("test-tool");
    fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    expect(f.ipc.callTool).toHaveBeenCalledWith("files", "read_file", { path: "/tmp/a" }, expect.any(AbortSignal), expect.any(Function));
    expect(await screen.findByText("hello from file")).toBeTruthy();
    // A tested call counts: once it ends, the tools (and their statistics) are read again.
    const reads = (f.ipc.listTools as ReturnType<typeof vi.fn>).mock.calls.length;
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    await waitFor(() => expect((f.ipc.listTools as ReturnType<typeof vi.fn>).mock.calls.length).toBe(reads + 1));
  });

  it("shows a tested tool's latest progress while it runs, and none once it answered", async () => {
    const f = fake([view("ready")]);
    let report: (e: CallEvent) => void = () => undefined;
    let answer: (r: ToolResult) => void = () => undefined;
    f.ipc.callTool = vi.fn((_s: string, _t: string, _a: unknown, _signal?: AbortSignal, onEvent?: (e: CallEvent) => void) => {
      report = onEvent!;
      return new Promise<ToolResult>((r) => (answer = r));
    });
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(await screen.findByRole("button", { name: "Test" }));
    const form = screen.getByTestId("test-tool");
    fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    expect(within(form).queryByTestId("trace-progress")).toBeNull();
    act(() => report({ kind: "progress", progress: 1, total: null, message: "Gathering sources..." }));
    act(() => report({ kind: "log", level: "info", logger: null, data: "not progress" }));
    act(() => report({ kind: "progress", progress: 2, total: 4, message: "Analyzing content..." }));
    expect(within(form).getByTestId("trace-progress")).toBeTruthy();
    expect(within(form).getByText("50% · Analyzing content...")).toBeTruthy();
    await act(async () => answer({ content: [{ type: "text", text: "the report" }], structured_content: null, is_error: false }));
    expect(await within(form).findByText("the report")).toBeTruthy();
    expect(within(form).queryByTestId("trace-progress")).toBeNull();
  });

  it("calls a tool test off on Cancel, and when the test is closed while it runs", async () => {
    const f = fake([view("ready")]);
    f.ipc.callTool = vi.fn(untilCancelled);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const run = async () => {
      fireEvent.click(await screen.findByRole("button", { name: "Test" }));
      const form = screen.getByTestId("test-tool");
      fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
      fireEvent.click(within(form).getByRole("button", { name: "Run" }));
      expect(within(form).getByRole("button", { name: "Running…" })).toBeTruthy();
      return form;
    };
    const form = await run();
    fireEvent.click(within(form).getByTestId("form-cancel"));
    expect(signalOf(f.ipc.callTool as never).aborted).toBe(true);
    expect((await within(form).findByTestId("test-tool-cancelled")).textContent).toBe("The call was cancelled; its server was told to stop.");
    expect(within(form).getByRole("button", { name: "Run" })).toBeTruthy();
    expect(within(form).queryByTestId("form-cancel")).toBeNull();
    // Closed while running: called off too.
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await run();
    const second = signalOf(f.ipc.callTool as never);
    expect(second.aborted).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    expect(screen.queryByTestId("test-tool")).toBeNull();
    expect(second.aborted).toBe(true);
  });

  it("shows a tested tool's view with its result, as a chat does", async () => {
    const f = fake([view("ready")]);
    f.ipc.listTools = vi.fn(() => Promise.resolve([{ ...tool, view: { resource_uri: "ui://files/view.html", for_model: true, for_app: true } }]));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    expect((await screen.findByTestId("tool-has-view")).textContent).toBe("view");
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    const form = screen.getByTestId("test-tool");
    fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    const frame = await within(form).findByTestId("app-view-frame");
    expect(f.ipc.openAppView).toHaveBeenCalledWith("files", "ui://files/view.html", expect.any(AbortSignal));
    // The page loads once the card listens for it.
    await waitFor(() => expect(frame.getAttribute("src")).toBe("mcp-app://localhost/t1"));
    expect(within(form).getByText("hello from file")).toBeTruthy();
  });

  it("tries the server's prompts, resources and templates on its page, with its suggestions", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Prompts & resources" }));
    const prompts = await screen.findAllByTestId("server-prompt");
    // Shown by its title, with the name it is called by.
    expect(prompts.map((p) => p.textContent)).toEqual(["Summarise/summarizeSummarise a fileTry…"]);
    expect(prompts[0]!.querySelector("img.mcp-icon")?.getAttribute("src"), "the prompt's icon").toBe("data:image/png;base64,iVBORw0KGgo=");
    fireEvent.click(within(prompts[0]!).getByRole("button", { name: "Try…" }));
    fireEvent.change(screen.getByLabelText("File *"), { target: { value: "/tmp" } });
    fireEvent.click(within(await screen.findByRole("listbox", { name: "Suggestions for File" })).getByRole("button", { name: "/tmp/b" }));
    expect(f.ipc.completeArgument).toHaveBeenLastCalledWith("files", { type: "prompt", name: "summarize" }, "path", "/tmp", { path: "/tmp" }, expect.any(AbortSignal));
    fireEvent.click(screen.getByRole("button", { name: "Get prompt" }));
    expect((await screen.findByTestId("prompt-preview")).textContent).toBe("Please summarise /tmp/b");

    const [notes, dot] = screen.getAllByTestId("server-resource");
    fireEvent.click(within(notes!).getByRole("button", { name: "Read" }));
    await waitFor(() => expect(screen.getByTestId("resource-preview").textContent).toContain("# Notes"));
    expect(screen.queryByTestId("prompt-preview")).toBeNull();
    fireEvent.click(within(dot!).getByRole("button", { name: "Read" }));
    const picture = await screen.findByAltText("file:///dot.png");
    expect(picture.getAttribute("src")).toBe("data:image/png;base64,iVBORw==");

    const template = screen.getByTestId("server-template");
    fireEvent.click(within(template).getByRole("button", { name: "Try…" }));
    fireEvent.change(within(template).getByLabelText("name *"), { target: { value: "missing" } });
    fireEvent.click(within(template).getByRole("button", { name: "Read" }));
    expect((await screen.findByRole("alert")).textContent).toContain('MCP server "files" returned error -32002: not found');
    expect(f.ipc.readResource).toHaveBeenLastCalledWith("files", "file:///missing", expect.any(AbortSignal));
  });

  it("watches a resource: its changes are marked and the one shown is read again", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Prompts & resources" }));
    const box = (await screen.findByLabelText("Watch notes.md for changes")) as HTMLInputElement;
    expect(box.checked).toBe(false);
    fireEvent.click(box);
    await waitFor(() => expect((screen.getByLabelText("Watch notes.md for changes") as HTMLInputElement).checked).toBe(true));
    expect(f.ipc.watchResource).toHaveBeenCalledWith("files", "file:///notes.md", true);

    const [notes] = screen.getAllByTestId("server-resource");
    fireEvent.click(within(notes!).getByRole("button", { name: "Read" }));
    await screen.findByTestId("resource-preview");
    const reads = (f.ipc.readResource as ReturnType<typeof vi.fn>).mock.calls.length;
    await f.updated({ server: "other", uri: "file:///notes.md" });
    expect(screen.queryByTestId("resource-changed")).toBeNull();
    await f.updated({ server: "files", uri: "file:///notes.md" });
    expect(within(notes!).getByTestId("resource-changed").textContent).toMatch(/^changed at /);
    await waitFor(() => expect(f.ipc.readResource).toHaveBeenCalledTimes(reads + 1));
  });

  it("copies a server's entry in the Claude Desktop shape", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("button", { name: "Copy as JSON" }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('{"mcpServers": {"files": {}}}'));
    expect(f.ipc.exportServer).toHaveBeenCalledWith("files");
    expect(await screen.findByRole("button", { name: "Copied" })).toBeTruthy();
  });

  it("sets the level of the messages a server that logs sends", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Logs" }));
    const level = screen.getByLabelText("Messages the server sends, from") as HTMLSelectElement;
    expect(level.value).toBe("info");
    fireEvent.change(level, { target: { value: "debug" } });
    await waitFor(() => expect(f.ipc.setServerLogLevel).toHaveBeenCalledWith("files", "debug"));
  });

  it("names the doctor's checks and hints in the window's language", async () => {
    const f = fake([{ ...view("failed"), status: { server: "files", state: "failed", tool_count: 0, error: "not found" } }]);
    f.ipc.serverDoctor = vi.fn(() =>
      Promise.resolve({
        server: "files",
        checks: [{ name: "command", ok: false, detail: "npx not found on PATH", hint: "install it, or give its absolute path as the command" }],
      }),
    );
    renderIn(<ServersSettings ipc={f.ipc} />, "zh");
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const report = await screen.findByTestId("doctor-report");
    expect(report.textContent).toBe("✗ 命令: npx not found on PATH请安装它，或把命令写成绝对路径");
  });

  it("opens a failed server on its doctor report and streams its logs", async () => {
    const f = fake([{ ...view("failed"), status: { server: "files", state: "failed", tool_count: 0, error: "exited with code 127" } }]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    expect((await screen.findByTestId("server-error")).textContent).toBe("exited with code 127");
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const report = await screen.findByTestId("doctor-report");
    expect(report.textContent).toContain("npx not found");
    expect(report.textContent).toContain("Install Node.js");
    // The server's own lines keep their line breaks.
    expect(report.querySelector("pre.stderr")?.textContent).toBe("Error: boom\n    at main.js:3");
    fireEvent.click(screen.getByRole("tab", { name: "Logs" }));
    await waitFor(() => expect(screen.getByTestId("server-logs").textContent).toBe("booting"));
    f.log({ server: "files", line: "listening" });
    f.log({ server: "other", line: "not mine" });
    expect(screen.getByTestId("server-logs").textContent).toBe("booting\nlistening");
    fireEvent.click(screen.getByRole("button", { name: "Restart" }));
    expect(f.ipc.restartServer).toHaveBeenCalledWith("files");
    expect(screen.queryByLabelText("Messages the server sends, from"), "a failed server has no level to set").toBeNull();
  });

  it("edits a stdio server: args list, env with secrets kept out of the config", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Edit" }));
    const editor = screen.getByTestId("server-editor");
    fireEvent.change(within(editor).getByLabelText("Argument 2"), { target: { value: "@mcp/server-fs" } });
    fireEvent.click(within(editor).getByRole("button", { name: "Add variable" }));
    const env = within(editor).getByTestId("server-env");
    const keys = within(env).getAllByLabelText("Name");
    const values = within(env).getAllByLabelText("Value");
    fireEvent.change(keys[2] as HTMLElement, { target: { value: "API_KEY" } });
    fireEvent.change(values[2] as HTMLElement, { target: { value: "s3cret" } });
    // A new row named like a secret is one, by the import's rule (issue 30, item 9).
    expect((within(env).getAllByLabelText("Secret")[2] as HTMLInputElement).checked).toBe(true);
    expect((values[2] as HTMLInputElement).type).toBe("password");
    const share = within(editor).getByLabelText("Share folders (knowledge-base and shared folders) with this server") as HTMLInputElement;
    expect(share.checked).toBe(true);
    fireEvent.click(share);
    const readOnly = within(editor).getByLabelText("Run read-only tools without asking") as HTMLInputElement;
    expect(readOnly.checked).toBe(false);
    fireEvent.click(readOnly);
    fireEvent.click(within(editor).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.share_roots).toBe(false);
    expect(saved.read_only_auto_allow).toBe(true);
    expect(saved.transport).toEqual({
      type: "stdio",
      command: "npx",
      args: ["-y", "@mcp/server-fs"],
      env: { TOKEN: { secret: "mcp/files/env/TOKEN" }, MODE: { plain: "ro" }, API_KEY: { secret: "mcp/files/env/API_KEY" } },
      cwd: null,
    });
    expect(secrets).toEqual({ "mcp/files/env/API_KEY": "s3cret" });
    expect(JSON.stringify(saved)).not.toContain("s3cret");
  });

  it("marks a new header or variable secret when its name looks secret, until the user decides", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "remote" } });
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "streamable_http" } });
    fireEvent.change(screen.getByLabelText("URL"), { target: { value: "https://mcp.example/mcp" } });
    const headers = screen.getByTestId("server-headers");
    for (let i = 0; i < 3; i++) fireEvent.click(within(headers).getByRole("button", { name: "Add variable" }));
    const row = (i: number) => ({
      key: within(headers).getAllByLabelText("Name")[i] as HTMLInputElement,
      value: within(headers).getAllByLabelText("Value")[i] as HTMLInputElement,
      secret: within(headers).getAllByLabelText("Secret")[i] as HTMLInputElement,
    });
    fireEvent.change(row(0).key, { target: { value: "Authorization" } });
    fireEvent.change(row(1).key, { target: { value: "X-Team" } });
    fireEvent.change(row(2).key, { target: { value: "x-api-key" } });
    expect([0, 1, 2].map((i) => row(i).secret.checked)).toEqual([true, false, true]);
    expect(row(0).value.type).toBe("password");
    // The user's own choice stands when the name changes again.
    fireEvent.click(row(2).secret);
    fireEvent.change(row(2).key, { target: { value: "X-Api-Key" } });
    expect(row(2).secret.checked).toBe(false);
    fireEvent.change(row(0).value, { target: { value: "Bearer t0k" } });
    fireEvent.change(row(1).value, { target: { value: "core" } });
    fireEvent.change(row(2).value, { target: { value: "public" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.transport).toMatchObject({
      headers: { Authorization: { secret: "mcp/remote/header/Authorization" }, "X-Team": { plain: "core" }, "X-Api-Key": { plain: "public" } },
    });
    expect(secrets).toEqual({ "mcp/remote/header/Authorization": "Bearer t0k" });
  });

  it("adds a server from a preset, which fills in every field and says what it needs", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    const start = screen.getByLabelText("Start from");
    await waitFor(() => expect(within(start).getByRole("option", { name: "Filesystem" })).toBeTruthy());
    fireEvent.change(start, { target: { value: "filesystem" } });
    expect((screen.getByLabelText("Name") as HTMLInputElement).value).toBe("filesystem");
    expect((screen.getByLabelText("Command") as HTMLInputElement).value).toBe("npx");
    expect((screen.getByLabelText("Argument 2") as HTMLInputElement).value).toBe("@modelcontextprotocol/server-filesystem");
    expect((screen.getByLabelText(/Share folders/) as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId("server-preset-about").textContent).toContain("Needs npx on this computer.");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(f.ipc.saveServer).toHaveBeenCalledWith(
        expect.objectContaining({
          name: "filesystem",
          share_roots: true,
          read_only_auto_allow: false,
          transport: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem"], env: {}, cwd: null },
        }),
        {},
      ),
    );
  });

  it("asks for the secret a preset needs and sends it to the keyring, never into the config", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    const start = screen.getByLabelText("Start from");
    await waitFor(() => expect(within(start).getByRole("option", { name: "GitHub" })).toBeTruthy());
    fireEvent.change(start, { target: { value: "github" } });
    fireEvent.change(screen.getByDisplayValue("github"), { target: { value: "gh" } });
    expect((screen.getByLabelText("URL") as HTMLInputElement).value).toBe("https://api.githubcopilot.com/mcp/");
    const headers = screen.getByTestId("server-headers");
    expect((within(headers).getByLabelText("Name") as HTMLInputElement).value).toBe("Authorization");
    const value = within(headers).getByLabelText("Value") as HTMLInputElement;
    expect(value.type).toBe("password");
    expect(value.placeholder).toBe("Value");
    fireEvent.change(value, { target: { value: "Bearer ghp-test" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.name).toBe("gh");
    expect(saved.transport).toEqual({
      type: "streamable_http",
      url: "https://api.githubcopilot.com/mcp/",
      headers: { Authorization: { secret: "mcp/gh/header/Authorization" } },
    });
    expect(secrets).toEqual({ "mcp/gh/header/Authorization": "Bearer ghp-test" });
  });

  it("calls off a registry search still running when another one starts, or on Cancel", async () => {
    const f = fake([]);
    const first = vi.fn(untilCancelled);
    f.ipc.registrySearch = first;
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    const query = screen.getByLabelText("Server name contains…");
    fireEvent.change(query, { target: { value: "slow" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    const slow = signalOf(first as never);
    f.ipc.registrySearch = vi.fn(() => Promise.resolve({ entries: [], next_cursor: null }));
    fireEvent.change(query, { target: { value: "nothing" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    expect(slow.aborted).toBe(true);
    expect((await screen.findByTestId("registry-none")).textContent).toBe("No server in the registry matches “nothing”.");
    expect(screen.queryByRole("alert")).toBeNull();
    // And one the user calls off.
    f.ipc.registrySearch = vi.fn(untilCancelled);
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(await screen.findByTestId("registry-search-cancel"));
    expect(signalOf(f.ipc.registrySearch as never).aborted).toBe(true);
    expect(screen.queryByTestId("registry-searching")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("searches the MCP Registry, pages on, and adds a server from an entry with its key typed into the keyring", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    const query = screen.getByLabelText("Server name contains…");
    fireEvent.change(query, { target: { value: "nothing" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    expect((await screen.findByTestId("registry-none")).textContent).toBe("No server in the registry matches “nothing”.");
    fireEvent.change(query, { target: { value: "weather" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    await waitFor(() => expect(screen.getAllByTestId("registry-entry")).toHaveLength(1));
    fireEvent.click(screen.getByRole("button", { name: "More results" }));
    await waitFor(() => expect(screen.getAllByTestId("registry-entry")).toHaveLength(2));
    expect(f.ipc.registrySearch).toHaveBeenLastCalledWith("weather", "page-2", expect.any(AbortSignal));
    expect(screen.queryByRole("button", { name: "More results" })).toBeNull();
    const pypi = screen.getAllByTestId("registry-entry")[1]!;
    expect(pypi.textContent).toContain("Weather (pypi)");
    expect(pypi.textContent).toContain("Needs uvx on this computer.");

    fireEvent.click(within(pypi).getByRole("button", { name: "Use" }));
    expect(screen.queryByTestId("registry-browser")).toBeNull();
    expect(screen.getByTestId("registry-template").textContent).toContain("io.github.acme/weather 1.2.0");
    expect(screen.getByTestId("registry-settings").textContent).toBe(
      "WEATHER_API_KEY Your key from acme.example (required, secret, kept in the keyring)",
    );
    expect((document.getElementById("server-name") as HTMLInputElement).value).toBe("weather");
    expect((screen.getByLabelText("Command") as HTMLInputElement).value).toBe("uvx");
    const key = within(screen.getByTestId("server-env")).getByLabelText("Value") as HTMLInputElement;
    expect(key.type).toBe("password");
    fireEvent.change(key, { target: { value: "wk-123" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.transport).toEqual({
      type: "stdio",
      command: "uvx",
      args: ["acme-weather==1.2.0"],
      env: { WEATHER_API_KEY: { secret: "mcp/weather/env/WEATHER_API_KEY" } },
      cwd: null,
    });
    expect(secrets).toEqual({ "mcp/weather/env/WEATHER_API_KEY": "wk-123" });
  });

  it("asks for the parts of an entry the registry leaves to the user, then edits and saves it with their secrets", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    fireEvent.change(screen.getByLabelText("Server name contains…"), { target: { value: "vault" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(within(await screen.findByTestId("registry-entry")).getByRole("button", { name: "Use" }));
    const setup = screen.getByTestId("registry-setup");
    expect(within(setup).getByRole("heading").textContent).toBe("Set up Vault (streamable-http)");
    expect((within(setup).getByLabelText("key *") as HTMLInputElement).type).toBe("password");
    expect((within(setup).getByLabelText("region") as HTMLSelectElement).value).toBe("eu");
    fireEvent.change(within(setup).getByLabelText("tenant *"), { target: { value: "nope" } });
    fireEvent.change(within(setup).getByLabelText("key *"), { target: { value: "k-1" } });
    fireEvent.click(within(setup).getByRole("button", { name: "Continue" }));
    expect((await within(setup).findByRole("alert")).textContent).toContain("tenant: no such tenant");
    fireEvent.change(within(setup).getByLabelText("tenant *"), { target: { value: "acme" } });
    fireEvent.click(within(setup).getByRole("button", { name: "Continue" }));
    await waitFor(() => expect(screen.queryByTestId("registry-setup")).toBeNull());
    expect(f.ipc.registryFill).toHaveBeenLastCalledWith(vaultEntry, { tenant: "acme", key: "k-1", region: "eu" });
    expect(screen.queryByTestId("registry-settings")).toBeNull();
    expect((screen.getByLabelText("URL") as HTMLInputElement).value).toBe("https://acme.vault.example/mcp");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.transport).toEqual({
      type: "streamable_http",
      url: "https://acme.vault.example/mcp",
      headers: { Authorization: { secret: "mcp/vault/Authorization" } },
    });
    expect(secrets).toEqual({ "mcp/vault/Authorization": "Bearer k-1" });
  });

  it("downloads a bundle the registry lists, saying so meanwhile, and opens the bundle installer on it", async () => {
    const f = fake([]);
    let finish: (path: string) => void = () => undefined;
    f.ipc.registryBundle = vi.fn(() => new Promise<string>((resolve) => (finish = resolve)));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    fireEvent.change(screen.getByLabelText("Server name contains…"), { target: { value: "notes" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(await screen.findByRole("button", { name: "Install" }));
    expect((await screen.findByTestId("bundle-downloading")).textContent).toBe(
      "Downloading https://example.com/notes.mcpb and checking its SHA-256…Cancel",
    );
    act(() => finish("/data/downloads/ab12.mcpb"));
    await waitFor(() => expect(f.ipc.bundlePreview).toHaveBeenCalledWith("/data/downloads/ab12.mcpb", "en-US"));
    expect(screen.queryByTestId("bundle-downloading")).toBeNull();
    expect(f.ipc.registryBundle).toHaveBeenCalledWith(notesBundle, expect.any(AbortSignal));
    expect(await screen.findByTestId("bundle-install")).toBeTruthy();
    expect(screen.queryByTestId("server-editor")).toBeNull();
  });

  it("calls a bundle's download off on Cancel, with nothing to report", async () => {
    const f = fake([]);
    f.ipc.registryBundle = vi.fn(untilCancelled);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    fireEvent.change(screen.getByLabelText("Server name contains…"), { target: { value: "notes" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(await screen.findByRole("button", { name: "Install" }));
    fireEvent.click(await screen.findByTestId("bundle-download-cancel"));
    expect(signalOf(f.ipc.registryBundle as never).aborted).toBe(true);
    await waitFor(() => expect(screen.queryByTestId("bundle-downloading")).toBeNull());
    expect(screen.queryByRole("alert")).toBeNull();
    expect(f.ipc.bundlePreview).not.toHaveBeenCalled();
  });

  it("adds an HTTP server with url and headers", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "remote" } });
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "streamable_http" } });
    fireEvent.change(screen.getByLabelText("URL"), { target: { value: "http://127.0.0.1:3001/mcp" } });
    fireEvent.change(screen.getByLabelText("Approval for tools without their own setting"), { target: { value: "allow" } });
    fireEvent.change(screen.getByLabelText("Tool call time limit (seconds)"), { target: { value: "120" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(f.ipc.saveServer).toHaveBeenCalledWith(
        expect.objectContaining({
          name: "remote",
          approval: "allow",
          timeouts: { startup_secs: 30, call_secs: 120 },
          transport: { type: "streamable_http", url: "http://127.0.0.1:3001/mcp", headers: {} },
        }),
        {},
      ),
    );
  });

  it("sets client credentials for a remote server: the secret goes to the keyring, only its name into the config", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "remote" } });
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "streamable_http" } });
    fireEvent.change(screen.getByLabelText("URL"), { target: { value: "https://mcp.example.com/mcp" } });
    expect(screen.queryByLabelText("Client ID")).toBeNull();
    fireEvent.change(screen.getByLabelText("Sign-in"), { target: { value: "secret" } });
    fireEvent.change(screen.getByLabelText("Client ID"), { target: { value: " ci-bot " } });
    fireEvent.change(screen.getByLabelText("Client secret"), { target: { value: "cc-s3cret" } });
    fireEvent.change(screen.getByLabelText("Scopes (separated by spaces)"), { target: { value: "mcp:read  mcp:write" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.client_credentials).toEqual({
      client_id: "ci-bot",
      key: { method: "secret", secret: { secret: "mcp/remote/oauth_client_secret" } },
      scopes: ["mcp:read", "mcp:write"],
    });
    expect(secrets).toEqual({ "mcp/remote/oauth_client_secret": "cc-s3cret" });
    expect(JSON.stringify(saved)).not.toContain("cc-s3cret");
  });

  it("keeps a stored private key when its field is left empty, and offers no browser sign-in for it", async () => {
    const remote: ServerView = {
      config: {
        ...config,
        name: "remote",
        transport: { type: "streamable_http", url: "https://mcp.example.com/mcp", headers: {} },
        client_credentials: { client_id: "bot", key: { method: "private_key", pem: { secret: "mcp/remote/oauth_private_key" }, algorithm: "ES256" }, scopes: [] },
      },
      status: { server: "remote", state: "failed", tool_count: 0, error: "authorization failed: invalid_client" },
      about: null,
      bundle: false,
      instructions: null,
      log_level: null,
      icons: [],
      policy: POLICY,
      blocked: [],
    };
    const f = fake([remote]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    expect(within(row).queryByTestId("server-sign-in")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "remote" }));
    fireEvent.click(screen.getByRole("tab", { name: "Edit" }));
    const editor = screen.getByTestId("server-editor");
    const pem = within(editor).getByLabelText("Private key (PEM)") as HTMLTextAreaElement;
    expect(pem.required).toBe(false);
    expect(pem.placeholder).toBe("stored in keyring");
    fireEvent.change(within(editor).getByLabelText("Signing algorithm"), { target: { value: "RS256" } });
    fireEvent.click(within(editor).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.client_credentials?.key).toEqual({ method: "private_key", pem: { secret: "mcp/remote/oauth_private_key" }, algorithm: "RS256" });
    expect(secrets).toEqual({});

    // Made a local server, it keeps no sign-in (the core would refuse it).
    fireEvent.change(within(editor).getByLabelText("Transport"), { target: { value: "stdio" } });
    fireEvent.change(within(editor).getByLabelText("Command"), { target: { value: "mcp-remote" } });
    fireEvent.click(within(editor).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalledTimes(2));
    const [local] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[1] as [McpServerConfig];
    expect(local.transport.type).toBe("stdio");
    expect(local.client_credentials).toBeNull();
  });

  it("asks for a bundle's strings in the window's language", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />, "zh");
    fireEvent.click(await screen.findByRole("button", { name: "安装扩展包…" }));
    await waitFor(() => expect(f.ipc.bundlePreview).toHaveBeenCalledWith("/tmp/notes-2.0.0.mcpb", "zh-CN"));
  });

  it("installs a bundle: shows what it is, fills defaults, picks folders, keeps a stored secret left empty", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Install bundle…" }));
    const dialog = await screen.findByTestId("bundle-install");
    expect(f.ipc.bundlePreview).toHaveBeenCalledWith("/tmp/notes-2.0.0.mcpb", "en-US");
    expect(within(dialog).getByTestId("bundle-about").textContent).toBe("Notes 2.0.0 · by Ada");
    expect(within(dialog).getByTestId("bundle-icon").getAttribute("src")).toBe("data:image/png;base64,iVBORw0KGgo=");
    expect(within(dialog).getByTestId("bundle-update").textContent).toContain("Version 1.0.0 is installed");
    const token = within(dialog).getByLabelText("Token") as HTMLInputElement;
    expect(token.type).toBe("password");
    expect(token.placeholder).toBe("stored in keyring");
    expect(token.required).toBe(false);
    const folders = within(dialog).getByLabelText(/^Folders/) as HTMLTextAreaElement;
    expect(folders.value).toBe("/home/ada/Notes");
    expect((within(dialog).getByLabelText("Limit") as HTMLInputElement).value).toBe("10");
    fireEvent.click(within(dialog).getByRole("button", { name: "Choose Folders" }));
    await waitFor(() => expect(folders.value).toBe("/home/ada/Notes\n/srv/shared notes"));
    fireEvent.change(within(dialog).getByLabelText("Limit"), { target: { value: "25" } });
    fireEvent.click(within(dialog).getByLabelText("Verbose"));
    fireEvent.click(within(dialog).getByRole("button", { name: "Update" }));
    await waitFor(() => expect(f.ipc.installBundle).toHaveBeenCalled());
    const [preview, signer, values] = (f.ipc.installBundle as ReturnType<typeof vi.fn>).mock.calls[0] as [string, string | null, Record<string, unknown>];
    // What the preview showed: its opened copy, unsigned.
    expect([preview, signer]).toEqual(["preview-1", null]);
    // The token left empty is not sent (the core keeps the stored one); nor is the empty region.
    expect(values).toEqual({ folders: ["/home/ada/Notes", "/srv/shared notes"], limit: 25, verbose: true });
    expect((await screen.findByTestId("bundle-installed")).textContent).toBe("Installed the server notes.");
    expect(screen.queryByTestId("bundle-install")).toBeNull();
  });

  it("changes an installed bundle's settings in its form, filled in with the values it has", async () => {
    const f = fake([{ ...view("ready"), bundle: true }]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByTestId("server-bundle-settings"));
    const dialog = await screen.findByTestId("bundle-install");
    expect(f.ipc.bundleSettings).toHaveBeenCalledWith("files", "en-US");
    expect(within(dialog).getByRole("heading").textContent).toBe("Notes: settings");
    expect((within(dialog).getByLabelText(/^Folders/) as HTMLTextAreaElement).value).toBe("/home/ada/Work");
    expect((within(dialog).getByLabelText("Limit") as HTMLInputElement).value).toBe("40");
    expect((within(dialog).getByLabelText("Token") as HTMLInputElement).placeholder).toBe("stored in keyring");
    fireEvent.change(within(dialog).getByLabelText("Limit"), { target: { value: "50" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save and restart" }));
    await waitFor(() => expect(f.ipc.configureBundle).toHaveBeenCalledWith("files", { folders: ["/home/ada/Work"], limit: 50, verbose: false }));
    await waitFor(() => expect(screen.queryByTestId("bundle-install")).toBeNull());
    expect(f.ipc.installBundle).not.toHaveBeenCalled();
  });

  it("offers no bundle settings for a server not installed from a bundle", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    expect(screen.queryByTestId("server-bundle-settings")).toBeNull();
  });

  it("keeps the install form open with the core's reason when a setting is refused", async () => {
    const f = fake([]);
    f.ipc.installBundle = vi.fn(() =>
      Promise.reject({ kind: "invalid_input", message: "Folders (user_config.folders): \"docs\" is not an absolute path" }),
    );
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Install bundle…" }));
    const dialog = await screen.findByTestId("bundle-install");
    fireEvent.change(within(dialog).getByLabelText("Token"), { target: { value: "  tok with spaces " } });
    fireEvent.change(within(dialog).getByLabelText(/^Folders/), { target: { value: "docs" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Update" }));
    expect(await within(dialog).findByText(/is not an absolute path/)).toBeTruthy();
    const [, , values] = (f.ipc.installBundle as ReturnType<typeof vi.fn>).mock.calls[0] as [string, string | null, Record<string, unknown>];
    expect(values.token).toBe("  tok with spaces ");
    expect(screen.getByTestId("bundle-install")).toBeTruthy();
  });

  it("opens nothing when the file dialog is cancelled", async () => {
    const f = fake([]);
    f.ipc.pickBundle = vi.fn(() => Promise.resolve(null));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Install bundle…" }));
    await waitFor(() => expect(f.ipc.pickBundle).toHaveBeenCalled());
    expect(f.ipc.bundlePreview).not.toHaveBeenCalled();
    expect(screen.queryByTestId("bundle-install")).toBeNull();
  });

  it("reads the list again on a status, so a server it does not list yet appears, and a list read before the status does not win", async () => {
    const f = fake([view("ready")]);
    const added: ServerView = {
      config: { ...config, name: "poker" },
      status: { server: "poker", state: "ready", tool_count: 1, error: null },
      about: null,
      bundle: false,
      instructions: null,
      log_level: null,
      icons: [],
      policy: POLICY,
      blocked: [],
    };
    renderIn(<ServersSettings ipc={f.ipc} />);
    await screen.findByTestId("server-row");
    f.ipc.listServers = vi.fn(() => Promise.resolve([view("ready"), added]));
    await f.status({ server: "poker", state: "ready", tool_count: 1, error: null });
    await waitFor(() => expect(screen.getAllByTestId("server-row")).toHaveLength(2));
    const row = screen.getAllByTestId("server-row")[1]!;
    expect(row.getAttribute("data-server")).toBe("poker");
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("ready");
  });

  it("lists a server's tools again once it is ready", async () => {
    const f = fake([view("starting")]);
    f.ipc.listTools = vi.fn(() => Promise.resolve([]));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    await waitFor(() => expect(f.ipc.listTools).toHaveBeenCalledTimes(1));
    expect(within(screen.getByTestId("tools-table")).queryByText("read_file")).toBeNull();
    f.ipc.listTools = vi.fn(() => Promise.resolve([tool]));
    await f.status({ server: "files", state: "ready", tool_count: 1, error: null });
    expect(await within(screen.getByTestId("tools-table")).findByText("read_file")).toBeTruthy();
  });

  it("keeps the status an event reported when a list read before it answers after it", async () => {
    const f = fake([view("starting")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    // A list read that begins while the server starts and answers late.
    let answerLate: (views: ServerView[]) => void = () => undefined;
    const late = new Promise<ServerView[]>((resolve) => (answerLate = resolve));
    const current = f.ipc.listServers;
    f.ipc.listServers = vi.fn<ServersIpc["listServers"]>().mockReturnValueOnce(late).mockImplementation(current);
    fireEvent.click(within(row).getByRole("switch", { name: "Enable files" }));
    await waitFor(() => expect(f.ipc.listServers).toHaveBeenCalledTimes(1));
    await f.status({ server: "files", state: "ready", tool_count: 3, error: null });
    await act(async () => answerLate([view("starting")]));
    await waitFor(() => expect(f.ipc.listServers).toHaveBeenCalledTimes(2));
    expect(within(row).getByTestId("status-dot").getAttribute("data-state")).toBe("ready");
  });
});
