// Import: paste or pick a config file, see the preview (new / changed with
// diff / unchanged / conflict), choose what to apply, merge or replace all,
// type the secrets a VS Code config asks for with `${input:…}`, and mark plain
// env/header values as secrets. Each entry lists the values that are secrets and
// the keyring entry each uses (the core refuses entries not the server's own). Export in a chosen format (the backend opens the
// save dialog and writes secrets as placeholders unless the user asks for values).
import { useState } from "react";
import { readFile } from "../../lib/files";
import { useI18n, type MessageKey } from "../../lib/i18n";
import {
  toIpcError,
  type ExportFormat,
  type ImportPreview,
  type ImportReport,
  type ImportSecret,
  type ImportStatus,
  type Ipc,
  type IpcError,
  type McpServerConfig,
} from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { InstallLink } from "./InstallLink";

export type ImportIpc = Pick<Ipc, "importPreview" | "importApply" | "exportConfig">;

const STATUS: Record<ImportStatus, MessageKey> = {
  new: "import.new",
  changed: "import.changed",
  unchanged: "import.unchanged",
  conflict: "import.conflict",
};

/** How each secret of an entry is described: what the file puts in the keyring, or which entry it uses. */
const SECRET_STATE: Record<ImportSecret["state"], MessageKey> = {
  from_import: "import.secretFromImport",
  reference: "import.secretReference",
  prompt: "import.secretPrompt",
};

/** The env or header names whose values the import would store as plain text. */
export function plainFields(config: McpServerConfig): string[] {
  const values = config.transport.type === "stdio" ? config.transport.env : config.transport.headers;
  return Object.entries(values)
    .filter(([, v]) => "plain" in v)
    .map(([k]) => k);
}

export function ImportExport({ ipc }: { ipc: ImportIpc }) {
  const { t } = useI18n();
  const [text, setText] = useState("");
  const [preview, setPreview] = useState<ImportPreview | null>(null);
  const [accept, setAccept] = useState<Set<string>>(new Set());
  const [replace, setReplace] = useState(false);
  const [answers, setAnswers] = useState<Record<string, string>>({});
  const [marked, setMarked] = useState<Record<string, string[]>>({});
  const [report, setReport] = useState<ImportReport | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  const [format, setFormat] = useState<ExportFormat>("claude_desktop");
  const [exported, setExported] = useState<string | null>(null);
  const [includeSecrets, setIncludeSecrets] = useState(false);
  const [link, setLink] = useState<string | null>(null);

  const runPreview = (source: string) => {
    setReport(null);
    setError(null);
    ipc
      .importPreview(source)
      .then((p) => {
        // An install link (the core knows one) opens its confirmation instead.
        if (p.format.endsWith("_link")) {
          setPreview(null);
          setLink(source.trim());
          return;
        }
        setPreview(p);
        setReplace(false);
        setAnswers({});
        setMarked({});
        // New and changed entries are taken by default; conflicts need a decision.
        setAccept(new Set(p.entries.filter((e) => e.status === "new" || e.status === "changed").map((e) => e.name)));
      })
      .catch((e: unknown) => {
        setPreview(null);
        setError(toIpcError(e));
      });
  };

  const apply = () => {
    ipc
      .importApply(text, [...accept], replace, answers, marked)
      .then((r) => {
        setReport(r);
        setPreview(null);
      })
      .catch((e: unknown) => setError(toIpcError(e)));
  };

  return (
    <div data-testid="import-export">
      <h2>{t("import.title")}</h2>
      <label className="field">
        <span>{t("import.paste")}</span>
        <textarea id="import-text" rows={8} value={text} onChange={(e) => setText(e.target.value)} placeholder='{"mcpServers": {…}}' />
      </label>
      <div className="row">
        <label className="file-button">
          {t("import.pickFile")}
          <input
            type="file"
            id="import-file"
            accept=".json,.jsonc,.yaml,.yml,.toml,application/json"
            className="sr-only"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f)
                readFile(f, "text")
                  .then((s) => {
                    setText(s);
                    runPreview(s);
                  })
                  .catch((err: unknown) => setError({ kind: "invalid_input", message: String(err) }));
            }}
          />
        </label>
        <button type="button" id="import-preview" className="primary" disabled={text.trim() === ""} onClick={() => runPreview(text)}>
          {t("import.preview")}
        </button>
      </div>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {link !== null && <InstallLink key={link} link={link} ipc={ipc} onClose={() => setLink(null)} />}
      {preview && (
        <div className="import-preview" data-testid="import-preview">
          <p className="muted">{t("import.format", { format: preview.format })}</p>
          {preview.warnings.map((w, i) => (
            <p key={i} className="warning-text">
              {w}
            </p>
          ))}
          <ul className="list">
            {preview.entries.map((e) => (
              <li key={e.name} className={`card import-${e.status}`} data-testid="import-entry" data-status={e.status}>
                <label className="row">
                  <input
                    type="checkbox"
                    disabled={e.status === "unchanged"}
                    checked={accept.has(e.name)}
                    aria-label={t("import.take", { name: e.name })}
                    onChange={(ev) => {
                      const next = new Set(accept);
                      if (ev.target.checked) next.add(e.name);
                      else next.delete(e.name);
                      setAccept(next);
                    }}
                  />
                  <strong>{e.name}</strong>
                  <span className={`badge ${e.status}`}>{t(STATUS[e.status as ImportStatus])}</span>
                </label>
                {e.detail && <p className="muted">{e.detail}</p>}
                {e.status !== "unchanged" && plainFields(e.incoming).length > 0 && (
                  <div className="row" data-testid="import-plain-fields">
                    <span className="muted">{t("import.markSecret")}</span>
                    {plainFields(e.incoming).map((field) => (
                      <label key={field} className="row">
                        <input
                          type="checkbox"
                          aria-label={t("import.markSecretField", { name: e.name, field })}
                          checked={marked[e.name]?.includes(field) ?? false}
                          onChange={(ev) => {
                            const rest = (marked[e.name] ?? []).filter((f) => f !== field);
                            setMarked({ ...marked, [e.name]: ev.target.checked ? [...rest, field] : rest });
                          }}
                        />
                        <code>{field}</code>
                      </label>
                    ))}
                  </div>
                )}
                {e.secrets.length > 0 && (
                  <ul className="import-secrets small" data-testid="import-secrets">
                    {e.secrets.map((s) => (
                      <li key={s.field}>
                        <code>{s.field}</code> {t(SECRET_STATE[s.state], { secret: s.secret })}
                        {s.state !== "from_import" && !s.set && <span className="muted"> {t("import.secretNotSet")}</span>}
                      </li>
                    ))}
                  </ul>
                )}
                {e.environment.length > 0 && (
                  // Read from this computer's environment at each start: a remote server is sent the value.
                  <ul className="import-secrets small" data-testid="import-environment">
                    {e.environment.map((r) => (
                      <li key={`${r.field}/${r.variable}`}>
                        <code>{r.field}</code> {t("import.readsEnvironment", { variable: r.variable })}
                        {!r.set && <span className="muted"> {t("import.environmentNotSet")}</span>}
                      </li>
                    ))}
                  </ul>
                )}
                {e.diff.length > 0 && (
                  <pre className="diff" data-testid="import-diff">
                    {e.diff.map((d, i) => (
                      <div key={i} className={`diff-${d.op}`}>
                        {d.op === "add" ? "+ " : d.op === "remove" ? "- " : "  "}
                        {d.text}
                      </div>
                    ))}
                  </pre>
                )}
              </li>
            ))}
          </ul>
          {preview.providers.length > 0 && (
            <p className="muted" data-testid="import-providers">
              {t("import.providers", { names: preview.providers.join(", ") })}
            </p>
          )}
          {preview.inputs.length > 0 && (
            <fieldset className="import-inputs" data-testid="import-inputs">
              <legend>{t("import.inputs")}</legend>
              {preview.inputs.map((input) => (
                <div key={input.id} className="field">
                  <label htmlFor={`import-input-${input.id}`}>{input.description ?? input.id}</label>
                  <input
                    id={`import-input-${input.id}`}
                    type="password"
                    autoComplete="off"
                    value={answers[input.id] ?? ""}
                    placeholder={input.set ? t("import.inputSet") : ""}
                    onChange={(ev) => setAnswers({ ...answers, [input.id]: ev.target.value })}
                  />
                  <small className="muted">{t("import.inputHint", { servers: input.servers.join(", ") })}</small>
                </div>
              ))}
            </fieldset>
          )}
          {preview.removed_on_replace.length > 0 && (
            <label className="row">
              <input type="checkbox" id="import-replace" checked={replace} onChange={(ev) => setReplace(ev.target.checked)} />
              <span>{t("import.replace")}</span>
            </label>
          )}
          {replace && (
            <p className="warning-text" data-testid="import-removes">
              {t("import.replaceRemoves", { names: preview.removed_on_replace.join(", ") })}
            </p>
          )}
          <button type="button" id="import-apply" className="primary" disabled={accept.size === 0} onClick={apply}>
            {t("import.apply", { count: accept.size })}
          </button>
        </div>
      )}
      {report && (
        <p role="status" className="ok-text" data-testid="import-report">
          {t("import.done", { added: report.added.length, updated: report.updated.length, skipped: report.skipped.length })}
          {report.removed.length > 0 && <> {t("import.removed", { names: report.removed.join(", ") })}</>}
        </p>
      )}
      {report && report.secrets_not_set.length > 0 && (
        <p className="warning-text" data-testid="import-not-set">
          {t("import.notSet", { names: report.secrets_not_set.join(", ") })}
        </p>
      )}
      <h2>{t("export.title")}</h2>
      <div className="row">
        <label className="field inline">
          <span>{t("export.format")}</span>
          <select id="export-format" value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)}>
            <option value="claude_desktop">Claude Desktop</option>
            <option value="vscode">VS Code</option>
            <option value="cursor">Cursor</option>
            <option value="zed">Zed</option>
            <option value="opencode">opencode</option>
            <option value="ragflow">RAGFlow</option>
            <option value="patchbay">Patchbay</option>
          </select>
        </label>
        <button
          type="button"
          id="export-button"
          onClick={() =>
            ipc
              .exportConfig(format, includeSecrets)
              .then(setExported)
              .catch((e: unknown) => setError(toIpcError(e)))
          }
        >
          {t("export.button")}
        </button>
      </div>
      <label className="row">
        <input type="checkbox" id="export-include-secrets" checked={includeSecrets} onChange={(ev) => setIncludeSecrets(ev.target.checked)} />
        <span>{t("export.includeSecrets")}</span>
      </label>
      {includeSecrets ? (
        <p className="warning-text" data-testid="export-secrets-warning">
          {t("export.includeSecretsWarning")}
        </p>
      ) : (
        <p className="muted">{t("export.secrets")}</p>
      )}
      {exported && (
        <p role="status" className="ok-text">
          {t("export.done", { path: exported })}
        </p>
      )}
    </div>
  );
}
