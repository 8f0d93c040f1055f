// Assistant presets: system prompt, provider and model, sampling settings,
// enabled servers, knowledge-base mode and how much context it adds.
import { useCallback, useState } from "react";
import { useI18n } from "../../lib/i18n";
import type { Assistant, Ipc, KbMode } from "../../lib/ipc";
import { ReasoningSelect } from "../common/ReasoningSelect";
import { ErrorBanner } from "../ErrorBanner";
import { useLoad } from "./useLoad";
import { FormFooter } from "./FormFooter";
import { ListDetail } from "./ListDetail";

export type AssistantsIpc = Pick<Ipc, "listAssistants" | "saveAssistant" | "deleteAssistant">;

export function blank(): Assistant {
  return {
    id: "",
    name: "",
    system_prompt: "",
    provider: null,
    model: null,
    temperature: null,
    top_p: null,
    max_tokens: null,
    reasoning: null,
    servers: null,
    disabled_tools: [],
    kb_mode: "off",
    // The core's `assistants::KnowledgeLimits::default()`.
    knowledge: { top_k: 5, min_relevance: 0.4, max_tokens: 2000 },
  };
}

const num = (s: string): number | null => (s.trim() === "" || Number.isNaN(Number(s)) ? null : Number(s));
const str = (s: string): string | null => (s.trim() === "" ? null : s.trim());

/** A required number within a range, as the core's `KnowledgeLimits` checks it. */
function LimitField(props: { id: string; label: string; min: number; max: number; step?: number; value: number; onChange: (v: number) => void }) {
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        id={props.id}
        type="number"
        required
        min={props.min}
        max={props.max}
        step={props.step}
        value={props.value}
        onChange={(e) => props.onChange(Number(e.target.value))}
      />
    </label>
  );
}

function AssistantForm({ initial, onSave, onCancel }: { initial: Assistant; onSave: (a: Assistant) => void; onCancel: () => void }) {
  const { t } = useI18n();
  const [a, setA] = useState(initial);
  const [servers, setServers] = useState(initial.servers?.join(", ") ?? "");
  return (
    <form
      className="card form"
      data-testid="assistant-form"
      onSubmit={(e) => {
        e.preventDefault();
        const list = servers.split(",").map((s) => s.trim()).filter(Boolean);
        onSave({ ...a, servers: list.length ? list : null });
      }}
    >
      <label className="field">
        <span>{t("assistants.name")}</span>
        <input id="assistant-name" required value={a.name} onChange={(e) => setA({ ...a, name: e.target.value })} />
      </label>
      <label className="field">
        <span>{t("assistants.systemPrompt")}</span>
        <textarea
          id="assistant-prompt"
          rows={5}
          value={a.system_prompt}
          onChange={(e) => setA({ ...a, system_prompt: e.target.value })}
          aria-describedby="assistant-prompt-hint"
        />
      </label>
      <small className="muted" id="assistant-prompt-hint">
        {t("assistants.systemPromptHint")}
      </small>
      <div className="row">
        <label className="field">
          <span>{t("assistants.provider")}</span>
          <input value={a.provider ?? ""} onChange={(e) => setA({ ...a, provider: str(e.target.value) })} aria-describedby="assistant-model-hint" />
        </label>
        <label className="field">
          <span>{t("assistants.model")}</span>
          <input value={a.model ?? ""} onChange={(e) => setA({ ...a, model: str(e.target.value) })} aria-describedby="assistant-model-hint" />
        </label>
      </div>
      <small className="muted" id="assistant-model-hint">
        {t("assistants.modelHint")}
      </small>
      <div className="row">
        <label className="field">
          <span>{t("assistants.temperature")}</span>
          <input type="number" step="0.1" min="0" max="2" value={a.temperature ?? ""} onChange={(e) => setA({ ...a, temperature: num(e.target.value) })} />
        </label>
        <label className="field">
          <span>{t("assistants.topP")}</span>
          <input type="number" step="0.05" min="0" max="1" value={a.top_p ?? ""} onChange={(e) => setA({ ...a, top_p: num(e.target.value) })} />
        </label>
        <label className="field">
          <span>{t("assistants.maxTokens")}</span>
          <input type="number" min="1" value={a.max_tokens ?? ""} onChange={(e) => setA({ ...a, max_tokens: num(e.target.value) })} />
        </label>
        <label className="field">
          <span>{t("assistants.reasoning")}</span>
          <ReasoningSelect
            id="assistant-reasoning"
            value={a.reasoning}
            onChange={(reasoning) => setA({ ...a, reasoning })}
          />
        </label>
      </div>
      <label className="field">
        <span>{t("assistants.servers")}</span>
        <input value={servers} placeholder={t("assistants.allServers")} onChange={(e) => setServers(e.target.value)} aria-describedby="assistant-servers-hint" />
      </label>
      <small className="muted" id="assistant-servers-hint">
        {t("assistants.serversHint")}
      </small>
      <label className="field">
        <span>{t("assistants.kbMode")}</span>
        <select value={a.kb_mode} onChange={(e) => setA({ ...a, kb_mode: e.target.value as KbMode })} aria-describedby="assistant-kb-hint">
          <option value="off">{t("assistants.kbOff")}</option>
          <option value="auto">{t("assistants.kbAuto")}</option>
          <option value="always">{t("assistants.kbAlways")}</option>
          <option value="both">{t("assistants.kbBoth")}</option>
        </select>
      </label>
      <small className="muted" id="assistant-kb-hint">
        {t("assistants.kbModeHint")}
      </small>
      {(a.kb_mode === "always" || a.kb_mode === "both") && (
        <fieldset className="row" data-testid="assistant-knowledge-limits">
          <legend className="muted">{t("assistants.kbLimits")}</legend>
          <LimitField id="assistant-kb-top-k" label={t("assistants.kbTopK")} min={1} max={50} value={a.knowledge.top_k} onChange={(top_k) => setA({ ...a, knowledge: { ...a.knowledge, top_k } })} />
          <LimitField
            id="assistant-kb-min-relevance"
            label={t("assistants.kbMinRelevance")}
            min={0}
            max={1}
            step={0.05}
            value={a.knowledge.min_relevance}
            onChange={(min_relevance) => setA({ ...a, knowledge: { ...a.knowledge, min_relevance } })}
          />
          <LimitField
            id="assistant-kb-max-tokens"
            label={t("assistants.kbMaxTokens")}
            min={100}
            max={100000}
            value={a.knowledge.max_tokens}
            onChange={(max_tokens) => setA({ ...a, knowledge: { ...a.knowledge, max_tokens } })}
          />
          <p className="muted">{t("assistants.kbLimitsHelp")}</p>
        </fieldset>
      )}
      <FormFooter saveId="assistant-save" primary onCancel={onCancel} />
    </form>
  );
}

export function Assistants({ ipc }: { ipc: AssistantsIpc }) {
  const { t } = useI18n();
  const load = useCallback(() => ipc.listAssistants(), [ipc]);
  const { data, error, setError, act } = useLoad<Assistant[]>(load);
  const [editing, setEditing] = useState<Assistant | null>(null);
  return (
    <div data-testid="assistants-settings">
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <ListDetail
        detail={
          editing && (
            <AssistantForm
              key={editing.id || "new"}
              initial={editing}
              onCancel={() => setEditing(null)}
              onSave={(a) => void act(() => ipc.saveAssistant(a)).then((ok) => ok && setEditing(null))}
            />
          )
        }
      >
        <ul className="list">
          {(data ?? []).map((a) => (
            <li key={a.id} className={editing?.id === a.id ? "card row active" : "card row"} aria-current={editing?.id === a.id || undefined}>
              <strong>{a.name}</strong>
              <span className="muted">{a.model ?? t("composer.defaultModel")}</span>
              <span className="spacer" />
              <button type="button" onClick={() => setEditing(a)}>
                {t("common.edit")}
              </button>
              <button type="button" className="danger" onClick={() => void act(() => ipc.deleteAssistant(a.id))}>
                {t("common.delete")}
              </button>
            </li>
          ))}
        </ul>
        {data && data.length === 0 && <p className="muted">{t("assistants.empty")}</p>}
        {!editing && (
          <button type="button" className="primary" id="assistant-add" onClick={() => setEditing(blank())}>
            {t("assistants.add")}
          </button>
        )}
      </ListDetail>
    </div>
  );
}
