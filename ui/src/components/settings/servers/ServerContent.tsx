// A server's prompts, resources and resource templates on its page, to try
// them as the model and the composer would: a prompt filled in shows its
// messages; a resource (or one a template's variables name) shows its text,
// picture or sound. Prompt and template fields offer the server's suggestions.
// A resource of a server that reports changes can be watched: each change is
// marked with its time, and the resource shown is read again.
import { useCallback, useEffect, useRef, useState, type ReactNode } from "react";
import { useI18n } from "../../../lib/i18n";
import {
  toIpcError,
  type CompletionTarget,
  type Ipc,
  type IpcError,
  type McpContentIpc,
  type PromptInfo,
  type ResourceInfo,
  type ResourcePreview,
  type ResourceTemplateInfo,
} from "../../../lib/ipc";
import { useAborts } from "../../../lib/aborts";
import { ErrorBanner } from "../../ErrorBanner";
import { SchemaForm, argumentsSchema, type Suggest } from "../../common/SchemaForm";
import { useLoad } from "../useLoad";
import { McpIcons } from "../../common/McpIcons";
import { ResourceParts } from "../../common/ResourceParts";

export type ContentIpc = McpContentIpc & Pick<Ipc, "readResource" | "watchResource" | "onResourceUpdated">;

interface Content {
  prompts: PromptInfo[];
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
}

/** How the last thing tried went; shown under it. */
type Outcome = { kind: "prompt"; text: string } | { kind: "resource"; parts: ResourcePreview[] } | { kind: "error"; error: IpcError };

function OutcomeView({ outcome, server }: { outcome: Outcome; server: string }) {
  // A long list leaves the answer below the fold: bring it into view.
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.scrollIntoView?.({ block: "nearest" }), []);
  return (
    <div ref={ref}>
      {outcome.kind === "error" ? (
        <ErrorBanner error={outcome.error} />
      ) : outcome.kind === "resource" ? (
        <ResourceParts parts={outcome.parts} server={server} />
      ) : (
        <pre className="resource-text" data-testid="prompt-preview">
          {outcome.text}
        </pre>
      )}
    </div>
  );
}

function Section({ title, empty, children }: { title: string; empty: boolean; children: ReactNode }) {
  const { t } = useI18n();
  return (
    <section className="server-content-section">
      <h4>{title}</h4>
      {empty ? <p className="muted">{t("content.none")}</p> : <ul className="server-content-list">{children}</ul>}
    </section>
  );
}

export function ServerContent({ ipc, server }: { ipc: ContentIpc; server: string }) {
  const { t } = useI18n();
  const load = useCallback(
    () =>
      Promise.all([ipc.listPrompts(), ipc.listResources(), ipc.listResourceTemplates()]).then(([prompts, resources, templates]) => ({
        prompts: prompts.filter((p) => p.server === server),
        resources: resources.filter((r) => r.server === server),
        templates: templates.filter((x) => x.server === server),
      })),
    [ipc, server],
  );
  const { data, error, reload } = useLoad<Content>(load);
  // The prompt or template whose form is open, by its key.
  const [open, setOpen] = useState<string | null>(null);
  // What was tried last (its key), and how it went.
  const [outcome, setOutcome] = useState<{ key: string; outcome: Outcome } | null>(null);
  const [busy, setBusy] = useState(false);
  // Only the latest try's answer is shown (an earlier one is called off, see `tries`).
  const latest = useRef(0);
  const run = (key: string, what: Promise<Outcome>) => {
    const mine = ++latest.current;
    setBusy(true);
    setOutcome(null);
    void what
      .catch((e: unknown): Outcome => ({ kind: "error", error: toIpcError(e) }))
      .then((o) => {
        if (mine !== latest.current) return;
        setOutcome({ key, outcome: o });
        setBusy(false);
      });
  };
  const shown = (key: string) => outcome?.key === key && <OutcomeView outcome={outcome.outcome} server={server} />;
  // When each watched resource last changed; the one shown is read again.
  const [changed, setChanged] = useState<Record<string, number>>({});
  const showing = useRef<string | null>(null);
  useEffect(() => {
    showing.current = outcome?.key ?? null;
  }, [outcome]);
  useEffect(() => {
    const un = ipc.onResourceUpdated((r) => {
      if (r.server !== server) return;
      setChanged((c) => ({ ...c, [r.uri]: Date.now() }));
      const key = `resource:${r.uri}`;
      if (showing.current === key) {
        void ipc
          .readResource(server, r.uri)
          .then((parts) => setOutcome((o) => (o?.key === key ? { key, outcome: { kind: "resource", parts } } : o)))
          .catch(() => undefined);
      }
    });
    return () => void un.then((f) => f());
  }, [ipc, server]);
  const watch = (uri: string, on: boolean) =>
    ipc.watchResource(server, uri, on).then(reload, (e: unknown) =>
      setOutcome({ key: `resource:${uri}`, outcome: { kind: "error", error: toIpcError(e) } }),
    );
  // What is tried runs until it answers, the next try, or the page goes; the same for suggestions.
  const tries = useAborts({ onUnmount: true });
  const read = (uri: string) =>
    ipc.readResource(server, uri, tries.start("try")).then((parts): Outcome => ({ kind: "resource", parts }));
  const suggest =
    (target: CompletionTarget): Suggest =>
    (field, value, values) =>
      ipc.completeArgument(server, target, field, value, values, tries.start("suggest")).then((c) => c.values);
  const toggle = (key: string) => {
    setOutcome(null);
    setOpen(open === key ? null : key);
  };
  if (error) return <ErrorBanner error={error} />;
  if (!data) return <p>{t("common.loading")}</p>;
  return (
    <div className="server-content" data-testid="server-content">
      <Section title={t("content.prompts")} empty={data.prompts.length === 0}>
        {data.prompts.map((p) => (
          <li key={p.name} data-testid="server-prompt">
            <div className="row">
              <McpIcons icons={p.icons} />
              <strong>{p.title ?? `/${p.name}`}</strong>
              {p.title && <code className="small">/{p.name}</code>}
              <span className="muted small">{p.description}</span>
              <span className="spacer" />
              <button type="button" aria-expanded={open === `prompt:${p.name}`} onClick={() => toggle(`prompt:${p.name}`)}>
                {t("content.try")}
              </button>
            </div>
            {open === `prompt:${p.name}` && (
              <SchemaForm
                schema={argumentsSchema(p.arguments)}
                suggest={suggest({ type: "prompt", name: p.name })}
                submitLabel={busy ? t("common.running") : t("content.get")}
                busy={busy}
                onSubmit={(v) =>
                  run(
                    `prompt:${p.name}`,
                    ipc.getPrompt(server, p.name, v as Record<string, string>, tries.start("try")).then((text): Outcome => ({ kind: "prompt", text })),
                  )
                }
              />
            )}
            {shown(`prompt:${p.name}`)}
          </li>
        ))}
      </Section>
      <Section title={t("content.resources")} empty={data.resources.length + data.templates.length === 0}>
        {data.resources.map((r) => (
          <li key={r.uri} data-testid="server-resource">
            <div className="row">
              <McpIcons icons={r.icons} />
              <strong>{r.title ?? r.name}</strong>
              <code className="small">{r.uri}</code>
              {changed[r.uri] !== undefined && (
                <span className="muted small" data-testid="resource-changed">
                  {t("content.changed", { time: new Date(changed[r.uri]!).toLocaleTimeString() })}
                </span>
              )}
              <span className="spacer" />
              {r.watchable && (
                <label className="small">
                  <input type="checkbox" checked={r.watched} aria-label={t("content.watchResource", { name: r.name })} onChange={(e) => void watch(r.uri, e.target.checked)} />{" "}
                  {t("content.watch")}
                </label>
              )}
              <button
                type="button"
                disabled={busy}
                onClick={() => {
                  setOpen(null);
                  run(`resource:${r.uri}`, read(r.uri));
                }}
              >
                {t("content.read")}
              </button>
            </div>
            {shown(`resource:${r.uri}`)}
          </li>
        ))}
        {data.templates.map((x) => (
          <li key={x.uri_template} data-testid="server-template">
            <div className="row">
              <McpIcons icons={x.icons} />
              <strong>{x.name}</strong>
              <code className="small">{x.uri_template}</code>
              <span className="spacer" />
              <button type="button" aria-expanded={open === `template:${x.uri_template}`} onClick={() => toggle(`template:${x.uri_template}`)}>
                {t("content.try")}
              </button>
            </div>
            {open === `template:${x.uri_template}` && (
              <SchemaForm
                schema={argumentsSchema(x.variables.map((name) => ({ name, description: null, required: true })))}
                suggest={suggest({ type: "resource_template", uri_template: x.uri_template })}
                submitLabel={busy ? t("common.running") : t("content.read")}
                busy={busy}
                onSubmit={(v) =>
                  run(`template:${x.uri_template}`, ipc.expandResourceTemplate(x.uri_template, v as Record<string, string>).then(read))
                }
              />
            )}
            {shown(`template:${x.uri_template}`)}
          </li>
        ))}
      </Section>
    </div>
  );
}
