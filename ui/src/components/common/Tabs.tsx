// An accessible tab list: one tab in the Tab order (the selected one), arrow
// keys, Home and End move between tabs and select them.
import type { KeyboardEvent } from "react";

export interface TabsProps<T extends string> {
  tabs: { id: T; label: string }[];
  selected: T;
  onSelect: (id: T) => void;
  label: string;
  idPrefix?: string;
}

export function Tabs<T extends string>({ tabs, selected, onSelect, label, idPrefix }: TabsProps<T>) {
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const at = tabs.findIndex((t) => t.id === selected);
    const next =
      e.key === "ArrowRight" ? (at + 1) % tabs.length
      : e.key === "ArrowLeft" ? (at - 1 + tabs.length) % tabs.length
      : e.key === "Home" ? 0
      : e.key === "End" ? tabs.length - 1
      : null;
    const tab = next === null ? undefined : tabs[next];
    if (!tab) return;
    e.preventDefault();
    onSelect(tab.id);
    const el = e.currentTarget.querySelectorAll<HTMLButtonElement>('[role="tab"]')[next as number];
    el?.focus();
  };
  return (
    <div role="tablist" aria-label={label} className="tabs" onKeyDown={onKeyDown}>
      {tabs.map((t) => (
        <button
          key={t.id}
          type="button"
          role="tab"
          id={idPrefix ? `${idPrefix}-tab-${t.id}` : undefined}
          aria-controls={idPrefix ? `${idPrefix}-panel-${t.id}` : undefined}
          aria-selected={t.id === selected}
          tabIndex={t.id === selected ? 0 : -1}
          onClick={() => onSelect(t.id)}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}
