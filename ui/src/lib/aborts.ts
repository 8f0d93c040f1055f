// Cancellable backend work a component started, by key: `start` gives the
// signal to pass to a cancellable ipc command (calling off the key's last
// one), `cancel` calls it off, `end` forgets it once it answered. With
// `onUnmount`, whatever still runs is called off when the component goes.
import { useEffect, useMemo, useRef } from "react";

export interface Aborts {
  start(key: string): AbortSignal;
  cancel(key: string): void;
  end(key: string, signal: AbortSignal): void;
}

export function useAborts({ onUnmount }: { onUnmount: boolean }): Aborts {
  const live = useRef(new Map<string, AbortController>());
  useEffect(() => {
    const running = live.current;
    return () => {
      if (!onUnmount) return;
      for (const c of running.values()) c.abort();
      running.clear();
    };
  }, [onUnmount]);
  return useMemo(
    () => ({
      start(key) {
        live.current.get(key)?.abort();
        const c = new AbortController();
        live.current.set(key, c);
        return c.signal;
      },
      cancel(key) {
        live.current.get(key)?.abort();
        live.current.delete(key);
      },
      end(key, signal) {
        if (live.current.get(key)?.signal === signal) live.current.delete(key);
      },
    }),
    [],
  );
}
