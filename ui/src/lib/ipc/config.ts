// Mirrors of `patchbay_core::config`: a provider's profile, an MCP server's
// settings (transport, timeouts, approval, sign-in) and its security policy.

/** Mirrors `patchbay_core::config::ValueSource`: `{"plain": "..."}` or `{"secret": "name"}`. */
export type ValueSource = { plain: string } | { secret: string };

/** Mirrors `patchbay_core::config::ProviderKind`. */
export type ProviderKind = "openai" | "anthropic" | "gemini";

/** Mirrors `patchbay_core::config::ProviderProfile`. */
export interface ProviderProfile {
  name: string;
  kind: ProviderKind;
  base_url: string;
  default_model: string;
  models: string[];
  headers: Record<string, ValueSource>;
  /** Name of the secret holding the key, never the key. */
  api_key: string | null;
  native_tools: boolean;
  context_window: number | null;
  thinking: ThinkingParam;
}

/** The field an OpenAI-compatible server reads to think or not; `auto` is chosen from the base URL. */
export type ThinkingParam = "auto" | "reasoning_effort" | "thinking_type" | "enable_thinking" | "chat_template";

/** Mirrors `patchbay_core::config::ApprovalMode`. */
export type ApprovalMode = "ask" | "allow" | "deny";

/** Mirrors `patchbay_core::config::Timeouts`. */
export interface Timeouts {
  startup_secs: number;
  call_secs: number;
}

/** Mirrors `patchbay_core::config::TransportConfig` (tag `type`). */
export type TransportConfig =
  | {
      type: "stdio";
      command: string;
      args: string[];
      env: Record<string, ValueSource>;
      cwd: string | null;
    }
  | { type: "streamable_http" | "sse" | "auto"; url: string; headers: Record<string, ValueSource> };

export type TransportType = TransportConfig["type"];

/** Mirrors `patchbay_core::config::JwtAlgorithm`. */
export type JwtAlgorithm = "ES256" | "ES384" | "RS256" | "RS384" | "RS512";

/** Mirrors `patchbay_core::config::ClientKey` (tag `method`); the material is a keyring reference. */
export type ClientKey =
  | { method: "secret"; secret: ValueSource }
  | { method: "private_key"; pem: ValueSource; algorithm: JwtAlgorithm };

/** Mirrors `patchbay_core::config::ClientCredentials`: the OAuth client-credentials grant of a remote server. */
export interface ClientCredentials {
  client_id: string;
  key: ClientKey;
  scopes: string[];
}

/** Mirrors `patchbay_core::config::McpServerConfig`. */
export interface McpServerConfig {
  name: string;
  transport: TransportConfig;
  enabled: boolean;
  timeouts: Timeouts;
  approval: ApprovalMode;
  tool_approval: Record<string, ApprovalMode>;
  disabled_tools: string[];
  /** Whether the server sees the shared roots (knowledge-base and shared folders). */
  share_roots: boolean;
  /** Whether tools that say they only read (`readOnlyHint`) run without asking; off by default. */
  read_only_auto_allow: boolean;
  /** Sign-in without a browser (remote servers); absent: the server's own OAuth sign-in when it asks. */
  client_credentials?: ClientCredentials | null;
  /** Its security policy (absent: the global default, derived from its arguments). */
  policy?: Policy;
  extra: Record<string, unknown>;
}

/** Mirrors `patchbay_core::config::SecurityLevel`. */
export type SecurityLevel = "strict" | "normal" | "permissive";

/** Mirrors `patchbay_core::config::Network`. */
export type Network = "off" | "any" | { domains: string[] };

/** Mirrors `patchbay_core::config::RateLimits`: calls per minute, absent for no limit. */
export interface RateLimits {
  per_tool_per_min?: number;
  per_server_per_min?: number;
}

/**
 * Mirrors `patchbay_core::config::PolicyOutline`: a server's policy in the parts of its one-line
 * summary, which the window words in its language (`policyLine`). Paths are as the user writes them (`~/Projects`).
 */
export type PolicyOutline =
  | { kind: "local"; level: SecurityLevel; read: string[]; write: string[]; network: Network; rate: RateLimits }
  | { kind: "in_process" }
  | { kind: "remote"; rate: RateLimits };

/** Mirrors `patchbay_core::config::Policy`. */
export interface Policy {
  /** Absent: the global default level. */
  level?: SecurityLevel;
  read?: string[];
  write?: string[];
  /** Absent: the level's (off at strict, any otherwise). */
  network?: Network;
  env?: string[];
  rate?: RateLimits;
}

/** Mirrors `patchbay_core::config::PolicyDefaults`. */
export interface PolicyDefaults {
  level: SecurityLevel;
  turn_tool_calls: number;
}
