// The "Security" section of the server editor: the level (only those this
// system can enforce), the folders it may read and write, its network, the
// variables passed through and its rate limits; a remote server gets the rate
// limits only. The core checks the policy (`policyPreview`): its one-line
// summary is shown as edited (worded here, `policyLine`), and each problem next to its field.
import { useI18n } from "../../../lib/i18n";
import type { FieldProblem, Policy, PolicyOutline, SecurityLevel } from "../../../lib/ipc";
import { policyLine } from "../../../lib/policyLine";

/** The form's state: rows as typed (empty ones are left out of the policy). */
export interface PolicyDraft {
  level: SecurityLevel | "";
  read: string[];
  write: string[];
  network: "" | "off" | "domains" | "any";
  domains: string[];
  env: string[];
  perTool: string;
  perServer: string;
}

export function toDraft(p: Policy | undefined): PolicyDraft {
  const net = p?.network;
  return {
    level: p?.level ?? "",
    read: p?.read ?? [],
    write: p?.write ?? [],
    network: net == null ? "" : typeof net === "string" ? net : "domains",
    domains: net && typeof net === "object" ? net.domains : [],
    env: p?.env ?? [],
    perTool: p?.rate?.per_tool_per_min?.toString() ?? "",
    perServer: p?.rate?.per_server_per_min?.toString() ?? "",
  };
}

/** The rows that are filled in, each with the row it came from (the core's problems name the former). */
function filled(rows: string[]): { values: string[]; rows: number[] } {
  const kept = rows.map((v, i) => [v.trim(), i] as const).filter(([v]) => v !== "");
  return { values: kept.map(([v]) => v), rows: kept.map(([, i]) => i) };
}

/** A typed limit: empty is none; what is not a whole number above zero goes to the core to be named. */
function limit(text: string): number | undefined {
  if (text.trim() === "") return undefined;
  const n = Math.floor(Number(text));
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** The policy to save; a remote server keeps only its level and rate limits. */
export function fromDraft(d: PolicyDraft, remote: boolean): Policy {
  const rate = { per_tool_per_min: limit(d.perTool), per_server_per_min: limit(d.perServer) };
  const policy: Policy = {};
  if (d.level) policy.level = d.level;
  if (rate.per_tool_per_min !== undefined || rate.per_server_per_min !== undefined) {
    policy.rate = Object.fromEntries(Object.entries(rate).filter(([, v]) => v !== undefined));
  }
  if (remote) return policy;
  const [read, write, env] = [filled(d.read).values, filled(d.write).values, filled(d.env).values];
  if (read.length) policy.read = read;
  if (write.length) policy.write = write;
  if (env.length) policy.env = env;
  if (d.network === "domains") policy.network = { domains: filled(d.domains).values };
  else if (d.network) policy.network = d.network;
  return policy;
}

/** The problem of row `row` of the list `field` (`policy.read`), by the core's index of filled rows. */
function rowProblem(problems: FieldProblem[], field: string, rows: string[], row: number): FieldProblem | undefined {
  const index = filled(rows).rows.indexOf(row);
  return index < 0 ? undefined : problems.find((p) => p.field === `${field}[${index}]`);
}

function Problem({ problem }: { problem: FieldProblem | undefined }) {
  return problem ? (
    <span className="error-text small" role="alert" data-testid="policy-problem" data-field={problem.field}>
      {problem.reason}
    </span>
  ) : null;
}

function Rows({
  id,
  label,
  rowLabel,
  add,
  rows,
  field,
  problems,
  placeholder,
  onChange,
}: {
  id: string;
  label: string;
  rowLabel: (n: number) => string;
  add: string;
  rows: string[];
  field: string;
  problems: FieldProblem[];
  placeholder?: string;
  onChange: (rows: string[]) => void;
}) {
  const { t } = useI18n();
  return (
    <fieldset data-testid={id}>
      <legend>{label}</legend>
      {rows.map((v, i) => (
        <div className="row" key={i}>
          <input aria-label={rowLabel(i + 1)} value={v} placeholder={placeholder} onChange={(e) => onChange(rows.map((x, j) => (j === i ? e.target.value : x)))} />
          <button type="button" className="icon" aria-label={t("common.remove")} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            ×
          </button>
          <Problem problem={rowProblem(problems, field, rows, i)} />
        </div>
      ))}
      <button type="button" onClick={() => onChange([...rows, ""])}>
        {add}
      </button>
    </fieldset>
  );
}

export function PolicyEditor({
  draft,
  onChange,
  remote,
  offered,
  defaultLevel,
  summary,
  problems,
}: {
  draft: PolicyDraft;
  onChange: (d: PolicyDraft) => void;
  /** An HTTP or SSE server: only its rate limits apply. */
  remote: boolean;
  /** The levels this system can enforce. */
  offered: SecurityLevel[];
  /** The global default level, for the "default" choice. */
  defaultLevel: SecurityLevel | null;
  /** The policy as the server's page will show it; null while it is being worked out. */
  summary: PolicyOutline | null;
  problems: FieldProblem[];
}) {
  const { t } = useI18n();
  const set = (p: Partial<PolicyDraft>) => onChange({ ...draft, ...p });
  const problem = (field: string) => problems.find((p) => p.field === field);
  const level = draft.level || defaultLevel;
  const rate = (
    <div className="row">
      <div>
        <label className="field">
          <span>{t("policy.ratePerTool")}</span>
          <input id="policy-rate-tool" type="number" min="1" value={draft.perTool} onChange={(e) => set({ perTool: e.target.value })} />
        </label>
        <Problem problem={problem("policy.rate.per_tool_per_min")} />
      </div>
      <div>
        <label className="field">
          <span>{t("policy.ratePerServer")}</span>
          <input id="policy-rate-server" type="number" min="1" value={draft.perServer} onChange={(e) => set({ perServer: e.target.value })} />
        </label>
        <Problem problem={problem("policy.rate.per_server_per_min")} />
      </div>
    </div>
  );
  return (
    <fieldset className="policy-editor" data-testid="policy-editor">
      <legend>{t("policy.section")}</legend>
      {summary && (
        <p className="muted small" data-testid="policy-summary">
          {t("policy.summary", { summary: policyLine(t, summary) })}
        </p>
      )}
      {remote ? (
        <>
          <p className="muted small" data-testid="policy-remote">
            {t("policy.remote")}
          </p>
          {rate}
          <p className="muted small">{t("policy.rateHint")}</p>
        </>
      ) : (
        <>
          <label className="field">
            <span>{t("policy.level")}</span>
            <select id="policy-level" value={draft.level} onChange={(e) => set({ level: e.target.value as SecurityLevel | "" })}>
              <option value="">{t("policy.levelDefault", { level: defaultLevel ?? "…" })}</option>
              {offered.map((l) => (
                <option key={l} value={l}>
                  {t(`policy.level.${l}`)}
                </option>
              ))}
            </select>
          </label>
          <Problem problem={problem("policy.level")} />
          {level === "permissive" && (
            <p className="error-text" role="note" data-testid="policy-permissive">
              {t("policy.permissiveWarning")}
            </p>
          )}
          <Rows
            id="policy-read"
            label={t("policy.read")}
            rowLabel={(n) => t("policy.folder", { n })}
            add={t("policy.addFolder")}
            rows={draft.read}
            field="policy.read"
            problems={problems}
            placeholder="/home/you/Projects"
            onChange={(read) => set({ read })}
          />
          <Rows
            id="policy-write"
            label={t("policy.write")}
            rowLabel={(n) => t("policy.folder", { n })}
            add={t("policy.addFolder")}
            rows={draft.write}
            field="policy.write"
            problems={problems}
            onChange={(write) => set({ write })}
          />
          <p className="muted small">{t("policy.foldersHint")}</p>
          <label className="field">
            <span>{t("policy.network")}</span>
            <select id="policy-network" value={draft.network} onChange={(e) => set({ network: e.target.value as PolicyDraft["network"] })}>
              <option value="">{t("policy.networkDefault")}</option>
              <option value="off">{t("policy.networkOff")}</option>
              <option value="domains">{t("policy.networkDomains")}</option>
              <option value="any">{t("policy.networkAny")}</option>
            </select>
          </label>
          {draft.network === "domains" && (
            <>
              <Rows
                id="policy-domains"
                label={t("policy.networkDomains")}
                rowLabel={(n) => t("policy.domain", { n })}
                add={t("policy.addDomain")}
                rows={draft.domains}
                field="policy.network.domains"
                problems={problems}
                placeholder="*.github.com"
                onChange={(domains) => set({ domains })}
              />
              <p className="muted small">{t("policy.domainsHint")}</p>
            </>
          )}
          <Rows
            id="policy-env"
            label={t("policy.env")}
            rowLabel={(n) => t("policy.envName", { n })}
            add={t("policy.addEnv")}
            rows={draft.env}
            field="policy.env"
            problems={problems}
            onChange={(env) => set({ env })}
          />
          <p className="muted small">{t("policy.envHint")}</p>
          {rate}
          <p className="muted small">{t("policy.rateHint")}</p>
        </>
      )}
    </fieldset>
  );
}
