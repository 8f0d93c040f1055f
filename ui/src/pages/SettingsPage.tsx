import { useMemo, useState } from "react";
import { Tabs } from "../components/common/Tabs";
import { Assistants } from "../components/settings/Assistants";
import { General } from "../components/settings/General";
import { ImportExport } from "../components/settings/ImportExport";
import { KnowledgeBase } from "../components/settings/KnowledgeBase";
import { ProvidersSettings } from "../components/settings/ProvidersSettings";
import { ServersSettings } from "../components/settings/servers/ServersSettings";
import { Schedules } from "../components/settings/Schedules";
import { SharedFolders } from "../components/settings/SharedFolders";
import { useI18n, type MessageKey } from "../lib/i18n";
import { ipc as defaultIpc, type Ipc } from "../lib/ipc";

export type SettingsSection = "general" | "providers" | "servers" | "roots" | "import" | "kb" | "assistants" | "schedules";

const SECTIONS: [SettingsSection, MessageKey][] = [
  ["general", "settings.general"],
  ["providers", "settings.providers"],
  ["servers", "settings.servers"],
  ["roots", "settings.roots"],
  ["import", "settings.import"],
  ["kb", "settings.kb"],
  ["assistants", "settings.assistants"],
  ["schedules", "settings.schedules"],
];

export function SettingsPage({
  ipc = defaultIpc,
  openedBundle = null,
  onBundleShown,
  initialSection = "general",
  initialServer = null,
}: {
  ipc?: Partial<Ipc>;
  /** The section shown first, unless a bundle was opened. */
  initialSection?: SettingsSection;
  /** The server whose page the servers section opens on. */
  initialServer?: string | null;
  /** A bundle file to show the installer for, on the servers section. */
  openedBundle?: string | null;
  onBundleShown?: () => void;
}) {
  const { t } = useI18n();
  const [section, setSection] = useState<SettingsSection>(openedBundle ? "servers" : initialSection);
  const [shownFor, setShownFor] = useState(openedBundle);
  if (openedBundle !== shownFor) {
    // A bundle opened while settings are shown switches to the servers section.
    setShownFor(openedBundle);
    if (openedBundle) setSection("servers");
  }
  const full = useMemo(() => ({ ...defaultIpc, ...ipc }), [ipc]);
  return (
    <section className="page settings-page" id="page-settings">
      <h1>{t("settings.title")}</h1>
      <Tabs
        tabs={SECTIONS.map(([id, label]) => ({ id, label: t(label) }))}
        selected={section}
        onSelect={setSection}
        label={t("settings.sections")}
        idPrefix="settings"
      >
        {section === "general" && <General ipc={full} />}
        {section === "providers" && <ProvidersSettings ipc={full} />}
        {section === "servers" && <ServersSettings ipc={full} opened={openedBundle} onOpened={onBundleShown} initialSelected={initialServer} />}
        {section === "roots" && <SharedFolders ipc={full} />}
        {section === "import" && <ImportExport ipc={full} />}
        {section === "kb" && <KnowledgeBase ipc={full} />}
        {section === "assistants" && <Assistants ipc={full} />}
        {section === "schedules" && <Schedules ipc={full} />}
      </Tabs>
    </section>
  );
}
