// The one typed client for the Tauri backend. Every command the UI calls is
// declared in this folder with its argument and result types, one module an
// area; components never call `invoke` with a string of their own (only
// `client.ts` calls it). The contract is documented for the backend in
// ui/IPC.md: field names are snake_case, as serde emits them. The shapes are
// generated from the Rust types (`generated.ts`, never edited by hand).
//
// Floors: `generated.ts` and `client.ts` at the bottom; `mcp.ts` and `config.ts`
// (shapes the areas share) above them; then the areas, which import only those floors and
// the shapes of other areas, never their commands; this file joins them.
import { appIpc } from "./app";
import { assistantsIpc } from "./assistants";
import { bundlesIpc } from "./bundles";
import { chatIpc } from "./chat";
import { contentIpc } from "./content";
import { importExportIpc } from "./importExport";
import { knowledgeIpc } from "./knowledge";
import { policyIpc } from "./policy";
import { providersIpc } from "./providers";
import { registryIpc } from "./registry";
import { schedulesIpc } from "./schedules";
import { serversIpc } from "./servers";
import { settingsIpc } from "./settings";
import { viewsIpc } from "./views";

export { isIpcError, toIpcError, windowLabel, type IpcError, type IpcErrorKind } from "./client";
export { LOG_LEVELS } from "./mcp";
export type * from "./mcp";
export type * from "./config";
export type * from "./app";
export type * from "./assistants";
export type * from "./bundles";
export type * from "./chat";
export type * from "./content";
export type * from "./importExport";
export type * from "./knowledge";
export type * from "./policy";
export type * from "./providers";
export type * from "./registry";
export type * from "./schedules";
export type * from "./servers";
export type * from "./settings";
export type * from "./views";

export const ipc = {
  ...appIpc,
  ...chatIpc,
  ...contentIpc,
  ...providersIpc,
  ...serversIpc,
  ...policyIpc,
  ...registryIpc,
  ...bundlesIpc,
  ...viewsIpc,
  ...importExportIpc,
  ...knowledgeIpc,
  ...assistantsIpc,
  ...settingsIpc,
  ...schedulesIpc,
};

export type Ipc = typeof ipc;

/** What the composer and a server's page read of servers' prompts and resources. */
export type McpContentIpc = Pick<
  Ipc,
  "listPrompts" | "getPrompt" | "listResources" | "listResourceTemplates" | "expandResourceTemplate" | "completeArgument"
>;
