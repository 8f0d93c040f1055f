// The servers' prompts, resources and resource templates, as the composer and
// a server's page read them, with the suggestions a server makes for an argument.
import { call, cancellable, on } from "./client";
import type {
  CompletionTarget,
  CompletionView,
  PromptInfo,
  ResourceInfo,
  ResourcePreview,
  ResourceTemplateInfo,
  ResourceUpdated,
} from "./generated";

export type {
  CompletionTarget,
  CompletionView,
  PromptArgument,
  PromptInfo,
  ResourceInfo,
  ResourcePreview,
  ResourceTemplateInfo,
  ResourceUpdated,
} from "./generated";

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
