// The tools' icons by server and tool name, for the trace cards deep in the
// message list: the chat page provides them from its tool list.
import { createContext } from "react";
import type { IconView, ToolInfo } from "./ipc";

export type ToolIconMap = ReadonlyMap<string, IconView[]>;

const key = (server: string, tool: string) => `${server}\u0000${tool}`;

export const ToolIcons = createContext<ToolIconMap>(new Map());

export function toolIconMap(tools: ToolInfo[]): ToolIconMap {
  return new Map(tools.filter((t) => t.icons.length > 0).map((t) => [key(t.server, t.name), t.icons]));
}

export function iconsOf(map: ToolIconMap, server: string, tool: string): IconView[] {
  return map.get(key(server, tool)) ?? [];
}
