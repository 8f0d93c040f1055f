// The servers' prompts, resources and resource templates, as the composer and
// a server's page read them, with the suggestions a server makes for an argument.
import { call, cancellable, on } from "./client";
import type { IconView } from "./mcp";

export interface PromptArgument {
  name: string;
  /** The name to show, when the server gives one. */
  title: string | null;
  description: string | null;
  required: boolean;
}

export interface PromptInfo {
  server: string;
  name: string;
  /** The name to show, when the server gives one. */
  title: string | null;
  description: string | null;
  arguments: PromptArgument[];
  icons: IconView[];
}

export interface ResourceInfo {
  server: string;
  uri: string;
  name: string;
  /** The name to show, when the server gives one. */
  title: string | null;
  mime_type: string | null;
  /** The server reports changes to those who watch it. */
  watchable: boolean;
  watched: boolean;
  icons: IconView[];
}

/** A watched resource changed. */
export interface ResourceUpdated {
  server: string;
  uri: string;
}

/** A resource template: its variables fill in `uri_template` to name a resource. */
export interface ResourceTemplateInfo {
  server: string;
  uri_template: string;
  name: string;
  description: string | null;
  mime_type: string | null;
  variables: string[];
  icons: IconView[];
}

/** What an argument to complete belongs to. */
export type CompletionTarget = { type: "prompt"; name: string } | { type: "resource_template"; uri_template: string };

/** One part of a resource as the server's page shows it (bounded like a tool result's UI copy). */
export interface ResourcePreview {
  uri: string;
  mime_type: string | null;
  text: string | null;
  /** An image or audio part, base64, when it fits. */
  blob: string | null;
  size: number;
  truncated: boolean;
}

/** A server's suggestions for one argument. */
export interface CompletionView {
  values: string[];
  total: number | null;
  has_more: boolean;
}

export const contentIpc = {
  listPrompts: () => call<PromptInfo[]>("list_prompts"),
  getPrompt: (server: string, name: string, args: Record<string, string>, signal?: AbortSignal) =>
    cancellable<string>("get_prompt", { server, name, arguments: args }, signal),
  listResources: () => call<ResourceInfo[]>("list_resources"),
  listResourceTemplates: () => call<ResourceTemplateInfo[]>("list_resource_templates"),
  readResource: (server: string, uri: string, signal?: AbortSignal) =>
    cancellable<ResourcePreview[]>("read_resource", { server, uri }, signal),
  /** Watches a resource (its changes arrive through `onResourceUpdated`) or stops watching it. */
  watchResource: (server: string, uri: string, watch: boolean) => call<void>("watch_resource", { server, uri, watch }),
  expandResourceTemplate: (uriTemplate: string, values: Record<string, string>) =>
    call<string>("expand_resource_template", { uri_template: uriTemplate, values }),
  completeArgument: (
    server: string,
    target: CompletionTarget,
    argument: string,
    value: string,
    context: Record<string, string>,
    signal?: AbortSignal,
  ) => cancellable<CompletionView>("complete_argument", { server, target, argument, value, context }, signal),
  onResourceUpdated: (h: (r: ResourceUpdated) => void) => on<ResourceUpdated>("resource_updated", h),
};
