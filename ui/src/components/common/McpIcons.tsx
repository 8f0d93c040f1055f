// The icon an MCP server gives itself or a tool: one per theme at most, each a
// data: URL checked by the backend. The stylesheet shows the one drawn for the
// theme in use, so a change of theme needs no new render.
import type { IconView } from "../../lib/ipc";

export function McpIcons({ icons }: { icons: IconView[] }) {
  return (
    <>
      {icons.map((icon) => (
        <img key={`${icon.theme ?? "any"}-${icon.src}`} className="mcp-icon" data-for={icon.theme ?? "any"} src={icon.src} alt="" width={16} height={16} />
      ))}
    </>
  );
}
