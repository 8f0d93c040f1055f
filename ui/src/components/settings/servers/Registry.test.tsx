// Adding a server from the MCP Registry: searching, an entry's placeholders,
// and downloading the bundle an entry lists.
import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { McpServerConfig } from "../../../lib/ipc";
import { renderIn, signalOf, untilCancelled } from "../../../test/render";
import { notesBundle, vaultEntry, fake } from "../../../test/fakeServers";
import { ServersSettings } from "./ServersSettings";

afterEach(cleanup);

describe("ServersSettings", () => {
  it("calls off a registry search still running when another one starts, or on Cancel", async () => {
    const f = fake([]);
    const first = vi.fn(untilCancelled);
    f.ipc.registrySearch = first;
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    const query = screen.getByLabelText("Server name contains…");
    fireEvent.change(query, { target: { value: "slow" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    const slow = signalOf(first as never);
    f.ipc.registrySearch = vi.fn(() => Promise.resolve({ entries: [], next_cursor: null }));
    fireEvent.change(query, { target: { value: "nothing" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    expect(slow.aborted).toBe(true);
    expect((await screen.findByTestId("registry-none")).textContent).toBe("No server in the registry matches “nothing”.");
    expect(screen.queryByRole("alert")).toBeNull();
    // And one the user calls off.
    f.ipc.registrySearch = vi.fn(untilCancelled);
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(await screen.findByTestId("registry-search-cancel"));
    expect(signalOf(f.ipc.registrySearch as never).aborted).toBe(true);
    expect(screen.queryByTestId("registry-searching")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("searches the MCP Registry, pages on, and adds a server from an entry with its key typed into the keyring", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    const query = screen.getByLabelText("Server name contains…");
    fireEvent.change(query, { target: { value: "nothing" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    expect((await screen.findByTestId("registry-none")).textContent).toBe("No server in the registry matches “nothing”.");
    fireEvent.change(query, { target: { value: "weather" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    await waitFor(() => expect(screen.getAllByTestId("registry-entry")).toHaveLength(1));
    fireEvent.click(screen.getByRole("button", { name: "More results" }));
    await waitFor(() => expect(screen.getAllByTestId("registry-entry")).toHaveLength(2));
    expect(f.ipc.registrySearch).toHaveBeenLastCalledWith("weather", "page-2", expect.any(AbortSignal));
    expect(screen.queryByRole("button", { name: "More results" })).toBeNull();
    const pypi = screen.getAllByTestId("registry-entry")[1]!;
    expect(pypi.textContent).toContain("Weather (pypi)");
    expect(pypi.textContent).toContain("Needs uvx on this computer.");

    fireEvent.click(within(pypi).getByRole("button", { name: "Use" }));
    expect(screen.queryByTestId("registry-browser")).toBeNull();
    expect(screen.getByTestId("registry-template").textContent).toContain("io.github.acme/weather 1.2.0");
    expect(screen.getByTestId("registry-settings").textContent).toBe(
      "WEATHER_API_KEY Your key from acme.example (required, secret, kept in the keyring)",
    );
    expect((document.getElementById("server-name") as HTMLInputElement).value).toBe("weather");
    expect((screen.getByLabelText("Command") as HTMLInputElement).value).toBe("uvx");
    const key = within(screen.getByTestId("server-env")).getByLabelText("Value") as HTMLInputElement;
    expect(key.type).toBe("password");
    fireEvent.change(key, { target: { value: "wk-123" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.transport).toEqual({
      type: "stdio",
      command: "uvx",
      args: ["acme-weather==1.2.0"],
      env: { WEATHER_API_KEY: { secret: "mcp/weather/env/WEATHER_API_KEY" } },
      cwd: null,
    });
    expect(secrets).toEqual({ "mcp/weather/env/WEATHER_API_KEY": "wk-123" });
  });

  it("asks for the parts of an entry the registry leaves to the user, then edits and saves it with their secrets", async () => {
    const f = fake([]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    fireEvent.change(screen.getByLabelText("Server name contains…"), { target: { value: "vault" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(within(await screen.findByTestId("registry-entry")).getByRole("button", { name: "Use" }));
    const setup = screen.getByTestId("registry-setup");
    expect(within(setup).getByRole("heading").textContent).toBe("Set up Vault (streamable-http)");
    expect((within(setup).getByLabelText("key *") as HTMLInputElement).type).toBe("password");
    expect((within(setup).getByLabelText("region") as HTMLSelectElement).value).toBe("eu");
    fireEvent.change(within(setup).getByLabelText("tenant *"), { target: { value: "nope" } });
    fireEvent.change(within(setup).getByLabelText("key *"), { target: { value: "k-1" } });
    fireEvent.click(within(setup).getByRole("button", { name: "Continue" }));
    expect((await within(setup).findByRole("alert")).textContent).toContain("tenant: no such tenant");
    fireEvent.change(within(setup).getByLabelText("tenant *"), { target: { value: "acme" } });
    fireEvent.click(within(setup).getByRole("button", { name: "Continue" }));
    await waitFor(() => expect(screen.queryByTestId("registry-setup")).toBeNull());
    expect(f.ipc.registryFill).toHaveBeenLastCalledWith(vaultEntry, { tenant: "acme", key: "k-1", region: "eu" });
    expect(screen.queryByTestId("registry-settings")).toBeNull();
    expect((screen.getByLabelText("URL") as HTMLInputElement).value).toBe("https://acme.vault.example/mcp");
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.saveServer).toHaveBeenCalled());
    const [saved, secrets] = (f.ipc.saveServer as ReturnType<typeof vi.fn>).mock.calls[0] as [McpServerConfig, Record<string, string>];
    expect(saved.transport).toEqual({
      type: "streamable_http",
      url: "https://acme.vault.example/mcp",
      headers: { Authorization: { secret: "mcp/vault/Authorization" } },
    });
    expect(secrets).toEqual({ "mcp/vault/Authorization": "Bearer k-1" });
  });

  it("downloads a bundle the registry lists, saying so meanwhile, and opens the bundle installer on it", async () => {
    const f = fake([]);
    let finish: (path: string) => void = () => undefined;
    f.ipc.registryBundle = vi.fn(() => new Promise<string>((resolve) => (finish = resolve)));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    fireEvent.change(screen.getByLabelText("Server name contains…"), { target: { value: "notes" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(await screen.findByRole("button", { name: "Install" }));
    expect((await screen.findByTestId("bundle-downloading")).textContent).toBe(
      "Downloading https://example.com/notes.mcpb and checking its SHA-256…Cancel",
    );
    act(() => finish("/data/downloads/ab12.mcpb"));
    await waitFor(() => expect(f.ipc.bundlePreview).toHaveBeenCalledWith("/data/downloads/ab12.mcpb", "en-US"));
    expect(screen.queryByTestId("bundle-downloading")).toBeNull();
    expect(f.ipc.registryBundle).toHaveBeenCalledWith(notesBundle, expect.any(AbortSignal));
    expect(await screen.findByTestId("bundle-install")).toBeTruthy();
    expect(screen.queryByTestId("server-editor")).toBeNull();
  });

  it("calls a bundle's download off on Cancel, with nothing to report", async () => {
    const f = fake([]);
    f.ipc.registryBundle = vi.fn(untilCancelled);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "Browse the MCP Registry…" }));
    fireEvent.change(screen.getByLabelText("Server name contains…"), { target: { value: "notes" } });
    fireEvent.click(screen.getByRole("button", { name: "Search" }));
    fireEvent.click(await screen.findByRole("button", { name: "Install" }));
    fireEvent.click(await screen.findByTestId("bundle-download-cancel"));
    expect(signalOf(f.ipc.registryBundle as never).aborted).toBe(true);
    await waitFor(() => expect(screen.queryByTestId("bundle-downloading")).toBeNull());
    expect(screen.queryByRole("alert")).toBeNull();
    expect(f.ipc.bundlePreview).not.toHaveBeenCalled();
  });
});
