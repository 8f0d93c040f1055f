// What MCP itself speaks, as the backend passes it on: content parts, a tool's
// result, progress and log messages, icons, JSON Schema and log levels.

/** Mirrors `patchbay_core::llm::ContentPart` (tag `type`). */
export type ContentPart =
  | { type: "text"; text: string }
  | { type: "image"; mime_type: string; data: string }
  | { type: "audio"; mime_type: string; data: string }
  | { type: "resource_link"; uri: string; name: string | null; mime_type: string | null; server?: string };

export interface ToolProgress {
  progress: number;
  total: number | null;
  message: string | null;
}

export interface ToolLog {
  level: string;
  message: string;
}

/** The result of an MCP `tools/call`. */
export interface ToolResult {
  content: ContentPart[];
  structured_content: unknown;
  is_error: boolean;
}

/** An icon a server gives itself or a tool: a checked `data:` URL, for one theme or (null) both. */
export interface IconView {
  src: string;
  theme: "light" | "dark" | null;
}

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

/** An MCP log level, lowest first. */
export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical" | "alert" | "emergency";
export const LOG_LEVELS: LogLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];
