// Settings → Knowledge base → Share: the knowledge base served to other apps over HTTP (MCP's
// Streamable HTTP and legacy SSE). On or off, the address (this computer by default; another
// computer only when allowed, with the warning that it is plain HTTP), the configuration each app
// needs (copied with the token), a new token, and the requests answered or refused.
import { useCallback, useEffect, useState } from "react";
import { useI18n, type MessageKey } from "../../lib/i18n";
import { toIpcError, type Ipc, type IpcError, type KbShare as Share, type KbShareClient } from "../../lib/ipc";
import { ErrorBanner } from "../ErrorBanner";
import { CopyButton } from "../common/CopyButton";

export type KbShareIpc = Pick<Ipc, "kbShare" | "kbSetShare" | "kbShareNewToken" | "kbShareConfig" | "onKbShareChanged">;
const CLIENTS: Record<KbShareClient, MessageKey> = {
  claude_desktop: "kb.share.client.claude_desktop",
  cursor: "kb.share.client.cursor",
  patchbay: "kb.share.client.patchbay",
};

export function KbShare({ ipc }: { ipc: KbShareIpc }) {
  const { t, lang } = useI18n();
  const [share, setShare] = useState<Share | null>(null);
  const [enabled, setEnabled] = useState(false);
  const [address, setAddress] = useState("");
  const [allowRemote, setAllowRemote] = useState(false);
  const [client, setClient] = useState<KbShareClient>("claude_desktop");
  const [error, setError] = useState<IpcError | null>(null);
  const [busy, setBusy] = useState(false);

  // The form's fields are state of their own: what is being typed stays while the state is read again.
  const fields = useCallback((s: Share) => {
    setEnabled(s.settings.enabled);
    setAddress(s.settings.address);
    setAllowRemote(s.settings.allow_remote);
  }, []);
  const shown = useCallback(
    (s: Share) => {
      setShare(s);
      fields(s);
    },
    [fields],
  );

  // The state and the log: read once the page listens for their changes (so none falls
  // between), the form's fields from that first read; then read again at each change (a
  // request answered or refused, the server started or stopped). The latest read wins.
  useEffect(() => {
    let latest = 0;
    let live = true;
    const un = ipc.onKbShareChanged(() => {
      const mine = (latest += 1);
      ipc.kbShare().then(
        (s) => live && mine === latest && setShare(s),
        () => undefined,
      );
    });
    void un.then(() => {
      const mine = (latest += 1);
      ipc.kbShare().then(
        (s) => {
          if (!live) return;
          fields(s);
          if (mine === latest) setShare(s);
        },
        (e: unknown) => live && setError(toIpcError(e)),
      );
    });
    return () => {
      live = false;
      void un.then((f) => f());
    };
  }, [ipc, fields]);

  const serving = share?.url != null;

  const run = (action: () => Promise<Share>) => {
    setBusy(true);
    return action().then(
      (s) => {
        shown(s);
        setError(null);
        setBusy(false);
      },
      (e: unknown) => {
        setError(toIpcError(e));
        setBusy(false);
      },
    );
  };

  return (
    <section className="card" data-testid="kb-share">
      <h2>{t("kb.share.title")}</h2>
      <p className="muted">{t("kb.share.intro")}</p>
      {error && <ErrorBanner error={error} onDismiss={() => setError(null)} />}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void run(() => ipc.kbSetShare({ enabled, address: address.trim(), allow_remote: allowRemote }));
        }}
      >
        <label className="row">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} data-testid="kb-share-enabled" />
          {t("kb.share.enabled")}
        </label>
        <label className="row">
          {t("kb.share.address")}
          <input value={address} onChange={(e) => setAddress(e.target.value)} placeholder="127.0.0.1:8765" data-testid="kb-share-address" />
        </label>
        <label className="row">
          <input type="checkbox" checked={allowRemote} onChange={(e) => setAllowRemote(e.target.checked)} data-testid="kb-share-remote" />
          {t("kb.share.allowRemote")}
        </label>
        {allowRemote && (
          <p className="error-text" role="note">
            {t("kb.share.remoteWarning")}
          </p>
        )}
        <button type="submit" className="primary" disabled={busy}>
          {t("common.save")}
        </button>
      </form>
      <p data-testid="kb-share-state" role="status">
        {share?.url ? t("kb.share.serving", { url: share.url, sse: share.sse_url ?? "" }) : share?.settings.enabled ? "" : t("kb.share.off")}
      </p>
      {share?.error && <p className="error-text">{share.error}</p>}
      {serving && (
        <div className="row">
          <label className="row">
            {t("kb.share.configFor")}
            <select value={client} onChange={(e) => setClient(e.target.value as KbShareClient)} data-testid="kb-share-client">
              {Object.entries(CLIENTS).map(([c, label]) => (
                <option key={c} value={c}>
                  {t(label)}
                </option>
              ))}
            </select>
          </label>
          {/* Read at the click: the token and address as they are now. */}
          <CopyButton text={() => ipc.kbShareConfig(client)} onError={(e) => setError(toIpcError(e))} className="" testId="kb-share-copy" />
          <button type="button" disabled={busy} onClick={() => void run(() => ipc.kbShareNewToken())} data-testid="kb-share-new-token">
            {t("kb.share.newToken")}
          </button>
        </div>
      )}
      {serving && <small className="muted">{t("kb.share.tokenNote")}</small>}
      {serving && /^http:\/\/(0\.0\.0\.0|\[::\]):/.test(share?.url ?? "") && (
        <p className="muted" data-testid="kb-share-everywhere">
          {t("kb.share.everywhere")}
        </p>
      )}
      <h3>{t("kb.share.log")}</h3>
      {share && share.log.length === 0 && <p className="muted">{t("kb.share.logEmpty")}</p>}
      {share && share.log.length > 0 && (
        <table className="tools-table" data-testid="kb-share-log">
          <thead>
            <tr>
              <th scope="col">{t("kb.share.when")}</th>
              <th scope="col">{t("kb.share.who")}</th>
              <th scope="col">{t("kb.share.what")}</th>
            </tr>
          </thead>
          <tbody>
            {share.log.map((r, i) => (
              <tr key={`${r.at_ms}-${i}`} className={r.what === "refused" ? "error-text" : undefined}>
                <td>{new Date(r.at_ms).toLocaleTimeString(lang === "zh" ? "zh-CN" : "en")}</td>
                <td>{r.client}</td>
                <td>
                  {r.what === "refused"
                    ? t("kb.share.refused", { why: r.detail })
                    : r.what === "read"
                      ? t("kb.share.read", { uri: r.detail })
                      : r.detail
                        ? `${r.what}: ${r.detail}`
                        : r.what}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
