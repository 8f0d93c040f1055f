// The configuration the window edits: a provider's profile, an MCP server's
// settings (transport, timeouts, approval, sign-in) and its security policy.
// The types are generated from `patchbay_core::config` (generated.ts).
import type { TransportConfig } from "./generated";

export type {
  ApprovalMode,
  ClientCredentials,
  ClientKey,
  JwtAlgorithm,
  McpServerConfig,
  Network,
  Policy,
  PolicyDefaults,
  PolicyOutline,
  PromptToolFormat,
  ProviderKind,
  ProviderProfile,
  RateLimits,
  SecurityLevel,
  ThinkingParam,
  Timeouts,
  TransportConfig,
  ValueSource,
} from "./generated";

export type TransportType = TransportConfig["type"];
