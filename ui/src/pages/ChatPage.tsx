import { useI18n } from "../lib/i18n";

export function ChatPage() {
  const { t } = useI18n();
  return (
    <section className="page" id="page-chat">
      <h1>{t("chat.title")}</h1>
      <p className="muted">{t("chat.empty")}</p>
    </section>
  );
}
