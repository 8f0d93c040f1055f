// A form generated from a JSON Schema object: used for elicitation requests,
// "test a tool", re-running a traced call, prompt arguments and resource
// template variables. Supports string (with choices → select: `enum`, titled
// by `enumNames`, or `oneOf` of `{const, title}`), number/integer, boolean,
// arrays of choices (checkboxes) or of scalars (one item per line) and nested
// objects; anything else is edited as JSON. Lengths, ranges and item counts
// the schema sets are checked before submitting. Top-level text fields can offer suggestions as the
// user types (MCP completions): a list under the field, picked by click.
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { useI18n, type MessageKey } from "../../lib/i18n";
import type { JsonSchema } from "../../lib/ipc";

type Values = Record<string, unknown>;

interface Choice {
  value: string;
  label: string;
}

/** The values a field may take, with their labels; `null` when it is free. */
function choices(s: JsonSchema): Choice[] | null {
  if (s.enum) return s.enum.map((v, i) => ({ value: String(v), label: s.enumNames?.[i] ?? String(v) }));
  const titled = s.oneOf ?? s.anyOf;
  if (titled && titled.length > 0 && titled.every((c) => c.const !== undefined)) {
    return titled.map((c) => ({ value: String(c.const), label: c.title ?? String(c.const) }));
  }
  return null;
}

function typeOf(s: JsonSchema): string {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  if (t) return t;
  if (choices(s)) return "string";
  if (s.properties) return "object";
  return "json";
}

/** The input each string format is typed into (a date with a date picker). */
const INPUT_TYPES: Record<string, string> = { email: "email", uri: "url", password: "password", date: "date" };

/** Default values for a schema's properties. */
export function initialValues(schema: JsonSchema, given?: unknown): Values {
  const out: Values = {};
  const src = given && typeof given === "object" && !Array.isArray(given) ? (given as Values) : {};
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    if (name in src) out[name] = src[name];
    else if (p.default !== undefined) out[name] = p.default;
    else if (typeOf(p) === "boolean") out[name] = false;
    else if (typeOf(p) === "object") out[name] = initialValues(p);
  }
  return out;
}

/** What is wrong with a field: a message key and the values it names. */
interface Problem {
  key: MessageKey;
  vars?: Record<string, number>;
}

/** `{min, max}` of a bound pair, or the message for only one of them. */
function bounds(min: number | undefined, max: number | undefined, both: MessageKey, atLeast: MessageKey, atMost: MessageKey): Problem {
  if (min !== undefined && max !== undefined) return { key: both, vars: { min, max } };
  return min !== undefined ? { key: atLeast, vars: { min } } : { key: atMost, vars: { max: max ?? 0 } };
}

/** Checks required fields, number/JSON syntax, ranges, lengths and item counts; returns field → problem. */
function validate(schema: JsonSchema, values: Values, prefix = ""): Record<string, Problem> {
  const errors: Record<string, Problem> = {};
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const v = values[name];
    const key = prefix + name;
    const t = typeOf(p);
    const empty = v === undefined || v === "" || (Array.isArray(v) && v.length === 0);
    const outside = (n: number, min?: number, max?: number) => (min !== undefined && n < min) || (max !== undefined && n > max);
    if (t === "object") Object.assign(errors, validate(p, (v as Values) ?? {}, key + "."));
    else if ((schema.required ?? []).includes(name) && empty) errors[key] = { key: "form.required" };
    else if (empty) continue;
    else if ((t === "number" || t === "integer") && Number.isNaN(Number(v))) errors[key] = { key: "form.number" };
    else if ((t === "number" || t === "integer") && outside(Number(v), p.minimum, p.maximum))
      errors[key] = bounds(p.minimum, p.maximum, "form.range", "form.rangeMin", "form.rangeMax");
    else if (t === "string" && typeof v === "string" && outside([...v].length, p.minLength, p.maxLength))
      errors[key] = bounds(p.minLength, p.maxLength, "form.length", "form.lengthMin", "form.lengthMax");
    else if (Array.isArray(v) && outside(v.length, p.minItems, p.maxItems))
      errors[key] = bounds(p.minItems, p.maxItems, "form.items", "form.itemsMin", "form.itemsMax");
    else if (t === "json" && typeof v === "string" && v.trim() !== "") {
      try {
        JSON.parse(v);
      } catch {
        errors[key] = { key: "form.json" };
      }
    }
  }
  return errors;
}

/** Turns the edited strings into typed values, dropping empty optional fields. */
export function toValue(schema: JsonSchema, values: Values): Values {
  const out: Values = {};
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const v = values[name];
    const t = typeOf(p);
    if (t === "object") out[name] = toValue(p, (v as Values) ?? {});
    else if (v === undefined || v === "") continue;
    else if (t === "number" || t === "integer") out[name] = Number(v);
    else if (t === "array" && Array.isArray(v)) {
      const it = p.items ? typeOf(p.items) : "string";
      out[name] = it === "number" || it === "integer" ? v.map(Number) : v;
    } else if (t === "array" && typeof v === "string") {
      const items = v.split("\n").filter((x) => x.trim() !== "");
      const it = p.items ? typeOf(p.items) : "string";
      out[name] = it === "number" || it === "integer" ? items.map(Number) : items;
    } else if (t === "json" && typeof v === "string") out[name] = JSON.parse(v);
    else out[name] = v;
  }
  return out;
}

/** The form of an MCP prompt's arguments (or a resource template's variables): text fields. */
export function argumentsSchema(
  fields: { name: string; title?: string | null; description: string | null; required: boolean }[],
): JsonSchema {
  return {
    type: "object",
    properties: Object.fromEntries(
      fields.map((a) => [a.name, { type: "string", title: a.title ?? undefined, description: a.description ?? undefined }]),
    ),
    required: fields.filter((a) => a.required).map((a) => a.name),
  };
}

/** Suggestions for a text field, given what is typed and the form's other values. */
export type Suggest = (field: string, value: string, values: Record<string, string>) => Promise<string[]>;

/** The form's text values, for a suggestion's context. */
function texts(values: Values): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/**
 * Asks `suggest` for the field being typed in (after a short pause, the
 * latest answer only); `open` is that field, until a suggestion is picked.
 */
function useSuggestions(suggest: Suggest | undefined) {
  const [open, setOpen] = useState<string | null>(null);
  const [shown, setShown] = useState<string[]>([]);
  const asked = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const ask = (field: string, value: string, values: Values) => {
    if (!suggest) return;
    setOpen(field);
    clearTimeout(timer.current);
    const n = ++asked.current;
    timer.current = setTimeout(() => {
      suggest(field, value, texts(values))
        .then((values) => n === asked.current && setShown(values))
        .catch(() => n === asked.current && setShown([]));
    }, 150);
  };
  const close = () => {
    asked.current++;
    setOpen(null);
    setShown([]);
  };
  return { open, shown, ask, close };
}

/** Under a field: what it is for, and what is wrong with it. */
function FieldNotes({ id, description, error }: { id?: string; description?: string; error?: string }) {
  return (
    <>
      {description && (
        <small id={id} className="muted">
          {description}
        </small>
      )}
      {error && (
        <small className="field-error" role="alert">
          {error}
        </small>
      )}
    </>
  );
}

interface FieldsProps {
  schema: JsonSchema;
  values: Values;
  errors: Record<string, string>;
  prefix: string;
  onChange: (v: Values) => void;
  suggest?: Suggest;
}

function Fields({ schema, values, errors, prefix, onChange, suggest }: FieldsProps) {
  const { t } = useI18n();
  const base = useId();
  const suggestions = useSuggestions(suggest);
  const set = (name: string, v: unknown) => onChange({ ...values, [name]: v });
  return (
    <>
      {Object.entries(schema.properties ?? {}).map(([name, p]) => {
        const id = `${base}-${prefix}${name}`;
        const required = (schema.required ?? []).includes(name);
        const label = (p.title ?? name) + (required ? " *" : "");
        const err = errors[prefix + name];
        const v = values[name];
        const t0 = typeOf(p);
        const described = p.description ? `${id}-desc` : undefined;
        let input;
        if (t0 === "object") {
          return (
            <fieldset key={name} className="schema-object">
              <legend>{label}</legend>
              <Fields
                schema={p}
                values={(v as Values) ?? {}}
                errors={errors}
                prefix={`${prefix}${name}.`}
                onChange={(nv) => set(name, nv)}
              />
            </fieldset>
          );
        } else if (t0 === "boolean") {
          input = (
            <input id={id} name={name} type="checkbox" checked={v === true} onChange={(e) => set(name, e.target.checked)} />
          );
        } else if (t0 === "array" && p.items && choices(p.items)) {
          // Several of a list of choices: a box each.
          const chosen = Array.isArray(v) ? v.map(String) : [];
          return (
            <fieldset key={name} className="field schema-choices" aria-describedby={described}>
              <legend>{label}</legend>
              {choices(p.items)!.map((c) => (
                <label key={c.value} className="inline">
                  <input
                    type="checkbox"
                    name={name}
                    value={c.value}
                    checked={chosen.includes(c.value)}
                    onChange={(e) => set(name, e.target.checked ? [...chosen, c.value] : chosen.filter((x) => x !== c.value))}
                  />{" "}
                  {c.label}
                </label>
              ))}
              <FieldNotes id={described} description={p.description} error={err} />
            </fieldset>
          );
        } else if (choices(p)) {
          input = (
            <select id={id} name={name} value={v === undefined ? "" : String(v)} onChange={(e) => set(name, e.target.value)}>
              <option value="">{t("form.choose")}</option>
              {choices(p)!.map((c) => (
                <option key={c.value} value={c.value}>
                  {c.label}
                </option>
              ))}
            </select>
          );
        } else if (t0 === "number" || t0 === "integer") {
          input = (
            <input
              id={id}
              name={name}
              type="number"
              step={t0 === "integer" ? 1 : "any"}
              min={p.minimum}
              max={p.maximum}
              value={v === undefined ? "" : String(v)}
              onChange={(e) => set(name, e.target.value)}
            />
          );
        } else if (t0 === "array" || t0 === "json") {
          const text = Array.isArray(v) ? v.join("\n") : typeof v === "string" ? v : v === undefined ? "" : JSON.stringify(v, null, 2);
          input = (
            <textarea id={id} name={name} rows={3} value={text} placeholder={t0 === "array" ? t("form.onePerLine") : "{}"} onChange={(e) => set(name, e.target.value)} />
          );
        } else {
          const text = v === undefined ? "" : String(v);
          const listed = suggestions.open === name ? suggestions.shown.filter((x) => x !== text) : [];
          input = (
            <>
              <input
                id={id}
                name={name}
                type={INPUT_TYPES[p.format ?? ""] ?? "text"}
                value={text}
                autoComplete={suggest ? "off" : undefined}
                aria-controls={listed.length > 0 ? `${id}-suggestions` : undefined}
                // The dialog around it leaves this Escape to the field (common/Dialog.tsx).
                data-owns-escape={listed.length > 0 || undefined}
                onFocus={() => suggestions.ask(name, text, values)}
                onKeyDown={(e) => {
                  // Escape closes the suggestions first, the dialog only after.
                  if (e.key !== "Escape" || listed.length === 0) return;
                  e.stopPropagation();
                  suggestions.close();
                }}
                onChange={(e) => {
                  set(name, e.target.value);
                  suggestions.ask(name, e.target.value, { ...values, [name]: e.target.value });
                }}
              />
              {listed.length > 0 && (
                <ul className="suggestions" id={`${id}-suggestions`} role="listbox" aria-label={t("form.suggestions", { field: p.title ?? name })}>
                  {listed.map((x) => (
                    <li key={x} role="option" aria-selected={false}>
                      <button
                        type="button"
                        data-value={x}
                        onClick={() => {
                          set(name, x);
                          suggestions.close();
                        }}
                      >
                        {x}
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </>
          );
        }
        return (
          <div className="field" key={name}>
            <label htmlFor={id}>{label}</label>
            {input}
            <FieldNotes id={described} description={p.description} error={err} />
          </div>
        );
      })}
    </>
  );
}

export interface SchemaFormProps {
  schema: JsonSchema;
  initial?: unknown;
  /** Suggestions for the top-level text fields as they are typed in. */
  suggest?: Suggest;
  submitLabel: string;
  busy?: boolean;
  onSubmit: (value: Values) => void;
  onCancel?: () => void;
  cancelLabel?: string;
  testId?: string;
}

export function SchemaForm({ schema, initial, suggest, submitLabel, busy, onSubmit, onCancel, cancelLabel, testId }: SchemaFormProps) {
  const { t } = useI18n();
  const [values, setValues] = useState<Values>(() => initialValues(schema, initial));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const found = validate(schema, values);
    setErrors(Object.fromEntries(Object.entries(found).map(([k, v]) => [k, t(v.key, v.vars)])));
    if (Object.keys(found).length === 0) onSubmit(toValue(schema, values));
  };
  return (
    <form className="schema-form" onSubmit={submit} data-testid={testId} noValidate>
      {Object.keys(schema.properties ?? {}).length === 0 && <p className="muted">{t("form.noFields")}</p>}
      <Fields schema={schema} values={values} errors={errors} prefix="" onChange={setValues} suggest={suggest} />
      <div className="row">
        <button type="submit" className="primary" disabled={busy}>
          {submitLabel}
        </button>
        {onCancel && (
          <button type="button" onClick={onCancel} data-testid="form-cancel">
            {cancelLabel ?? t("common.cancel")}
          </button>
        )}
      </div>
    </form>
  );
}
