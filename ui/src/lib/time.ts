// When a message was written, as its header shows it: the time for today's,
// the date and time for older ones, and the full date and time on hover; in
// the window's language.
import type { Lang } from "./i18n";

const LOCALES: Record<Lang, string> = { en: "en-GB", zh: "zh-CN" };

/** The short and the full form of `ms` (Unix milliseconds), seen at `now`; `timeZone` for tests. */
export function messageTime(ms: number, now: number, lang: Lang, timeZone?: string): { short: string; full: string } {
  const locale = LOCALES[lang];
  const day = new Intl.DateTimeFormat(locale, { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  const time = { timeZone, hour: "2-digit", minute: "2-digit" } as const;
  const sameDay = day.format(ms) === day.format(now);
  const sameYear = new Intl.DateTimeFormat(locale, { timeZone, year: "numeric" }).format(ms) === new Intl.DateTimeFormat(locale, { timeZone, year: "numeric" }).format(now);
  const short = new Intl.DateTimeFormat(
    locale,
    sameDay ? time : sameYear ? { ...time, month: "short", day: "numeric" } : { ...time, year: "numeric", month: "short", day: "numeric" },
  ).format(ms);
  const full = new Intl.DateTimeFormat(locale, { timeZone, dateStyle: "full", timeStyle: "short" }).format(ms);
  return { short, full };
}
