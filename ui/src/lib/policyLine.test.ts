import { describe, expect, it } from "vitest";
import { translate, type Lang } from "./i18n";
import type { PolicyOutline } from "./ipc";
import { policyLine } from "./policyLine";

// The outlines of the core's test `an_outline_reads_as_the_summary_line_and_travels_in_parts`
// (crates/core/src/config/policy.rs): in English the window says what the core's line says.
const NORMAL: PolicyOutline = {
  kind: "local",
  level: "normal",
  read: ["~/Notes"],
  write: ["~/Projects"],
  network: { domains: ["api.github.com"] },
  rate: { per_tool_per_min: 5, per_server_per_min: 30 },
};
const STRICT: PolicyOutline = { kind: "local", level: "strict", read: [], write: [], network: "off", rate: {} };
const REMOTE: PolicyOutline = { kind: "remote", rate: { per_tool_per_min: 10 } };
const PERMISSIVE: PolicyOutline = { kind: "local", level: "permissive", read: [], write: [], network: "any", rate: {} };

const line = (lang: Lang, outline: PolicyOutline) => policyLine((key, vars) => translate(lang, key, vars), outline);

describe("policyLine", () => {
  it("in English, reads as the core's summary line", () => {
    expect(line("en", NORMAL)).toBe(
      "normal: reads home (not its secrets), ~/Notes · writes ~/Projects · network: api.github.com · 30 calls/min (5 per tool)",
    );
    expect(line("en", STRICT)).toBe("strict: reads only its own files · writes nothing · network: off");
    expect(line("en", REMOTE)).toBe("remote: folders and network do not apply · 10 calls/min per tool");
    expect(line("en", { kind: "remote", rate: {} })).toBe("remote: folders and network do not apply · no rate limit");
    expect(line("en", { kind: "in_process" })).toBe("inside Patchbay");
    expect(line("en", PERMISSIVE)).toBe("Permissive: no sandbox, the server runs with your full rights");
  });

  it("in Chinese, reads Chinese", () => {
    expect(line("zh", NORMAL)).toBe(
      "普通 · 可读：主目录（机密位置除外）、~/Notes · 可写：~/Projects · 网络：api.github.com · 每分钟 30 次调用（每个工具 5 次）",
    );
    expect(line("zh", STRICT)).toBe("严格 · 可读：仅限自身文件 · 可写：无 · 网络：关闭");
    expect(line("zh", REMOTE)).toBe("远程：文件夹和网络限制不适用 · 每个工具每分钟 10 次调用");
    expect(line("zh", { kind: "in_process" })).toBe("在 Patchbay 内运行");
    expect(line("zh", PERMISSIVE)).toBe("宽松：不使用沙箱，服务器以你的全部权限运行");
  });
});
