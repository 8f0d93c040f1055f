import { cleanup, fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ServerState, ServerStatus } from "../../lib/ipc";
import { renderIn } from "../../test/render";
import { ServerHealth, withStatus } from "./ServerHealth";

afterEach(cleanup);

const status = (server: string, state: ServerState, error: string | null = null): ServerStatus => ({ server, state, tool_count: 0, error });

describe("ServerHealth", () => {
  it("says nothing while every server is ready or off", () => {
    renderIn(<ServerHealth servers={[status("fs", "ready"), status("off", "stopped")]} />);
    expect(screen.queryByTestId("server-health")).toBeNull();
  });

  it("names the failed servers, at most three, each with why and a way to its settings", () => {
    const onOpen = vi.fn();
    const failed = ["a", "b", "c", "d", "e"].map((s) => status(s, "failed", `${s} exited with code 1`));
    renderIn(<ServerHealth servers={[...failed, status("f", "restarting")]} onOpen={onOpen} />);
    const links = screen.getAllByTestId("server-failed");
    expect(links.map((l) => [l.textContent, l.title])).toEqual([
      ["a failed: see why", "a exited with code 1"],
      ["b failed: see why", "b exited with code 1"],
      ["c failed: see why", "c exited with code 1"],
    ]);
    expect(screen.getByTestId("server-health").textContent).toContain("and 2 more failed");
    expect(screen.getByTestId("servers-starting").textContent).toBe("Starting the MCP server f… Its tools come when it is ready.");
    fireEvent.click(links[1]!);
    expect(onOpen).toHaveBeenCalledWith("b");
  });

  it("only names a failed server when there is no settings page to open", () => {
    renderIn(<ServerHealth servers={[status("fetch", "failed")]} />, "zh");
    const failed = screen.getByTestId("server-failed");
    expect(failed.tagName).toBe("SPAN");
    expect(failed.textContent).toBe("fetch 无法使用");
  });

  it("puts a status in its server's place, or adds it", () => {
    const now = [status("a", "starting"), status("b", "ready")];
    expect(withStatus(now, status("a", "ready")).map((s) => s.state)).toEqual(["ready", "ready"]);
    expect(withStatus(now, status("c", "failed")).map((s) => s.server)).toEqual(["a", "b", "c"]);
  });
});
