// A button that puts text on the clipboard and says "Copied" for a moment.
import { useEffect, useState } from "react";
import { copyText } from "../../lib/clipboard";
import { useI18n } from "../../lib/i18n";

/** How long "Copied" shows. */
const SHOWN_MS = 1500;

export function CopyButton({ text, className = "link", testId }: { text: () => string; className?: string; testId?: string }) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), SHOWN_MS);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button type="button" className={className} data-testid={testId} onClick={() => void copyText(text()).then(() => setCopied(true), () => undefined)}>
      {copied ? t("chat.copied") : t("chat.copy")}
    </button>
  );
}
