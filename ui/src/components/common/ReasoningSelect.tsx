// The reasoning-effort menu of the composer and the assistant editor: the
// model's (or assistant's) default, off, or low / medium / high. Each place
// words its choices in its own catalogue keys (`composer.reasoning…`,
// `assistants.reasoning…`).
import { useI18n } from "../../lib/i18n";
import type { ReasoningEffort } from "../../lib/ipc";

const CHOICES = [
  ["", "Default"],
  ["off", "Off"],
  ["low", "Low"],
  ["medium", "Medium"],
  ["high", "High"],
] as const;

export function ReasoningSelect({
  id,
  value,
  onChange,
  scope,
  ariaLabel,
}: {
  id: string;
  value: ReasoningEffort | null;
  onChange: (effort: ReasoningEffort | null) => void;
  /** Whose words the choices take. */
  scope: "composer" | "assistants";
  ariaLabel?: string;
}) {
  const { t } = useI18n();
  return (
    <select
      id={id}
      aria-label={ariaLabel}
      value={value ?? ""}
      onChange={(e) => onChange(e.target.value === "" ? null : (e.target.value as ReasoningEffort))}
    >
      {CHOICES.map(([effort, word]) => (
        <option key={effort} value={effort}>
          {t(`${scope}.reasoning${word}`)}
        </option>
      ))}
    </select>
  );
}
