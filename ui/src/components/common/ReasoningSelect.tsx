// The assistant editor's reasoning effort: the model's default, off, or low / medium / high.
// The composer words the same choices its own way, in a menu (chat/ComposerMenus.tsx).
import { useI18n } from "../../lib/i18n";
import type { ReasoningEffort } from "../../lib/ipc";

/** Each effort (the default is "") and the word its catalogue keys end in. */
export const REASONING_CHOICES = [
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
}: {
  id: string;
  value: ReasoningEffort | null;
  onChange: (effort: ReasoningEffort | null) => void;
}) {
  const { t } = useI18n();
  return (
    <select
      id={id}
      value={value ?? ""}
      onChange={(e) => onChange(e.target.value === "" ? null : (e.target.value as ReasoningEffort))}
    >
      {REASONING_CHOICES.map(([effort, word]) => (
        <option key={effort} value={effort}>
          {t(`assistants.reasoning${word}`)}
        </option>
      ))}
    </select>
  );
}
