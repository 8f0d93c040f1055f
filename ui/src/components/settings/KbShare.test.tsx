import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { KbShare as Share, KbShareSettings } from "../../lib/ipc";
import { expectAccessible } from "../../test/axe";
import { renderIn } from "../../test/render";
import { KbShare, type KbShareIpc } from "./KbShare";

afterEach(cleanup);

const OFF: Share = { settings: { enabled: false, address: "127.0.0.1:8765", allow_remote: false }, url: null, sse_url: null, error: null, log: [] };
const ON: Share = {
  settings: { enabled: true, address: "127.0.0.1:8765", allow_remote: false },
  url: "http://127.0.0.1:8765/mcp",
  sse_url: "http://127.0.0.1:8765/sse",
  error: null,
  log: [
    { at_ms: Date.now() - 1000, client: "127.0.0.1:50000", what: "refused", detail: "missing or wrong bearer token" },
    { at_ms: Date.now() - 2000, client: "claude-ai", what: "knowledge_search", detail: "kakapo" },
    { at_ms: Date.now() - 3000, client: "cursor-vscode", what: "read", detail: "file:///docs/birds.md" },
  ],
};

/** The page's listener for `kb_share_changed`, once it has subscribed. */
let changed: (() => void) | null = null;

function fake(start: Share) {
  let token = 1;
  const ipc: KbShareIpc = {
    onKbShareChanged: vi.fn((h: () => void) => {
      changed = h;
      return Promise.resolve(() => {
        changed = null;
      });
    }),
    kbShare: vi.fn(() => Promise.resolve(start)),
    kbSetShare: vi.fn((s: KbShareSettings) =>
      s.address === "0.0.0.0:8765" && !s.allow_remote
        ? Promise.reject({ kind: "invalid_input", message: "0.0.0.0:8765 can be reached from other computers" })
        : Promise.resolve(s.enabled ? { ...ON, settings: s } : { ...OFF, settings: s }),
    ),
    kbShareNewToken: vi.fn(() => Promise.resolve(((token += 1), ON))),
    kbShareConfig: vi.fn((client) => Promise.resolve(`{"mcpServers": {"patchbay-knowledge": {"for": "${client}", "token": ${token}}}}`)),
  };
  return ipc;
}

describe("KbShare", () => {
  it("turns sharing on, shows where it serves and copies each app's configuration", async () => {
    const ipc = fake(OFF);
    const copied = vi.fn(() => Promise.resolve());
    Object.assign(navigator, { clipboard: { writeText: copied } });
    renderIn(<KbShare ipc={ipc} />);
    expect(await screen.findByText("Not shared.")).toBeTruthy();
    expect(screen.queryByTestId("kb-share-copy")).toBeNull();
    fireEvent.click(screen.getByTestId("kb-share-enabled"));
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.getByTestId("kb-share-state").textContent).toContain("http://127.0.0.1:8765/mcp"));
    expect(screen.getByTestId("kb-share-state").textContent).toContain("http://127.0.0.1:8765/sse");
    expect(ipc.kbSetShare).toHaveBeenCalledWith({ enabled: true, address: "127.0.0.1:8765", allow_remote: false });

    fireEvent.change(await screen.findByTestId("kb-share-client"), { target: { value: "cursor" } });
    fireEvent.click(screen.getByTestId("kb-share-copy"));
    await waitFor(() => expect(copied).toHaveBeenCalledWith('{"mcpServers": {"patchbay-knowledge": {"for": "cursor", "token": 1}}}'));
    // After a new token, the copy carries the new one: the configuration is read at the click.
    fireEvent.click(screen.getByTestId("kb-share-new-token"));
    await waitFor(() => expect(ipc.kbShareNewToken).toHaveBeenCalled());
    fireEvent.click(screen.getByTestId("kb-share-copy"));
    await waitFor(() => expect(copied).toHaveBeenLastCalledWith('{"mcpServers": {"patchbay-knowledge": {"for": "cursor", "token": 2}}}'));
  });

  it("warns before other computers may connect and shows the refusal of an address without it", async () => {
    const ipc = fake(OFF);
    renderIn(<KbShare ipc={ipc} />);
    await screen.findByText("Not shared.");
    fireEvent.change(screen.getByTestId("kb-share-address"), { target: { value: "0.0.0.0:8765" } });
    fireEvent.click(screen.getByTestId("kb-share-enabled"));
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByText(/can be reached from other computers/)).toBeTruthy();
    expect(screen.getByTestId("kb-share-state").textContent).toBe("Not shared.");
    // What was typed stays.
    expect((screen.getByTestId("kb-share-address") as HTMLInputElement).value).toBe("0.0.0.0:8765");
    fireEvent.click(screen.getByTestId("kb-share-remote"));
    expect(screen.getByRole("note").textContent).toContain("plain HTTP");
  });

  it("reads its state again when it changes: a new request is listed, a server that stopped is said, and the address typed stays", async () => {
    const ipc = fake(ON);
    const asked = { ...ON, log: [{ at_ms: Date.now(), client: "cursor-vscode", what: "knowledge_search", detail: "kea" }, ...ON.log] };
    const stopped = { ...asked, url: null, sse_url: null, error: "not sharing: the server stopped" };
    ipc.kbShare = vi.fn().mockResolvedValueOnce(ON).mockResolvedValueOnce(asked).mockResolvedValue(stopped);
    const { unmount } = renderIn(<KbShare ipc={ipc} />);
    await waitFor(() => expect(screen.getByTestId("kb-share-state").textContent).toContain("http://127.0.0.1:8765/mcp"));
    expect(ipc.kbShare).toHaveBeenCalledTimes(1);
    fireEvent.change(screen.getByTestId("kb-share-address"), { target: { value: "127.0.0.1:9000" } });
    await waitFor(() => expect(changed).not.toBeNull());
    changed!();
    await waitFor(() => expect(screen.getByTestId("kb-share-log").querySelectorAll("tbody tr")).toHaveLength(4));
    expect(screen.getByTestId("kb-share-log").querySelector("tbody tr")!.textContent).toContain("knowledge_search: kea");
    changed!();
    expect(await screen.findByText("not sharing: the server stopped")).toBeTruthy();
    expect(screen.getByTestId("kb-share-state").textContent).toBe("");
    expect((screen.getByTestId("kb-share-address") as HTMLInputElement).value).toBe("127.0.0.1:9000");
    unmount();
    await waitFor(() => expect(changed).toBeNull());
  });

  it("lists who asked what, refusals included, and is accessible in Chinese", async () => {
    const ipc = fake(ON);
    renderIn(<KbShare ipc={ipc} />, "zh");
    const log = await screen.findByTestId("kb-share-log");
    const rows = log.querySelectorAll("tbody tr");
    expect(rows).toHaveLength(3);
    expect(rows[0]!.textContent).toContain("已拒绝：missing or wrong bearer token");
    expect(rows[1]!.textContent).toContain("claude-ai");
    expect(rows[1]!.textContent).toContain("knowledge_search: kakapo");
    expect(rows[2]!.textContent).toContain("读取 file:///docs/birds.md");
    fireEvent.click(screen.getByTestId("kb-share-new-token"));
    await waitFor(() => expect(ipc.kbShareNewToken).toHaveBeenCalled());
    await expectAccessible();
  });
});
