// What a server says a tool does (its annotations), as small badges; a
// destructive one stands out. Hints from the server, not guarantees.
import { useI18n } from "../../lib/i18n";
import type { ToolHint } from "../../lib/ipc";

export function ToolHints({ hints }: { hints: string[] }) {
  const { t } = useI18n();
  return (
    <>
      {(hints as ToolHint[]).map((h) => (
        <span key={h} className={`badge hint hint-${h}`} data-hint={h}>
          {t(`hint.${h}`)}
        </span>
      ))}
    </>
  );
}
