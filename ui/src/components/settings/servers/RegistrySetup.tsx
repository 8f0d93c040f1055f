// Adding a server from an MCP Registry entry: the form of the parts the
// registry leaves to the user (its placeholders, filled in by the core, the
// secrets among them kept apart for the keyring), and above the editor what
// else the entry asks for.
import { useState } from "react";
import { useI18n } from "../../../lib/i18n";
import { toIpcError, type Ipc, type IpcError, type JsonSchema, type RegistryEntry, type RegistryFill } from "../../../lib/ipc";
import { ErrorBanner } from "../../ErrorBanner";
import { Dialog } from "../../common/Dialog";
import { SchemaForm } from "../../common/SchemaForm";

export type RegistrySetupIpc = Pick<Ipc, "registryFill">;

/** The form of a registry entry's placeholders: secrets masked, choices as a list. */
function placeholderSchema(entry: RegistryEntry): JsonSchema {
  const asked = entry.settings.filter((x) => x.placeholder);
  return {
    type: "object",
    properties: Object.fromEntries(
      asked.map((x) => [
        x.name,
        {
          type: "string",
          description: x.description || undefined,
          default: x.default ?? undefined,
          enum: x.choices.length > 0 ? x.choices : undefined,
          format: x.secret ? "password" : undefined,
        },
      ]),
    ),
    required: asked.filter((x) => x.required).map((x) => x.name),
  };
}

/** Asks for an entry's placeholders; `onFilled` with the entry's config and secrets once the core filled them in. */
export function RegistrySetup({
  ipc,
  entry,
  onClose,
  onFilled,
}: {
  ipc: RegistrySetupIpc;
  entry: RegistryEntry;
  onClose: () => void;
  onFilled: (filled: RegistryFill) => void;
}) {
  const { t } = useI18n();
  const [error, setError] = useState<IpcError | null>(null);
  return (
    <Dialog title={t("registry.setUp", { name: entry.label })} onClose={onClose} testId="registry-setup">
      <p className="muted">{t("registry.setUpAbout")}</p>
      {error && <ErrorBanner error={error} />}
      <SchemaForm
        schema={placeholderSchema(entry)}
        submitLabel={t("registry.continue")}
        onSubmit={(v) => {
          ipc.registryFill(entry, v as Record<string, string>).then(onFilled, (e: unknown) => setError(toIpcError(e)));
        }}
      />
    </Dialog>
  );
}

/** The registry entry the editor starts from, and the settings it asks for besides its placeholders. */
export function RegistryTemplate({ template }: { template: RegistryEntry }) {
  const { t } = useI18n();
  return (
    <div className="muted small" data-testid="registry-template">
      <p>{t("registry.from", { name: template.name, version: template.version })}</p>
      {template.settings.some((v) => !v.placeholder) && (
        <ul data-testid="registry-settings">
          {template.settings.filter((v) => !v.placeholder).map((v) => (
            <li key={v.name}>
              <code>{v.name}</code>
              {v.description && ` ${v.description}`}
              {(v.required || v.secret) &&
                ` (${[v.required && t("registry.required"), v.secret && t("registry.secret")].filter(Boolean).join(", ")})`}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
