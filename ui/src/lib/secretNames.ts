// Which env and header names hold secrets: the core's rule (`is_secret_name`),
// applied to the data the core writes into secretNames.json (a core test fails
// when that file and the rule differ), so the editor and the import agree.
import data from "./secretNames.json";

/** Whether an env variable or header named `key` holds a secret. */
export function isSecretName(key: string): boolean {
  // ASCII capitals only, as the core reads it; `-` counts as `_`.
  const k = key.replace(/[a-z]/g, (c) => c.toUpperCase()).replace(/-/g, "_");
  const { suffixes, names, contains } = data.rule;
  return suffixes.some((s) => k.endsWith(s)) || names.includes(k) || contains.some((s) => k.includes(s));
}
