import { describe, expect, it } from "vitest";
import { messageTime } from "./time";

describe("messageTime", () => {
  const now = Date.UTC(2026, 10, 26, 15, 30);
  it("gives today's time, an older day's date and time, and another year's year", () => {
    expect(messageTime(Date.UTC(2026, 10, 26, 9, 5), now, "en", "UTC").short).toBe("09:05");
    expect(messageTime(Date.UTC(2026, 10, 24, 21, 40), now, "en", "UTC").short).toBe("24 Nov, 21:40");
    expect(messageTime(Date.UTC(2025, 0, 2, 8, 0), now, "en", "UTC").short).toBe("2 Jan 2025, 08:00");
    const full = messageTime(Date.UTC(2026, 10, 26, 9, 5), now, "en", "UTC").full;
    expect([full.startsWith("Thursday"), full.includes("26 November 2026"), full.endsWith("09:05")]).toEqual([true, true, true]);
  });

  it("speaks the window's language, and the day is the one where the user is", () => {
    expect(messageTime(Date.UTC(2026, 10, 24, 21, 40), now, "zh", "UTC").short).toBe("11月24日 21:40");
    // 23:30 UTC on the 25th is already the 26th in Shanghai: today there.
    expect(messageTime(Date.UTC(2026, 10, 25, 23, 30), now, "zh", "Asia/Shanghai").short).toBe("07:30");
  });
});
