// MCP servers: their settings, status, sign-in, logs and doctor report, their
// tools (and testing one), and the requests a server makes of the user
// (sampling, forms).
import { call, cancellable, channel, on } from "./client";
import type {
  ApprovalMode,
  CallEvent,
  DoctorReport,
  HealthCheck,
  LogLevel,
  McpServerConfig,
  ServerLogLine,
  ServerPreset,
  ServerRequestResponse,
  ServerRequestView,
  ServerStatusView,
  ServerView,
  ToolInfo,
  ToolResultView,
} from "./generated";

export type {
  CallEvent,
  DoctorCheck,
  DoctorReport,
  HealthCheck,
  ServerAbout,
  ServerLogLine,
  ServerPreset,
  ServerRequestResponse,
  ServerRequestView as ServerRequest,
  ServerStatusView as ServerStatus,
  ServerView,
  TextMessage,
  ToolInfo,
  ToolView,
  TransportKind,
  CallStats as ToolStats,
} from "./generated";

/** What a server's status says it is doing (`ServerStatus.state`). */
export type ServerState = "stopped" | "starting" | "ready" | "failed" | "restarting";

/** What a tool's annotations say it does (`ToolInfo.hints`), and `task` for a tool that runs as one. */
export type ToolHint = "read_only" | "destructive" | "additive" | "idempotent" | "open_world" | "task";

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
  /** Pings the server now; the answer is kept as its last health check. */
  checkServerHealth: (name: string) => call<HealthCheck>("check_server_health", { name }),
  listTools: (server: string | null) => call<ToolInfo[]>("list_tools", { server }),
  setToolEnabled: (server: string, tool: string, enabled: boolean) =>
    call<void>("set_tool_enabled", { server, tool, enabled }),
  /** Pinned: sent with every request, also when the others are found through tool search. */
  setToolPinned: (server: string, tool: string, pinned: boolean) => call<void>("set_tool_pinned", { server, tool, pinned }),
  setToolApproval: (server: string, tool: string, approval: ApprovalMode) =>
    call<void>("set_tool_approval", { server, tool, approval }),
  /** "Test a tool": the server's progress and log messages reach `onEvent` as they come. */
  callTool: (server: string, tool: string, args: unknown, signal?: AbortSignal, onEvent: (e: CallEvent) => void = () => undefined) =>
    cancellable<ToolResultView>("call_tool", { server, tool, arguments: args, on_event: channel(onEvent) }, signal),
  /** Requests sent before this page listened (a window opened or reloaded after them), oldest first. */
  waitingServerRequests: () => call<ServerRequestView[]>("waiting_server_requests"),
  respondServerRequest: (id: string, response: ServerRequestResponse) =>
    call<void>("respond_server_request", { id, response }),
  onServerStatus: (h: (s: ServerStatusView) => void) => on<ServerStatusView>("server_status", h),
  onServerLog: (h: (l: ServerLogLine) => void) => on<ServerLogLine>("server_log", h),
  onServerRequest: (h: (r: ServerRequestView) => void) => on<ServerRequestView>("server_request", h),
  /** A server's request waits no more (answered here or in another window, or given up): its dialog goes. */
  onServerRequestEnded: (h: (id: string) => void) => on<string>("server_request_ended", h),
};
