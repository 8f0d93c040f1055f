// The knowledge base (its folders, index, search and embeddings) and the
// folders shared with servers as roots.
import { call, on } from "./client";

/** The folders shared with MCP servers as roots. */
export interface RootsView {
  /** Chosen by the user, in the order added. */
  shared: string[];
  /** Knowledge-base folders, shared as well. */
  knowledge: string[];
}

export interface KbFolder {
  path: string;
  documents: number;
  chunks: number;
  state: "idle" | "indexing" | "error";
  progress: { done: number; total: number } | null;
  error: string | null;
}

export interface KbDocument {
  path: string;
  title: string;
  chunks: number;
}

export interface KbHit {
  document: string;
  path: string;
  score: number;
  text: string;
  /** Where the query's words are in `text`: [start, end) in UTF-16 code units. */
  marks: [number, number][];
}

export interface KbProgress {
  folder: string;
  done: number;
  total: number;
}

/** Where the knowledge base's embeddings come from now (`kb_embeddings`). */
export interface KbEmbeddings {
  kind: "off" | "endpoint" | "local";
  /** The provider whose endpoint is used, when one matches the stored base URL. */
  provider: string | null;
  base_url: string | null;
  model: string | null;
  model_dir: string | null;
  /** The model understands English only (all-MiniLM). */
  english_only: boolean;
}

/** What `kb_set_embeddings` accepts. */
export type KbEmbeddingsChoice =
  | { kind: "off" }
  | { kind: "provider"; provider: string; model: string }
  | { kind: "local"; model_dir: string };

export const knowledgeIpc = {
  kbStatus: () => call<KbFolder[]>("kb_status"),
  kbPickFolder: () => call<string | null>("kb_pick_folder"),
  kbAddFolder: (path: string) => call<void>("kb_add_folder", { path }),
  kbRemoveFolder: (path: string) => call<void>("kb_remove_folder", { path }),
  kbReindex: (path: string | null) => call<void>("kb_reindex", { path }),
  kbDocuments: (folder: string) => call<KbDocument[]>("kb_documents", { folder }),
  kbSearch: (query: string, limit: number) => call<KbHit[]>("kb_search", { query, limit }),
  kbEmbeddings: () => call<KbEmbeddings>("kb_embeddings"),
  kbSetEmbeddings: (choice: KbEmbeddingsChoice) => call<KbEmbeddings>("kb_set_embeddings", { choice }),
  listRoots: () => call<RootsView>("list_roots"),
  addSharedFolder: (path: string) => call<RootsView>("add_shared_folder", { path }),
  removeSharedFolder: (path: string) => call<RootsView>("remove_shared_folder", { path }),
  onKbProgress: (h: (p: KbProgress) => void) => on<KbProgress>("kb_progress", h),
};
