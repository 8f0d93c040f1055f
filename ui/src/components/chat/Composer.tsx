// The composer: Enter sends, Shift+Enter adds a line, Esc or Stop cancels the
// turn. Model picker, per-conversation server/tool toggles with the tool count
// and estimated schema tokens, attachments (files picked, pasted or dropped:
// images, audio, text; MCP resources, and resources made from a server's
// resource template with a form of its variables), and MCP prompts as `/`
// commands with an argument form. Prompt arguments and template variables
// show the server's suggestions (MCP completions) as they are typed.
import { useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { isAttachError, readAttachment } from "../../lib/attachments";
import type { Draft } from "../../lib/chatStore";
import { useI18n } from "../../lib/i18n";
import { useAborts } from "../../lib/aborts";
import type {
  AttachmentInput,
  CompletionTarget,
  ConversationSettings,
  PromptArgument,
  PromptInfo,
  ResourceInfo,
  ResourceTemplateInfo,
  ToolInfo,
} from "../../lib/ipc";
import { ResourceMenu, ThinkingMenu } from "./ComposerMenus";
import * as Popover from "@radix-ui/react-popover";
import { Dialog } from "../common/Dialog";
import { SchemaForm, argumentsSchema, type Suggest } from "../common/SchemaForm";
import { McpIcons } from "../common/McpIcons";
import { estimateTokens, type ModelChoice } from "../../lib/models";
import { IconButton, tooltipEscapes } from "../common/IconButton";
import { ModelPicker } from "./ModelPicker";
import { ArrowUp, Paperclip, Square, Wrench } from "lucide-react";

export type { ModelChoice } from "../../lib/models";

export interface ComposerProps {
  streaming: boolean;
  /** Sends; may resolve to whether the message was taken (when not, the composer gets it back). */
  onSend: (text: string, attachments: AttachmentInput[]) => Promise<boolean> | void;
  onCancel: () => void;
  models: ModelChoice[];
  /** What "Default model" stands for in this conversation, when known. */
  fallback?: ModelChoice | null;
  settings: ConversationSettings;
  onSettings: (s: ConversationSettings) => void;
  tools: ToolInfo[];
  prompts: PromptInfo[];
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
  /** A prompt filled in by its server; called off through `signal`. */
  getPrompt: (p: PromptInfo, args: Record<string, string>, signal: AbortSignal) => Promise<string>;
  /** A server's suggestions for an argument of a prompt or resource template; called off through `signal`. */
  complete: (
    server: string,
    target: CompletionTarget,
    argument: string,
    value: string,
    context: Record<string, string>,
    signal: AbortSignal,
  ) => Promise<string[]>;
  /** The URI a resource template makes with these values. */
  expandTemplate: (uriTemplate: string, values: Record<string, string>) => Promise<string>;
  /**
   * What a request may hold: the model's context window (tokens, when known), the most tools
   * its API takes, the room kept for the answer, the share of the window in percent past which
   * the tools are found through search, and the knowledge-base context a turn adds (tokens).
   */
  budget?: { window: number | null; maxTools: number | null; reserve: number; toolShare: number; knowledgeTokens: number };
  /** The unsent message to start from, and where each change of it goes. */
  draft?: Draft;
  onDraft?: (d: Draft) => void;
}

/** The message of an IPC error, for a dialog that shows why it failed. */
function errorText(e: unknown): string {
  return e && typeof e === "object" && "message" in e ? String(e.message) : String(e);
}

/**
 * A form of text fields (a prompt's arguments, a template's variables) with
 * the server's suggestions; it stays open with the reason when `onSubmit` fails.
 */
function ArgumentsDialog(props: {
  title: string;
  testId: string;
  intro: ReactNode;
  fields: PromptArgument[];
  suggest: Suggest;
  submitLabel: string;
  onSubmit: (values: Record<string, string>) => Promise<void>;
  onClose: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog title={props.title} onClose={props.onClose} testId={props.testId}>
      {props.intro && <p className="muted">{props.intro}</p>}
      {error && (
        <p role="alert" className="error-text">
          {error}
        </p>
      )}
      <SchemaForm
        schema={argumentsSchema(props.fields)}
        suggest={props.suggest}
        submitLabel={props.submitLabel}
        onSubmit={(v) => {
          props.onSubmit(v as Record<string, string>).catch((e: unknown) => setError(errorText(e)));
        }}
      />
    </Dialog>
  );
}

/** Tools the model will see with these settings. */
export function activeTools(tools: ToolInfo[], s: ConversationSettings): ToolInfo[] {
  return tools.filter(
    (t) => t.enabled && t.view.for_model && (s.servers === null || s.servers.includes(t.server)) && !s.disabled_tools.includes(`${t.server}/${t.name}`),
  );
}

function ToolPicker({ tools, settings, onSettings }: Pick<ComposerProps, "tools" | "settings" | "onSettings">) {
  const { t } = useI18n();
  const servers = useMemo(() => [...new Set(tools.map((x) => x.server))], [tools]);
  const enabledServers = settings.servers ?? servers;
  const toggleServer = (s: string, on: boolean) =>
    onSettings({ ...settings, servers: on ? [...enabledServers, s] : enabledServers.filter((x) => x !== s) });
  const toggleTool = (key: string, on: boolean) =>
    onSettings({
      ...settings,
      disabled_tools: on ? settings.disabled_tools.filter((x) => x !== key) : [...settings.disabled_tools, key],
    });
  return (
    <div className="tool-picker" data-testid="tool-picker">
      {servers.map((s) => (
        <fieldset key={s}>
          <legend>
            <label>
              <input type="checkbox" checked={enabledServers.includes(s)} onChange={(e) => toggleServer(s, e.target.checked)} /> {s}
            </label>
          </legend>
          {tools
            .filter((x) => x.server === s && x.enabled)
            .map((x) => {
              const key = `${s}/${x.name}`;
              return (
                <label key={key} className="tool-toggle">
                  <input
                    type="checkbox"
                    disabled={!enabledServers.includes(s)}
                    checked={!settings.disabled_tools.includes(key)}
                    onChange={(e) => toggleTool(key, e.target.checked)}
                  />{" "}
                  {x.title ?? x.name} <small className="muted">{t("composer.tokens", { tokens: x.schema_tokens })}</small>
                </label>
              );
            })}
        </fieldset>
      ))}
      {servers.length === 0 && <p className="muted">{t("composer.noTools")}</p>}
    </div>
  );
}

export function Composer(props: ComposerProps) {
  const { t } = useI18n();
  const { streaming, onSend, onCancel, models, fallback, settings, onSettings, tools, prompts, resources, templates, getPrompt, draft, onDraft } = props;
  const { complete, expandTemplate } = props;
  const [text, setText] = useState(draft?.text ?? "");
  const [attachments, setAttachments] = useState<AttachmentInput[]>(draft?.attachments ?? []);
  useEffect(() => {
    onDraft?.({ text, attachments });
  }, [text, attachments, onDraft]);
  // Why the last files could not be attached.
  const [attachErrors, setAttachErrors] = useState<string[]>([]);
  const filePicker = useRef<HTMLInputElement>(null);
  // Files are being dragged over the composer.
  const [dropping, setDropping] = useState(false);
  const [showTools, setShowTools] = useState(false);
  const [prompt, setPrompt] = useState<PromptInfo | null>(null);
  const [template, setTemplate] = useState<ResourceTemplateInfo | null>(null);
  // A prompt being filled in and a suggestion being asked for run until they answer, the next
  // one, their dialog closes or the composer goes; the server is told to stop.
  const asks = useAborts({ onUnmount: true });

  const active = activeTools(tools, settings);
  const tokens = active.reduce((n, x) => n + x.schema_tokens, 0);
  const contextWindow = props.budget?.window ?? null;
  const share = contextWindow ? Math.max(1, Math.round((tokens * 100) / contextWindow)) : null;
  // Past the share or the API's limit, a turn sends the pinned tools and the search tool
  // (about 200 tokens) instead, as the core decides (`agent::tool_search`).
  const maxTools = props.budget?.maxTools ?? null;
  const searching =
    (contextWindow !== null && tokens * 100 > (props.budget?.toolShare ?? 10) * contextWindow) || (maxTools !== null && active.length > maxTools);
  const sentTools = searching ? active.filter((x) => x.pinned).reduce((n, x) => n + x.schema_tokens, 200) : tokens;
  const needed = sentTools + (props.budget?.knowledgeTokens ?? 0) + estimateTokens(text);
  const wontFit = contextWindow !== null && needed > contextWindow - (props.budget?.reserve ?? 0);
  const slash = text.startsWith("/") && !text.includes(" ") && !text.includes("\n") ? text.slice(1).toLowerCase() : null;
  const matches = slash === null ? [] : prompts.filter((p) => p.name.toLowerCase().includes(slash));

  const send = () => {
    if (streaming || (text.trim() === "" && attachments.length === 0)) return;
    const sent = onSend(text, attachments);
    setText("");
    setAttachments([]);
    setAttachErrors([]);
    // A message refused before its turn began comes back, unless the user has started another.
    void sent?.then((taken) => {
      if (taken) return;
      setText((now) => (now === "" ? text : now));
      setAttachments((now) => (now.length === 0 ? attachments : now));
    });
  };
  const attachFiles = (files: File[]) => {
    if (files.length === 0) return;
    void Promise.all(files.map(readAttachment)).then((read) => {
      const ok = read.filter((r): r is AttachmentInput => !isAttachError(r));
      setAttachErrors(read.filter(isAttachError).map((e) => t(e.key, e.params)));
      setAttachments((as) => [...as, ...ok]);
    });
  };
  const onKey = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
      e.preventDefault();
      if (matches.length > 0 && matches[0]) setPrompt(matches[0]);
      else send();
    }
  };

  // Esc stops the turn from anywhere on the page (dialogs keep their own Esc).
  useEffect(() => {
    if (!streaming) return;
    const onEsc = (e: globalThis.KeyboardEvent) => {
      if (e.key === "Escape" && (!e.defaultPrevented || tooltipEscapes.has(e))) {
        e.preventDefault();
        onCancel();
      }
    };
    window.addEventListener("keydown", onEsc);
    return () => window.removeEventListener("keydown", onEsc);
  }, [streaming, onCancel]);

  return (
    <div
      className={dropping ? "composer dropping" : "composer"}
      data-testid="composer"
      onDragOver={(e) => {
        if (!e.dataTransfer.types.includes("Files")) return;
        e.preventDefault();
        setDropping(true);
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setDropping(false);
      }}
      onDrop={(e) => {
        setDropping(false);
        if (e.dataTransfer.files.length === 0) return;
        e.preventDefault();
        attachFiles([...e.dataTransfer.files]);
      }}
    >
      {matches.length > 0 && (
        <ul className="slash-menu" role="listbox" aria-label={t("composer.prompts")}>
          {matches.map((p) => (
            <li key={`${p.server}/${p.name}`} role="option" aria-selected={false}>
              <button type="button" className="link" onClick={() => setPrompt(p)}>
                <McpIcons icons={p.icons} /> /{p.name} {p.title && <strong>{p.title}</strong>}{" "}
                <small className="muted">
                  {p.server} · {p.description}
                </small>
              </button>
            </li>
          ))}
        </ul>
      )}
      {attachments.length > 0 && (
        <div className="attachments">
          {attachments.map((a, i) => (
            <span className="chip" key={i} data-testid="attachment-chip">
              {a.type === "image" && <img className="chip-thumb" src={`data:${a.mime_type};base64,${a.data}`} alt="" />}
              {(a.type === "resource_link" ? (a.name ?? a.uri) : a.title) ?? a.type}
              <button type="button" className="icon" aria-label={t("common.remove")} onClick={() => setAttachments(attachments.filter((_, j) => j !== i))}>
                ×
              </button>
            </span>
          ))}
        </div>
      )}
      {attachErrors.map((e) => (
        <p key={e} role="alert" className="error-text small">
          {e}
        </p>
      ))}
      {wontFit && (
        <p role="status" className="error-text small" data-testid="budget-warning">
          {t("composer.wontFit", { tokens: needed, window: contextWindow, reserve: props.budget?.reserve ?? 0 })}
        </p>
      )}
      <textarea
        id="composer-input"
        aria-label={t("composer.placeholder")}
        placeholder={t("composer.placeholder")}
        rows={3}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKey}
        onPaste={(e) => {
          // A pasted picture or file is attached; pasted text goes in as text.
          const files = [...e.clipboardData.files];
          if (files.length === 0) return;
          if (e.clipboardData.getData("text/plain") === "") e.preventDefault();
          attachFiles(files);
        }}
      />
      <div className="composer-bar">
        <ModelPicker
          models={models}
          provider={settings.provider}
          model={settings.model}
          fallback={fallback ?? null}
          onPick={(provider, model) => onSettings({ ...settings, provider, model })}
        />
        <ThinkingMenu value={settings.reasoning} onChange={(reasoning) => onSettings({ ...settings, reasoning })} />
        <IconButton icon={Paperclip} id="attach-file" label={t("composer.attachFile")} onClick={() => filePicker.current?.click()} />
        <input
          ref={filePicker}
          type="file"
          multiple
          hidden
          data-testid="file-picker"
          onChange={(e) => {
            attachFiles([...(e.target.files ?? [])]);
            e.target.value = "";
          }}
        />
        <Popover.Root open={showTools} onOpenChange={setShowTools}>
          <Popover.Trigger asChild>
            <button type="button" id="tools-button" className="pill">
              <Wrench size={14} aria-hidden="true" />
              <span className="pill-text">
                {searching
                  ? t(share === null ? "composer.toolsSearchedOnly" : "composer.toolsSearched", { count: active.length, tokens, share: share ?? 0 })
                  : share === null
                    ? t("composer.tools", { count: active.length, tokens })
                    : t("composer.toolsShare", { count: active.length, tokens, share })}
              </span>
            </button>
          </Popover.Trigger>
          <Popover.Portal>
            <Popover.Content className="menu tool-menu" align="start" sideOffset={4} aria-label={t("composer.toolsTitle")}>
              <ToolPicker tools={tools.filter((x) => x.view.for_model)} settings={settings} onSettings={onSettings} />
            </Popover.Content>
          </Popover.Portal>
        </Popover.Root>
        {resources.length + templates.length > 0 && (
          <ResourceMenu
            resources={resources}
            templates={templates}
            onResource={(r) => setAttachments([...attachments, { type: "resource_link", uri: r.uri, name: r.name, server: null }])}
            onTemplate={setTemplate}
          />
        )}
        <span className="spacer" />
        {streaming ? (
          <IconButton icon={Square} id="stop-button" className="round stop" label={t("composer.stop")} shortcut="Esc" onClick={onCancel} />
        ) : (
          <IconButton
            icon={ArrowUp}
            id="send-button"
            className="round send"
            label={t("composer.send")}
            shortcut="Enter"
            onClick={send}
            disabled={text.trim() === "" && attachments.length === 0}
          />
        )}
      </div>
      {prompt && (
        <ArgumentsDialog
          title={prompt.title ? `${prompt.title} (/${prompt.name})` : `/${prompt.name}`}
          testId="prompt-dialog"
          intro={prompt.description}
          fields={prompt.arguments}
          suggest={(field, value, values) =>
            complete(prompt.server, { type: "prompt", name: prompt.name }, field, value, values, asks.start("suggest"))
          }
          submitLabel={t("composer.usePrompt")}
          onSubmit={(values) =>
            getPrompt(prompt, values, asks.start("prompt")).then((filled) => {
              setText(filled);
              setPrompt(null);
            })
          }
          onClose={() => {
            asks.cancel("prompt");
            asks.cancel("suggest");
            setPrompt(null);
          }}
        />
      )}
      {template && (
        <ArgumentsDialog
          title={template.name}
          testId="template-dialog"
          intro={
            <>
              <code>{template.uri_template}</code>
              {template.description && ` — ${template.description}`}
            </>
          }
          fields={template.variables.map((name) => ({ name, title: null, description: null, required: true }))}
          suggest={(field, value, values) =>
            complete(
              template.server,
              { type: "resource_template", uri_template: template.uri_template },
              field,
              value,
              values,
              asks.start("suggest"),
            )
          }
          submitLabel={t("composer.useTemplate")}
          onSubmit={(values) =>
            expandTemplate(template.uri_template, values).then((uri) => {
              setAttachments((as) => [...as, { type: "resource_link", uri, name: uri, mime_type: template.mime_type, server: template.server }]);
              setTemplate(null);
            })
          }
          onClose={() => {
            asks.cancel("suggest");
            setTemplate(null);
          }}
        />
      )}
    </div>
  );
}
