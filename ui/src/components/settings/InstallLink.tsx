// The confirmation an install link opens (patchbay://mcp/install, Cursor's or
// VS Code's "Add to …" links): exactly what would run (command, arguments,
// environment names) or where it connects, the security policy it gets, and a
// field for each secret it needs (to the keyring). The core reads the link and
// refuses a bad one, or one that carries a secret value; nothing is written or
// started before the user confirms.
import { useEffect, useState } from "react";
import { useI18n } from "../../lib/i18n";
import { toIpcError, type ImportEntry, type ImportPreview, type Ipc, type IpcError } from "../../lib/ipc";
import { policyLine } from "../../lib/policyLine";
import { Dialog } from "../common/Dialog";
import { ErrorBanner } from "../ErrorBanner";

export type InstallLinkIpc = Pick<Ipc, "importPreview" | "importApply">;

/** The command line, quoted where an argument holds a space. */
function commandLine(command: string, args: string[]): string {
  return [command, ...args].map((a) => (/[\s"']/.test(a) || a === "" ? JSON.stringify(a) : a)).join(" ");
}

function What({ entry }: { entry: ImportEntry }) {
  const { t } = useI18n();
  const transport = entry.incoming.transport;
  if (transport.type === "stdio") {
    const env = Object.keys(transport.env);
    return (
      <>
        <p>{t("installLink.runs")}</p>
        <pre className="code-line" data-testid="link-command">
          {commandLine(transport.command, transport.args)}
        </pre>
        {transport.cwd && <p className="small">{t("installLink.cwd", { dir: transport.cwd })}</p>}
        <p className="small" data-testid="link-env">
          {env.length ? t("installLink.env", { names: env.join(", ") }) : t("installLink.noEnv")}
        </p>
      </>
    );
  }
  const headers = Object.keys(transport.headers);
  return (
    <>
      <p>{t("installLink.connects")}</p>
      <pre className="code-line" data-testid="link-url">
        {transport.url}
      </pre>
      {headers.length > 0 && <p className="small">{t("installLink.headers", { names: headers.join(", ") })}</p>}
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
  const entry = preview?.entries[0];
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
          {entry.detail && <p className="warning-text">{entry.detail}</p>}
          {entry.status === "changed" && <p className="warning-text">{t("installLink.replaces", { name: entry.name })}</p>}
          {entry.status === "unchanged" && <p className="muted">{t("installLink.unchanged", { name: entry.name })}</p>}
          {preview.inputs.map((input) => (
            <div key={input.id} className="field">
              <label htmlFor={`link-input-${input.id}`}>{input.description ?? input.id}</label>
              <input
                id={`link-input-${input.id}`}
                type="password"
                autoComplete="off"
                value={answers[input.id] ?? ""}
                placeholder={input.set ? t("import.inputSet") : ""}
                onChange={(ev) => setAnswers({ ...answers, [input.id]: ev.target.value })}
              />
              <small className="muted">{t("installLink.secretHint")}</small>
            </div>
          ))}
        </>
      )}
      {added !== null && (
        <p role="status" data-testid="link-installed">
          {t("installLink.added", { name: added })}
        </p>
      )}
      <div className="row dialog-actions">
        {entry && !refused && added === null && entry.status !== "unchanged" && (
          <button type="button" id="link-confirm" className="primary" disabled={busy} onClick={confirm}>
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
