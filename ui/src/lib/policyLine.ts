// A server's security policy in one line, worded here from the parts the core
// sends (`PolicyOutline`), so that it reads in the window's language. In English
// it is the core's own line (`PolicyOutline`'s Display, which the CLI prints).
import type { MessageKey } from "./i18n";
import type { Network, PolicyOutline, RateLimits } from "./ipc";

type Translate = (key: MessageKey, vars?: Record<string, string | number>) => string;

/** The rate limits, or null without any. */
function rateLine(t: Translate, rate: RateLimits): string | null {
  const { per_server_per_min: server, per_tool_per_min: tool } = rate;
  if (server != null && tool != null) return t("policyLine.rateBoth", { server, tool });
  if (server != null) return t("policyLine.rateServer", { server });
  if (tool != null) return t("policyLine.rateTool", { tool });
  return null;
}

function networkLine(t: Translate, network: Network, list: (items: string[]) => string): string {
  if (network === "off") return t("policyLine.networkOff");
  if (network === "any") return t("policyLine.networkAny");
  return list(network.domains);
}

/** The policy in one line: "normal: reads home (not its secrets) · writes ~/Projects · network: any · 30 calls/min". */
export function policyLine(t: Translate, outline: PolicyOutline): string {
  if (outline.kind === "in_process") return t("policyLine.inProcess");
  if (outline.kind === "remote") return t("policyLine.remote", { rate: rateLine(t, outline.rate) ?? t("policyLine.noRate") });
  if (outline.level === "permissive") return t("policyLine.permissive");
  const list = (items: string[]) => items.join(t("policyLine.listSeparator"));
  const { level, read, write } = outline;
  let reads: string;
  if (level === "normal") reads = read.length ? t("policyLine.readsHomeAnd", { paths: list(read) }) : t("policyLine.readsHome");
  else reads = read.length ? list(read) : t("policyLine.readsOwn");
  const line = t("policyLine.local", {
    level: t(`policyLine.level.${level}`),
    reads,
    writes: write.length ? list(write) : t("policyLine.writesNothing"),
    network: networkLine(t, outline.network, list),
  });
  const rate = rateLine(t, outline.rate);
  return rate === null ? line : t("policyLine.withRate", { line, rate });
}
