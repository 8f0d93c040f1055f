// Tabs and their panel, on Radix Tabs: one tab in the Tab order (the selected one); arrow
// keys, Home and End move between tabs and select them. Only the selected tab's panel is
// drawn (the callers' pages load their data when shown).
import type { ReactNode } from "react";
import * as Radix from "@radix-ui/react-tabs";

export interface TabsProps<T extends string> {
  tabs: { id: T; label: string }[];
  selected: T;
  onSelect: (id: T) => void;
  label: string;
  /** Gives the tabs and the panel stable ids (`<prefix>-tab-<id>`, `<prefix>-panel-<id>`). */
  idPrefix?: string;
  /** The selected tab's panel. */
  children: ReactNode;
}

export function Tabs<T extends string>({ tabs, selected, onSelect, label, idPrefix, children }: TabsProps<T>) {
  const ids = (id: T) => (idPrefix ? { tab: `${idPrefix}-tab-${id}`, panel: `${idPrefix}-panel-${id}` } : null);
  const shown = ids(selected);
  return (
    <Radix.Root value={selected} onValueChange={(v) => onSelect(v as T)}>
      <Radix.List aria-label={label} className="tabs">
        {tabs.map((t) => {
          const own = ids(t.id);
          return (
            // Radix selects on mouse down; a click alone (a screen reader's, a script's) selects too.
            <Radix.Trigger key={t.id} value={t.id} onClick={() => onSelect(t.id)} {...(own ? { id: own.tab, "aria-controls": own.panel } : {})}>
              {t.label}
            </Radix.Trigger>
          );
        })}
      </Radix.List>
      {/* Not a Tab stop of its own (Radix makes it one): every panel holds controls. */}
      <Radix.Content value={selected} className="tab-panel" tabIndex={-1} {...(shown ? { id: shown.panel, "aria-labelledby": shown.tab } : {})}>
        {children}
      </Radix.Content>
    </Radix.Root>
  );
}
