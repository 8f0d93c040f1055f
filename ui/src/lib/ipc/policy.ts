// Security policy: the defaults, the line a server's policy reads as, and the
// hosts a sandboxed server's proxy refused.
import { call, on } from "./client";
import type { McpServerConfig, PolicyDefaults, PolicyOutline, SecurityLevel } from "./config";

/** Mirrors `patchbay_core::app::views::PolicySettings`: the defaults and the levels this system can enforce. */
export interface PolicySettings {
  defaults: PolicyDefaults;
  offered: SecurityLevel[];
}

/** A form field and what is wrong with it (`policy.network.domains[1]`, …). */
export interface FieldProblem {
  field: string;
  reason: string;
}

/** Mirrors `patchbay_core::app::views::PolicyPreview`: the line the server's page will show, and what saving refuses. */
export interface PolicyPreview {
  summary: PolicyOutline;
  problems: FieldProblem[];
}

/** A sandboxed server's filtering proxy refused a host (`connection_blocked` event). */
export interface ConnectionBlocked {
  server: string;
  host: string;
}

export const policyIpc = {
  /** The policy line of a server as edited, and what saving it would refuse. */
  policyPreview: (config: McpServerConfig) => call<PolicyPreview>("policy_preview", { config }),
  /** Lets a server reach a host its proxy refused (added to its allowed domains); the server restarts. */
  allowDomain: (server: string, host: string) => call<void>("allow_domain", { server, host }),
  policySettings: () => call<PolicySettings>("policy_settings"),
  setPolicyDefaults: (defaults: PolicyDefaults) => call<void>("set_policy_defaults", { defaults }),
  onConnectionBlocked: (h: (b: ConnectionBlocked) => void) => on<ConnectionBlocked>("connection_blocked", h),
};
