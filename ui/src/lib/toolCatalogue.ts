// The tools the chat page knows, by server and tool name, for the trace and
// approval cards deep in the message list (their icons, and what the server
// says each tool does).
import { createContext } from "react";
import type { ToolInfo, ToolTrace } from "./ipc";

export type ToolMap = ReadonlyMap<string, ToolInfo>;

const key = (server: string, tool: string) => `${server}\u0000${tool}`;

export const ToolCatalogue = createContext<ToolMap>(new Map());

export function toolMap(tools: ToolInfo[]): ToolMap {
  return new Map(tools.map((t) => [key(t.server, t.name), t]));
}

export function toolOf(map: ToolMap, server: string, tool: string): ToolInfo | undefined {
  return map.get(key(server, tool));
}

/**
 * The view (MCP Apps `ui://` URI) a call shows, from the moment the model starts writing it
 * (the view hears the arguments as they come; it hears the call's input only once the call
 * runs) unless the user denied the call; null when none.
 */
export function viewOf(map: ToolMap, trace: ToolTrace): string | null {
  if (trace.status === "denied") return null;
  return toolOf(map, trace.server, trace.tool)?.view.resource_uri ?? null;
}
