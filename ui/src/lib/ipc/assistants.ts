// Assistants: a system prompt, model, sampling settings, servers and the
// knowledge base's mode, to start a conversation with.
import { call } from "./client";

export type KbMode = "off" | "auto" | "always" | "both";

export interface Assistant {
  id: string;
  name: string;
  system_prompt: string;
  provider: string | null;
  model: string | null;
  temperature: number | null;
  top_p: number | null;
  max_tokens: number | null;
  /** How hard a reasoning model thinks; `null`: the model's default. */
  reasoning: ReasoningEffort | null;
  servers: string[] | null;
  disabled_tools: string[];
  kb_mode: KbMode;
}

/** How hard a reasoning model thinks; `off` asks it not to, where it can answer without. */
export type ReasoningEffort = "off" | "low" | "medium" | "high";

export const assistantsIpc = {
  listAssistants: () => call<Assistant[]>("list_assistants"),
  saveAssistant: (assistant: Assistant) => call<Assistant>("save_assistant", { assistant }),
  deleteAssistant: (id: string) => call<void>("delete_assistant", { id }),
};
