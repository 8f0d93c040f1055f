// Loads something from the backend and keeps the error, for settings pages.
import { useCallback, useEffect, useRef, useState } from "react";
import { toIpcError, type IpcError } from "../../lib/ipc";

export function useLoad<T>(load: () => Promise<T>) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<IpcError | null>(null);
  // Only the latest load's answer is shown: an earlier one can arrive after it, with older data.
  const latest = useRef(0);
  const reload = useCallback(() => {
    const mine = ++latest.current;
    load()
      .then((d) => {
        if (mine !== latest.current) return;
        setData(d);
        setError(null);
      })
      .catch((e: unknown) => {
        if (mine === latest.current) setError(toIpcError(e));
      });
  }, [load]);
  useEffect(reload, [reload]);
  /** Runs a backend action, then reloads; errors land in `error`. */
  const act = useCallback(
    async (f: () => Promise<unknown>) => {
      try {
        await f();
        setError(null);
        reload();
        return true;
      } catch (e) {
        setError(toIpcError(e));
        return false;
      }
    },
    [reload],
  );
  return { data, setData, error, setError, reload, act };
}
