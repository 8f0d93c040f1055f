import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ImportPreview, McpServerConfig } from "../../lib/ipc";
import { config } from "../../test/fakeServers";
import { renderIn } from "../../test/render";
import { InstallLink, type InstallLinkIpc } from "./InstallLink";

afterEach(cleanup);

const LINK = "patchbay://mcp/install?name=gh&config=e30";

const server: McpServerConfig = {
  ...config,
  name: "gh",
  transport: {
    type: "stdio",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-github", "--label", "my repos"],
    env: { GITHUB_TOKEN: { secret: "mcp/gh/GITHUB_TOKEN" }, REGION: { plain: "eu" }, NODE_OPTIONS: { plain: "--require x" } },
    cwd: null,
  },
};

const preview: ImportPreview = {
  format: "patchbay_link",
  warnings: [],
  entries: [
    {
      name: "gh",
      status: "new",
      incoming: server,
      diff: [],
      detail: null,
      secrets: [{ field: "env.GITHUB_TOKEN", secret: "mcp/gh/GITHUB_TOKEN", state: "prompt", input: "gh-GITHUB_TOKEN", description: "GITHUB_TOKEN for gh", set: false }],
      environment: [],
      steering: ["NODE_OPTIONS"],
      policy: { kind: "local", level: "normal", read: [], write: ["~/Projects"], network: { domains: ["api.github.com"] }, rate: {} },
    },
  ],
  inputs: [{ id: "gh-GITHUB_TOKEN", description: "GITHUB_TOKEN for gh", servers: ["gh"], set: false }],
  removed_on_replace: [],
  providers: [],
};

function fake(answer: Promise<ImportPreview>) {
  return {
    importPreview: vi.fn(() => answer),
    importApply: vi.fn(() => Promise.resolve({ added: ["gh"], updated: [], skipped: [], removed: [], secrets_not_set: [] })),
  } satisfies InstallLinkIpc;
}

describe("InstallLink", () => {
  it("shows what would run and its policy, asks for the secret, and adds the server only when confirmed", async () => {
    const ipc = fake(Promise.resolve(preview));
    const onClose = vi.fn();
    renderIn(<InstallLink link={LINK} ipc={ipc} onClose={onClose} />);
    expect(await screen.findByRole("heading", { name: "Add the MCP server gh?" })).toBeTruthy();
    expect(screen.getByTestId("link-command").textContent).toBe('npx -y @modelcontextprotocol/server-github --label "my repos"');
    const values = [...screen.getByTestId("link-values").querySelectorAll("li")].map((li) => li.textContent);
    expect(values).toEqual(["GITHUB_TOKEN (a secret: you type it below, kept in the keyring)", 'REGION = "eu"', 'NODE_OPTIONS = "--require x" changes which program runs or where its packages come from']);
    expect(screen.getByTestId("link-policy").textContent).toBe(
      "Security policy: normal: reads home (not its secrets) · writes ~/Projects · network: api.github.com",
    );
    expect(ipc.importPreview).toHaveBeenCalledWith(LINK);
    expect(ipc.importApply).not.toHaveBeenCalled();

    fireEvent.change(screen.getByLabelText("GITHUB_TOKEN for gh"), { target: { value: "ghp_typed" } });
    const add = screen.getByRole<HTMLButtonElement>("button", { name: "Add server" });
    expect(add.disabled).toBe(true);
    fireEvent.click(add);
    expect(ipc.importApply).not.toHaveBeenCalled();
    await waitFor(() => expect(add.disabled).toBe(false), { timeout: 3000 });
    fireEvent.click(add);
    await screen.findByText("Added gh. It starts now; see Settings → MCP servers.");
    expect(ipc.importApply).toHaveBeenCalledWith(LINK, ["gh"], false, { "gh-GITHUB_TOKEN": "ghp_typed" }, {});
    fireEvent.click(document.querySelector("#link-close")!);
    expect(onClose).toHaveBeenCalled();
  });

  it("shows the core's refusal, and offers nothing to add", async () => {
    const refused: ImportPreview = {
      ...preview,
      warnings: ["(link).env.API_KEY: an install link may not carry a secret value (links are logged and shared)"],
    };
    renderIn(<InstallLink link={LINK} ipc={fake(Promise.resolve(refused))} onClose={() => undefined} />);
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Patchbay did not install this link:");
    expect(alert.textContent).toContain("(link).env.API_KEY: an install link may not carry a secret value");
    expect(screen.queryByRole("button", { name: "Add server" })).toBeNull();
  });

  it("shows an unreadable link's error", async () => {
    const ipc = fake(Promise.reject({ kind: "invalid_input", message: "the import was not applied" }));
    renderIn(<InstallLink link="slack://open" ipc={ipc} onClose={() => undefined} />);
    await waitFor(() => expect(screen.getByText(/the import was not applied/)).toBeTruthy());
    expect(screen.queryByRole("button", { name: "Add server" })).toBeNull();
  });
});
