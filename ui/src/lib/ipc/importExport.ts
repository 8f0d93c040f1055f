// Importing servers from another client's config (a preview, then applying
// it) and exporting them in its shape.
import { call } from "./client";
import type { McpServerConfig } from "./config";

export type ImportStatus = "new" | "changed" | "unchanged" | "conflict";

export interface DiffLine {
  op: "same" | "add" | "remove";
  text: string;
}

export interface ImportEntry {
  name: string;
  status: ImportStatus;
  incoming: McpServerConfig;
  /** Pretty JSON diff of current → incoming, for `changed` and `conflict`. */
  diff: DiffLine[];
  /** Why it conflicts, e.g. a different transport under the same name. */
  detail: string | null;
  /** Every env variable and header whose value is a secret (`patchbay_core::config::SecretNote`). */
  secrets: ImportSecret[];
}

/** A secret an imported server uses: `field` (`env.TOKEN`, `headers.Authorization`) names the keyring entry `secret`. */
export type ImportSecret = { field: string; secret: string } & (
  | { state: "from_import" }
  | { state: "reference"; set: boolean }
  | { state: "prompt"; input: string; description: string | null; set: boolean }
);

export interface ImportPreview {
  /** Which format was recognised, e.g. `claude_desktop`, `vscode`. */
  format: string;
  entries: ImportEntry[];
  warnings: string[];
  /** VS Code `${input:…}` prompts: secrets the user can type in before applying. */
  inputs: ImportInput[];
  /** Stored servers that "replace all" would delete. */
  removed_on_replace: string[];
  /** Provider profiles (Patchbay's form) that applying creates or replaces. */
  providers: string[];
}

export interface ImportInput {
  id: string;
  description: string | null;
  /** The servers that use it. */
  servers: string[];
  /** Whether the keyring already holds a value. */
  set: boolean;
}

export interface ImportReport {
  added: string[];
  updated: string[];
  skipped: string[];
  /** Deleted by "replace all". */
  removed: string[];
  /** Secrets the imported servers need that are still not set. */
  secrets_not_set: string[];
}

export type ExportFormat = "claude_desktop" | "vscode" | "cursor" | "zed" | "opencode" | "patchbay";

export const importExportIpc = {
  importPreview: (text: string) => call<ImportPreview>("import_preview", { text }),
  importApply: (
    text: string,
    accept: string[],
    replace: boolean,
    answers: Record<string, string>,
    secretFields: Record<string, string[]>,
  ) => call<ImportReport>("import_apply", { text, accept, replace, answers, secret_fields: secretFields }),
  exportConfig: (format: ExportFormat, includeSecrets: boolean) =>
    call<string | null>("export_config", { format, include_secrets: includeSecrets }),
};
