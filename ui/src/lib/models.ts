// Which model answers: the choices the composer offers, and what its
// "Default" stands for.
import type { Assistant } from "./ipc";

export interface ModelChoice {
  provider: string;
  model: string;
}

/**
 * The model a conversation without a choice of its own is answered by, as the
 * backend picks it: its assistant's provider and model, else the first
 * provider's default. `models` lists each provider's default first.
 */
export function defaultModel(models: ModelChoice[], assistant: Pick<Assistant, "provider" | "model"> | null): ModelChoice | null {
  const provider = assistant?.provider ?? models[0]?.provider;
  if (!provider) return null;
  const model = assistant?.model || models.find((m) => m.provider === provider && m.model !== "")?.model;
  return model ? { provider, model } : null;
}
