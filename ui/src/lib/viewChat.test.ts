import { act, renderHook } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { AttachmentInput } from "./ipc";
import { useViewChat, type Send } from "./viewChat";

const ctx = (title: string, text: string) => ({ title, text });

function setup(send: Send, busy = false) {
  return renderHook(({ busy }) => useViewChat(send, busy, "still answering"), { initialProps: { busy } });
}

describe("useViewChat", () => {
  it("sends the views' contexts with the next message as titled text, then forgets them", async () => {
    const send = vi.fn<Send>(() => Promise.resolve(true));
    const { result } = setup(send);
    act(() => {
      result.current.actions.setContext("a", ctx("From the view of map", "Oslo is selected"));
      result.current.actions.setContext("b", ctx("From the view of chart", "Q3"));
      result.current.actions.setContext("b", null);
    });
    expect([...result.current.contexts.keys()]).toEqual(["a"]);
    const picture: AttachmentInput = { type: "image", data: "AA==", mime_type: "image/png", title: null };
    await act(() => result.current.sendWithContexts("Where?", [picture]));
    expect(send).toHaveBeenCalledWith("Where?", [picture, { type: "text", text: "Oslo is selected", title: "From the view of map" }]);
    expect(result.current.contexts.size).toBe(0);
  });

  it("gives the contexts back when the message did not start, a view's newer one winning", async () => {
    let answer: (started: boolean) => void = () => undefined;
    const send = vi.fn<Send>(() => new Promise((resolve) => (answer = resolve)));
    const { result } = setup(send);
    act(() => {
      result.current.actions.setContext("a", ctx("map", "old"));
      result.current.actions.setContext("b", ctx("chart", "Q3"));
    });
    let sent: Promise<boolean> = Promise.resolve(true);
    act(() => {
      sent = result.current.sendWithContexts("Hi", []);
    });
    expect(result.current.contexts.size).toBe(0);
    // While the message is on its way, a view updates its context.
    act(() => result.current.actions.setContext("a", ctx("map", "new")));
    await act(async () => {
      answer(false);
      expect(await sent).toBe(false);
    });
    expect([...result.current.contexts].map(([k, c]) => `${k}=${c.text}`).sort()).toEqual(["a=new", "b=Q3"]);
  });

  it("refuses a view's message while a turn runs, and lets one through otherwise", async () => {
    const send = vi.fn<Send>(() => Promise.resolve(true));
    const { result, rerender } = setup(send, true);
    await expect(result.current.actions.sendMessage("Count again")).rejects.toThrow("still answering");
    expect(send).not.toHaveBeenCalled();
    rerender({ busy: false });
    await act(async () => {
      await result.current.actions.sendMessage("Count again");
      // A second one before the page has seen the first one's turn start is refused too.
      await expect(result.current.actions.sendMessage("And again")).rejects.toThrow("still answering");
    });
    expect(send).toHaveBeenCalledTimes(1);
    expect(send).toHaveBeenCalledWith("Count again", []);
  });
});
