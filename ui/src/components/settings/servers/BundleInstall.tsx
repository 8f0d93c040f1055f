// Installing an MCP bundle (.mcpb), as Claude Desktop installs extensions:
// what the bundle is (name, version, author, its tools, what it needs), then
// a form for the settings its manifest declares: text (masked for sensitive
// ones, which go to the keyring), numbers, switches, and folders or files
// with a picker. The core checks the values and says which one is wrong.
// Above the form, who signed the bundle: a trusted publisher, a self-signed
// or unverified one (with the reason), or nobody. The same form changes an
// installed bundle's settings later, filled in with the values it has.
import { useState } from "react";
import { useI18n } from "../../../lib/i18n";
import {
  toIpcError,
  type BundleInfo,
  type BundleSetting,
  type BundleSignature,
  type BundleValue,
  type Ipc,
  type IpcError,
} from "../../../lib/ipc";
import { ErrorBanner } from "../../ErrorBanner";
import { Dialog } from "../../common/Dialog";

export type BundleIpc = Pick<Ipc, "installBundle" | "configureBundle" | "bundleSettings" | "pickSettingFile" | "kbPickFolder">;

/** What the form does: install the bundle file at `path`, or change the settings of the bundle `server` runs. */
export type BundleTarget = { kind: "install" } | { kind: "configure"; server: string };

/** The form's text for a setting's value now, else its default (lists one entry per line). */
function initial(s: BundleSetting): string | boolean {
  const given = s.value ?? s.default;
  if (s.kind === "boolean") return given === true;
  if (s.sensitive || given === null) return "";
  return Array.isArray(given) ? given.join("\n") : String(given);
}

/** The values to send: empty fields are left out, so defaults and kept secrets apply. */
export function bundleValues(settings: BundleSetting[], form: Record<string, string | boolean>): Record<string, BundleValue> {
  const values: Record<string, BundleValue> = {};
  for (const s of settings) {
    const v = form[s.key];
    if (typeof v === "boolean") {
      values[s.key] = v;
      continue;
    }
    const text = (v ?? "").trim();
    if (text === "") continue;
    if (s.multiple) values[s.key] = text.split("\n").map((l) => l.trim()).filter((l) => l !== "");
    else if (s.kind === "number" && !Number.isNaN(Number(text))) values[s.key] = Number(text);
    else values[s.key] = s.sensitive ? (v as string) : text;
  }
  return values;
}

function SettingField({
  setting: s,
  value,
  onChange,
  pick,
}: {
  setting: BundleSetting;
  value: string | boolean;
  onChange: (v: string | boolean) => void;
  pick: () => Promise<string | null>;
}) {
  const { t } = useI18n();
  const id = `bundle-setting-${s.key}`;
  const label = (
    <span>
      {s.title}
      {s.required && !s.kept && <span aria-hidden="true"> *</span>}
    </span>
  );
  const about = s.description && <small className="muted">{s.description}</small>;
  if (s.kind === "boolean") {
    return (
      <label className="check">
        <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} /> {s.title}
        {about}
      </label>
    );
  }
  const text = typeof value === "string" ? value : "";
  const path = s.kind === "directory" || s.kind === "file";
  const choose = () =>
    void pick().then((p) => {
      if (p) onChange(s.multiple && text.trim() !== "" ? `${text.trimEnd()}\n${p}` : p);
    });
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <div className="row">
        {s.multiple ? (
          <textarea id={id} rows={3} value={text} placeholder={t("bundle.onePerLine")} onChange={(e) => onChange(e.target.value)} />
        ) : (
          <input
            id={id}
            type={s.sensitive ? "password" : s.kind === "number" ? "number" : "text"}
            min={s.min ?? undefined}
            max={s.max ?? undefined}
            required={s.required && !s.kept}
            placeholder={s.kept ? t("servers.secretStored") : undefined}
            value={text}
            onChange={(e) => onChange(e.target.value)}
          />
        )}
        {path && (
          <button type="button" aria-label={t("bundle.choose", { title: s.title })} onClick={choose}>
            {t("common.browse")}
          </button>
        )}
      </div>
      {about}
    </div>
  );
}

/** Who signed the bundle; the certificate's details on hover. */
export function SignatureLine({ signature }: { signature: BundleSignature }) {
  const { t } = useI18n();
  if (signature.status === "unsigned") {
    return (
      <p className="signature warn" data-testid="bundle-signature" data-status="unsigned">
        {t("bundle.unsigned")}
      </p>
    );
  }
  const { signer } = signature;
  const text =
    signature.status === "signed"
      ? t("bundle.signed", { publisher: signer.publisher })
      : signature.status === "self_signed"
        ? t("bundle.selfSigned", { publisher: signer.publisher })
        : t("bundle.untrusted", { publisher: signer.publisher, reason: t(`bundle.distrust.${signature.reason}`) });
  const certificate = t("bundle.certificate", {
    issuer: signer.issuer,
    from: signer.valid_from,
    to: signer.valid_to,
    fingerprint: signer.fingerprint,
  });
  return (
    <p
      className={`signature ${signature.status === "signed" ? "ok" : "warn"}`}
      data-testid="bundle-signature"
      data-status={signature.status}
      title={certificate}
    >
      {signature.status === "signed" ? "✓ " : "⚠ "}
      {text}
    </p>
  );
}

export function BundleInstall({
  ipc,
  target,
  info,
  onClose,
  onInstalled,
}: {
  ipc: BundleIpc;
  target: BundleTarget;
  info: BundleInfo;
  onClose: () => void;
  onInstalled: (server: string) => void;
}) {
  const configuring = target.kind === "configure";
  const { t } = useI18n();
  const [form, setForm] = useState<Record<string, string | boolean>>(() =>
    Object.fromEntries(info.settings.map((s) => [s.key, initial(s)])),
  );
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);
  const install = () => {
    setBusy(true);
    setError(null);
    const values = bundleValues(info.settings, form);
    const done =
      target.kind === "install"
        ? ipc.installBundle(info.preview_id ?? "", info.signature.status === "unsigned" ? null : info.signature.signer.fingerprint, values)
        : ipc.configureBundle(target.server, values).then(() => target.server);
    done.then(
      (server) => onInstalled(server),
      (e: unknown) => {
        setError(toIpcError(e));
        setBusy(false);
      },
    );
  };
  return (
    <Dialog
      title={configuring ? t("bundle.settingsTitle", { title: info.title }) : t("bundle.title", { title: info.title })}
      onClose={onClose}
      testId="bundle-install"
    >
      <form
        className="bundle-install"
        onSubmit={(e) => {
          e.preventDefault();
          install();
        }}
      >
        <div className="row">
          {info.icon && <img className="bundle-icon" src={info.icon} alt="" width={48} height={48} data-testid="bundle-icon" />}
          <p data-testid="bundle-about">
            <strong>{info.title}</strong> {info.version} · {t("bundle.by", { author: info.author })}
          </p>
        </div>
        <SignatureLine signature={info.signature} />
        {info.signer_changed && info.installed_signature && info.installed_signature.status !== "unsigned" && (
          <p className="signature warn" data-testid="bundle-signer-changed">
            {t("bundle.signerChanged", {
              publisher: info.installed_signature.signer.publisher,
              fingerprint: info.installed_signature.signer.fingerprint.slice(0, 16),
            })}
          </p>
        )}
        {info.installed_version && (
          <p className="muted" data-testid="bundle-update">
            {t("bundle.update", { installed: info.installed_version, version: info.version })}
          </p>
        )}
        {info.description && <p>{info.description}</p>}
        <p className="muted small">
          {t("bundle.installsAs", { server: info.server_name })}
          {info.runtime && ` ${t("bundle.needs", { runtime: info.runtime })}`}
        </p>
        {info.tools.length > 0 && (
          <details>
            <summary>{t("bundle.tools", { count: info.tools.length })}</summary>
            <ul className="small">
              {info.tools.map((tool) => (
                <li key={tool.name}>
                  <code>{tool.name}</code> {tool.description}
                </li>
              ))}
            </ul>
          </details>
        )}
        {info.settings.map((s) => (
          <SettingField
            key={s.key}
            setting={s}
            value={form[s.key] ?? ""}
            onChange={(v) => setForm((f) => ({ ...f, [s.key]: v }))}
            pick={() => (s.kind === "directory" ? ipc.kbPickFolder() : ipc.pickSettingFile())}
          />
        ))}
        {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
        <div className="row">
          <button type="submit" className="primary" id="bundle-install-confirm" disabled={busy}>
            {busy
              ? t(configuring ? "common.saving" : "bundle.installing")
              : configuring
                ? t("bundle.saveSettings")
                : info.installed_version
                  ? t("bundle.updateButton")
                  : t("bundle.install")}
          </button>
          <button type="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
