// The confirmation an install link opens (patchbay://mcp/install, Cursor's or
// VS Code's "Add to …" links): exactly what would run (command, arguments,
// every environment variable with its value, or the variable of yours it
// reads) or where it connects, the security policy it gets, and a field for
// each secret it needs (to the keyring). The core reads the link and refuses a
// bad one, one that carries a secret value, or one that would change a server
// the user has; nothing is written or started before the user confirms, and the
// button arms only after a moment, so a click meant for something else (a page
// opening a link under the pointer) does not confirm.
import { useEffect, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type ImportEntry, type ImportPreview, type Ipc, type IpcError, type ValueSource } from "../../lib/ipc";
import { policyLine } from "../../lib/policyLine";
import { Dialog } from "../common/Dialog";
import { ErrorBanner } from "../ErrorBanner";

export type InstallLinkIpc = Pick<Ipc, "importPreview" | "importApply">;

/** How long the confirm button waits before it can be clicked. */
export const ARM_MS = 800;

/** One env variable or header as the confirmation lists it: its value, or where the value comes from. */
/** `steers`: the core says the variable changes which program runs, what it loads or where its packages come from. */
function Value({ name, value, steers = false }: { name: string; value: ValueSource; steers?: boolean }) {
  const { t } = useI18n();
  return (
    <li>
      <code>{name}</code>{" "}
      {"plain" in value ? (
        <code>= {JSON.stringify(value.plain)}</code>
      ) : "secret" in value ? (
        <span className="muted">{t("installLink.secretValue")}</span>
      ) : (
        <span className="muted">{t("installLink.fromEnvironment", { value: value.env })}</span>
      )}
      {steers && <strong className="warning-text"> {t("installLink.risky")}</strong>}
    </li>
  );
}

/** The command line, quoted where an argument holds a space. */
function commandLine(command: string, args: string[]): string {
  return [command, ...args].map((a) => (/[\s"']/.test(a) || a === "" ? JSON.stringify(a) : a)).join(" ");
}

function What({ entry }: { entry: ImportEntry }) {
  const { t } = useI18n();
  const transport = entry.incoming.transport;
  const local = transport.type === "stdio";
  const values = local ? transport.env : transport.headers;
  const names = Object.keys(values);
  return (
    <>
      <p>{local ? t("installLink.runs") : t("installLink.connects")}</p>
      <pre className="code-line" data-testid={local ? "link-command" : "link-url"}>
        {local ? commandLine(transport.command, transport.args) : transport.url}
      </pre>
      {local && transport.cwd && <p className="small">{t("installLink.cwd", { dir: transport.cwd })}</p>}
      <p className="small">{names.length ? t(local ? "installLink.env" : "installLink.headers") : t(local ? "installLink.noEnv" : "installLink.noHeaders")}</p>
      {names.length > 0 && (
        <ul className="small" data-testid="link-values">
          {Object.entries(values).map(([name, value]) => (
            <Value key={name} name={name} value={value} steers={entry.steering.includes(name)} />
          ))}
        </ul>
      )}
      {entry.environment.length > 0 && (
        <ul className="small warning-text" data-testid="link-environment">
          {entry.environment.map((r) => (
            <li key={`${r.field}/${r.variable}`}>{t("installLink.readsEnvironment", { variable: r.variable, field: r.field })}</li>
          ))}
        </ul>
      )}
      {entry.incoming.title && <p className="small">{t("installLink.shownAs", { title: entry.incoming.title })}</p>}
      {!entry.incoming.enabled && <p className="small">{t("installLink.disabled")}</p>}
    </>
  );
}

export function InstallLink({ link, ipc, onClose }: { link: string; ipc: InstallLinkIpc; onClose: () => void }) {
  const { t } = useI18n();
  const [preview, setPreview] = useState<ImportPreview | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [added, setAdded] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [armed, setArmed] = useState(false);
  const entry = preview?.entries[0];
  const shown = entry !== undefined;
  // The button arms a moment after it appears, however long the preview took.
  useEffect(() => {
    if (!shown) return;
    const timer = setTimeout(() => setArmed(true), ARM_MS);
    return () => clearTimeout(timer);
  }, [shown]);
  useEffect(() => {
    // A newer link mounts a new dialog (keyed by the link), with its own state.
    let live = true;
    ipc.importPreview(link).then(
      (p) => live && setPreview(p),
      (e: unknown) => live && setError(toIpcError(e)),
    );
    return () => {
      live = false;
    };
  }, [link, ipc]);
  const refused = preview !== null && (preview.warnings.length > 0 || entry === undefined);
  const confirm = () => {
    if (!entry) return;
    setBusy(true);
    ipc
      .importApply(link, [entry.name], false, answers, {})
      .then(
        () => setAdded(entry.name),
        (e: unknown) => setError(toIpcError(e)),
      )
      .finally(() => setBusy(false));
  };
  return (
    <Dialog title={entry && !refused ? t("installLink.title", { name: entry.name }) : t("installLink.titleAny")} onClose={onClose} testId="install-link">
      {error && <ErrorBanner error={error} />}
      {!preview && !error && <p className="muted">{t("common.loading")}</p>}
      {refused && (
        <div role="alert" data-testid="link-refused">
          <p>{t("installLink.refused")}</p>
          <ul>
            {preview.warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      )}
      {entry && !refused && added === null && (
        <>
          <p className="muted">{t("installLink.source", { format: preview.format })}</p>
          <What entry={entry} />
          <p data-testid="link-policy">
            {t("installLink.policy")} <strong>{policyLine(t, entry.policy)}</strong>
          </p>
          {entry.status === "unchanged" && <p className="muted">{t("installLink.unchanged", { name: entry.name })}</p>}
          {preview.inputs.map((input) => (
            <div key={input.id} className="field">
              <label htmlFor={`link-input-${input.id}`}>{input.description ?? input.id}</label>
              <input
                id={`link-input-${input.id}`}
                type="password"
                autoComplete="off"
                value={answers[input.id] ?? ""}
                onChange={(ev) => setAnswers({ ...answers, [input.id]: ev.target.value })}
              />
              <small className="muted">{t("installLink.secretHint")}</small>
            </div>
          ))}
        </>
      )}
      {added !== null && (
        <p role="status" data-testid="link-installed">
          {t(entry?.incoming.enabled === false ? "installLink.addedOff" : "installLink.added", { name: added })}
        </p>
      )}
      <div className="row dialog-actions">
        {entry && !refused && added === null && entry.status !== "unchanged" && (
          <button type="button" id="link-confirm" className="primary" disabled={busy || !armed} onClick={confirm}>
            {t("installLink.confirm")}
          </button>
        )}
        <button type="button" id="link-close" onClick={onClose}>
          {added !== null || refused || error ? t("common.close") : t("common.cancel")}
        </button>
      </div>
    </Dialog>
  );
}
