// The composer's model picker: a button that names the model, opening a menu to search and
// choose from every provider's models (a combobox: type to filter, arrows to move, Enter to
// choose, Esc to close). Radix Popover places it and closes it on a click outside.
import * as Popover from "@radix-ui/react-popover";
import { Check, ChevronDown } from "lucide-react";
import { useId, useMemo, useState, type KeyboardEvent } from "react";
import { useI18n } from "../../lib/i18n";
import type { ModelChoice } from "../../lib/models";

export interface ModelPickerProps {
  models: ModelChoice[];
  /** The conversation's own choice, or null for the assistant's or the default. */
  provider: string | null;
  model: string | null;
  /** What "default" means here, when known. */
  fallback: { provider: string; model: string } | null;
  onPick: (provider: string | null, model: string | null) => void;
}

interface Choice {
  key: string;
  label: string;
  provider: string | null;
  model: string | null;
}

export function ModelPicker({ models, provider, model, fallback, onPick }: ModelPickerProps) {
  const { t } = useI18n();
  const [open, setOpen] = useState(false);
  const [query, setQuery] = useState("");
  const [at, setAt] = useState(0);
  const listId = useId();
  const defaultLabel = fallback ? t("composer.defaultModelIs", { model: `${fallback.provider} / ${fallback.model}` }) : t("composer.defaultModel");
  const choices: Choice[] = useMemo(
    () => [
      { key: "", label: defaultLabel, provider: null, model: null },
      ...models.map((m) => ({ key: `${m.provider}\u0000${m.model}`, label: `${m.provider} / ${m.model}`, provider: m.provider, model: m.model })),
    ],
    [models, defaultLabel],
  );
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const shown = choices.filter((c) => words.every((w) => c.label.toLowerCase().includes(w)));
  const chosenKey = provider && model ? `${provider}\u0000${model}` : "";
  const chosen = choices.find((c) => c.key === chosenKey) ?? choices[0]!;
  const pick = (c: Choice) => {
    onPick(c.provider, c.model);
    setOpen(false);
  };
  const onKey = (e: KeyboardEvent<HTMLInputElement>) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const step = e.key === "ArrowDown" ? 1 : -1;
      setAt((i) => (shown.length === 0 ? 0 : (i + step + shown.length) % shown.length));
    } else if (e.key === "Enter") {
      e.preventDefault();
      const c = shown[Math.min(at, shown.length - 1)];
      if (c) pick(c);
    }
  };
  const optionId = (i: number) => `${listId}-${i}`;
  return (
    <Popover.Root
      open={open}
      onOpenChange={(o) => {
        setOpen(o);
        setQuery("");
        setAt(Math.max(0, choices.indexOf(chosen)));
      }}
    >
      <Popover.Trigger asChild>
        <button
          type="button"
          id="model-picker"
          className="pill"
          // The name holds the visible text (what a voice user says), after what the button is for.
          aria-label={`${t("composer.model")}: ${chosen.label}`}
          aria-haspopup="dialog"
          title={chosen.label}
        >
          <span className="pill-text">{chosen.label}</span>
          <ChevronDown size={14} aria-hidden="true" />
        </button>
      </Popover.Trigger>
      <Popover.Portal>
        <Popover.Content className="menu" side="top" align="start" sideOffset={6} aria-label={t("composer.model")}>
          <input
            className="menu-search"
            role="combobox"
            aria-label={t("composer.searchModels")}
            aria-expanded="true"
            aria-controls={listId}
            aria-activedescendant={shown.length > 0 ? optionId(Math.min(at, shown.length - 1)) : undefined}
            placeholder={t("composer.searchModels")}
            value={query}
            onChange={(e) => {
              setQuery(e.target.value);
              setAt(0);
            }}
            onKeyDown={onKey}
          />
          <ul className="menu-list" role="listbox" id={listId} aria-label={t("composer.model")}>
            {shown.map((c, i) => (
              <li
                key={c.key}
                id={optionId(i)}
                role="option"
                aria-selected={c.key === chosen.key}
                className={i === Math.min(at, shown.length - 1) ? "menu-item active" : "menu-item"}
                onMouseMove={() => setAt(i)}
                onClick={() => pick(c)}
              >
                <Check size={14} aria-hidden="true" className="menu-check" />
                {c.label}
              </li>
            ))}
          </ul>
          {shown.length === 0 && <p className="muted small menu-empty">{t("composer.noModels")}</p>}
        </Popover.Content>
      </Popover.Portal>
    </Popover.Root>
  );
}
