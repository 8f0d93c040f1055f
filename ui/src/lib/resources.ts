// How the chat page reads a server's resource, for the resource links in tool
// results deep in the message list: null where nothing can be read (a test
// rendering a card alone).
import { createContext } from "react";
import type { ResourcePreview } from "./ipc";

export type ReadResource = (server: string, uri: string) => Promise<ResourcePreview[]>;

export const ResourceReader = createContext<ReadResource | null>(null);
