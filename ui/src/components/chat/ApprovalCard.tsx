// Asks the user whether a tool call may run, showing its arguments in full.
import { useI18n } from "../../lib/i18n";
import type { ApprovalDecision, ToolTrace } from "../../lib/ipc";
import { pretty } from "./ToolResultView";

export function ApprovalCard({ trace, onDecide }: { trace: ToolTrace; onDecide: (d: ApprovalDecision) => void }) {
  const { t } = useI18n();
  return (
    <div className="approval-card" role="group" aria-label={t("approval.title")} data-testid="approval-card">
      <p>{t("approval.question", { server: trace.server, tool: trace.tool })}</p>
      <pre className="json" data-testid="approval-args">
        {pretty(trace.arguments)}
      </pre>
      <div className="row">
        <button type="button" className="primary" data-testid="approve-once" onClick={() => onDecide("allow_once")}>
          {t("approval.once")}
        </button>
        <button type="button" data-testid="approve-conversation" onClick={() => onDecide("allow_conversation")}>
          {t("approval.conversation")}
        </button>
        <button type="button" data-testid="approve-always" onClick={() => onDecide("allow_always")}>
          {t("approval.always")}
        </button>
        <button type="button" className="danger" data-testid="approve-deny" onClick={() => onDecide("deny")}>
          {t("approval.deny")}
        </button>
      </div>
    </div>
  );
}
