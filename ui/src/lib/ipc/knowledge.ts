// The knowledge base (its folders, index, search and embeddings) and the
// folders shared with servers as roots.
import { call, on } from "./client";
import type {
  KbDocument,
  KbEmbeddings,
  KbEmbeddingsChoice,
  KbFolder,
  KbHit,
  KbProgress,
  RootsView,
} from "./generated";

export type {
  KbDocument,
  KbEmbeddings,
  KbEmbeddingsChoice,
  KbFolder,
  KbHit,
  KbProgress,
  KbProgressCount,
  RootsView,
} from "./generated";

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
