import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { FieldProblem, McpServerConfig, PolicyPreview, SecurityLevel } from "../../../lib/ipc";
import { renderIn } from "../../../test/render";
import { ServerEditor, type PolicyIpc } from "./ServerEditor";
import { blankServer } from "./ServerEditor";

afterEach(cleanup);

const server: McpServerConfig = {
  ...blankServer(),
  name: "github",
  transport: { type: "stdio", command: "github-mcp", args: [], env: {}, cwd: null },
};

/** The core's checks, in short: a domain is a host name (or `*.` and one), a limit at least 1. */
function preview(config: McpServerConfig): PolicyPreview {
  const p = config.policy ?? {};
  const problems: FieldProblem[] = [];
  if (p.network && typeof p.network === "object")
    p.network.domains.forEach((d, i) => {
      if (!/^(\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*$/i.test(d)) problems.push({ field: `policy.network.domains[${i}]`, reason: `"${d}" is not a host name or a wildcard like *.example.org` });
    });
  if (p.rate?.per_tool_per_min === 0) problems.push({ field: "policy.rate.per_tool_per_min", reason: "must be at least 1 call per minute" });
  const summary = { kind: "local" as const, level: p.level ?? "strict", read: [], write: [], network: p.network ?? "off", rate: {} };
  return { summary, problems };
}

function fake(offered: SecurityLevel[] = ["strict", "normal", "permissive"]): PolicyIpc {
  return {
    policySettings: vi.fn(() => Promise.resolve({ defaults: { level: offered[0]!, turn_tool_calls: 50 }, offered })),
    policyPreview: vi.fn((c: McpServerConfig) => Promise.resolve(preview(c))),
  };
}

function edit(ipc: PolicyIpc, initial = server) {
  const onSave = vi.fn();
  renderIn(<ServerEditor ipc={ipc} initial={initial} isNew={false} onSave={onSave} onCancel={() => undefined} />);
  return onSave;
}

const options = (select: HTMLElement) => [...(select as HTMLSelectElement).options].map((o) => o.value);

describe("the server editor's Security section", () => {
  it("offers only the levels this system enforces, and says plainly what permissive means", async () => {
    edit(fake(["permissive"]));
    const level = await screen.findByLabelText("Security level");
    await waitFor(() => expect(options(level)).toEqual(["", "permissive"]));
    cleanup();

    edit(fake());
    const all = await screen.findByLabelText("Security level");
    await waitFor(() => expect(options(all)).toEqual(["", "strict", "normal", "permissive"]));
    expect(screen.queryByTestId("policy-permissive")).toBeNull();
    fireEvent.change(all, { target: { value: "permissive" } });
    expect(screen.getByTestId("policy-permissive").textContent).toBe("No sandbox: the server runs with your full rights.");
  });

  it("shows a remote server its rate limits only, and says why", async () => {
    const ipc = fake();
    const onSave = edit(ipc);
    await screen.findByLabelText("Security level");
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "streamable_http" } });
    const section = screen.getByTestId("policy-editor");
    expect(within(section).getByTestId("policy-remote").textContent).toBe(
      "Folders and network do not apply to remote servers: only the rate limits do.",
    );
    expect(within(section).queryByLabelText("Security level")).toBeNull();
    expect(within(section).queryByTestId("policy-read")).toBeNull();
    expect(within(section).queryByLabelText("Network")).toBeNull();
    fireEvent.change(within(section).getByLabelText("Calls per minute of the whole server"), { target: { value: "30" } });
    fireEvent.change(screen.getByLabelText("URL"), { target: { value: "https://mcp.example.com/mcp" } });
    fireEvent.submit(screen.getByTestId("server-editor"));
    await waitFor(() => expect(onSave).toHaveBeenCalled());
    expect((onSave.mock.calls[0]![0] as McpServerConfig).policy).toEqual({ rate: { per_server_per_min: 30 } });
  });

  it("names a bad domain next to its field and does not save it", async () => {
    const ipc = fake();
    const onSave = edit(ipc);
    fireEvent.change(await screen.findByLabelText("Network"), { target: { value: "domains" } });
    fireEvent.click(screen.getByRole("button", { name: "Add a domain" }));
    fireEvent.click(screen.getByRole("button", { name: "Add a domain" }));
    fireEvent.change(screen.getByLabelText("Domain 1"), { target: { value: "*.github.com" } });
    fireEvent.change(screen.getByLabelText("Domain 2"), { target: { value: "not a domain" } });
    const problem = await screen.findByTestId("policy-problem");
    expect(problem.dataset.field).toBe("policy.network.domains[1]");
    expect(problem.textContent).toBe('"not a domain" is not a host name or a wildcard like *.example.org');
    // Next to the second domain's field.
    expect(problem.parentElement?.querySelector("input")?.value).toBe("not a domain");
    fireEvent.submit(screen.getByTestId("server-editor"));
    const error = await screen.findByTestId("policy-error");
    expect(error.textContent).toContain("policy.network.domains[1]");
    expect(onSave).not.toHaveBeenCalled();
    // Fixed, it saves.
    fireEvent.change(screen.getByLabelText("Domain 2"), { target: { value: "api.example.org" } });
    await waitFor(() => expect(screen.queryByTestId("policy-problem")).toBeNull());
    fireEvent.submit(screen.getByTestId("server-editor"));
    await waitFor(() => expect(onSave).toHaveBeenCalled());
    expect((onSave.mock.calls[0]![0] as McpServerConfig).policy).toEqual({ network: { domains: ["*.github.com", "api.example.org"] } });
  });

  it("shows the policy in force as it is edited, folders and rates included", async () => {
    const ipc = fake();
    const onSave = edit(ipc, { ...server, policy: { level: "strict", network: { domains: ["api.github.com"] } } });
    const summary = await screen.findByTestId("policy-summary");
    await waitFor(() => expect(summary.textContent).toBe("In force: strict: reads only its own files · writes nothing · network: api.github.com"));
    fireEvent.change(screen.getByLabelText("Network"), { target: { value: "any" } });
    await waitFor(() => expect(screen.getByTestId("policy-summary").textContent).toContain("network: any"));
    expect(screen.getByText("The folders in its arguments and, when it sees them, the shared folders are writable already.")).toBeTruthy();
    fireEvent.click(within(screen.getByTestId("policy-read")).getByRole("button", { name: "Add a folder" }));
    fireEvent.change(within(screen.getByTestId("policy-read")).getByLabelText("Folder 1 (an absolute path)"), { target: { value: "/home/ada/Projects" } });
    fireEvent.change(screen.getByLabelText("Calls per minute of one tool"), { target: { value: "0" } });
    const zero = await screen.findByTestId("policy-problem");
    expect(zero.dataset.field).toBe("policy.rate.per_tool_per_min");
    fireEvent.change(screen.getByLabelText("Calls per minute of one tool"), { target: { value: "5" } });
    await waitFor(() => expect(screen.queryByTestId("policy-problem")).toBeNull());
    fireEvent.submit(screen.getByTestId("server-editor"));
    await waitFor(() => expect(onSave).toHaveBeenCalled());
    expect((onSave.mock.calls[0]![0] as McpServerConfig).policy).toEqual({
      level: "strict",
      read: ["/home/ada/Projects"],
      network: "any",
      rate: { per_tool_per_min: 5 },
    });
  });
});
