// Minimal i18n: flat JSON catalogues under src/locales, one per language, and
// a hook that looks keys up with {name} interpolation. A Vitest test keeps the
// catalogues complete.
import { createContext, useCallback, useContext, useLayoutEffect, useMemo, useState, type ReactNode } from "react";
import en from "../locales/en.json";
import zh from "../locales/zh.json";

export const catalogues = { en, zh } as const;
export type Lang = keyof typeof catalogues;
export type MessageKey = keyof typeof en;

const STORAGE_KEY = "patchbay.lang";

function initialLang(): Lang {
  const saved = typeof localStorage !== "undefined" ? localStorage.getItem(STORAGE_KEY) : null;
  if (saved === "en" || saved === "zh") return saved;
  return typeof navigator !== "undefined" && navigator.language.startsWith("zh") ? "zh" : "en";
}

/** Whether a key built at run time (`serverPresets.${id}`) is in the catalogues. */
export function isMessageKey(key: string): key is MessageKey {
  return Object.prototype.hasOwnProperty.call(en, key);
}

/**
 * The text of `key` in `lang` with `vars` put in. With `count` 1, a language
 * that has a singular form says it as `key.one` ("1 tool", not "1 tools").
 */
export function translate(lang: Lang, key: MessageKey, vars?: Record<string, string | number>): string {
  const table: Record<string, string> = catalogues[lang];
  const singular = vars?.count === 1 ? table[`${key}.one`] : undefined;
  const text = singular ?? table[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (whole, name: string) => (vars && name in vars ? String(vars[name]) : whole));
}

interface I18n {
  lang: Lang;
  setLang: (lang: Lang) => void;
  t: (key: MessageKey, vars?: Record<string, string | number>) => string;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children, lang: fixed }: { children: ReactNode; lang?: Lang }) {
  const [lang, setLangState] = useState<Lang>(fixed ?? initialLang());
  const setLang = useCallback((next: Lang) => {
    localStorage.setItem(STORAGE_KEY, next);
    setLangState(next);
  }, []);
  // Before the first paint, in the same task as the render: no frame shows a page whose
  // language is not yet the document's.
  useLayoutEffect(() => {
    // Screen readers and CJK font selection follow the document language.
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  }, [lang]);
  const value = useMemo<I18n>(
    () => ({ lang, setLang, t: (key, vars) => translate(lang, key, vars) }),
    [lang, setLang],
  );
  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const ctx = useContext(I18nContext);
  if (!ctx) throw new Error("useI18n outside I18nProvider");
  return ctx;
}
