// A tool's view (MCP Apps): reading it for its sandboxed frame, and what the
// view may ask of its own server, the model and the downloads folder.
import { call, cancellable } from "./client";

import type { AppViewInfo, SavedFile } from "./generated";

export type { AppCsp, AppViewInfo, SavedFile } from "./generated";

export const viewsIpc = {
  /** Reads a tool's view (MCP Apps) for its sandboxed frame. */
  openAppView: (server: string, uri: string, signal?: AbortSignal) =>
    cancellable<AppViewInfo>("open_app_view", { server, uri }, signal),
  /** A view's call to a tool of its own server: MCP `CallToolResult` JSON. */
  callToolForView: (server: string, tool: string, args: Record<string, unknown>, approved: boolean, signal?: AbortSignal) =>
    cancellable<unknown>("call_tool_for_view", { server, tool, arguments: args, approved }, signal),
  /** The names the files of `contents` are saved under (made safe by the core), to show before saving. */
  downloadNames: (contents: unknown[]) => call<string[]>("download_names", { contents }),
  /**
   * Saves MCP content (embedded resources; links read from `server`) as files in the downloads
   * folder, or one the user picks (`choose`; null: the dialog was cancelled).
   */
  saveFiles: (server: string | null, contents: unknown[], choose: boolean, signal?: AbortSignal) =>
    cancellable<SavedFile[] | null>("save_files", { server, contents, choose }, signal),
  /** A view's list of its own server's resources: MCP `ListResourcesResult` JSON. */
  listResourcesForView: (server: string) => call<unknown>("list_resources_for_view", { server }),
  /** A view asks the model (MCP `CreateMessageRequestParams`), reviewed by the user first: MCP `CreateMessageResult` JSON. */
  sampleForView: (server: string, params: Record<string, unknown>, signal?: AbortSignal) =>
    cancellable<unknown>("sample_for_view", { server, params }, signal),
  /** A view's read of a resource of its own server: MCP `ReadResourceResult` JSON. */
  readResourceForView: (server: string, uri: string, signal?: AbortSignal) =>
    cancellable<unknown>("read_resource_for_view", { server, uri }, signal),
};
