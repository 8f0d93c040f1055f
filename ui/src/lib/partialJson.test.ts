import { describe, expect, it } from "vitest";
import { partialObject } from "./partialJson";

describe("partialObject", () => {
  it("closes what the model is still writing", () => {
    expect(partialObject('{"city": "Osl')).toEqual({ city: "Osl" });
    expect(partialObject('{"cities": ["Oslo", "Ber')).toEqual({ cities: ["Oslo", "Ber"] });
    expect(partialObject('{"a": {"b": 1, "c": [true')).toEqual({ a: { b: 1, c: [true] } });
    expect(partialObject('{"text": "say \\"hi\\" and \\n')).toEqual({ text: 'say "hi" and \n' });
    expect(partialObject('{"n": 12')).toEqual({ n: 12 });
  });

  it("drops a trailing piece that cannot stand on its own", () => {
    expect(partialObject('{"city": "Oslo", "cou')).toEqual({ city: "Oslo" });
    expect(partialObject('{"city": "Oslo", "country":')).toEqual({ city: "Oslo" });
    expect(partialObject('{"city": "Oslo", "ok": tr')).toEqual({ city: "Oslo" });
    expect(partialObject('{"city": "Oslo",  ')).toEqual({ city: "Oslo" });
    // An escape only begun is left out until it is whole; escaped backslashes are kept.
    expect(partialObject('{"path": "C:\\')).toEqual({ path: "C:" });
    expect(partialObject('{"city": "K\\u00')).toEqual({ city: "K" });
    expect(partialObject('{"city": "K\\u00f8')).toEqual({ city: "Kø" });
    expect(partialObject('{"path": "C:\\\\u')).toEqual({ path: "C:\\u" });
  });

  it("says nothing before there is an object, or when the text is not one", () => {
    expect(partialObject("")).toBeNull();
    expect(partialObject('"just a string')).toBeNull();
    expect(partialObject("[1, 2")).toBeNull();
    expect(partialObject('{"a": 1}}')).toBeNull();
    expect(partialObject("{")).toEqual({});
  });
});
