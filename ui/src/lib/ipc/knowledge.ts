// The knowledge base (its folders, index, search and embeddings) and the
// folders shared with servers as roots.
import { call, on } from "./client";
import type {
  KbDocument,
  KbEmbeddings,
  KbEmbeddingsChoice,
  KbFolder,
  KbHit,
  KbModelProgress,
  KbModels,
  KbProgress,
  RootsView,
} from "./generated";

export type {
  KbDocument,
  KbEmbeddings,
  KbEmbeddingsChoice,
  KbFolder,
  KbHit,
  KbModelProgress,
  KbModelView,
  KbModels,
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
  kbModels: () => call<KbModels>("kb_models"),
  kbGetModel: (name: string) => call<void>("kb_get_model", { name }),
  kbCancelModel: (name: string) => call<void>("kb_cancel_model", { name }),
  kbSetModelHub: (url: string | null) => call<KbModels>("kb_set_model_hub", { url }),
  listRoots: () => call<RootsView>("list_roots"),
  addSharedFolder: (path: string) => call<RootsView>("add_shared_folder", { path }),
  removeSharedFolder: (path: string) => call<RootsView>("remove_shared_folder", { path }),
  onKbProgress: (h: (p: KbProgress) => void) => on<KbProgress>("kb_progress", h),
  onKbModelProgress: (h: (p: KbModelProgress) => void) => on<KbModelProgress>("kb_model_progress", h),
};
