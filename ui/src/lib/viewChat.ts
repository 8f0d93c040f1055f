// What tools' views do in a conversation (MCP Apps): send the user's next
// message (`ui/message`, not while a turn runs), and give the model something
// to know with it (`ui/update-model-context`), kept per view until then. The
// contexts are taken for a message and given back when its turn did not start,
// so nothing a view gave is lost.
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { AttachmentInput } from "./ipc";
import type { ChatActions, ViewContext } from "./mcpApps";

/** Sends a message with its attachments; true once its turn started. */
export type Send = (text: string, attachments: AttachmentInput[]) => Promise<boolean>;

export function useViewChat(send: Send, busy: boolean, busyMessage: string) {
  const [contexts, setContexts] = useState<ReadonlyMap<string, ViewContext>>(new Map());
  const latest = useRef({ contexts, busy });
  useEffect(() => {
    latest.current = { contexts, busy };
  });

  const sendWithContexts = useCallback<Send>(
    (text, attachments) => {
      const taken = [...latest.current.contexts];
      latest.current.contexts = new Map();
      setContexts(latest.current.contexts);
      const parts = taken.map(([, c]) => ({ type: "text" as const, text: c.text, title: c.title }));
      return send(text, [...attachments, ...parts]).then((started) => {
        // A view's newer context for the same key wins over the one given back.
        if (!started) setContexts((now) => new Map([...taken, ...now]));
        return started;
      });
    },
    [send],
  );

  const actions = useMemo<ChatActions>(
    () => ({
      sendMessage: async (text) => {
        if (latest.current.busy) throw new Error(busyMessage);
        latest.current.busy = true;
        void sendWithContexts(text, []);
      },
      setContext: (key, context) =>
        setContexts((now) => {
          const next = new Map(now);
          if (context) next.set(key, context);
          else next.delete(key);
          return next;
        }),
    }),
    [busyMessage, sendWithContexts],
  );

  return { contexts, actions, sendWithContexts };
}
