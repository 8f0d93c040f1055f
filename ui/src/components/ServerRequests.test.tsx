import { act, cleanup, fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ServerRequest } from "../lib/ipc";
import { renderIn } from "../test/render";
import { ServerRequests, type ServerRequestsIpc } from "./ServerRequests";

afterEach(cleanup);

function fake(waiting: ServerRequest[] = []) {
  let emit: (r: ServerRequest) => void = () => undefined;
  let answered: (id: string) => void = () => undefined;
  const ipc: ServerRequestsIpc = {
    onServerRequest: vi.fn((h: (r: ServerRequest) => void) => {
      emit = h;
      return Promise.resolve(() => undefined);
    }),
    onServerRequestEnded: vi.fn((h: (id: string) => void) => {
      answered = h;
      return Promise.resolve(() => undefined);
    }),
    waitingServerRequests: vi.fn(() => Promise.resolve(waiting)),
    respondServerRequest: vi.fn(() => Promise.resolve()),
  };
  return { ipc, request: (r: ServerRequest) => act(() => emit(r)), answeredElsewhere: (id: string) => act(() => answered(id)) };
}

const scope: ServerRequest = { kind: "elicitation", id: "e1", server: "gh", message: "Token scope?", requested_schema: { type: "object", properties: { scope: { type: "string" } } } };
const confirm: ServerRequest = { kind: "elicitation", id: "e2", server: "gh", message: "Really?", requested_schema: { type: "object", properties: {} } };

describe("ServerRequests", () => {
  it("asks one request at a time, in arrival order, and sends each answer", async () => {
    const f = fake();
    const onError = vi.fn();
    renderIn(<ServerRequests ipc={f.ipc} onError={onError} />);
    expect(screen.queryByRole("dialog")).toBeNull();
    f.request(scope);
    f.request(confirm);
    expect(screen.getByRole("dialog").textContent).toContain("Token scope?");
    fireEvent.change(screen.getByLabelText("scope"), { target: { value: "repo" } });
    fireEvent.click(screen.getByRole("button", { name: "Submit" }));
    expect(f.ipc.respondServerRequest).toHaveBeenCalledWith("e1", { action: "accept", content: { scope: "repo" } });
    expect(screen.getByRole("dialog").textContent).toContain("Really?");
    fireEvent.click(screen.getByRole("button", { name: "Decline" }));
    expect(f.ipc.respondServerRequest).toHaveBeenLastCalledWith("e2", { action: "decline" });
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(onError).not.toHaveBeenCalled();
  });

  it("shows a request sent before the page listened, once, before the ones after it", async () => {
    const f = fake([scope]);
    renderIn(<ServerRequests ipc={f.ipc} onError={vi.fn()} />);
    await vi.waitFor(() => expect(screen.getByRole("dialog").textContent).toContain("Token scope?"));
    // The same request heard as an event too (it was sent while the page listed), then a new one.
    f.request(scope);
    f.request(confirm);
    fireEvent.click(screen.getByRole("button", { name: "Decline" }));
    expect(f.ipc.respondServerRequest).toHaveBeenLastCalledWith("e1", { action: "decline" });
    expect(screen.getByRole("dialog").textContent).toContain("Really?");
    fireEvent.click(screen.getByRole("button", { name: "Decline" }));
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("does not bring back a request answered before the waiting list arrived", async () => {
    let list: (rs: ServerRequest[]) => void = () => undefined;
    const f = fake();
    f.ipc.waitingServerRequests = vi.fn(() => new Promise<ServerRequest[]>((r) => (list = r)));
    renderIn(<ServerRequests ipc={f.ipc} onError={vi.fn()} />);
    await vi.waitFor(() => expect(f.ipc.waitingServerRequests).toHaveBeenCalled());
    f.request(confirm);
    fireEvent.click(screen.getByRole("button", { name: "Decline" }));
    // The list was read before the answer reached the core: it still names the request.
    await act(async () => list([confirm]));
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("drops a request answered in another window (quick ask) or given up, and does not bring it back", async () => {
    let list: (rs: ServerRequest[]) => void = () => undefined;
    const f = fake();
    f.ipc.waitingServerRequests = vi.fn(() => new Promise<ServerRequest[]>((r) => (list = r)));
    renderIn(<ServerRequests ipc={f.ipc} onError={vi.fn()} />);
    f.request(scope);
    f.request(confirm);
    expect(screen.getByRole("dialog").textContent).toContain("Token scope?");
    f.answeredElsewhere("e1");
    expect(screen.getByRole("dialog").textContent).toContain("Really?");
    await act(async () => list([scope, confirm]));
    expect(screen.getByRole("dialog").textContent).toContain("Really?");
    f.answeredElsewhere("e2");
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(f.ipc.respondServerRequest).not.toHaveBeenCalled();
  });

  it("says when an answer did not arrive (the server gave up meanwhile)", async () => {
    const f = fake();
    f.ipc.respondServerRequest = vi.fn(() => Promise.reject({ kind: "not_found", message: "no server request e1 is waiting" }));
    const onError = vi.fn();
    renderIn(<ServerRequests ipc={f.ipc} onError={onError} />);
    f.request(confirm);
    fireEvent.click(screen.getByRole("button", { name: "Decline" }));
    await vi.waitFor(() => expect(onError).toHaveBeenCalledWith({ kind: "not_found", message: "no server request e1 is waiting" }));
  });
});
