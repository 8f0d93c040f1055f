// The composer's menus (Radix DropdownMenu: arrows, typeahead, Enter, Esc, focus given back):
// how hard the model thinks, and a server's resource or resource template to attach. Not modal:
// a modal menu hides the page from screen readers while its controls stay focusable (axe's
// aria-hidden-focus), and a click outside closes it either way.
import * as Menu from "@radix-ui/react-dropdown-menu";
import { Brain, Check, ChevronDown, FileText } from "lucide-react";
import { useI18n } from "../../lib/i18n";
import type { ReasoningEffort, ResourceInfo, ResourceTemplateInfo } from "../../lib/ipc";
import { REASONING_CHOICES } from "../common/ReasoningSelect";

/** The pill that opens a menu: an icon, what is chosen, a chevron. */
function Trigger({ icon: Glyph, id, label, text }: { icon: typeof Brain; id: string; label: string; text: string }) {
  return (
    <Menu.Trigger asChild>
      <button type="button" id={id} className="pill" aria-label={label}>
        <Glyph size={14} aria-hidden="true" />
        <span className="pill-text">{text}</span>
        <ChevronDown size={14} aria-hidden="true" />
      </button>
    </Menu.Trigger>
  );
}

/** Reasoning effort for this conversation: the assistant's, off, low, medium or high. */
export function ThinkingMenu({ value, onChange }: { value: ReasoningEffort | null; onChange: (effort: ReasoningEffort | null) => void }) {
  const { t } = useI18n();
  const word = (REASONING_CHOICES.find(([effort]) => effort === (value ?? "")) ?? REASONING_CHOICES[0])[1];
  const text = t(`composer.reasoning${word}`);
  return (
    <Menu.Root modal={false}>
      <Trigger icon={Brain} id="reasoning-picker" label={t("composer.reasoningNow", { choice: text })} text={text} />
      <Menu.Portal>
        <Menu.Content className="menu" align="start" sideOffset={4} aria-label={t("composer.reasoning")}>
          <Menu.RadioGroup value={value ?? ""} onValueChange={(v) => onChange(v === "" ? null : (v as ReasoningEffort))}>
            {REASONING_CHOICES.map(([effort, choice]) => (
              <Menu.RadioItem key={effort} value={effort} className="menu-item">
                <Menu.ItemIndicator forceMount className="menu-check">
                  <Check size={14} aria-hidden="true" />
                </Menu.ItemIndicator>
                {t(`composer.reasoning${choice}`)}
              </Menu.RadioItem>
            ))}
          </Menu.RadioGroup>
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}

/** The servers' resources (attached as links) and templates (filled in a dialog first). */
export function ResourceMenu({
  resources,
  templates,
  onResource,
  onTemplate,
}: {
  resources: ResourceInfo[];
  templates: ResourceTemplateInfo[];
  onResource: (resource: ResourceInfo) => void;
  onTemplate: (template: ResourceTemplateInfo) => void;
}) {
  const { t } = useI18n();
  return (
    <Menu.Root modal={false}>
      <Trigger icon={FileText} id="attach-resource" label={t("composer.attach")} text={t("composer.attach")} />
      <Menu.Portal>
        <Menu.Content className="menu menu-list" align="start" sideOffset={4} aria-label={t("composer.attach")}>
          {resources.map((r) => (
            <Menu.Item key={`${r.server}/${r.uri}`} className="menu-item" onSelect={() => onResource(r)}>
              {r.server}: {r.title ?? r.name}
            </Menu.Item>
          ))}
          {resources.length > 0 && templates.length > 0 && <Menu.Separator className="menu-separator" />}
          {templates.map((x) => (
            <Menu.Item key={`template/${x.server}/${x.uri_template}`} className="menu-item" onSelect={() => onTemplate(x)}>
              {t("composer.fromTemplate", { server: x.server, name: x.name })}
            </Menu.Item>
          ))}
        </Menu.Content>
      </Menu.Portal>
    </Menu.Root>
  );
}
