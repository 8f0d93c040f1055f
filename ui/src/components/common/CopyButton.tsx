// A button that puts text on the clipboard and says "Copied" for a moment.
import { useEffect, useState } from "react";
import { Check, Copy } from "lucide-react";
import { copyText } from "../../lib/clipboard";
import { useI18n } from "../../lib/i18n";
import { IconButton } from "./IconButton";

/** How long "Copied" shows. */
const SHOWN_MS = 1500;

/** `icon`: an icon button (its tooltip and name say "Copy", then "Copied"); otherwise a text button.
 * `text` is read at the click (it may be fetched then); `onError` hears why it could not be. */
export function CopyButton({
  text,
  className,
  testId,
  icon,
  onError,
}: {
  text: () => string | Promise<string>;
  className?: string;
  testId?: string;
  icon?: boolean;
  onError?: (e: unknown) => void;
}) {
  const { t } = useI18n();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), SHOWN_MS);
    return () => clearTimeout(timer);
  }, [copied]);
  const copy = () => {
    // A text at hand is copied at once (within the click, as clipboards like); one to fetch, when it comes.
    const value = text();
    const done = typeof value === "string" ? copyText(value) : value.then(copyText);
    void done.then(() => setCopied(true), onError ?? (() => undefined));
  };
  if (icon) return <IconButton icon={copied ? Check : Copy} label={copied ? t("chat.copied") : t("chat.copy")} className={className} testId={testId} onClick={copy} />;
  return (
    <button type="button" className={className ?? "link"} data-testid={testId} onClick={copy}>
      {copied ? t("chat.copied") : t("chat.copy")}
    </button>
  );
}
