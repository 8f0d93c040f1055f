// A form generated from a JSON Schema object: used for elicitation requests,
// "test a tool", re-running a traced call, prompt arguments and resource
// template variables. Supports string (with enum → select), number/integer,
// boolean, arrays of scalars (one item per line) and nested objects; anything
// else is edited as JSON. Top-level text fields can offer suggestions as the
// user types (MCP completions): a list under the field, picked by click.
import { useEffect, useId, useRef, useState, type FormEvent } from "react";
import { useI18n } from "../../lib/i18n";
import type { JsonSchema } from "../../lib/ipc";

type Values = Record<string, unknown>;

function typeOf(s: JsonSchema): string {
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  if (t) return t;
  if (s.enum) return "string";
  if (s.properties) return "object";
  return "json";
}

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

/** Checks required fields and number/JSON syntax; returns field → message key. */
function validate(schema: JsonSchema, values: Values, prefix = ""): Record<string, "form.required" | "form.number" | "form.json"> {
  const errors: Record<string, "form.required" | "form.number" | "form.json"> = {};
  for (const [name, p] of Object.entries(schema.properties ?? {})) {
    const v = values[name];
    const key = prefix + name;
    const t = typeOf(p);
    if (t === "object") Object.assign(errors, validate(p, (v as Values) ?? {}, key + "."));
    else if ((schema.required ?? []).includes(name) && (v === undefined || v === "")) errors[key] = "form.required";
    else if ((t === "number" || t === "integer") && v !== undefined && v !== "" && Number.isNaN(Number(v)))
      errors[key] = "form.number";
    else if (t === "json" && typeof v === "string" && v.trim() !== "") {
      try {
        JSON.parse(v);
      } catch {
        errors[key] = "form.json";
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
    else if (t === "array" && typeof v === "string") {
      const items = v.split("\n").filter((x) => x.trim() !== "");
      const it = p.items ? typeOf(p.items) : "string";
      out[name] = it === "number" || it === "integer" ? items.map(Number) : items;
    } else if (t === "json" && typeof v === "string") out[name] = JSON.parse(v);
    else out[name] = v;
  }
  return out;
}

/** The form of an MCP prompt's arguments (or a resource template's variables): text fields. */
export function argumentsSchema(fields: { name: string; description: string | null; required: boolean }[]): JsonSchema {
  return {
    type: "object",
    properties: Object.fromEntries(fields.map((a) => [a.name, { type: "string", description: a.description ?? undefined }])),
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
        } else if (p.enum) {
          input = (
            <select id={id} name={name} value={v === undefined ? "" : String(v)} onChange={(e) => set(name, e.target.value)}>
              <option value="">{t("form.choose")}</option>
              {p.enum.map((o) => (
                <option key={String(o)} value={String(o)}>
                  {String(o)}
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
                type={p.format === "email" ? "email" : p.format === "uri" ? "url" : p.format === "password" ? "password" : "text"}
                value={text}
                autoComplete={suggest ? "off" : undefined}
                aria-controls={listed.length > 0 ? `${id}-suggestions` : undefined}
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
            {p.description && (
              <small id={described} className="muted">
                {p.description}
              </small>
            )}
            {err && (
              <small className="field-error" role="alert">
                {err}
              </small>
            )}
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
    setErrors(Object.fromEntries(Object.entries(found).map(([k, v]) => [k, t(v)])));
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
          <button type="button" onClick={onCancel}>
            {cancelLabel ?? t("common.cancel")}
          </button>
        )}
      </div>
    </form>
  );
}
