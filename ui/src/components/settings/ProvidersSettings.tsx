// Provider profiles: add (from a preset or by hand)/edit/delete, an API key
// field that writes to the keyring and afterwards only says "set" or "not
// set", and a connection test that shows the real error or the provider's
// models to pick from. For an OpenAI-compatible server, the field it reads
// to think or not (filled in by a preset).
import { useCallback, useEffect, useMemo, useState } from "react";
import { useI18n } from "../../lib/i18n";
import {
  toIpcError,
  type Ipc,
  type IpcError,
  type PromptToolFormat,
  type ProviderKind,
  type ProviderPreset,
  type ProviderProfile,
  type ProviderView,
  type ThinkingParam,
} from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { PresetSelect } from "../common/PresetSelect";
import { useLoad } from "./useLoad";
import { useAborts } from "../../lib/aborts";
import { FormFooter } from "./FormFooter";
import { ListDetail } from "./ListDetail";

export type ProvidersIpc = Pick<Ipc, "listProviders" | "saveProvider" | "deleteProvider" | "testProvider" | "providerPresets">;

const BASE_URLS: Record<ProviderKind, string> = {
  openai: "https://api.openai.com/v1",
  anthropic: "https://api.anthropic.com",
  gemini: "https://generativelanguage.googleapis.com/v1beta",
};

function blank(): ProviderProfile {
  return {
    name: "",
    kind: "openai",
    base_url: BASE_URLS.openai,
    default_model: "",
    models: [],
    headers: {},
    api_key: null,
    native_tools: true,
    prompt_tool_format: "function_call",
    context_window: null,
    listed_windows: {},
    thinking: "auto",
  };
}

const THINKING: ThinkingParam[] = ["auto", "reasoning_effort", "thinking_type", "enable_thinking", "chat_template"];

function ProviderForm({
  initial,
  keySet,
  isNew,
  presets,
  onSave,
  onCancel,
}: {
  initial: ProviderProfile;
  keySet: boolean;
  isNew: boolean;
  presets: ProviderPreset[];
  onSave: (p: ProviderProfile, key: string | null) => void;
  onCancel: () => void;
}) {
  const { t } = useI18n();
  const [p, setP] = useState(initial);
  // What the provider's model list said of the default model's window, when it was tested.
  const listed: number | undefined = p.listed_windows[p.default_model];
  const [key, setKey] = useState("");
  const [models, setModels] = useState(initial.models.join(", "));
  const [preset, setPreset] = useState<ProviderPreset | null>(null);
  const choose = (id: string) => {
    const chosen = presets.find((x) => x.id === id) ?? null;
    setPreset(chosen);
    if (!chosen) return;
    // The name follows the preset until the user types one of their own.
    const name = p.name === "" || p.name === preset?.id ? chosen.id : p.name;
    setP({
      ...p,
      name,
      kind: chosen.kind,
      base_url: chosen.base_url,
      default_model: chosen.default_model,
      native_tools: chosen.native_tools,
      thinking: chosen.thinking,
    });
    setModels(chosen.models.join(", "));
  };
  return (
    <form
      className="card form"
      data-testid="provider-form"
      onSubmit={(e) => {
        e.preventDefault();
        const list = models.split(",").map((m) => m.trim()).filter(Boolean);
        const apiKey = key.trim() === "" ? null : key.trim();
        onSave({ ...p, models: list, api_key: apiKey || p.api_key ? (p.api_key ?? `provider/${p.name}/api_key`) : null }, apiKey);
      }}
    >
      {isNew && presets.length > 0 && (
        <PresetSelect
          id="provider-preset"
          label={t("providers.preset")}
          none={t("providers.presetCustom")}
          presets={presets}
          value={preset?.id ?? ""}
          onChange={choose}
        />
      )}
      <label className="field">
        <span>{t("providers.name")}</span>
        <input id="provider-name" required readOnly={!isNew} value={p.name} onChange={(e) => setP({ ...p, name: e.target.value })} />
      </label>
      <label className="field">
        <span>{t("providers.kind")}</span>
        <select
          id="provider-kind"
          value={p.kind}
          onChange={(e) => {
            const kind = e.target.value as ProviderKind;
            setP({ ...p, kind, base_url: p.base_url === BASE_URLS[p.kind] ? BASE_URLS[kind] : p.base_url });
          }}
        >
          <option value="openai">{t("providers.kindOpenai")}</option>
          <option value="anthropic">Anthropic</option>
          <option value="gemini">Google Gemini</option>
        </select>
      </label>
      <label className="field">
        <span>{t("providers.baseUrl")}</span>
        <input
          id="provider-base-url"
          type="url"
          required
          value={p.base_url}
          onChange={(e) => setP({ ...p, base_url: e.target.value })}
          aria-describedby="provider-base-url-hint"
        />
      </label>
      <small className="muted" id="provider-base-url-hint">
        {t("providers.baseUrlHint")}
      </small>
      <label className="field">
        <span>{t("providers.defaultModel")}</span>
        <input
          id="provider-model"
          required
          value={p.default_model}
          placeholder={preset ? t("providers.modelHint") : ""}
          onChange={(e) => setP({ ...p, default_model: e.target.value })}
          aria-describedby="provider-model-hint"
        />
      </label>
      <small className="muted" id="provider-model-hint">
        {t("providers.defaultModelHint")}
      </small>
      <label className="field">
        <span>{t("providers.models")}</span>
        <input id="provider-models" value={models} onChange={(e) => setModels(e.target.value)} placeholder="gpt-4o, gpt-4o-mini" />
      </label>
      <label className="field">
        <span>
          {t("providers.apiKey")}{" "}
          <small className="muted" data-testid="api-key-state">
            {keySet ? t("providers.keySet") : t("providers.keyNotSet")}
          </small>
          {preset && !preset.needs_key && (
            <small className="muted" data-testid="no-key-needed">
              {" "}
              {t("providers.noKeyNeeded")}
            </small>
          )}
        </span>
        <input
          id="provider-api-key"
          type="password"
          autoComplete="off"
          value={key}
          placeholder={keySet ? t("providers.keyReplace") : ""}
          onChange={(e) => setKey(e.target.value)}
          aria-describedby="provider-api-key-hint"
        />
      </label>
      <small className="muted" id="provider-api-key-hint">
        {t(keySet ? "providers.apiKeyHint" : "providers.apiKeyHintNew")}
      </small>
      <label className="check">
        <input
          type="checkbox"
          checked={p.native_tools}
          onChange={(e) => setP({ ...p, native_tools: e.target.checked })}
          aria-describedby="provider-native-tools-hint"
        />{" "}
        {t("providers.nativeTools")}
      </label>
      <small className="muted" id="provider-native-tools-hint">
        {t("providers.nativeToolsHint")}
      </small>
      {!p.native_tools && (
        <label className="field">
          <span>{t("providers.promptToolFormat")}</span>
          <select
            id="provider-prompt-tool-format"
            value={p.prompt_tool_format}
            onChange={(e) => setP({ ...p, prompt_tool_format: e.target.value as PromptToolFormat })}
          >
            <option value="function_call">{t("providers.promptToolFormat.functionCall")}</option>
            <option value="use_mcp_tool">{t("providers.promptToolFormat.useMcpTool")}</option>
          </select>
        </label>
      )}
      <label className="field">
        <span>{t("providers.contextWindow")}</span>
        <input
          id="provider-context-window"
          type="number"
          min={1}
          placeholder={
            listed === undefined ? t("providers.contextWindowAuto") : t("providers.contextWindowListed", { tokens: listed.toLocaleString() })
          }
          value={p.context_window ?? ""}
          onChange={(e) => setP({ ...p, context_window: e.target.value === "" ? null : Math.max(1, Math.round(Number(e.target.value))) })}
          aria-describedby="provider-context-window-hint"
        />
      </label>
      <small className="muted" id="provider-context-window-hint">
        {t("providers.contextWindowHint")}
      </small>
      {p.kind === "openai" && (
        <label className="field">
          <span>{t("providers.thinking")}</span>
          <select id="provider-thinking" value={p.thinking} onChange={(e) => setP({ ...p, thinking: e.target.value as ThinkingParam })}>
            {THINKING.map((param) => (
              <option key={param} value={param}>
                {t(`providers.thinking.${param}`)}
              </option>
            ))}
          </select>
        </label>
      )}
      <FormFooter saveId="provider-save" primary onCancel={onCancel} />
    </form>
  );
}

/** The models a connection test found, to check the ones the model picker offers. */
function ModelPicker({ profile, available, onSave }: { profile: ProviderProfile; available: string[]; onSave: (models: string[]) => void }) {
  const { t } = useI18n();
  const [checked, setChecked] = useState(() => new Set(profile.models));
  const [filter, setFilter] = useState("");
  const shown = useMemo(() => {
    const needle = filter.trim().toLowerCase();
    return [...available].sort().filter((m) => m !== profile.default_model && m.toLowerCase().includes(needle));
  }, [available, filter, profile.default_model]);
  // The default model is always offered; these come besides it.
  const offered = [...checked].filter((m) => m !== profile.default_model);
  const toggle = (model: string, on: boolean) =>
    setChecked((x) => {
      const next = new Set(x);
      if (on) next.add(model);
      else next.delete(model);
      return next;
    });
  return (
    <details data-testid="model-picker">
      <summary>{t("providers.pickModels")}</summary>
      {available.length > 12 && (
        <input type="search" aria-label={t("providers.filterModels")} placeholder={t("providers.filterModels")} value={filter} onChange={(e) => setFilter(e.target.value)} />
      )}
      <ul className="model-list">
        {shown.map((m) => (
          <li key={m}>
            <label className="check">
              <input type="checkbox" checked={checked.has(m)} onChange={(e) => toggle(m, e.target.checked)} /> {m}
            </label>
          </li>
        ))}
      </ul>
      <button type="button" onClick={() => onSave(offered)}>
        {t("providers.useModels", { count: offered.length })}
      </button>
    </details>
  );
}

export function ProvidersSettings({ ipc }: { ipc: ProvidersIpc }) {
  const { t } = useI18n();
  const load = useCallback(() => ipc.listProviders(), [ipc]);
  const { data, error, setError, act } = useLoad<ProviderView[]>(load);
  const [presets, setPresets] = useState<ProviderPreset[]>([]);
  useEffect(() => {
    ipc.providerPresets().then(setPresets, (e: unknown) => setError(toIpcError(e)));
  }, [ipc, setError]);
  const [editing, setEditing] = useState<{ view: ProviderView; isNew: boolean } | null>(null);
  const [tests, setTests] = useState<Record<string, { ok: true; models: string[] } | { ok: false; error: IpcError } | "busy">>({});

  // A test runs until it answers, the user calls it off, or the page goes.
  const aborts = useAborts({ onUnmount: true });
  const test = (name: string) => {
    setTests((x) => ({ ...x, [name]: "busy" }));
    const signal = aborts.start(name);
    ipc
      .testProvider(name, signal)
      .then((models) => setTests((x) => ({ ...x, [name]: { ok: true, models } })))
      .catch((e: unknown) => {
        const error = toIpcError(e);
        setTests((x) => {
          if (error.kind !== "cancelled") return { ...x, [name]: { ok: false, error } };
          const rest = { ...x };
          delete rest[name];
          return rest;
        });
      })
      .finally(() => aborts.end(name, signal));
  };

  return (
    <div data-testid="providers-settings">
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      {/* The list beside the provider being added or edited, as on the servers page. */}
      <ListDetail
        detail={
          editing && (
            <ProviderForm
              key={editing.view.profile.name}
              initial={editing.view.profile}
              keySet={editing.view.api_key_set}
              isNew={editing.isNew}
              presets={presets}
              onCancel={() => setEditing(null)}
              onSave={(p, key) => {
                void act(() => ipc.saveProvider(p, key)).then((ok) => ok && setEditing(null));
              }}
            />
          )
        }
      >
        <ul className="list">
          {(data ?? []).map((v) => {
            const r = tests[v.profile.name];
            return (
              <li
                key={v.profile.name}
                className={editing?.view.profile.name === v.profile.name ? "card active" : "card"}
                aria-current={editing?.view.profile.name === v.profile.name || undefined}
                data-testid="provider-row"
              >
                <div className="row">
                  <strong>{v.profile.name}</strong>
                  <span className="muted">
                    {v.profile.kind} · {v.profile.default_model}
                  </span>
                  <span className={v.api_key_set ? "badge ok" : "badge"}>{v.api_key_set ? t("providers.keySet") : t("providers.keyNotSet")}</span>
                  <span className="spacer" />
                  {r === "busy" ? (
                    <button type="button" onClick={() => aborts.cancel(v.profile.name)} data-testid="provider-test-cancel">
                      {t("providers.cancelTest")}
                    </button>
                  ) : (
                    <button type="button" onClick={() => test(v.profile.name)} data-testid="provider-test">
                      {t("providers.test")}
                    </button>
                  )}
                  <button type="button" onClick={() => setEditing({ view: v, isNew: false })}>
                    {t("common.edit")}
                  </button>
                  <button type="button" className="danger" onClick={() => void act(() => ipc.deleteProvider(v.profile.name))}>
                    {t("common.delete")}
                  </button>
                </div>
                {r && r !== "busy" && r.ok && (
                  <>
                    <p className="ok-text" role="status">
                      {t("providers.testOk", { count: r.models.length })}
                    </p>
                    {r.models.length > 0 && (
                      <ModelPicker
                        profile={v.profile}
                        available={r.models}
                        onSave={(models) => void act(() => ipc.saveProvider({ ...v.profile, models }, null))}
                      />
                    )}
                  </>
                )}
                {r && r !== "busy" && !r.ok && <ErrorBanner error={r.error} />}
              </li>
            );
          })}
        </ul>
        {data && data.length === 0 && <p className="muted">{t("providers.empty")}</p>}
        {!editing && (
          <button type="button" id="provider-add" className="primary" onClick={() => setEditing({ view: { profile: blank(), api_key_set: false, windows: {}, max_tools: null }, isNew: true })}>
            {t("providers.add")}
          </button>
        )}
      </ListDetail>
    </div>
  );
}
