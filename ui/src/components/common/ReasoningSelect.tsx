// The reasoning-effort menu of the composer and the assistant editor: the
// model's (or assistant's) default, off, or low / medium / high.
import type { ReasoningEffort } from "../../lib/ipc";

const EFFORTS: ReasoningEffort[] = ["off", "low", "medium", "high"];

export function ReasoningSelect({
  id,
  value,
  onChange,
  labels,
  ariaLabel,
}: {
  id: string;
  value: ReasoningEffort | null;
  onChange: (effort: ReasoningEffort | null) => void;
  /** What each choice reads, `""` being the default. */
  labels: Record<"" | ReasoningEffort, string>;
  ariaLabel?: string;
}) {
  return (
    <select
      id={id}
      aria-label={ariaLabel}
      value={value ?? ""}
      onChange={(e) => onChange(e.target.value === "" ? null : (e.target.value as ReasoningEffort))}
    >
      {(["", ...EFFORTS] as const).map((effort) => (
        <option key={effort} value={effort}>
          {labels[effort]}
        </option>
      ))}
    </select>
  );
}
