// Small line icons drawn inline, in the text's colour: a glyph from an emoji or
// symbol font shows as an empty box where that font is not installed.

const PATHS = {
  pin: "M9 3h6l-1 6 3 3v2H7v-2l3-3-1-6zM12 14v7",
  edit: "M4 20h4L19 9l-4-4L4 16v4zM14 6l4 4",
  close: "M6 6l12 12M18 6L6 18",
} as const;

export type IconName = keyof typeof PATHS;

/** A 16-pixel icon; the button around it carries the accessible name. */
export function Icon({ name }: { name: IconName }) {
  return (
    <svg className="icon-svg" width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" focusable="false" data-icon={name}>
      <path d={PATHS[name]} fill="none" stroke="currentColor" strokeWidth="2" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
