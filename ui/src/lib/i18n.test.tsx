import { describe, expect, it } from "vitest";
import { catalogues, translate } from "./i18n";

describe("locale catalogues", () => {
  const languages = Object.keys(catalogues) as (keyof typeof catalogues)[];
  const allKeys = new Set(languages.flatMap((l) => Object.keys(catalogues[l])));

  for (const lang of languages) {
    it(`${lang} has every key and no empty text`, () => {
      const table: Record<string, string> = catalogues[lang];
      // A singular form (`key.one`) is only for languages that have one.
      const missing = [...allKeys].filter((k) => !(k in table) && !k.endsWith(".one"));
      expect(missing).toEqual([]);
      const empty = Object.entries(table).filter(([, v]) => v.trim() === "");
      expect(empty).toEqual([]);
    });
  }

  it("says one thing in the singular where the language has it", () => {
    expect(translate("en", "servers.toolCount", { count: 1 })).toBe("1 tool");
    expect(translate("en", "servers.toolCount", { count: 2 })).toBe("2 tools");
    expect(translate("en", "servers.toolCount", { count: 0 })).toBe("0 tools");
    // Chinese has no singular form: its one text serves every count.
    expect(translate("zh", "servers.toolCount", { count: 1 })).toBe(catalogues.zh["servers.toolCount"].replace("{count}", "1"));
    const orphans = Object.keys(catalogues.en).filter((k) => k.endsWith(".one") && !(k.slice(0, -4) in catalogues.en));
    expect(orphans).toEqual([]);
  });

  it("interpolates named values", () => {
    expect(translate("en", "settings.keyringAvailable", { detail: "Secret Service" })).toBe(
      "available (Secret Service)",
    );
    expect(translate("zh", "settings.keyringUnavailable", { detail: "x" })).toBe("不可用：x");
  });
});
