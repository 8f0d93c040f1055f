// The one typed client for the Tauri backend. Every command the UI calls is
// declared here with its argument and result types; components never call
// `invoke` with a string of their own.
import { invoke } from "@tauri-apps/api/core";

/** Mirrors `patchbay_core::secrets::KeyringStatus`. */
export interface KeyringStatus {
  available: boolean;
  detail: string;
}

/** Mirrors `patchbay_core::AppInfo`. */
export interface AppInfo {
  version: string;
  data_dir: string;
  database: string;
  schema_version: number;
  keyring: KeyringStatus;
}

/** Mirrors `patchbay_desktop::IpcError`: every backend failure keeps its kind. */
export interface IpcError {
  kind: IpcErrorKind;
  message: string;
}

export type IpcErrorKind = "data_dir" | "database" | "keyring" | "invalid_input" | "not_found" | "internal";

export function isIpcError(value: unknown): value is IpcError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as IpcError).kind === "string" &&
    typeof (value as IpcError).message === "string"
  );
}

/** Turns anything a command rejected with into an IpcError. */
export function toIpcError(value: unknown): IpcError {
  if (isIpcError(value)) return value;
  return { kind: "internal", message: value instanceof Error ? value.message : String(value) };
}

async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw toIpcError(e);
  }
}

export const ipc = {
  ping: () => call<string>("ping"),
  appInfo: () => call<AppInfo>("app_info"),
};

export type Ipc = typeof ipc;
