// A button that shows an icon; its label is its accessible name and a tooltip that appears on
// hover and on keyboard focus (Radix Tooltip), with the shortcut when it has one. One
// TooltipProvider at the root serves every button (a long conversation has thousands).
import * as Tooltip from "@radix-ui/react-tooltip";
import type { LucideIcon } from "lucide-react";
import type { ButtonHTMLAttributes, ReactNode, Ref } from "react";

/**
 * Escapes that only closed a tooltip. Radix marks them taken (`defaultPrevented`); the page's
 * own Esc (the composer's stop) still acts on them.
 */
export const tooltipEscapes = new WeakSet<Event>();

export interface IconButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, "children" | "aria-label"> {
  icon: LucideIcon;
  label: string;
  /** Shown after the label in the tooltip, e.g. "Ctrl+N". */
  shortcut?: string;
  tone?: "danger";
  testId?: string;
  ref?: Ref<HTMLButtonElement>;
}

/** The tooltips' shared timing: the first waits, the next within 200 ms shows at once. */
export function TooltipProvider({ children }: { children: ReactNode }) {
  return (
    <Tooltip.Provider delayDuration={400} skipDelayDuration={200}>
      {children}
    </Tooltip.Provider>
  );
}

/** `aria-keyshortcuts` names keys as the UI Events spec does ("Control+N", "Escape"). */
export function ariaKeys(shortcut: string): string {
  const names: Record<string, string> = { Ctrl: "Control", Cmd: "Meta", Esc: "Escape" };
  return shortcut
    .split("+")
    .map((key) => names[key] ?? key)
    .join("+");
}

export function IconButton({ icon: Glyph, label, shortcut, tone, testId, className, ref, ...button }: IconButtonProps) {
  return (
    <Tooltip.Root>
      <Tooltip.Trigger asChild>
        <button
          type="button"
          {...button}
          ref={ref}
          aria-label={label}
          aria-keyshortcuts={shortcut && ariaKeys(shortcut)}
          data-testid={testId}
          className={["icon-button", tone && `tone-${tone}`, className].filter(Boolean).join(" ")}
        >
          <Glyph size={16} strokeWidth={2} aria-hidden="true" focusable="false" />
        </button>
      </Tooltip.Trigger>
      <Tooltip.Portal>
        {/* The label is the button's name; the open tooltip (a role every assistive technology
            must find named) describes the button by its shortcut, or else by the label again
            (Radix ties it as a description, which a blank name would leave unnamed). */}
        <Tooltip.Content className="tooltip" sideOffset={4} aria-label={shortcut ?? label} onEscapeKeyDown={(e) => tooltipEscapes.add(e)}>
          {label}
          {shortcut && <kbd>{shortcut}</kbd>}
        </Tooltip.Content>
      </Tooltip.Portal>
    </Tooltip.Root>
  );
}
