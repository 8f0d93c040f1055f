// A server's page, "Doctor": the checks the core ran on the server, each with
// its detail and a hint, named in the window's language where the catalogue can.
import { isMessageKey, useI18n, type MessageKey } from "../../../lib/i18n";
import type { DoctorCheck, DoctorReport } from "../../../lib/ipc";

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
      {report.checks.map((c) => (
        <li key={c.name} className={c.ok ? "ok-text" : "error-text"}>
          {c.ok ? "✓" : "✗"} <strong>{doctorText(t, "name", c)}</strong>: {c.detail.includes("\n") ? <pre className="stderr">{c.detail}</pre> : c.detail}
          {c.hint && <div className="muted">{doctorText(t, "hint", c)}</div>}
        </li>
      ))}
    </ul>
  );
}
