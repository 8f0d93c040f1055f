//! How the real window looks and reads: axe-core (the copy in ui/node_modules) runs on every
//! page and dialog, the error toast and the quick-ask window, in both themes and both languages,
//! and may find no serious or critical violation, colour contrast included (the window lays
//! pages out, jsdom does not); each page is screenshotted as it was checked. The screenshots go to tests/artifacts/screenshots, or to
//! docs/screenshots with PATCHBAY_SCREENSHOTS=docs (how the docs' copies are made).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_e2e::app::quick_ask_by_launch;
use patchbay_e2e::{App, AppOptions, Session};
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
use serde_json::{Value, json};

use common::seed;

const WAIT: Duration = Duration::from_secs(20);
const SERVER_WAIT: Duration = Duration::from_secs(90);

/// Runs axe-core on the document and answers with its serious and critical violations.
const AXE_RUN: &str = r#"
const done = arguments[arguments.length - 1];
axe.run(document, { resultTypes: ["violations"] }).then(
  (r) => done(r.violations.filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 5).map((n) => n.target.join(" ")).join(", ")}`)),
  (e) => done([`axe failed: ${e}`]));
"#;

fn axe_source() -> Result<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/node_modules/axe-core/axe.min.js");
    std::fs::read_to_string(&path).with_context(|| format!("axe-core is not at {} (npm ci in ui/)", path.display()))
}

fn shots_dir() -> Result<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = match std::env::var("PATCHBAY_SCREENSHOTS").as_deref() {
        Ok("docs") => root.join("../docs/screenshots"),
        _ => root.join("artifacts/screenshots"),
    };
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

struct Look<'a> {
    s: &'a Session,
    axe: String,
    dir: PathBuf,
    found: Vec<String>,
}

impl<'a> Look<'a> {
    /// The window at 1200×800 in light English, and axe read from ui/node_modules.
    fn open(s: &'a Session) -> Result<Self> {
        s.set_window_size(1200, 800)?;
        choose(s, "light", "en")?;
        Ok(Look { s, axe: axe_source()?, dir: shots_dir()?, found: Vec::new() })
    }

    /// Checks what the window shows now, named `page`, and keeps its picture.
    fn check(&mut self, page: &str, theme: &str, lang: &str) -> Result<()> {
        // Let fetches answer and transitions end before reading the page.
        std::thread::sleep(Duration::from_millis(600));
        let found = self.s.execute_async(&format!("{}\n{AXE_RUN}", self.axe), json!([]))?;
        let found: Vec<String> = serde_json::from_value(found)?;
        self.found.extend(found.into_iter().map(|v| format!("{page} ({theme}, {lang}): {v}")));
        std::fs::write(self.dir.join(format!("{page}-{theme}-{lang}.png")), self.s.screenshot()?)?;
        Ok(())
    }
}

/// The quick-ask window, opened as a launch with `--quick-ask` opens it, reloaded to take the
/// theme and language chosen, checked, and hidden again (Esc); the commands then act in the
/// main window again.
fn check_quick_ask(look: &mut Look, data_dir: &Path, theme: &str, lang: &str) -> Result<()> {
    let s = look.s;
    let main = s.window_handle()?;
    let quick = quick_ask_by_launch(s, data_dir, WAIT)?;
    s.switch_window(&quick)?;
    reload(s, "", "#quick-ask-input", theme, lang)?;
    look.check("quick-ask", theme, lang)?;
    s.execute("window.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))", json!([]))?;
    s.switch_window(&main)
}

fn settings_tab(s: &Session, tab: &str) -> Result<()> {
    s.click(&s.wait_for("#nav-settings", WAIT)?)?;
    s.click(&s.wait_for(&format!("#settings-tab-{tab}"), WAIT)?)?;
    s.wait_for(&format!("#settings-panel-{tab}"), WAIT)?;
    Ok(())
}

/// The theme and language the window starts with, then reloaded to take them.
fn choose(s: &Session, theme: &str, lang: &str) -> Result<()> {
    let store =
        "localStorage.setItem('patchbay.theme', arguments[0]); localStorage.setItem('patchbay.lang', arguments[1]);";
    reload(s, store, "#page-chat", theme, lang)
}

/// Runs `before` (with the theme and language as arguments), reloads the page, waits for
/// `ready` on the new one, and checks it shows `theme` and `lang`.
fn reload(s: &Session, before: &str, ready: &str, theme: &str, lang: &str) -> Result<()> {
    // A mark on the old page tells it from the new one, which has none.
    s.execute(&format!("window.__beforeReload = true; {before} location.reload();"), json!([theme, lang]))?;
    let deadline = Instant::now() + WAIT;
    let reloaded = "return window.__beforeReload === undefined && document.querySelector(arguments[0]) !== null";
    while s.execute(reloaded, json!([ready])).ok() != Some(json!(true)) {
        ensure!(Instant::now() < deadline, "the window did not reload (no {ready})");
        std::thread::sleep(Duration::from_millis(100));
    }
    let shown: Value =
        s.execute("return [document.documentElement.dataset.theme, document.documentElement.lang]", json!([]))?;
    let want = json!([theme, if lang == "zh" { "zh-CN" } else { "en" }]);
    ensure!(shown == want, "the window shows {shown} after choosing {theme}, {lang}");
    Ok(())
}

#[test]
fn every_page_and_dialog_reads_well_in_both_themes_and_languages() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let answer = "The echo came back:\n\n```rust\nfn main() {\n    println!(\"hello\");\n}\n```";
    let model = echo_model(&runtime, "hello", answer, "Echoing a greeting")?;
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    seed(&data_dir, &model.url())?;

    let app = App::start(
        "every_page_and_dialog_reads_well_in_both_themes_and_languages",
        AppOptions { data_dir: Some(data_dir.clone()), ..Default::default() },
    )?;
    app.check(|s| {
        let mut look = Look::open(s)?;
        // The check can fail: a nameless button and grey-on-grey text are found.
        s.execute(
            "document.body.insertAdjacentHTML('beforeend', '<div id=bad><button></button><p style=\"color:#aaa;background:#bbb\">faint</p></div>')",
            json!([]),
        )?;
        look.check("bad", "light", "en")?;
        s.execute("document.getElementById('bad').remove()", json!([]))?;
        let bad = std::mem::take(&mut look.found);
        ensure!(
            bad.iter().any(|v| v.contains("button-name")) && bad.iter().any(|v| v.contains("color-contrast")),
            "axe did not find the planted violations: {bad:?}"
        );
        std::fs::remove_file(look.dir.join("bad-light-en.png"))?;
        // The first run: no conversation yet.
        look.check("welcome", "light", "en")?;
        settings_tab(s, "servers")?;
        s.wait_for("[data-testid=server-row][data-server=everything] [data-testid=status-dot][data-state=ready]", SERVER_WAIT)?;
        s.click(&s.find("#nav-chat")?)?;
        s.click(&s.wait_for("#new-conversation", WAIT)?)?;
        s.wait_for("#composer-input", WAIT)?;
        s.set_value("#composer-input", "Please echo a greeting")?;
        s.click(&s.find("#send-button")?)?;
        s.wait_for("[data-testid=approval-card]", WAIT)?;
        look.check("chat-approval", "light", "en")?;
        s.click(&s.find("[data-testid=approve-once]")?)?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("The echo came back"))?;

        for (theme, lang) in LOOKS {
            choose(s, theme, lang)?;
            s.click(&s.wait_for("[data-testid=conversation-list] button.conversation", WAIT)?)?;
            s.wait_for("[data-testid=trace-card][data-status=done]", WAIT)?;
            look.check("chat", theme, lang)?;
            // What only the pointer or the focus shows: an older message's actions (drawn for
            // the focus) with a tooltip, and the composer's thinking menu, open.
            s.execute("document.querySelector('[data-testid=message-user]').focus()", json!([]))?;
            s.wait_for("[data-testid=message-user] [data-testid=copy-message]", WAIT)?;
            s.execute("document.querySelector('[data-testid=message-user] [data-testid=copy-message]').focus()", json!([]))?;
            s.wait_for(".tooltip", WAIT)?;
            look.check("chat-actions", theme, lang)?;
            s.execute("document.activeElement.blur()", json!([]))?;
            s.wait_for_none("[data-testid=message-user] [data-testid=copy-message]", WAIT)?;
            s.click(&s.find("#reasoning-picker")?)?;
            s.wait_for("[role=menu] [role=menuitemradio]", WAIT)?;
            look.check("chat-menu", theme, lang)?;
            s.execute("document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))", json!([]))?;
            s.wait_for_none("[role=menu]", WAIT)?;
            // The call's inspector, a dialog.
            s.click(&s.find("[data-testid=trace-card] [data-testid=trace-inspect]")?)?;
            s.wait_for("[role=dialog]", WAIT)?;
            look.check("dialog-inspector", theme, lang)?;
            s.execute("document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))", json!([]))?;
            s.wait_for_none("[role=dialog]", WAIT)?;
            // The shortcut sheet, from the keyboard.
            s.execute(
                "window.dispatchEvent(new KeyboardEvent('keydown', { key: '/', ctrlKey: true, bubbles: true, cancelable: true }))",
                json!([]),
            )?;
            s.wait_for("[data-testid=shortcuts]", WAIT)?;
            look.check("dialog-shortcuts", theme, lang)?;
            s.execute("document.activeElement.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))", json!([]))?;
            s.wait_for_none("[data-testid=shortcuts]", WAIT)?;
            // An error over the page, in its toast: a link the app does not open.
            s.execute(
                "document.body.insertAdjacentHTML('beforeend', '<a id=refused href=\"xmpp:x@example.com\" target=_blank>x</a>'); \
                 const a = document.getElementById('refused'); a.click(); a.remove();",
                json!([]),
            )?;
            s.wait_for_text("[data-testid=link-error]", WAIT, |t| t.contains("xmpp:x@example.com"))?;
            look.check("toast", theme, lang)?;
            s.click(&s.find("[data-testid=link-error] button")?)?;
            s.wait_for_none("[data-testid=link-error]", WAIT)?;
            check_quick_ask(&mut look, &data_dir, theme, lang)?;
            for tab in ["general", "providers", "servers", "roots", "import", "kb", "assistants", "schedules"] {
                settings_tab(s, tab)?;
                look.check(&format!("settings-{tab}"), theme, lang)?;
            }
            settings_tab(s, "servers")?;
            s.click(&s.wait_for("[data-testid=server-row][data-server=everything] button.link", WAIT)?)?;
            s.wait_for("[data-testid=tools-table]", WAIT)?;
            look.check("settings-server", theme, lang)?;
            s.click(&s.find("#nav-chat")?)?;
        }
        ensure!(look.found.is_empty(), "axe found:\n{}", look.found.join("\n"));
        Ok(())
    })?;
    Ok(())
}

/// A scripted model that calls server-everything's echo with `message`, then answers `answer`
/// and names the conversation `title`.
fn echo_model(runtime: &tokio::runtime::Runtime, message: &str, answer: &str, title: &str) -> Result<ScriptedServer> {
    let echo = ToolNames::build([("everything", "echo")]).model_name("everything", "echo").unwrap().to_owned();
    let arguments = json!({ "message": message }).to_string();
    runtime.block_on(ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_echo", &echo, &[arguments.as_str()])]),
            openai::text_reply(&[answer]),
            openai::text_reply(&[title]),
        ],
    ))
}

/// The themes and languages, each pair checked.
const LOOKS: [(&str, &str); 4] = [("light", "en"), ("dark", "en"), ("light", "zh"), ("dark", "zh")];

/// Checks the chat page as it is in every theme and language, and goes back to light English.
fn in_every_look(look: &mut Look, page: &str) -> Result<()> {
    for (theme, lang) in LOOKS {
        choose(look.s, theme, lang)?;
        look.s.wait_for("[data-testid=welcome]", WAIT)?;
        look.check(page, theme, lang)?;
    }
    choose(look.s, "light", "en")
}

/// Waits for the approval (an imported server's tools ask first) and clicks its "Allow once"
/// while the card waits (it can move as the tool's description arrives, and a click beside it
/// is lost).
fn approve_while_asked(s: &Session) -> Result<()> {
    s.wait_for("[data-testid=approve-once]", WAIT)?;
    for _ in 0..10 {
        match s.find("[data-testid=approve-once]") {
            Ok(button) => {
                let _ = s.click(&button);
            }
            Err(_) => return Ok(()),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    anyhow::bail!("the approval card never took the click")
}

/// A new user's first run, as the welcome guides it: a provider (the scripted model), servers
/// imported from an mcpServers config (the real server-everything), a first message whose
/// answer used a tool. Each step is checked with axe and screenshotted.
#[test]
fn the_first_run_guides_a_new_user_to_a_chat_that_used_a_tool() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let model =
        echo_model(&runtime, "my first tool call", "The tool answered: my first tool call.", "A first tool call")?;
    let tmp = tempfile::tempdir()?;
    let app = App::start(
        "the_first_run_guides_a_new_user_to_a_chat_that_used_a_tool",
        AppOptions { data_dir: Some(tmp.path().join("data")), ..Default::default() },
    )?;
    app.check(|s| {
        let mut look = Look::open(s)?;
        for (step, want) in [("provider", "current"), ("servers", "todo"), ("chat", "todo")] {
            wait_state(s, step, want)?;
        }
        in_every_look(&mut look, "first-run-1")?;

        // 1. The provider.
        s.click(&s.find("[data-testid=welcome-add-provider]")?)?;
        s.wait_for("#settings-tab-providers[aria-selected=true]", WAIT)?;
        let deadline = std::time::Instant::now() + WAIT;
        while s.wait_for("#provider-name", Duration::from_secs(2)).is_err() {
            ensure!(std::time::Instant::now() < deadline, "the provider form never opened");
            s.click(&s.wait_for("#provider-add", WAIT)?)?;
        }
        s.set_value("#provider-name", "scripted")?;
        s.set_value("#provider-base-url", &format!("{}/v1", model.url()))?;
        s.set_value("#provider-model", "scripted-model")?;
        look.check("first-run-2-provider", "light", "en")?;
        s.click(&s.find("#provider-save")?)?;
        s.wait_for_text("[data-testid=provider-row]", WAIT, |t| t.contains("scripted"))?;
        s.click(&s.find("#nav-chat")?)?;
        wait_state(s, "provider", "done")?;
        wait_state(s, "servers", "current")?;

        // 2. Servers, from a config the user already has.
        s.click(&s.find("[data-testid=welcome-import]")?)?;
        s.wait_for("#settings-tab-import[aria-selected=true]", WAIT)?;
        let config = json!({"mcpServers": {
            "everything": {"command": peers::npm_bin("mcp-server-everything"), "args": ["stdio"]},
        }});
        s.set_value("#import-text", &config.to_string())?;
        s.click(&s.find("#import-preview")?)?;
        s.wait_for_count("[data-testid=import-entry][data-status=new]", 1, WAIT)?;
        look.check("first-run-3-import", "light", "en")?;
        s.click(&s.find("#import-apply")?)?;
        s.wait_for("[data-testid=import-report]", WAIT)?;
        s.click(&s.find("#settings-tab-servers")?)?;
        s.wait_for(
            "[data-testid=server-row][data-server=everything] [data-testid=status-dot][data-state=ready]",
            SERVER_WAIT,
        )?;
        s.click(&s.find("#nav-chat")?)?;
        wait_state(s, "servers", "done")?;
        wait_state(s, "chat", "current")?;
        in_every_look(&mut look, "first-run-4-ready")?;

        // 3. The first message, and the tool it used.
        s.click(&s.find("[data-testid=welcome-new]")?)?;
        s.wait_for("#composer-input", WAIT)?;
        s.set_value("#composer-input", "Please echo my first tool call")?;
        s.click(&s.find("#send-button")?)?;
        approve_while_asked(s)?;
        s.wait_for("[data-testid=trace-card][data-status=done]", WAIT)?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("The tool answered"))?;
        s.click(&s.find("[data-testid=trace-toggle]")?)?;
        s.wait_for_text("[data-testid=trace-body]", WAIT, |t| t.contains("Echo: my first tool call"))?;
        look.check("first-run-5-chat", "light", "en")?;
        ensure!(look.found.is_empty(), "axe found:\n{}", look.found.join("\n"));
        Ok(())
    })?;
    ensure!(model.remaining() <= 1, "the model was not asked for the call and the answer");
    Ok(())
}

/// The state of the welcome's step named by the script's argument: done, current or todo.
const STEP_STATE: &str = "return document.querySelector(`[data-testid=step-${arguments[0]}]`)?.dataset.state";

/// Waits until the welcome's `step` is in `want`.
fn wait_state(s: &Session, step: &str, want: &str) -> Result<()> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        s.wait_for(&format!("[data-testid=step-{step}]"), WAIT)?;
        let now = s.execute(STEP_STATE, json!([step]))?;
        if now == json!(want) {
            return Ok(());
        }
        ensure!(std::time::Instant::now() < deadline, "the {step} step stays {now}, not {want}");
        std::thread::sleep(Duration::from_millis(200));
    }
}
