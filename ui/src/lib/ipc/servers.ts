// MCP servers: their settings, status, sign-in, logs and doctor report, their
// tools (and testing one), and the requests a server makes of the user
// (sampling, forms).
import { call, cancellable, channel, on } from "./client";
import type { ApprovalMode, McpServerConfig, PolicyOutline } from "./config";
import type { IconView, JsonSchema, LogLevel, ToolProgress, ToolResult } from "./mcp";

/** What a tested tool's server reports while the call runs (`call_tool`'s `on_event`). */
export type CallEvent =
  | ({ kind: "progress" } & ToolProgress)
  | { kind: "log"; level: string; logger: string | null; data: unknown };

export type ServerState = "stopped" | "starting" | "ready" | "failed" | "restarting";

export interface ServerStatus {
  server: string;
  state: ServerState;
  tool_count: number;
  error: string | null;
}

export interface ServerView {
  config: McpServerConfig;
  status: ServerStatus;
  /** Who a ready server says it is and how it is reached; null unless ready. */
  about: ServerAbout | null;
  /** Installed from an MCP bundle: its settings form can be opened again. */
  bundle: boolean;
  /** What the server said about using it (MCP `instructions`); the model reads it with the server's tools. */
  instructions: string | null;
  /** The level a ready server that logs sends messages at; null otherwise. */
  log_level: LogLevel | null;
  /** The icon the server gives itself (MCP `icons`), per theme. */
  icons: IconView[];
  /** The security policy it runs under, in the parts of its one-line summary. */
  policy: PolicyOutline;
  /** Hosts its filtering proxy refused and nobody allowed yet. */
  blocked: string[];
}

/** Who a ready server says it is (its `initialize` answer) and how Patchbay reaches it. */
export interface ServerAbout {
  name: string | null;
  title: string | null;
  version: string | null;
  description: string | null;
  /** Its website: an http(s) URL, opened in the browser. */
  website: string | null;
  /** The protocol version agreed on. */
  protocol_version: string;
  /** The transport in use (for a URL-only server, the one detection chose). */
  transport: "stdio" | "streamable_http" | "sse" | "in_process";
  pid: number | null;
  /** Where a stdio server's command was found. */
  command: string | null;
  /** What it declared: `tools`, `tools.list_changed`, `prompts`, `prompts.list_changed`, `resources`,
   * `resources.subscribe`, `resources.list_changed`, `logging`, `completions`, then extension ids. */
  capabilities: string[];
}

export interface ToolStats {
  calls: number;
  /** 0..1 */
  success_rate: number;
  median_ms: number;
}

export interface ToolInfo {
  server: string;
  name: string;
  /** The name to show (MCP `title`), when the server gives one; the model knows the tool by `name`. */
  title: string | null;
  description: string;
  input_schema: JsonSchema;
  enabled: boolean;
  approval: ApprovalMode;
  /** Estimated tokens the tool's name, description and schema cost per request. */
  schema_tokens: number;
  stats: ToolStats | null;
  /** The tool's icon, per theme. */
  icons: IconView[];
  /** What the server says the tool does (its annotations), only where it says so: hints, not guarantees. */
  hints: ToolHint[];
  /** Its view (MCP Apps), and whether the model and views may call it. */
  view: ToolView;
}

/** Mirrors `patchbay_core::mcp::apps::ToolView`. */
export interface ToolView {
  /** The `ui://` page shown with the tool's calls, when it has one. */
  resource_uri: string | null;
  /** The model sees the tool (false: the server made it for its views only). */
  for_model: boolean;
  /** Views of the same server may call it. */
  for_app: boolean;
}

export type ToolHint = "read_only" | "destructive" | "additive" | "idempotent" | "open_world" | "task";

export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  hint: string | null;
}

export interface DoctorReport {
  server: string;
  checks: DoctorCheck[];
  /** The policy the server was started under (worded by `policyLine`). */
  policy: PolicyOutline | null;
}

export interface ServerLogLine {
  server: string;
  line: string;
}

/** Requests a server makes of the client. Answer with `respond_server_request`. */
export type ServerRequest =
  | {
      kind: "sampling";
      id: string;
      server: string;
      messages: { role: "user" | "assistant"; text: string }[];
      system_prompt: string | null;
      max_tokens: number;
      /** The model that answers once approved: "provider / model". */
      model: string;
      /** The models the server would prefer (hints only). */
      model_hints: string[];
    }
  | { kind: "elicitation"; id: string; server: string; message: string; requested_schema: JsonSchema };

export type ServerRequestResponse =
  | { action: "approve_sampling"; messages: { role: "user" | "assistant"; text: string }[]; system_prompt: string | null }
  | { action: "accept"; content: Record<string, unknown> }
  | { action: "decline" }
  | { action: "cancel" };

/** An MCP server as its README sets it up; a secret it needs is `{secret: ""}`, to be typed. */
export interface ServerPreset {
  id: string;
  label: string;
  needs: "npx" | "uvx" | null;
  config: McpServerConfig;
}

export const serversIpc = {
  listServers: () => call<ServerView[]>("list_servers"),
  serverPresets: () => call<ServerPreset[]>("server_presets"),
  saveServer: (config: McpServerConfig, secrets: Record<string, string>) =>
    call<void>("save_server", { config, secrets }),
  deleteServer: (name: string) => call<void>("delete_server", { name }),
  setServerEnabled: (name: string, enabled: boolean) => call<void>("set_server_enabled", { name, enabled }),
  restartServer: (name: string) => call<void>("restart_server", { name }),
  authorizeServer: (name: string, signal?: AbortSignal) => cancellable<void>("authorize_server", { name }, signal),
  serverLogs: (name: string) => call<string[]>("server_logs", { name }),
  setServerLogLevel: (name: string, level: LogLevel) => call<void>("set_server_log_level", { name, level }),
  /** One server's entry in the Claude Desktop shape, secrets as placeholders. */
  exportServer: (name: string) => call<string>("export_server", { name }),
  serverDoctor: (name: string) => call<DoctorReport>("server_doctor", { name }),
  listTools: (server: string | null) => call<ToolInfo[]>("list_tools", { server }),
  setToolEnabled: (server: string, tool: string, enabled: boolean) =>
    call<void>("set_tool_enabled", { server, tool, enabled }),
  setToolApproval: (server: string, tool: string, approval: ApprovalMode) =>
    call<void>("set_tool_approval", { server, tool, approval }),
  /** "Test a tool": the server's progress and log messages reach `onEvent` as they come. */
  callTool: (server: string, tool: string, args: unknown, signal?: AbortSignal, onEvent: (e: CallEvent) => void = () => undefined) =>
    cancellable<ToolResult>("call_tool", { server, tool, arguments: args, on_event: channel(onEvent) }, signal),
  respondServerRequest: (id: string, response: ServerRequestResponse) =>
    call<void>("respond_server_request", { id, response }),
  onServerStatus: (h: (s: ServerStatus) => void) => on<ServerStatus>("server_status", h),
  onServerLog: (h: (l: ServerLogLine) => void) => on<ServerLogLine>("server_log", h),
  onServerRequest: (h: (r: ServerRequest) => void) => on<ServerRequest>("server_request", h),
};
