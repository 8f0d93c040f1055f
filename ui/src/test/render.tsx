// Test helpers: render inside the English catalogue and the tooltips' provider, and fixtures.
import { render } from "@testing-library/react";
import type { ReactElement } from "react";
import { TooltipProvider } from "../components/common/IconButton";
import { blankServer } from "../components/settings/servers/ServerEditor";
import { I18nProvider, type Lang } from "../lib/i18n";
import type { BundleInfo, Message, MessageView, ProviderView, ServerState, ServerView, ToolInfo, ToolTrace } from "../lib/ipc";

export function renderIn(ui: ReactElement, lang: Lang = "en") {
  // A wrapper (not an enclosing element) so that `rerender` keeps the providers mounted.
  return render(ui, {
    wrapper: ({ children }) => (
      <I18nProvider lang={lang}>
        <TooltipProvider>{children}</TooltipProvider>
      </I18nProvider>
    ),
  });
}

export function message(id: string, role: "user" | "assistant", text: string, extra: Partial<Message> = {}): Message & MessageView {
  // As the backend sends it, unless `extra` gives a tool call the window's own `writing` status.
  return {
    id,
    parent_id: null,
    role,
    created_at: 0,
    text,
    reasoning: null,
    parts: [],
    tool_calls: [],
    citations: [],
    unavailable: [],
    model: role === "assistant" ? "gpt-test" : null,
    siblings: [id],
    error: null,
    ...extra,
  } as Message & MessageView;
}

export function trace(extra: Partial<ToolTrace> = {}): ToolTrace {
  return {
    call_id: "c1",
    server: "files",
    tool: "read_file",
    arguments: { path: "/tmp/a.txt" },
    status: "running",
    duration_ms: null,
    progress: null,
    result: null,
    error: null,
    stderr_tail: null,
    logs: [],
    ...extra,
  };
}

/** A bundle as the installer shows it: unsigned, no settings; `extra` replaces fields. */
export function bundleInfo(extra: Partial<BundleInfo> = {}): BundleInfo {
  return {
    name: "notes",
    server_name: "notes",
    title: "Notes",
    version: "1.0.0",
    description: "",
    long_description: null,
    author: "Ada",
    homepage: null,
    icon: null,
    kind: "node",
    runtime: null,
    tools: [],
    tools_generated: false,
    prompts: [],
    settings: [],
    installed_version: null,
    signature: { status: "unsigned" },
    installed_signature: null,
    signer_changed: false,
    preview_id: "preview-1",
    ...extra,
  };
}

export function toolInfo(server: string, name: string, extra: Partial<ToolInfo> = {}): ToolInfo {
  return { server, name, title: null, description: "", input_schema: { type: "object" }, enabled: true, pinned: false, approval: "ask", schema_tokens: 0, stats: null, icons: [], hints: [], view: { resource_uri: null, for_model: true, for_app: true }, ...extra };
}

/** A stdio server `name` in `state` (with `error` when it failed). */
export function serverView(name: string, state: ServerState, error: string | null = null): ServerView {
  return {
    config: { ...blankServer(), name, transport: { type: "stdio", command: "npx", args: ["-y", name], env: {}, cwd: null } },
    status: { server: name, state, tool_count: 0, error },
    about: null,
    bundle: false,
    instructions: null,
    log_level: null,
    icons: [],
    policy: { kind: "local", level: "normal", read: [], write: [], network: "any", rate: {} },
    blocked: [],
    health: null,
  };
}

export function providerView(name: string): ProviderView {
  return {
    profile: {
      name,
      kind: "openai",
      base_url: "https://api.example.com/v1",
      default_model: `${name}-chat`,
      models: [],
      headers: {},
      api_key: `provider/${name}/api_key`,
      native_tools: true,
      prompt_tool_format: "function_call",
      context_window: null,
      listed_windows: {},
      thinking: "auto",
    },
    api_key_set: true,
    windows: {},
    max_tools: null,
  };
}

/**
 * A cancellable ipc command's fake that answers only when called off, as the
 * backend does then: with kind "cancelled". It reads the signal from its arguments.
 */
export function untilCancelled(...args: unknown[]): Promise<never> {
  const signal = args.find((a): a is AbortSignal => a instanceof AbortSignal);
  return new Promise((_, reject) => signal?.addEventListener("abort", () => reject({ kind: "cancelled", message: "Cancelled." })));
}

/** The signal the last call of a cancellable fake was given. */
export function signalOf(fake: { mock: { calls: unknown[][] } }): AbortSignal {
  const calls = fake.mock.calls;
  const signal = calls[calls.length - 1]?.find((a): a is AbortSignal => a instanceof AbortSignal);
  if (!signal) throw new Error("the call was given no signal");
  return signal;
}
