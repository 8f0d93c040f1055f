// "Start from": a new entry's preset, or none (the first option).
export function PresetSelect({
  id,
  label,
  none,
  presets,
  value,
  onChange,
}: {
  id: string;
  label: string;
  /** The first option's text: no preset. */
  none: string;
  presets: { id: string; label: string }[];
  value: string;
  onChange: (id: string) => void;
}) {
  return (
    <label className="field">
      <span>{label}</span>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">{none}</option>
        {presets.map((p) => (
          <option key={p.id} value={p.id}>
            {p.label}
          </option>
        ))}
      </select>
    </label>
  );
}
