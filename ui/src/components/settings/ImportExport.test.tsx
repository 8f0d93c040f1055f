import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ImportPreview, McpServerConfig } from "../../lib/ipc";
import { POLICY } from "../../test/fakeServers";
import { renderIn } from "../../test/render";
import { ImportExport, type ImportIpc } from "./ImportExport";

afterEach(cleanup);

const cfg = (name: string): McpServerConfig => ({
  name,
  transport: { type: "stdio", command: "npx", args: [], env: {}, cwd: null },
  enabled: true,
  timeouts: { startup_secs: 30, call_secs: 60 },
  approval: "ask",
  tool_approval: {},
  disabled_tools: [],
  share_roots: true,
  read_only_auto_allow: false,
  extra: {},
});

const preview: ImportPreview = {
  format: "claude_desktop",
  warnings: ["\"weird\" has no command and was skipped"],
  entries: [
    {
      name: "fresh",
      status: "new",
      incoming: cfg("fresh"),
      diff: [],
      detail: null,
      secrets: [
        { field: "env.GITHUB_TOKEN", secret: "mcp/fresh/GITHUB_TOKEN", state: "reference", set: false },
        { field: "env.API_KEY", secret: "mcp/fresh/API_KEY", state: "from_import" },
      ],
      environment: [{ field: "env.HOME_DIR", variable: "HOME", set: true }, { field: "env.GH", variable: "GH_TOKEN", set: false }],
      steering: [],
      policy: POLICY,
    },
    {
      name: "files",
      status: "changed",
      incoming: cfg("files"),
      diff: [
        { op: "same", text: '"command": "npx",' },
        { op: "remove", text: '"args": ["a"]' },
        { op: "add", text: '"args": ["b"]' },
      ],
      detail: null,
      secrets: [],
      environment: [],
      steering: [],
      policy: POLICY,
    },
    { name: "same", status: "unchanged", incoming: cfg("same"), diff: [], detail: null, secrets: [], environment: [], steering: [], policy: POLICY },
    { name: "clash", status: "conflict", incoming: cfg("clash"), diff: [], detail: "A server named clash uses a different transport.", secrets: [], environment: [], steering: [], policy: POLICY },
  ],
  inputs: [],
  removed_on_replace: [],
  providers: [],
};

function fake(): ImportIpc {
  return {
    importPreview: vi.fn(() => Promise.resolve(preview)),
    importApply: vi.fn(() =>
      Promise.resolve({ added: ["fresh"], updated: ["files", "clash"], skipped: ["same"], removed: [], secrets_not_set: [] }),
    ),
    exportConfig: vi.fn(() => Promise.resolve("/home/me/claude_desktop_config.json")),
  };
}

describe("ImportExport", () => {
  it("lists, per server, every variable and header whose value is a secret and the keyring entry it uses", async () => {
    renderIn(<ImportExport ipc={fake()} />);
    fireEvent.change(screen.getByLabelText("Paste a config (Claude Desktop, VS Code, Cursor…)"), { target: { value: "{}" } });
    fireEvent.click(screen.getByRole("button", { name: "Preview" }));
    const entries = await screen.findAllByTestId("import-entry");
    const listed = within(entries[0] as HTMLElement).getByTestId("import-secrets");
    expect([...listed.querySelectorAll("li")].map((li) => li.textContent)).toEqual([
      "env.GITHUB_TOKEN uses the keyring entry mcp/fresh/GITHUB_TOKEN (not set)",
      "env.API_KEY stored in the keyring as mcp/fresh/API_KEY",
    ]);
    expect(within(entries[1] as HTMLElement).queryByTestId("import-secrets")).toBeNull();
    // What it reads from the environment at each start, and what is not set now.
    const reads = within(entries[0] as HTMLElement).getByTestId("import-environment");
    expect([...reads.querySelectorAll("li")].map((li) => li.textContent)).toEqual([
      "env.HOME_DIR reads the environment variable HOME each time the server starts (its value goes to the server)",
      "env.GH reads the environment variable GH_TOKEN each time the server starts (its value goes to the server) (not set now: the server will not start until it is)",
    ]);
    expect(within(entries[1] as HTMLElement).queryByTestId("import-environment")).toBeNull();
  });

  it("previews new, changed with diff, unchanged and conflict entries, then applies the chosen ones", async () => {
    const ipc = fake();
    renderIn(<ImportExport ipc={ipc} />);
    const text = '{"mcpServers": {}}';
    fireEvent.change(screen.getByLabelText("Paste a config (Claude Desktop, VS Code, Cursor…)"), { target: { value: text } });
    fireEvent.click(screen.getByRole("button", { name: "Preview" }));
    const entries = await screen.findAllByTestId("import-entry");
    expect(entries.map((e) => e.getAttribute("data-status"))).toEqual(["new", "changed", "unchanged", "conflict"]);
    expect(screen.getByText("Recognised format: claude_desktop")).toBeTruthy();
    expect(screen.getByText('"weird" has no command and was skipped')).toBeTruthy();
    const diff = within(entries[1] as HTMLElement).getByTestId("import-diff");
    expect(diff.querySelector(".diff-remove")?.textContent).toBe('- "args": ["a"]');
    expect(diff.querySelector(".diff-add")?.textContent).toBe('+ "args": ["b"]');
    expect(within(entries[3] as HTMLElement).getByText("A server named clash uses a different transport.")).toBeTruthy();
    // New and changed are preselected; unchanged cannot be picked; a conflict needs an explicit choice.
    expect((screen.getByLabelText("Import fresh") as HTMLInputElement).checked).toBe(true);
    expect((screen.getByLabelText("Import files") as HTMLInputElement).checked).toBe(true);
    expect((screen.getByLabelText("Import same") as HTMLInputElement).disabled).toBe(true);
    expect((screen.getByLabelText("Import clash") as HTMLInputElement).checked).toBe(false);
    fireEvent.click(screen.getByLabelText("Import clash"));
    fireEvent.click(screen.getByRole("button", { name: "Apply 3 changes" }));
    expect(ipc.importApply).toHaveBeenCalledWith(text, ["fresh", "files", "clash"], false, {}, {});
    expect((await screen.findByTestId("import-report")).textContent).toBe("Imported: 1 added, 2 updated, 1 skipped.");
  });

  it("asks for a VS Code config's secrets and can replace all servers", async () => {
    const ipc = fake();
    const vscode: ImportPreview = {
      format: "vscode",
      warnings: [],
      entries: [{ name: "github", status: "new", incoming: cfg("github"), diff: [], detail: null, secrets: [], environment: [], steering: [], policy: POLICY }],
      inputs: [
        { id: "gh-token", description: "GitHub token", servers: ["github"], set: false },
        { id: "lint-key", description: null, servers: ["github"], set: true },
      ],
      removed_on_replace: ["old", "older"],
      providers: ["ark"],
    };
    ipc.importPreview = vi.fn(() => Promise.resolve(vscode));
    ipc.importApply = vi.fn(() =>
      Promise.resolve({ added: ["github"], updated: [], skipped: [], removed: ["old", "older"], secrets_not_set: ["mcp/github/LINT"] }),
    );
    renderIn(<ImportExport ipc={ipc} />);
    fireEvent.change(screen.getByLabelText("Paste a config (Claude Desktop, VS Code, Cursor…)"), { target: { value: "{}" } });
    fireEvent.click(screen.getByRole("button", { name: "Preview" }));
    const token = (await screen.findByLabelText("GitHub token")) as HTMLInputElement;
    expect(screen.getByTestId("import-providers").textContent).toBe("Providers created or replaced: ark (keys stay in the keyring).");
    expect(token.type).toBe("password");
    expect(screen.getAllByText("Used by github. Stored in the OS keyring; leave empty to set it later.")).toHaveLength(2);
    // An input without a description is labelled by its id; one already set says so.
    expect((screen.getByLabelText("lint-key") as HTMLInputElement).placeholder).toBe("already set; type to replace");
    fireEvent.change(token, { target: { value: "ghp-typed" } });
    expect(screen.queryByTestId("import-removes")).toBeNull();
    fireEvent.click(screen.getByLabelText("Replace all: delete the servers this config does not name"));
    expect(screen.getByTestId("import-removes").textContent).toBe("Deletes: old, older");
    fireEvent.click(screen.getByRole("button", { name: "Apply 1 change" }));
    expect(ipc.importApply).toHaveBeenCalledWith("{}", ["github"], true, { "gh-token": "ghp-typed" }, {});
    expect((await screen.findByTestId("import-report")).textContent).toBe(
      "Imported: 1 added, 0 updated, 0 skipped. Deleted: old, older.",
    );
    expect(screen.getByTestId("import-not-set").textContent).toBe(
      "Not set yet (the servers report it until you set them): mcp/github/LINT.",
    );
  });

  it("shows a parse error as a readable message", async () => {
    const ipc = fake();
    ipc.importPreview = vi.fn(() => Promise.reject({ kind: "invalid_input", message: "line 3, column 5: expected `}`" }));
    renderIn(<ImportExport ipc={ipc} />);
    fireEvent.change(screen.getByLabelText("Paste a config (Claude Desktop, VS Code, Cursor…)"), { target: { value: "{" } });
    fireEvent.click(screen.getByRole("button", { name: "Preview" }));
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("line 3, column 5: expected `}`");
    expect(alert.textContent).toContain("Correct the highlighted value");
  });

  it("opens the install confirmation for a pasted install link", async () => {
    const ipc = fake();
    ipc.importPreview = vi.fn(() => Promise.resolve({ ...preview, format: "vscode_link", warnings: [] }));
    renderIn(<ImportExport ipc={ipc} />);
    const link = "vscode:mcp/install?%7B%22name%22%3A%22fresh%22%7D";
    fireEvent.change(screen.getByLabelText("Paste a config (Claude Desktop, VS Code, Cursor…)"), { target: { value: ` ${link}\n` } });
    fireEvent.click(screen.getByRole("button", { name: "Preview" }));
    expect(await screen.findByRole("dialog", { name: "Add the MCP server fresh?" })).toBeTruthy();
    expect(ipc.importPreview).toHaveBeenCalledWith(link);
    expect(screen.queryByTestId("import-preview")).toBeNull();
  });

  it("reads a picked file and previews it", async () => {
    const ipc = fake();
    renderIn(<ImportExport ipc={ipc} />);
    const file = new File(['{"mcpServers": {"x": {"command": "y"}}}'], "claude.json", { type: "application/json" });
    fireEvent.change(screen.getByLabelText("Choose a file…"), { target: { files: [file] } });
    await waitFor(() => expect(ipc.importPreview).toHaveBeenCalledWith('{"mcpServers": {"x": {"command": "y"}}}'));
  });

  it("moves the plain values the user marks into the keyring", async () => {
    const ipc = fake();
    const db = cfg("db");
    db.transport = { type: "stdio", command: "pg", args: [], env: { DSN: { plain: "postgres://u:p@h/db" }, MODE: { plain: "fast" }, KEY: { secret: "mcp/db/KEY" } }, cwd: null };
    const remote = cfg("remote");
    remote.transport = { type: "streamable_http", url: "https://x.test/mcp", headers: { "X-Team": { plain: "t1" } } };
    ipc.importPreview = vi.fn(() =>
      Promise.resolve({
        ...preview,
        entries: [
          { name: "db", status: "new", incoming: db, diff: [], detail: null, secrets: [], environment: [], steering: [], policy: POLICY },
          { name: "remote", status: "new", incoming: remote, diff: [], detail: null, secrets: [], environment: [], steering: [], policy: POLICY },
          { name: "same", status: "unchanged", incoming: db, diff: [], detail: null, secrets: [], environment: [], steering: [], policy: POLICY },
        ],
      } satisfies ImportPreview),
    );
    renderIn(<ImportExport ipc={ipc} />);
    fireEvent.change(screen.getByLabelText("Paste a config (Claude Desktop, VS Code, Cursor…)"), { target: { value: "{}" } });
    fireEvent.click(screen.getByRole("button", { name: "Preview" }));
    // Only plain values are offered (KEY is a secret already); an unchanged entry offers none.
    const rows = await screen.findAllByTestId("import-plain-fields");
    expect(rows.map((r) => r.textContent)).toEqual(["Store in the keyring:DSNMODE", "Store in the keyring:X-Team"]);
    expect(screen.queryByTestId("import-providers")).toBeNull();
    fireEvent.click(screen.getByLabelText("Store DSN of db in the keyring"));
    fireEvent.click(screen.getByLabelText("Store X-Team of remote in the keyring"));
    fireEvent.click(screen.getByLabelText("Store MODE of db in the keyring"));
    fireEvent.click(screen.getByLabelText("Store MODE of db in the keyring"));
    fireEvent.click(screen.getByRole("button", { name: "Apply 2 changes" }));
    expect(ipc.importApply).toHaveBeenCalledWith("{}", ["db", "remote"], false, {}, { db: ["DSN"], remote: ["X-Team"] });
  });

  it("exports in the chosen format, with secret values only after a warning", async () => {
    const ipc = fake();
    renderIn(<ImportExport ipc={ipc} />);
    fireEvent.change(screen.getByLabelText("Format"), { target: { value: "vscode" } });
    fireEvent.click(screen.getByRole("button", { name: "Export to a file…" }));
    expect(ipc.exportConfig).toHaveBeenCalledWith("vscode", false);
    expect(await screen.findByText("Saved to /home/me/claude_desktop_config.json.")).toBeTruthy();
    expect(screen.queryByTestId("export-secrets-warning")).toBeNull();
    fireEvent.click(screen.getByLabelText("Include secret values"));
    expect(screen.getByTestId("export-secrets-warning").textContent).toContain("plain text");
    fireEvent.click(screen.getByRole("button", { name: "Export to a file…" }));
    expect(ipc.exportConfig).toHaveBeenLastCalledWith("vscode", true);
  });
});
