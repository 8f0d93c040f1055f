// A fenced code block: highlighted by highlight.js, with its language and a copy button.
import { useMemo } from "react";
import hljs from "highlight.js/lib/common";
import { useI18n } from "../../lib/i18n";
import { CopyButton } from "../common/CopyButton";

export function CodeBlock({ code, language }: { code: string; language: string | null }) {
  const { t } = useI18n();
  const html = useMemo(() => {
    const lang = language && hljs.getLanguage(language) ? language : null;
    return lang ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value : null;
  }, [code, language]);
  return (
    <div className="code-block">
      <div className="code-head">
        <span className="code-lang">{language ?? t("chat.code")}</span>
        <CopyButton icon text={() => code} className="code-copy" testId="code-copy" />
      </div>
      <pre>
        {html !== null ? (
          <code className={`hljs language-${language}`} dangerouslySetInnerHTML={{ __html: html }} />
        ) : (
          <code className="hljs">{code}</code>
        )}
      </pre>
    </div>
  );
}
