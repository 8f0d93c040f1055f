import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BundleSignature } from "../../../lib/ipc";
import { bundleInfo, renderIn } from "../../../test/render";
import { BundleInstall, type BundleIpc } from "./BundleInstall";

afterEach(cleanup);

const signer = {
  publisher: "Ada-Tools",
  issuer: "Test-Intermediate",
  valid_from: "2026-11-01",
  valid_to: "2027-11-01",
  fingerprint: "ab12",
};

const ipc: BundleIpc = {
  installBundle: () => Promise.resolve("notes"),
  configureBundle: () => Promise.resolve(),
  bundleSettings: () => Promise.resolve(bundleInfo()),
  pickSettingFile: () => Promise.resolve(null),
  kbPickFolder: () => Promise.resolve(null),
};

function shown(signature: BundleSignature, lang: "en" | "zh" = "en") {
  renderIn(<BundleInstall ipc={ipc} target={{ kind: "install" }} info={bundleInfo({ signature })} onClose={() => {}} onInstalled={() => {}} />, lang);
  const line = screen.getByTestId("bundle-signature");
  return { text: line.textContent, status: line.dataset.status, className: line.className, title: line.title };
}

describe("BundleInstall's signature line", () => {
  it("names a trusted publisher, with the certificate on hover", () => {
    const line = shown({ status: "signed", signer });
    expect(line.text).toBe("✓ Signed by Ada-Tools");
    expect(line.className).toContain("ok");
    expect(line.title).toBe("Certificate issued by Test-Intermediate, valid 2026-11-01 to 2027-11-01. SHA-256 ab12");
  });

  it("warns for a self-signed, an unverified and an unsigned bundle, saying why", () => {
    expect(shown({ status: "self_signed", signer }).text).toContain("Self-signed by Ada-Tools");
    cleanup();
    const untrusted = shown({ status: "untrusted", signer, reason: "not_for_code" });
    expect(untrusted.text).toBe("⚠ Signed by Ada-Tools, not verified: its certificate is not meant for signing code.");
    expect(untrusted.className).toContain("warn");
    cleanup();
    const unsigned = shown({ status: "unsigned" });
    expect(unsigned.status).toBe("unsigned");
    expect(unsigned.text).toContain("nothing says who made this bundle");
  });

  it("warns when an update is not signed with the installed version's certificate", () => {
    const update = (signer_changed: boolean) =>
      bundleInfo({ installed_version: "1.0.0", installed_signature: { status: "signed", signer }, signer_changed });
    renderIn(<BundleInstall ipc={ipc} target={{ kind: "install" }} info={update(true)} onClose={() => {}} onInstalled={() => {}} />);
    expect(screen.getByTestId("bundle-signer-changed").textContent).toContain(
      "The installed version was signed by Ada-Tools (certificate ab12…), and this one is not signed with that certificate.",
    );
    cleanup();
    renderIn(<BundleInstall ipc={ipc} target={{ kind: "install" }} info={update(false)} onClose={() => {}} onInstalled={() => {}} />);
    expect(screen.queryByTestId("bundle-signer-changed")).toBeNull();
  });

  it("installs the bundle previewed, saying who the preview showed signed it", async () => {
    const installBundle = vi.fn(() => Promise.resolve("notes"));
    const info = bundleInfo({ signature: { status: "signed", signer }, preview_id: "preview-7" });
    renderIn(<BundleInstall ipc={{ ...ipc, installBundle }} target={{ kind: "install" }} info={info} onClose={() => {}} onInstalled={() => {}} />);
    fireEvent.click(screen.getByRole("button", { name: "Install" }));
    await waitFor(() => expect(installBundle).toHaveBeenCalledWith("preview-7", "ab12", {}));
  });

  it("says the reason in the interface's language", () => {
    expect(shown({ status: "untrusted", signer, reason: "expired" }, "zh").text).toBe(
      "⚠ 由 Ada-Tools 签名，未能验证：其证书已过期。",
    );
  });
});
