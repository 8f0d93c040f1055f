// Security policy: the defaults, the line a server's policy reads as, and the
// hosts a sandboxed server's proxy refused.
import { call, on } from "./client";
import type { ConnectionBlocked, McpServerConfig, PolicyDefaults, PolicyPreview, PolicySettings } from "./generated";

export type { ConnectionBlocked, FieldProblem, PolicyPreview, PolicySettings } from "./generated";

export const policyIpc = {
  /** The policy line of a server as edited, and what saving it would refuse. */
  policyPreview: (config: McpServerConfig) => call<PolicyPreview>("policy_preview", { config }),
  /** Lets a server reach a host its proxy refused (added to its allowed domains); the server restarts. */
  allowDomain: (server: string, host: string) => call<void>("allow_domain", { server, host }),
  policySettings: () => call<PolicySettings>("policy_settings"),
  setPolicyDefaults: (defaults: PolicyDefaults) => call<void>("set_policy_defaults", { defaults }),
  onConnectionBlocked: (h: (b: ConnectionBlocked) => void) => on<ConnectionBlocked>("connection_blocked", h),
};
