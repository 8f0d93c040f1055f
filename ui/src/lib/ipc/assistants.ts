// Assistants: a system prompt, model, sampling settings, servers and the
// knowledge base's mode, to start a conversation with.
import { call } from "./client";
import type { AssistantView } from "./generated";

export type { AssistantView as Assistant, KbMode, ReasoningEffort } from "./generated";

export const assistantsIpc = {
  listAssistants: () => call<AssistantView[]>("list_assistants"),
  saveAssistant: (assistant: AssistantView) => call<AssistantView>("save_assistant", { assistant }),
  deleteAssistant: (id: string) => call<void>("delete_assistant", { id }),
};
