// The bottom floor of the typed client: the one place that calls `invoke`,
// listens for events and opens channels, and the typed error every command
// rejects with. The area modules above it declare the commands.
import { Channel, invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";

import type { ErrorKind, IpcError } from "./generated";

export type { IpcError };
/** What kind of failure an `IpcError` is (`patchbay_core::app::ErrorKind`). */
export type IpcErrorKind = ErrorKind;

const KINDS: readonly IpcErrorKind[] = [
  "data_dir",
  "database",
  "keyring",
  "invalid_input",
  "not_found",
  "internal",
  "provider",
  "mcp",
  "cancelled",
  "timeout",
  "limit",
  "knowledge",
];

export function isIpcError(value: unknown): value is IpcError {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as IpcError).kind === "string" &&
    typeof (value as IpcError).message === "string"
  );
}

/** Turns anything a command rejected with into an IpcError of a known kind. */
export function toIpcError(value: unknown): IpcError {
  if (isIpcError(value)) {
    return KINDS.includes(value.kind) ? value : { kind: "internal", message: value.message };
  }
  return { kind: "internal", message: value instanceof Error ? value.message : String(value) };
}

export async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw toIpcError(e);
  }
}

/**
 * A command the caller can call off with `signal`: it runs under a request id
 * that `cancel_request` cancels; the command then fails with kind "cancelled".
 */
export async function cancellable<T>(command: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<T> {
  if (!(signal instanceof AbortSignal)) return call<T>(command, args);
  if (signal.aborted) throw { kind: "cancelled", message: "Cancelled." } satisfies IpcError;
  const request = crypto.randomUUID();
  const abort = () => void invoke("cancel_request", { request }).catch(() => undefined);
  signal.addEventListener("abort", abort, { once: true });
  try {
    return await call<T>(command, { ...args, request });
  } finally {
    signal.removeEventListener("abort", abort);
  }
}

export function channel<T>(onEvent: (e: T) => void): Channel<T> {
  return new Channel<T>(onEvent);
}

export async function on<T>(event: string, handler: (payload: T) => void): Promise<UnlistenFn> {
  return listen<T>(event, (e) => handler(e.payload));
}

/** This window's label (`main`, `quick-ask`); `null` outside the app (tests, a browser). */
export function windowLabel(): string | null {
  const internals = (window as { __TAURI_INTERNALS__?: { metadata?: { currentWindow?: { label?: string } } } }).__TAURI_INTERNALS__;
  return internals?.metadata?.currentWindow?.label ?? null;
}
