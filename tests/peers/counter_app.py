"""A tiny MCP Apps server for the tests, on the Python SDK's own `Apps` extension.

    python counter_app.py [APP_SDK_JS]

`show_counter` names the view `ui://counter/view.html`; `bump` is for the view
only (visibility ["app"]); `reset` is for the model only (visibility ["model"]);
`wait` has no view and takes its time (a call to call off). The counter is also
the resource `ui://counter/report.csv`.
With APP_SDK_JS (the official App SDK's `app-with-deps.js`, from
@modelcontextprotocol/ext-apps), the view is a real MCP App: it connects to the
host, shows the call's arguments (also while the model writes them) and result, and has buttons that call `bump`
and `reset`, send a message to the chat, give the model context, go full screen or to the window's corner,
download files (one embedded, one linked to the report), ask the model and ask
to be closed (torn down, it gives the model its last word); it lists its
server's resources once connected. Without it, the view is a plain page.
"""

import re
import sys

import anyio
from pathlib import Path

from mcp.server import MCPServer
from mcp.server.apps import Apps, ResourceCsp, client_supports_apps
from mcp.server.mcpserver import Context

VIEW = "ui://counter/view.html"
count = 0

apps = Apps()


@apps.tool(resource_uri=VIEW, title="Show the counter")
def show_counter(start: int, ctx: Context) -> str:
    """Shows the counter, starting at `start`."""
    global count
    count = start
    where = "in its view" if client_supports_apps(ctx) else "as text only"
    return f"The counter starts at {start}, shown {where}."


@apps.tool(resource_uri=VIEW, visibility=["app"])
def bump(by: int) -> str:
    """Adds `by` to the counter."""
    global count
    count += by
    return f"bumped to {count}"


@apps.tool(resource_uri=VIEW, visibility=["model"])
def reset() -> str:
    """Sets the counter to zero."""
    global count
    count = 0
    return "reset"


def sdk_script(path: str) -> str:
    """The SDK bundle as a classic script that leaves `window.McpApps.App`."""
    source = Path(path).read_text()
    exports = re.search(r"export\s*\{([^}]*)\}\s*;?\s*$", source)
    if exports is None:
        raise SystemExit(f"{path}: no export list at its end")
    names = dict(reversed(part.strip().split(" as ")) for part in exports.group(1).split(","))
    return source[: exports.start()] + f"\nwindow.McpApps = {{ App: {names['App']} }};\n"


PAGE = """<!doctype html>
<html><body>
<p id="status">not connected</p>
<p>arguments: <span id="args"></span></p>
<p>while written: <span id="partial"></span></p>
<p>result: <span id="result"></span></p>
<p>bumped: <span id="bumped"></span></p>
<p>tauri: <span id="ipc"></span></p>
<p>mode: <span id="mode">inline</span></p>
<button id="bump">Bump by 5</button>
<button id="say">Tell the chat</button>
<button id="share">Share with the model</button>
<button id="full">Full screen</button>
<button id="corner">Corner</button>
<button id="reset">Reset</button>
<button id="download">Download</button>
<button id="ask">Ask the model</button>
<button id="close">Close</button>
<p>model: <span id="sampled"></span></p>
<p>resources: <span id="resources"></span></p>
<p>download: <span id="downloaded"></span></p>
<script>__SDK__</script>
<script>
const $ = (id) => document.getElementById(id);
$("ipc").textContent = typeof window.__TAURI_INTERNALS__ + " " + typeof window.__TAURI__;
const app = new window.McpApps.App({ name: "counter-view", version: "1.0.0" });
app.ontoolinput = (p) => { $("args").textContent = JSON.stringify(p.arguments); };
app.ontoolinputpartial = (p) => { $("partial").textContent = JSON.stringify(p.arguments); };
app.ontoolresult = (r) => { $("result").textContent = r.content.map((c) => c.text).join(" "); };
$("bump").onclick = async () => {
  try {
    const r = await app.callServerTool({ name: "bump", arguments: { by: 5 } });
    $("bumped").textContent = r.content.map((c) => c.text).join(" ");
  } catch (e) { $("bumped").textContent = "refused: " + e.message; }
};
$("reset").onclick = async () => {
  try {
    const r = await app.callServerTool({ name: "reset", arguments: {} });
    $("bumped").textContent = r.content.map((c) => c.text).join(" ");
  } catch (e) { $("bumped").textContent = "refused: " + e.message; }
};
app.onhostcontextchanged = (c) => { if (c.displayMode) $("mode").textContent = c.displayMode; };
$("share").onclick = () => app.updateModelContext({ content: [{ type: "text", text: "The view shows " + $("bumped").textContent }] });
const display = (mode) => () => app.requestDisplayMode({ mode }).then(
  (r) => { $("mode").textContent = r.mode; },
  (e) => { $("mode").textContent = "failed: " + e.message; },
);
$("full").onclick = display("fullscreen");
$("corner").onclick = display("pip");
$("download").onclick = () => app.downloadFile({ contents: [
  { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "Counter notes: " + $("bumped").textContent } },
  { type: "resource_link", uri: "ui://counter/report.csv", name: "counter report", mimeType: "text/csv" },
] }).then(
  (r) => { $("downloaded").textContent = r.isError ? "not saved" : "saved"; },
  (e) => { $("downloaded").textContent = "failed: " + e.message; },
);
$("ask").onclick = () => app.createSamplingMessage({
  messages: [{ role: "user", content: { type: "text", text: "What does the counter show? " + $("bumped").textContent } }],
  maxTokens: 50,
}).then(
  (r) => { $("sampled").textContent = r.content.text; },
  (e) => { $("sampled").textContent = "refused: " + e.message; },
);
$("close").onclick = () => app.requestTeardown();
app.onteardown = async () => {
  await app.updateModelContext({ content: [{ type: "text", text: "The view closed at " + $("bumped").textContent }] });
  return {};
};
$("say").onclick = () => app.sendMessage({ role: "user", content: [{ type: "text", text: "The counter is at " + $("bumped").textContent }] });
app.connect().then(
  () => {
    $("status").textContent = "connected to " + app.getHostVersion().name + " (" + app.getHostContext().displayMode + ")";
    app.listServerResources().then((r) => { $("resources").textContent = r.resources.map((x) => x.uri).sort().join(" "); });
  },
  (e) => { $("status").textContent = "failed: " + e.message; },
);
</script>
</body></html>
"""

if len(sys.argv) > 1:
    page = PAGE.replace("__SDK__", sdk_script(sys.argv[1]))
else:
    page = "<!doctype html><p id=status>a plain counter page</p>"
apps.add_html_resource(VIEW, page, csp=ResourceCsp(connect_domains=["https://api.counter.example"]), prefers_border=True)

mcp = MCPServer("counter", extensions=[apps])


@mcp.tool()
async def wait(seconds: float) -> str:
    """Waits `seconds`, then says so."""
    await anyio.sleep(seconds)
    return f"waited {seconds} s"


@mcp.resource("ui://counter/report.csv", mime_type="text/csv")
def report() -> str:
    """The counter as CSV."""
    return f"name,count\ncounter,{count}\n"


mcp.run()
