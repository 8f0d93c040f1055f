// A settings list with the page of the item open in it beside it (a server, a provider, an
// assistant being added or edited); with none open the list takes the width.
import type { ReactNode } from "react";

export function ListDetail({ children, detail }: { children: ReactNode; detail: ReactNode }) {
  return (
    <div className={detail ? "master-detail open" : "master-detail"}>
      <div className="master">{children}</div>
      {detail && <div className="detail">{detail}</div>}
    </div>
  );
}
