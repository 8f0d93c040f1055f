// The server editor as the servers page opens it: stdio and HTTP servers,
// secrets kept out of the config, presets and client credentials.
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McpServerConfig } from "../../../lib/ipc";
import { renderIn } from "../../../test/render";
import { config, fake, plainView, view } from "../../../test/fakeServers";
import { ServersSettings } from "./ServersSettings";

afterEach(cleanup);

describe("ServersSettings", () => {
  it("edits a stdio server: args list, env with secrets kept out of the config", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(screen.getByRole("tab", { name: "Edit" }));
    const editor = screen.getByTestId("server-editor");
    fireEvent.change(within(editor).getByLabelText("Argument 2"), { target: { value: "@mcp/server-fs" } });
    fireEvent.click(within(editor).getByRole("button", { name: "Add variable" }));
    const env = within(editor).getByTestId("server-env");
    const keys = within(env).getAllByLabelText("Name");
    const values = within(env).getAllByLabelText("Value");
    fireEvent.change(keys[2] as HTMLElement, { target: { value: "API_KEY" } });
    fireEvent.change(values[2] as HTMLElement, { target: { value: "s3cret" } });
    // A new row named like a secret is one, by the import's rule (issue 30, item 9).
    expect((within(env).getAllByLabelText("Secret")[2] as HTMLInputElement).checked).toBe(true);
    expect((values[2] as HTMLInputElement).type).toBe("password");
    const share = within(editor).getByLabelText("Share folders (knowledge-base and shared folders) with this server") as HTMLInputElement;
    expect(share.checked).toBe(true);
    fireEvent.click(share);
    const readOnly = within(editor).getByLabelText("Run read-only tools without asking") as HTMLInputElement;
    expect(readOnly.checked).toBe(false);
    fireEvent.click(readOnly);
    fireEvent.click(within(editor).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.share_roots).toBe(false);
    expect(saved.read_only_auto_allow).toBe(true);
    expect(saved.transport).toEqual({
      type: "stdio",
      command: "npx",
      args: ["-y", "@mcp/server-fs"],
      env: { TOKEN: { secret: "mcp/files/env/TOKEN" }, MODE: { plain: "ro" }, API_KEY: { secret: "mcp/files/env/API_KEY" } },
      cwd: null,
    });
    expect(secrets).toEqual({ "mcp/files/env/API_KEY": "s3cret" });
    expect(JSON.stringify(saved)).not.toContain("s3cret");
  });

  it("keeps an imported value that reads the environment as one, and says so", async () => {
    const transport = { type: "stdio" as const, command: "gh", args: [], env: { GH: { env: "${env:GH_TOKEN}" }, MODE: { plain: "${HOME}" } }, cwd: null };
    const f = fake([plainView({ ...config, name: "gh", transport }, { state: "ready", tool_count: 1, error: null })]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "gh" }));
    fireEvent.click(screen.getByRole("tab", { name: "Edit" }));
    const env = within(screen.getByTestId("server-editor")).getByTestId("server-env");
    expect((within(env).getAllByLabelText("Value")[0] as HTMLInputElement).value).toBe("${env:GH_TOKEN}");
    expect(within(env).getAllByTestId("env-pair")).toHaveLength(1);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig];
    // Read from the environment still; a plain value that looks like a reference stays plain text.
    expect(saved.transport).toEqual({ ...transport, env: { GH: { env: "${env:GH_TOKEN}" }, MODE: { plain: "${HOME}" } } });
  });

  it("marks a new header or variable secret when its name looks secret, until the user decides", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "remote" } });
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "streamable_http" } });
    fireEvent.change(screen.getByLabelText("URL"), { target: { value: "https://mcp.example/mcp" } });
    const headers = screen.getByTestId("server-headers");
    for (let i = 0; i < 3; i++) fireEvent.click(within(headers).getByRole("button", { name: "Add variable" }));
    const row = (i: number) => ({
      key: within(headers).getAllByLabelText("Name")[i] as HTMLInputElement,
      value: within(headers).getAllByLabelText("Value")[i] as HTMLInputElement,
      secret: within(headers).getAllByLabelText("Secret")[i] as HTMLInputElement,
    });
    fireEvent.change(row(0).key, { target: { value: "Authorization" } });
    fireEvent.change(row(1).key, { target: { value: "X-Team" } });
    fireEvent.change(row(2).key, { target: { value: "x-api-key" } });
    expect([0, 1, 2].map((i) => row(i).secret.checked)).toEqual([true, false, true]);
    expect(row(0).value.type).toBe("password");
    // The user's own choice stands when the name changes again.
    fireEvent.click(row(2).secret);
    fireEvent.change(row(2).key, { target: { value: "X-Api-Key" } });
    expect(row(2).secret.checked).toBe(false);
    fireEvent.change(row(0).value, { target: { value: "Bearer t0k" } });
    fireEvent.change(row(1).value, { target: { value: "core" } });
    fireEvent.change(row(2).value, { target: { value: "public" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.transport).toMatchObject({
      headers: { Authorization: { secret: "mcp/remote/header/Authorization" }, "X-Team": { plain: "core" }, "X-Api-Key": { plain: "public" } },
    });
    expect(secrets).toEqual({ "mcp/remote/header/Authorization": "Bearer t0k" });
  });

  it("adds a server from a preset, which fills in every field and says what it needs", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    const start = screen.getByLabelText("Start from");
    await waitFor(() => expect(within(start).getByRole("option", { name: "Filesystem" })).toBeTruthy());
    fireEvent.change(start, { target: { value: "filesystem" } });
    expect((screen.getByLabelText("Name") as HTMLInputElement).value).toBe("filesystem");
    expect((screen.getByLabelText("Command") as HTMLInputElement).value).toBe("npx");
    expect((screen.getByLabelText("Argument 2") as HTMLInputElement).value).toBe("@modelcontextprotocol/server-filesystem");
    expect((screen.getByLabelText(/Share folders/) as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId("server-preset-about").textContent).toContain("Needs npx on this computer.");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(f.ipc.saveServer).toHaveBeenCalledWith(
        expect.objectContaining({
          name: "filesystem",
          share_roots: true,
          read_only_auto_allow: false,
          transport: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem"], env: {}, cwd: null },
        }),
        {},
      ),
    );
  });

  it("asks for the secret a preset needs and sends it to the keyring, never into the config", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    const start = screen.getByLabelText("Start from");
    await waitFor(() => expect(within(start).getByRole("option", { name: "GitHub" })).toBeTruthy());
    fireEvent.change(start, { target: { value: "github" } });
    fireEvent.change(screen.getByDisplayValue("github"), { target: { value: "gh" } });
    expect((screen.getByLabelText("URL") as HTMLInputElement).value).toBe("https://api.githubcopilot.com/mcp/");
    const headers = screen.getByTestId("server-headers");
    expect((within(headers).getByLabelText("Name") as HTMLInputElement).value).toBe("Authorization");
    const value = within(headers).getByLabelText("Value") as HTMLInputElement;
    expect(value.type).toBe("password");
    expect(value.placeholder).toBe("Value");
    fireEvent.change(value, { target: { value: "Bearer ghp-test" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.name).toBe("gh");
    expect(saved.transport).toEqual({
      type: "streamable_http",
      url: "https://api.githubcopilot.com/mcp/",
      headers: { Authorization: { secret: "mcp/gh/header/Authorization" } },
    });
    expect(secrets).toEqual({ "mcp/gh/header/Authorization": "Bearer ghp-test" });
  });

  it("adds an HTTP server with url and headers", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "remote" } });
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "streamable_http" } });
    fireEvent.change(screen.getByLabelText("URL"), { target: { value: "http://127.0.0.1:3001/mcp" } });
    fireEvent.change(screen.getByLabelText("Approval for tools without their own setting"), { target: { value: "allow" } });
    fireEvent.change(screen.getByLabelText("Tool call time limit (seconds)"), { target: { value: "120" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(f.ipc.saveServer).toHaveBeenCalledWith(
        expect.objectContaining({
          name: "remote",
          approval: "allow",
          timeouts: { startup_secs: 30, call_secs: 120 },
          transport: { type: "streamable_http", url: "http://127.0.0.1:3001/mcp", headers: {} },
        }),
        {},
      ),
    );
  });

  it("sets client credentials for a remote server: the secret goes to the keyring, only its name into the config", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add server" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "remote" } });
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "streamable_http" } });
    fireEvent.change(screen.getByLabelText("URL"), { target: { value: "https://mcp.example.com/mcp" } });
    expect(screen.queryByLabelText("Client ID")).toBeNull();
    fireEvent.change(screen.getByLabelText("Sign-in"), { target: { value: "secret" } });
    fireEvent.change(screen.getByLabelText("Client ID"), { target: { value: " ci-bot " } });
    fireEvent.change(screen.getByLabelText("Client secret"), { target: { value: "cc-s3cret" } });
    fireEvent.change(screen.getByLabelText("Scopes (separated by spaces)"), { target: { value: "mcp:read  mcp:write" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.client_credentials).toEqual({
      client_id: "ci-bot",
      key: { method: "secret", secret: { secret: "mcp/remote/oauth_client_secret" } },
      scopes: ["mcp:read", "mcp:write"],
    });
    expect(secrets).toEqual({ "mcp/remote/oauth_client_secret": "cc-s3cret" });
    expect(JSON.stringify(saved)).not.toContain("cc-s3cret");
  });

  it("keeps a stored private key when its field is left empty, and offers no browser sign-in for it", async () => {
    const remote = plainView(
      {
        ...config,
        name: "remote",
        transport: { type: "streamable_http", url: "https://mcp.example.com/mcp", headers: {} },
        client_credentials: { client_id: "bot", key: { method: "private_key", pem: { secret: "mcp/remote/oauth_private_key" }, algorithm: "ES256" }, scopes: [] },
      },
      { state: "failed", tool_count: 0, error: "authorization failed: invalid_client" },
    );
    const f = fake([remote]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    const row = await screen.findByTestId("server-row");
    expect(within(row).queryByTestId("server-sign-in")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "remote" }));
    fireEvent.click(screen.getByRole("tab", { name: "Edit" }));
    const editor = screen.getByTestId("server-editor");
    const pem = within(editor).getByLabelText("Private key (PEM)") as HTMLTextAreaElement;
    expect(pem.required).toBe(false);
    expect(pem.placeholder).toBe("stored in keyring");
    fireEvent.change(within(editor).getByLabelText("Signing algorithm"), { target: { value: "RS256" } });
    fireEvent.click(within(editor).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.client_credentials?.key).toEqual({ method: "private_key", pem: { secret: "mcp/remote/oauth_private_key" }, algorithm: "RS256" });
    expect(secrets).toEqual({});

    // Made a local server, it keeps no sign-in (the core would refuse it).
    fireEvent.change(within(editor).getByLabelText("Transport"), { target: { value: "stdio" } });
    fireEvent.change(within(editor).getByLabelText("Command"), { target: { value: "mcp-remote" } });
    fireEvent.click(within(editor).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalledTimes(2));
    const [local] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[1] as [McpServerConfig];
    expect(local.transport.type).toBe("stdio");
    expect(local.client_credentials).toBeNull();
  });
});
