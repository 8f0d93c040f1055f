// A button that shows an icon; its label is its accessible name and a tooltip that appears on
// hover and on keyboard focus (Radix Tooltip), with the shortcut when it has one.
import * as Tooltip from "@radix-ui/react-tooltip";
import type { LucideIcon } from "lucide-react";
import type { ButtonHTMLAttributes, Ref } from "react";

export interface IconButtonProps extends Omit<ButtonHTMLAttributes<HTMLButtonElement>, "children" | "aria-label"> {
  icon: LucideIcon;
  label: string;
  /** Shown after the label in the tooltip, e.g. "Ctrl+N". */
  shortcut?: string;
  tone?: "danger";
  testId?: string;
  ref?: Ref<HTMLButtonElement>;
}

export function IconButton({ icon: Glyph, label, shortcut, tone, testId, className, ref, ...button }: IconButtonProps) {
  return (
    <Tooltip.Provider delayDuration={400} skipDelayDuration={200}>
      <Tooltip.Root>
        <Tooltip.Trigger asChild>
          <button
            type="button"
            {...button}
            ref={ref}
            aria-label={label}
            data-testid={testId}
            className={["icon-button", tone && `tone-${tone}`, className].filter(Boolean).join(" ")}
          >
            <Glyph size={16} strokeWidth={2} aria-hidden="true" focusable="false" />
          </button>
        </Tooltip.Trigger>
        <Tooltip.Portal>
          {/* Screen readers hear the label as the name; the tooltip adds only the shortcut. */}
          <Tooltip.Content className="tooltip" sideOffset={4} aria-label={shortcut ?? ""}>
            {label}
            {shortcut && <kbd>{shortcut}</kbd>}
          </Tooltip.Content>
        </Tooltip.Portal>
      </Tooltip.Root>
    </Tooltip.Provider>
  );
}
