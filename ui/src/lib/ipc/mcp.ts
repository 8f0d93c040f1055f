// What MCP itself speaks, as the backend passes it on: content parts, a tool's
// result, progress and log messages, icons (generated.ts), and what the window
// reads of a JSON Schema and the log levels in order.
import type { LogLevel } from "./generated";

export type {
  ContentPart,
  IconView,
  JsonValue,
  LogView as ToolLog,
  ProgressView as ToolProgress,
  ToolResultView as ToolResult,
} from "./generated";
export type { LogLevel };

/** A JSON Schema, as much of it as the generated forms understand. */
export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  items?: JsonSchema;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  format?: string;
  /** Labels of `enum`'s values, in order (the older way to title choices). */
  enumNames?: string[];
  /** Titled choices: `{const, title}` each (single choice as `oneOf`, an array's items as `anyOf`). */
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  const?: unknown;
}

/** The MCP log levels, lowest first. */
export const LOG_LEVELS: LogLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
