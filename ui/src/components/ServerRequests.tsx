// Sampling and elicitation requests from MCP servers, answered by the user
// wherever the window is: a request made while the settings page is open (a
// tool tested there, a server starting) is shown there too, and one made while
// quick ask answers shows in both windows, going from both once answered in
// either (or given up by the server). Requests wait in arrival order, one
// dialog at a time.
import { useEffect, useRef, useState } from "react";
import { ipc as defaultIpc, toIpcError, type Ipc, type IpcError, type ServerRequest } from "../lib/ipc";
import { ServerRequestDialog } from "./chat/ServerRequestDialog";

export type ServerRequestsIpc = Pick<Ipc, "onServerRequest" | "onServerRequestEnded" | "waitingServerRequests" | "respondServerRequest">;

export function ServerRequests({ ipc = defaultIpc, onError }: { ipc?: ServerRequestsIpc; onError: (e: IpcError) => void }) {
  const [requests, setRequests] = useState<ServerRequest[]>([]);
  // Answered here: a waiting list read before the answer arrived does not bring them back.
  const answered = useRef(new Set<string>());
  useEffect(() => {
    // Listen first, then list what already waits: a request sent before the
    // page listened (at start-up, or before a reload) is shown, and one that
    // arrives both ways is shown once.
    const add = (more: ServerRequest[]) =>
      setRequests((rs) => [...rs, ...more.filter((r) => !answered.current.has(r.id) && !rs.some((x) => x.id === r.id))]);
    const un = ipc.onServerRequest((r) => add([r]));
    const unAnswered = ipc.onServerRequestEnded((id) => {
      answered.current.add(id);
      setRequests((rs) => rs.filter((x) => x.id !== id));
    });
    let live = true;
    void un
      .then(() => ipc.waitingServerRequests())
      .then((waiting) => {
        if (live) add(waiting);
      })
      .catch((e: unknown) => {
        if (live) onError(toIpcError(e));
      });
    return () => {
      live = false;
      void un.then((f) => f());
      void unAnswered.then((f) => f());
    };
  }, [ipc, onError]);
  const request = requests[0];
  if (!request) return null;
  return (
    <ServerRequestDialog
      request={request}
      onRespond={(id, r) => {
        answered.current.add(id);
        setRequests((rs) => rs.filter((x) => x.id !== id));
        ipc.respondServerRequest(id, r).catch((e: unknown) => onError(toIpcError(e)));
      }}
    />
  );
}
