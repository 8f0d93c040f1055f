import { describe, expect, it } from "vitest";
import { catalogues, translate } from "./i18n";

describe("locale catalogues", () => {
  const languages = Object.keys(catalogues) as (keyof typeof catalogues)[];
  const allKeys = new Set(languages.flatMap((l) => Object.keys(catalogues[l])));

  for (const lang of languages) {
    it(`${lang} has every key and no empty text`, () => {
      const table: Record<string, string> = catalogues[lang];
      const missing = [...allKeys].filter((k) => !(k in table));
      expect(missing).toEqual([]);
      const empty = Object.entries(table).filter(([, v]) => v.trim() === "");
      expect(empty).toEqual([]);
    });
  }

  it("interpolates named values", () => {
    expect(translate("en", "settings.keyringAvailable", { detail: "Secret Service" })).toBe(
      "available (Secret Service)",
    );
    expect(translate("zh", "settings.keyringUnavailable", { detail: "x" })).toBe("不可用：x");
  });
});
