// Requests from MCP servers: sampling (review, edit or reject the messages a
// server wants to send to the model) and elicitation (a form from its schema).
import { useState } from "react";
import { useI18n } from "../../lib/i18n";
import type { JsonSchema, JsonValue, ServerRequest, ServerRequestResponse } from "../../lib/ipc";
import { Dialog } from "../common/Dialog";
import { SchemaForm } from "../common/SchemaForm";

export function ServerRequestDialog({
  request,
  onRespond,
}: {
  request: ServerRequest;
  onRespond: (id: string, r: ServerRequestResponse) => void;
}) {
  const { t } = useI18n();
  const cancel = () => onRespond(request.id, { action: "cancel" });
  if (request.kind === "elicitation") {
    return (
      <Dialog title={t("elicit.title", { server: request.server })} onClose={cancel} testId="elicitation-dialog">
        <p>{request.message}</p>
        <SchemaForm
          schema={request.requested_schema as JsonSchema}
          submitLabel={t("elicit.accept")}
          onSubmit={(content) => onRespond(request.id, { action: "accept", content: content as Record<string, JsonValue> })}
          onCancel={() => onRespond(request.id, { action: "decline" })}
          cancelLabel={t("elicit.decline")}
        />
      </Dialog>
    );
  }
  return <SamplingDialog request={request} onRespond={onRespond} onCancel={cancel} />;
}

function SamplingDialog({
  request,
  onRespond,
  onCancel,
}: {
  request: Extract<ServerRequest, { kind: "sampling" }>;
  onRespond: (id: string, r: ServerRequestResponse) => void;
  onCancel: () => void;
}) {
  const { t } = useI18n();
  const [system, setSystem] = useState(request.system_prompt ?? "");
  const [messages, setMessages] = useState(request.messages);
  return (
    <Dialog title={t("sampling.title", { server: request.server })} onClose={onCancel} testId="sampling-dialog">
      <p className="muted">{t("sampling.explain", { tokens: request.max_tokens })}</p>
      <p data-testid="sampling-model">
        {t("sampling.model", { model: request.model })}
        {request.model_hints.length > 0 && <span className="muted"> {t("sampling.hints", { models: request.model_hints.join(", ") })}</span>}
      </p>
      <label className="field">
        <span>{t("sampling.system")}</span>
        <textarea rows={2} value={system} onChange={(e) => setSystem(e.target.value)} />
      </label>
      {messages.map((m, i) => (
        <label className="field" key={i}>
          <span>{m.role === "user" ? t("chat.you") : t("chat.assistant")}</span>
          <textarea
            rows={3}
            value={m.text}
            onChange={(e) => setMessages(messages.map((x, j) => (j === i ? { ...x, text: e.target.value } : x)))}
          />
        </label>
      ))}
      <div className="row">
        <button
          type="button"
          className="primary"
          data-testid="sampling-approve"
          onClick={() => onRespond(request.id, { action: "approve_sampling", messages, system_prompt: system || null })}
        >
          {t("sampling.approve")}
        </button>
        <button type="button" className="danger" data-testid="sampling-reject" onClick={() => onRespond(request.id, { action: "decline" })}>
          {t("sampling.reject")}
        </button>
      </div>
    </Dialog>
  );
}
