// Which model answers: the choices the composer offers, and what its
// "Default" stands for.
import type { Assistant } from "./ipc";

export interface ModelChoice {
  provider: string;
  model: string;
  /** Its context window in tokens, when known (the provider's setting, else a well-known model's). */
  window?: number | null;
  /** The most tools one request may carry, when the provider's API has a limit. */
  maxTools?: number | null;
}

/** The conservative token estimate the core uses for text (`agent::budget::estimate_text`). */
export function estimateTokens(text: string): number {
  let ascii = 0;
  let other = 0;
  for (const c of text) {
    if (c.charCodeAt(0) < 128) ascii += 1;
    else other += 1;
  }
  return Math.ceil(ascii / 3) + Math.ceil((other * 3) / 2);
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
