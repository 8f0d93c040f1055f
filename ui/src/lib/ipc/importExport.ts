// Importing servers from another client's config (a preview, then applying
// it) and exporting them in its shape.
import { call } from "./client";
import type { ImportPreviewView, ImportReport } from "./generated";

export type {
  DiffLine,
  ImportEntry,
  ImportInput,
  ImportPreviewView as ImportPreview,
  ImportReport,
  SecretNote as ImportSecret,
} from "./generated";

/** What an imported server's entry is to the stored one (`ImportEntry.status`). */
export type ImportStatus = "new" | "changed" | "unchanged" | "conflict";

/** The shapes `export_config` writes (its `format`). */
export type ExportFormat = "claude_desktop" | "vscode" | "cursor" | "zed" | "opencode" | "patchbay";

export const importExportIpc = {
  importPreview: (text: string) => call<ImportPreviewView>("import_preview", { text }),
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
