// A server's page, "Doctor": the policy it was started under and the checks the
// core ran on the server, each with its detail and a hint, named in the window's
// language where the catalogue can.
import { isMessageKey, useI18n, type MessageKey } from "../../../lib/i18n";
import type { DoctorCheck, DoctorReport } from "../../../lib/ipc";
import { policyLine } from "../../../lib/policyLine";

/** A doctor check's name, and its hint, in the window's language where the catalogue has them. */
function doctorText(t: (key: MessageKey) => string, kind: "name" | "hint", check: DoctorCheck): string | null {
  const key = `doctor.${kind}.${check.name}`;
  const given = kind === "name" ? check.name : check.hint;
  return given !== null && isMessageKey(key) ? t(key) : given;
}

export function Doctor({ report }: { report: DoctorReport }) {
  const { t } = useI18n();
  return (
    <ul className="doctor" data-testid="doctor-report">
      {report.policy && (
        <li className="ok-text" data-testid="doctor-policy">
          ✓ <strong>{t("doctor.name.policy")}</strong>: {policyLine(t, report.policy)}
        </li>
      )}
      {report.checks.map((c) => (
        <li key={c.name} className={c.ok ? "ok-text" : "error-text"}>
          {c.ok ? "✓" : "✗"} <strong>{doctorText(t, "name", c)}</strong>: {c.detail.includes("\n") ? <pre className="stderr">{c.detail}</pre> : c.detail}
          {c.hint && <div className="muted">{doctorText(t, "hint", c)}</div>}
        </li>
      ))}
    </ul>
  );
}
