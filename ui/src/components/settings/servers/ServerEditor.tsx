// Edit form for one MCP server, with the fields of its transport: command,
// args as a list, env as key/value with a "secret" toggle (on by itself for a
// new row whose name looks secret, by the import's rule), cwd; or url and
// headers, and how Patchbay signs in to a remote server (the server's own OAuth
// in the browser, or client credentials: a client secret or a private key).
// A new server can start from a preset (the reference servers, GitHub, …).
// Its security policy is the `PolicyEditor` section; a policy the core finds
// fault with is not saved. Secret values go to the keyring through `secrets`,
// never into the config.
import { useEffect, useState } from "react";
import { isMessageKey, useI18n } from "../../../lib/i18n";
import { isSecretName } from "../../../lib/secretNames";
import { PresetSelect } from "../../common/PresetSelect";
import { fromDraft, PolicyEditor, toDraft, type PolicyDraft } from "./PolicyEditor";
import type {
  ApprovalMode,
  ClientCredentials,
  FieldProblem,
  Ipc,
  JwtAlgorithm,
  McpServerConfig,
  PolicyPreview,
  PolicySettings,
  ServerPreset,
  TransportType,
  ValueSource,
} from "../../../lib/ipc";
import { FormFooter } from "../FormFooter";

/** What the editor asks the backend: the levels offered and the policy as edited. */
export type PolicyIpc = Pick<Ipc, "policySettings" | "policyPreview">;

/** A new server's settings before the user fills them in. */
export function blankServer(): McpServerConfig {
  return {
    name: "",
    transport: { type: "stdio", command: "", args: [], env: {}, cwd: null },
    enabled: true,
    timeouts: { startup_secs: 30, call_secs: 60 },
    approval: "ask",
    tool_approval: {},
    disabled_tools: [],
    share_roots: false,
    read_only_auto_allow: false,
    extra: {},
  };
}

type AuthMethod = "browser" | "secret" | "private_key";

const ALGORITHMS: JwtAlgorithm[] = ["ES256", "ES384", "RS256", "RS384", "RS512"];

/** The keyring entry of a server's client-credentials material (as the core names it on import). */
export function clientSecretName(server: string, method: "secret" | "private_key"): string {
  return `mcp/${server}/${method === "secret" ? "oauth_client_secret" : "oauth_private_key"}`;
}

/** The configured keyring reference of the credentials' material, if any. */
function storedMaterial(c: ClientCredentials | null | undefined): string | null {
  if (!c) return null;
  const v = c.key.method === "secret" ? c.key.secret : c.key.pem;
  return "secret" in v ? v.secret : null;
}

/**
 * Builds the client credentials and the secret to write. Typed material goes to
 * the keyring; left empty with the same method, the stored entry stays.
 */
export function buildCredentials(
  server: string,
  method: AuthMethod,
  fields: { clientId: string; material: string; algorithm: JwtAlgorithm; scopes: string },
  initial: ClientCredentials | null | undefined,
): { credentials: ClientCredentials | null; secrets: Record<string, string> } {
  if (method === "browser") return { credentials: null, secrets: {} };
  const same = initial?.key.method === method ? storedMaterial(initial) : null;
  const name = same ?? clientSecretName(server, method);
  const ref: ValueSource = { secret: name };
  const key = method === "secret" ? { method, secret: ref } : { method, pem: ref, algorithm: fields.algorithm };
  const scopes = fields.scopes.split(/\s+/).filter((x) => x !== "");
  return {
    credentials: { client_id: fields.clientId.trim(), key, scopes },
    secrets: fields.material !== "" ? { [name]: fields.material } : {},
  };
}

interface Pair {
  key: string;
  value: string;
  secret: boolean;
  /** A secret already stored: left empty, it keeps its value. */
  stored: string | null;
  /** A new row whose "secret" box follows its name (the import's rule) until the user ticks it. */
  auto?: boolean;
  /** Read from the environment at start (an imported `${env:NAME}`): kept so while not a secret. */
  env?: boolean;
}

/** A secret named "" (a preset's) is one still to be typed. */
function toPairs(map: Record<string, ValueSource>): Pair[] {
  return Object.entries(map).map(([key, v]) =>
    "secret" in v
      ? { key, value: "", secret: true, stored: v.secret || null }
      : "env" in v
        ? { key, value: v.env, secret: false, stored: null, env: true }
        : { key, value: v.plain, secret: false, stored: null },
  );
}

export function secretName(server: string, area: "env" | "header", key: string): string {
  return `mcp/${server}/${area}/${key}`;
}

/** Builds the value map and the secrets to write from the edited pairs. */
export function fromPairs(
  server: string,
  area: "env" | "header",
  pairs: Pair[],
): { map: Record<string, ValueSource>; secrets: Record<string, string> } {
  const map: Record<string, ValueSource> = {};
  const secrets: Record<string, string> = {};
  for (const p of pairs) {
    const key = p.key.trim();
    if (!key) continue;
    if (p.secret) {
      const name = p.stored ?? secretName(server, area, key);
      map[key] = { secret: name };
      if (p.value !== "") secrets[name] = p.value;
    } else map[key] = p.env ? { env: p.value } : { plain: p.value };
  }
  return { map, secrets };
}

function PairsEditor({ label, pairs, onChange, testId }: { label: string; pairs: Pair[]; onChange: (p: Pair[]) => void; testId: string }) {
  const { t } = useI18n();
  const set = (i: number, p: Partial<Pair>) => onChange(pairs.map((x, j) => (j === i ? { ...x, ...p } : x)));
  return (
    <fieldset data-testid={testId}>
      <legend>{label}</legend>
      {pairs.map((p, i) => (
        <div className="row" key={i}>
          <input
            aria-label={t("servers.key")}
            placeholder={t("servers.key")}
            value={p.key}
            onChange={(e) => set(i, p.auto ? { key: e.target.value, secret: isSecretName(e.target.value) } : { key: e.target.value })}
          />
          <input
            aria-label={t("servers.value")}
            type={p.secret ? "password" : "text"}
            placeholder={p.stored ? t("servers.secretStored") : t("servers.value")}
            value={p.value}
            onChange={(e) => set(i, { value: e.target.value })}
          />
          {p.env && !p.secret && (
            <span className="badge" data-testid="env-pair" title={t("servers.fromEnvironmentHint")}>
              {t("servers.fromEnvironment")}
            </span>
          )}
          <label className="check">
            <input type="checkbox" checked={p.secret} onChange={(e) => set(i, { secret: e.target.checked, auto: false })} /> {t("servers.secret")}
          </label>
          <button type="button" className="icon" aria-label={t("common.remove")} onClick={() => onChange(pairs.filter((_, j) => j !== i))}>
            ×
          </button>
        </div>
      ))}
      <button type="button" onClick={() => onChange([...pairs, { key: "", value: "", secret: false, stored: null, auto: true }])}>
        {t("servers.addPair")}
      </button>
    </fieldset>
  );
}

export function ServerEditor({
  ipc,
  initial: given,
  isNew,
  presets = [],
  onSave,
  onCancel,
}: {
  ipc: PolicyIpc;
  initial: McpServerConfig;
  isNew: boolean;
  /** Offered to a new server to start from. */
  presets?: ServerPreset[];
  onSave: (c: McpServerConfig, secrets: Record<string, string>) => void;
  onCancel: () => void;
}) {
  const { t } = useI18n();
  const [preset, setPreset] = useState<ServerPreset | null>(null);
  const initial = preset?.config ?? given;
  const tr = initial.transport;
  const [name, setName] = useState(initial.name);
  const [type, setType] = useState<TransportType>(tr.type);
  const [command, setCommand] = useState(tr.type === "stdio" ? tr.command : "");
  const [args, setArgs] = useState<string[]>(tr.type === "stdio" ? tr.args : []);
  const [cwd, setCwd] = useState(tr.type === "stdio" ? (tr.cwd ?? "") : "");
  const [env, setEnv] = useState<Pair[]>(tr.type === "stdio" ? toPairs(tr.env) : []);
  const [url, setUrl] = useState(tr.type !== "stdio" ? tr.url : "");
  const [headers, setHeaders] = useState<Pair[]>(tr.type !== "stdio" ? toPairs(tr.headers) : []);
  const [approval, setApproval] = useState<ApprovalMode>(initial.approval);
  const [startup, setStartup] = useState(String(initial.timeouts.startup_secs));
  const [callSecs, setCallSecs] = useState(String(initial.timeouts.call_secs));
  const [shareRoots, setShareRoots] = useState(initial.share_roots);
  const [readOnlyAuto, setReadOnlyAuto] = useState(initial.read_only_auto_allow);
  const [policy, setPolicy] = useState<PolicyDraft>(() => toDraft(initial.policy));
  const [policySettings, setPolicySettings] = useState<PolicySettings | null>(null);
  const [preview, setPreview] = useState<PolicyPreview | null>(null);
  const [policyError, setPolicyError] = useState<FieldProblem | null>(null);
  const about = (id: string) => {
    const key = `serverPresets.${id}`;
    return isMessageKey(key) ? t(key) : "";
  };
  /** Fills the form from a preset; the name follows it until the user types one of their own. */
  const choose = (id: string) => {
    const chosen = presets.find((p) => p.id === id) ?? null;
    const c = (chosen ?? { config: given }).config;
    const x = c.transport;
    if (name === "" || name === preset?.id) setName(chosen?.id ?? "");
    setPreset(chosen);
    setType(x.type);
    setCommand(x.type === "stdio" ? x.command : "");
    setArgs(x.type === "stdio" ? x.args : []);
    setCwd(x.type === "stdio" ? (x.cwd ?? "") : "");
    setEnv(x.type === "stdio" ? toPairs(x.env) : []);
    setUrl(x.type !== "stdio" ? x.url : "");
    setHeaders(x.type !== "stdio" ? toPairs(x.headers) : []);
    setShareRoots(c.share_roots);
    setReadOnlyAuto(c.read_only_auto_allow);
    setPolicy(toDraft(c.policy));
  };
  const cc = initial.client_credentials ?? null;
  const [auth, setAuth] = useState<AuthMethod>(cc ? cc.key.method : "browser");
  const [clientId, setClientId] = useState(cc?.client_id ?? "");
  const [material, setMaterial] = useState("");
  const [algorithm, setAlgorithm] = useState<JwtAlgorithm>(cc?.key.method === "private_key" ? cc.key.algorithm : "ES256");
  const [scopes, setScopes] = useState((cc?.scopes ?? []).join(" "));
  const materialStored = cc?.key.method === auth && storedMaterial(cc) !== null;

  /** The server as the form has it, and the secrets to write. */
  const build = (): { config: McpServerConfig; secrets: Record<string, string> } => {
    const n = name.trim();
    const secs = (v: string, fallback: number) => (Number(v) > 0 ? Math.round(Number(v)) : fallback);
    const base: McpServerConfig = {
      ...initial,
      name: n,
      approval,
      share_roots: shareRoots,
      read_only_auto_allow: readOnlyAuto,
      timeouts: { startup_secs: secs(startup, initial.timeouts.startup_secs), call_secs: secs(callSecs, initial.timeouts.call_secs) },
      policy: fromDraft(policy, type !== "stdio"),
    };
    if (type === "stdio") {
      const e = fromPairs(n, "env", env);
      return {
        config: {
          ...base,
          transport: { type, command: command.trim(), args: args.filter((a) => a !== ""), env: e.map, cwd: cwd.trim() || null },
          // A local server has no sign-in (the editor hides it, so drop what a remote one had).
          client_credentials: null,
        },
        secrets: e.secrets,
      };
    }
    const h = fromPairs(n, "header", headers);
    const c = buildCredentials(n, auth, { clientId, material, algorithm, scopes }, cc);
    return {
      config: { ...base, transport: { type, url: url.trim(), headers: h.map }, client_credentials: c.credentials },
      secrets: { ...h.secrets, ...c.secrets },
    };
  };
  // Without its secrets: the preview needs the policy and what it is derived from.
  const edited = JSON.stringify(build().config);

  useEffect(() => {
    let live = true;
    ipc.policySettings().then((s) => live && setPolicySettings(s), () => undefined);
    return () => {
      live = false;
    };
  }, [ipc]);
  // The line the server's page will show and the policy's problems, as the form changes.
  useEffect(() => {
    let live = true;
    ipc.policyPreview(JSON.parse(edited) as McpServerConfig).then((p) => live && setPreview(p), () => undefined);
    return () => {
      live = false;
    };
  }, [ipc, edited]);

  const submit = () => {
    const { config, secrets } = build();
    // The core refuses a policy with problems: say which field before trying.
    void ipc.policyPreview(config).then(
      (p) => {
        setPreview(p);
        const first = p.problems[0] ?? null;
        setPolicyError(first);
        if (!first) onSave(config, secrets);
      },
      () => onSave(config, secrets),
    );
  };

  return (
    <form
      className="card form"
      data-testid="server-editor"
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      {isNew && presets.length > 0 && (
        <PresetSelect
          id="server-preset"
          label={t("servers.preset")}
          none={t("servers.presetNone")}
          presets={presets}
          value={preset?.id ?? ""}
          onChange={choose}
        />
      )}
      {preset && (
        <p className="muted small" data-testid="server-preset-about">
          {about(preset.id)} {preset.needs && t("servers.presetNeeds", { program: preset.needs })}
        </p>
      )}
      <label className="field">
        <span>{t("servers.name")}</span>
        <input id="server-name" required readOnly={!isNew} pattern="[A-Za-z0-9_-]+" value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label className="field">
        <span>{t("servers.transport")}</span>
        <select id="server-transport" value={type} onChange={(e) => setType(e.target.value as TransportType)}>
          <option value="stdio">{t("servers.stdio")}</option>
          <option value="streamable_http">{t("servers.http")}</option>
          <option value="sse">{t("servers.sse")}</option>
          <option value="auto">{t("servers.auto")}</option>
        </select>
      </label>
      {type === "stdio" ? (
        <>
          <label className="field">
            <span>{t("servers.command")}</span>
            <input id="server-command" required value={command} onChange={(e) => setCommand(e.target.value)} placeholder="npx" />
          </label>
          <fieldset data-testid="server-args">
            <legend>{t("servers.args")}</legend>
            {args.map((a, i) => (
              <div className="row" key={i}>
                <input
                  aria-label={t("servers.arg", { n: i + 1 })}
                  value={a}
                  onChange={(e) => setArgs(args.map((x, j) => (j === i ? e.target.value : x)))}
                />
                <button type="button" className="icon" aria-label={t("common.remove")} onClick={() => setArgs(args.filter((_, j) => j !== i))}>
                  ×
                </button>
              </div>
            ))}
            <button type="button" onClick={() => setArgs([...args, ""])}>
              {t("servers.addArg")}
            </button>
          </fieldset>
          <PairsEditor label={t("servers.env")} pairs={env} onChange={setEnv} testId="server-env" />
          <label className="field">
            <span>{t("servers.cwd")}</span>
            <input id="server-cwd" value={cwd} onChange={(e) => setCwd(e.target.value)} />
          </label>
        </>
      ) : (
        <>
          <label className="field">
            <span>{t("servers.url")}</span>
            <input id="server-url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/mcp" />
          </label>
          <PairsEditor label={t("servers.headers")} pairs={headers} onChange={setHeaders} testId="server-headers" />
          <fieldset data-testid="server-auth">
            <legend>{t("servers.auth")}</legend>
            <select id="server-auth-method" aria-label={t("servers.auth")} value={auth} onChange={(e) => setAuth(e.target.value as AuthMethod)}>
              <option value="browser">{t("servers.authBrowser")}</option>
              <option value="secret">{t("servers.authSecret")}</option>
              <option value="private_key">{t("servers.authPrivateKey")}</option>
            </select>
            {auth !== "browser" && (
              <>
                <label className="field">
                  <span>{t("servers.clientId")}</span>
                  <input id="server-client-id" required value={clientId} onChange={(e) => setClientId(e.target.value)} />
                </label>
                {auth === "secret" ? (
                  <label className="field">
                    <span>{t("servers.clientSecret")}</span>
                    <input
                      id="server-client-secret"
                      type="password"
                      required={!materialStored}
                      placeholder={materialStored ? t("servers.secretStored") : ""}
                      value={material}
                      onChange={(e) => setMaterial(e.target.value)}
                    />
                  </label>
                ) : (
                  <>
                    <label className="field">
                      <span>{t("servers.privateKey")}</span>
                      <textarea
                        id="server-private-key"
                        rows={4}
                        required={!materialStored}
                        placeholder={materialStored ? t("servers.secretStored") : "-----BEGIN PRIVATE KEY-----"}
                        value={material}
                        onChange={(e) => setMaterial(e.target.value)}
                      />
                    </label>
                    <label className="field">
                      <span>{t("servers.jwtAlgorithm")}</span>
                      <select id="server-jwt-algorithm" value={algorithm} onChange={(e) => setAlgorithm(e.target.value as JwtAlgorithm)}>
                        {ALGORITHMS.map((a) => (
                          <option key={a} value={a}>
                            {a}
                          </option>
                        ))}
                      </select>
                    </label>
                  </>
                )}
                <label className="field">
                  <span>{t("servers.scopes")}</span>
                  <input id="server-scopes" value={scopes} onChange={(e) => setScopes(e.target.value)} placeholder="mcp:read mcp:write" />
                </label>
              </>
            )}
          </fieldset>
        </>
      )}
      <label className="field">
        <span>{t("servers.approval")}</span>
        <select id="server-approval" value={approval} onChange={(e) => setApproval(e.target.value as ApprovalMode)}>
          <option value="ask">{t("tools.ask")}</option>
          <option value="allow">{t("tools.allow")}</option>
          <option value="deny">{t("tools.deny")}</option>
        </select>
      </label>
      <label className="check">
        <input
          id="server-read-only-auto"
          type="checkbox"
          checked={readOnlyAuto}
          onChange={(e) => setReadOnlyAuto(e.target.checked)}
        />{" "}
        {t("servers.readOnlyAuto")}
      </label>
      <p className="muted small">{t("servers.readOnlyAutoHint")}</p>
      <div className="row">
        <label className="field">
          <span>{t("servers.startupSecs")}</span>
          <input id="server-startup-secs" type="number" min="1" value={startup} onChange={(e) => setStartup(e.target.value)} />
        </label>
        <label className="field">
          <span>{t("servers.callSecs")}</span>
          <input id="server-call-secs" type="number" min="1" value={callSecs} onChange={(e) => setCallSecs(e.target.value)} />
        </label>
      </div>
      <label className="check">
        <input id="server-share-roots" type="checkbox" checked={shareRoots} onChange={(e) => setShareRoots(e.target.checked)} />{" "}
        {t("servers.shareRoots")}
      </label>
      <PolicyEditor
        draft={policy}
        onChange={setPolicy}
        remote={type !== "stdio"}
        offered={policySettings?.offered ?? []}
        defaultLevel={policySettings?.defaults.level ?? null}
        summary={preview?.summary ?? null}
        problems={preview?.problems ?? []}
      />
      {policyError && (
        <p className="error-text" role="alert" data-testid="policy-error">
          {t("policy.fix", { field: policyError.field, reason: policyError.reason })}
        </p>
      )}
      <FormFooter saveId="server-save" primary onCancel={onCancel} cancelId="server-cancel" />
    </form>
  );
}
