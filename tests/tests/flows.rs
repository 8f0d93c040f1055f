//! The everyday flows in the real window: add a provider (key into the real
//! keyring), import a Claude Desktop config and see both servers ready, replace them
//! with a VS Code config whose secret is typed in the window, switch
//! the UI to Chinese; chat with a scripted OpenAI-compatible model that calls
//! a real server-everything tool needing approval, see the trace card, stop a
//! streaming answer, restart the app and find the conversation intact; drop a
//! picture on the composer and find it in the model's request; install an MCP
//! bundle the app was opened with, update it from a second launch and change
//! its settings; confirm the install links the app is opened with, also while
//! it runs, and see bad ones refused; find servers in an MCP Registry and add one, and install
//! another's bundle; fill
//! in a prompt and a resource template with the server's suggestions; answer
//! a server's form with titled choices, also one it asked to run as a task; see who a server says it is, and open
//! its website and an answer's link in the (recording) browser, and read a
//! resource a tool's result links to; see a server that failed named on the
//! chat page, and open its settings from there.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use patchbay_core::config::{
    ApprovalMode, ConfigStore, McpServerConfig, Network, PromptToolFormat, ProviderProfile, SecurityLevel,
    TransportConfig, ValueSource,
};
use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{KeyringStore, SecretStore};
use patchbay_core::store::Store;
use patchbay_e2e::app::{app_binary, quick_ask_by_launch};
use patchbay_e2e::{App, AppOptions, RecordingOpener, Session, Spawned};
use patchbay_test_support::discover;
use patchbay_test_support::hostile::{hostile_mcp, poker_bundle};
use patchbay_test_support::links::{escape, patchbay_link};
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};
use patchbay_test_support::signing::mcpb;
use patchbay_test_support::{peers, processes};
use serde_json::json;

use common::{seed, seed_with};

const WAIT: Duration = Duration::from_secs(20);
/// Servers start with npx-free absolute paths, but node still needs a moment on 2 busy cores.
const SERVER_WAIT: Duration = Duration::from_secs(90);

fn ready_dot(server: &str) -> String {
    format!("[data-testid=server-row][data-server={server}] [data-testid=status-dot][data-state=ready]")
}

#[test]
fn add_a_provider_import_two_servers_replace_them_and_switch_to_chinese() -> Result<()> {
    // Our own data dir: it must outlive the app to be checked afterwards.
    let tmp = tempfile::tempdir()?;
    let options = AppOptions { data_dir: Some(tmp.path().join("data")), ..Default::default() };
    let app = App::start("add_a_provider_import_two_servers_replace_them_and_switch_to_chinese", options)?;
    let key = "sk-e2e-not-a-real-key-4711";
    let typed = "memory-e2e-typed-secret-0815";
    app.check(|s| {
        // A new user is welcomed with the way to a provider.
        s.click(&s.wait_for("[data-testid=welcome-add-provider]", WAIT)?)?;
        let tab = s.wait_for("#settings-tab-providers[aria-selected=true]", WAIT)?;
        ensure!(s.text(&tab)? == "Providers", "the welcome opened {:?}", s.text(&tab)?);
        // The page renders again when its providers arrive, which closes a form opened
        // before that: open it until it stays open.
        let deadline = Instant::now() + WAIT;
        while s.wait_for("#provider-name", Duration::from_secs(2)).is_err() {
            ensure!(Instant::now() < deadline, "the provider form never opened");
            s.click(&s.wait_for("#provider-add", WAIT)?)?;
        }
        // The DeepSeek preset fills in the form; only the key is typed.
        s.wait_for("#provider-preset option[value=deepseek]", WAIT)?;
        s.set_value("#provider-preset", "deepseek")?;
        let filled = s.execute(
            "return ['#provider-name', '#provider-kind', '#provider-base-url', '#provider-model']\
             .map((id) => document.querySelector(id).value)",
            json!([]),
        )?;
        ensure!(
            filled == json!(["deepseek", "openai", "https://api.deepseek.com/v1", "deepseek-chat"]),
            "the preset filled in {filled}"
        );
        s.set_value("#provider-api-key", key)?;
        s.click(&s.find("#provider-save")?)?;
        let row = s.wait_for_text("[data-testid=provider-row]", WAIT, |t| t.contains("deepseek"))?;
        ensure!(!row.contains(key), "the key is shown: {row}");

        s.click(&s.find("#settings-tab-import")?)?;
        let config = json!({"mcpServers": {
            "everything": {"command": peers::npm_bin("mcp-server-everything"), "args": ["stdio"]},
            "time": {"command": peers::venv_bin("mcp-server-time"), "args": ["--local-timezone", "UTC"]},
        }});
        s.set_value("#import-text", &config.to_string())?;
        s.click(&s.find("#import-preview")?)?;
        s.wait_for_count("[data-testid=import-entry][data-status=new]", 2, WAIT)?;
        s.click(&s.find("#import-apply")?)?;
        s.wait_for("[data-testid=import-report]", WAIT)?;
        s.click(&s.find("#settings-tab-servers")?)?;
        s.wait_for(&ready_dot("everything"), SERVER_WAIT)?;
        s.wait_for(&ready_dot("time"), SERVER_WAIT)?;
        let tools = s.text(&s.find("[data-testid=server-row][data-server=time] [data-testid=tool-count]")?)?;
        ensure!(tools.chars().any(|c| c.is_ascii_digit() && c != '0'), "time shows no tools: {tools}");

        // "Add server" offers the presets; one fills in the form and says what it needs.
        s.click(&s.find("#server-add")?)?;
        s.wait_for("#server-preset option[value=filesystem]", WAIT)?;
        s.set_value("#server-preset", "filesystem")?;
        let about = s.wait_for_text("[data-testid=server-preset-about]", WAIT, |t| !t.is_empty())?;
        ensure!(about.contains("shares") && about.contains("Needs npx"), "{about}");
        let filled = s.execute(
            "return ['#server-name', '#server-command'].map((id) => document.querySelector(id).value)",
            json!([]),
        )?;
        ensure!(filled == json!(["filesystem", "npx"]), "the preset filled in {filled}");
        s.click(&s.find("#server-cancel")?)?;

        // A VS Code config asks for its secret in the window, and replaces both servers.
        s.click(&s.find("#settings-tab-import")?)?;
        let vscode = json!({
            "inputs": [{"type": "promptString", "id": "memory-token", "description": "Memory token", "password": true}],
            "servers": {"memory": {"command": peers::npm_bin("mcp-server-memory"),
                                   "env": {"MEMORY_TOKEN": "${input:memory-token}"}}},
        });
        s.set_value("#import-text", &vscode.to_string())?;
        s.click(&s.find("#import-preview")?)?;
        s.wait_for_count("[data-testid=import-entry][data-status=new]", 1, WAIT)?;
        s.set_value("#import-input-memory-token", typed)?;
        s.click(&s.find("#import-replace")?)?;
        let removes = s.wait_for_text("[data-testid=import-removes]", WAIT, |t| !t.is_empty())?;
        ensure!(removes.contains("everything") && removes.contains("time"), "replace all would delete: {removes}");
        s.click(&s.find("#import-apply")?)?;
        s.wait_for_text("[data-testid=import-report]", WAIT, |t| t.contains("everything"))?;
        s.click(&s.find("#settings-tab-servers")?)?;
        s.wait_for(&ready_dot("memory"), SERVER_WAIT)?;
        s.wait_for_count("[data-testid=server-row]", 1, WAIT)?;

        s.click(&s.find("#settings-tab-general")?)?;
        // Chosen as a user chooses it: a click on the option.
        s.click(&s.wait_for("#language option[value=zh]", WAIT)?)?;
        s.wait_for_text("#nav-chat", WAIT, |t| t.contains("对话"))?;
        s.wait_for_text("#nav-settings", WAIT, |t| t.contains("设置"))?;
        Ok(())
    })?;
    let data_dir = app.data_dir.clone();
    drop(app);
    // The language is kept for what speaks while the window is closed (the tray, schedules).
    let language = Store::open(&DataDir::new(&data_dir))?.setting::<String>("ui.language")?;
    ensure!(language.as_deref() == Some("zh"), "the window's language was not kept: {language:?}");
    // The key is in the keyring, scoped to this data dir, and nowhere in the database.
    let secrets = KeyringStore::for_data_dir(&DataDir::new(&data_dir));
    let stored = ConfigStore::new(Store::open(&DataDir::new(&data_dir))?).provider("deepseek")?;
    let secret = stored.api_key.clone().expect("the profile names its key");
    ensure!(secrets.get(&secret)?.as_deref() == Some(key), "the keyring does not hold the key");
    secrets.delete(&secret)?;
    let token = "mcp/memory/MEMORY_TOKEN";
    ensure!(secrets.get(token)?.as_deref() == Some(typed), "the keyring does not hold the typed token");
    secrets.delete(token)?;
    for entry in std::fs::read_dir(&data_dir)? {
        let bytes = std::fs::read(entry?.path()).unwrap_or_default();
        for value in [key, typed] {
            ensure!(!bytes.windows(value.len()).any(|w| w == value.as_bytes()), "{value} was written to the data dir");
        }
    }
    Ok(())
}

/// Waits for server-everything (its tools must exist before the model calls
/// them), then opens a new conversation.
fn new_chat(s: &Session) -> Result<()> {
    s.click(&s.wait_for("#nav-settings", WAIT)?)?;
    s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
    s.wait_for(&ready_dot("everything"), SERVER_WAIT)?;
    s.click(&s.find("#nav-chat")?)?;
    s.wait_for("#page-chat", WAIT)?;
    s.click(&s.wait_for("#new-conversation", WAIT)?)?;
    s.wait_for("#composer-input", WAIT)?;
    Ok(())
}

/// A scripted model answering `replies`, and the app started for the test
/// `name` on a data folder [`seed`]ed with it. The runtime serves the model
/// and the folder holds the data: keep both for the test's length.
fn seeded_app(
    name: &str,
    replies: Vec<Reply>,
) -> Result<(tokio::runtime::Runtime, ScriptedServer, tempfile::TempDir, App)> {
    let runtime = tokio::runtime::Runtime::new()?;
    let model = runtime.block_on(ScriptedServer::start(Format::OpenAi, replies))?;
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    seed(&data_dir, &model.url())?;
    let app = App::start(name, AppOptions { data_dir: Some(data_dir), ..Default::default() })?;
    Ok((runtime, model, tmp, app))
}

/// Clicks the button labelled `label` in `dialog` (a selector).
fn press(s: &Session, dialog: &str, label: &str) -> Result<()> {
    let click =
        "[...document.querySelectorAll(arguments[0] + ' button')].find((b) => b.textContent === arguments[1]).click()";
    s.execute(click, json!([dialog, label]))?;
    Ok(())
}

/// Types `text` and sends it. The composer's rows move when the servers' resources
/// arrive (the attach menu appears), so a click can land beside the button: click
/// again while the text is still waiting in the composer.
fn send(s: &Session, text: &str) -> Result<()> {
    // A conversation just created shows its composer a moment later, and may
    // draw it anew once it is saved, empty: so the message counts as sent
    // only once the transcript shows one more of it.
    let sent = "return [...document.querySelectorAll('[data-testid=message-user]')]
        .filter(m => m.textContent.includes(arguments[0])).length";
    let before = s.execute(sent, json!([text]))?;
    for _ in 0..5 {
        s.wait_for("#composer-input", WAIT)?;
        if s.execute("return document.querySelector('#composer-input').value", json!([]))? != json!(text) {
            s.set_value("#composer-input", text)?;
        }
        s.click(&s.wait_for("#send-button", WAIT)?)?;
        for _ in 0..10 {
            std::thread::sleep(Duration::from_millis(100));
            if s.execute(sent, json!([text]))? != before {
                return Ok(());
            }
        }
    }
    anyhow::bail!("the message {text:?} was never sent")
}

/// A model without native tools, taught the fenced `use_mcp_tool` format on the
/// provider's page: two calls split across chunks in one answer run (one with
/// the closing fence inside a string), a call with broken JSON comes back to the
/// model as an error, and the answer shows no call text.
#[test]
fn a_model_without_native_tools_calls_them_in_its_text() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let fenced = |tool: &str, arguments: serde_json::Value| {
        let call =
            json!({"type": "use_mcp_tool", "server_name": "everything", "tool_name": tool, "arguments": arguments});
        format!("```json\n{call}\n```")
    };
    let sum = fenced("get-sum", json!({"a": 2, "b": 3}));
    let echo = fenced("echo", json!({"message": "a ``` fence"}));
    let (head, tail) = sum.split_at(sum.len() / 2);
    let broken = "```json\n{\"type\": \"use_mcp_tool\", \"server_name\": \"everything\", \"tool_name\": \"get-sum\", \
                  \"arguments\": {a: 1}}\n```";
    let model = runtime.block_on(ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::text_reply(&["Let me work it out.\n", head, tail, "\n", &echo[..10], &echo[10..]]),
            openai::text_reply(&[broken]),
            openai::text_reply(&["2 and 3 make ", "5."]),
            openai::text_reply(&["Sums"]),
        ],
    ))?;
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let config = ConfigStore::new(Store::open(&DataDir::new(&data_dir))?);
    let mut profile = ProviderProfile::openai_compatible("scripted", format!("{}/v1", model.url()), "scripted-model");
    profile.native_tools = false;
    config.save_provider(&profile)?;
    let mut everything =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    everything.tool_approval.extend([("echo".into(), ApprovalMode::Allow), ("get-sum".into(), ApprovalMode::Allow)]);
    config.replace_servers(&[everything])?;
    drop(config);
    let app = App::start(
        "a_model_without_native_tools_calls_them_in_its_text",
        AppOptions { data_dir: Some(data_dir.clone()), ..Default::default() },
    )?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        s.click(&s.wait_for("#settings-tab-providers", WAIT)?)?;
        s.wait_for_text("[data-testid=provider-row]", WAIT, |t| t.contains("scripted"))?;
        // The page renders again when its providers arrive, which closes a form opened before.
        let deadline = Instant::now() + WAIT;
        while s.wait_for("#provider-prompt-tool-format", Duration::from_secs(2)).is_err() {
            ensure!(Instant::now() < deadline, "the provider form never opened");
            press(s, "[data-testid=provider-row]", "Edit")?;
        }
        s.set_value("#provider-prompt-tool-format", "use_mcp_tool")?;
        s.click(&s.find("#provider-save")?)?;
        s.wait_for_none("#provider-prompt-tool-format", WAIT)?;
        new_chat(s)?;
        send(s, "What are 2 and 3?")?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("2 and 3 make 5."))?;
        // The answer's own text, after its trace cards (which show what the calls said).
        // Read once the answer is drawn whole (it is drawn anew when the stored turn is loaded).
        let prose = "const b = [...document.querySelectorAll('[data-testid=message-assistant] .md-block')].pop();
            return b ? b.textContent : ''";
        let deadline = Instant::now() + WAIT;
        let prose = loop {
            let text = s.execute(prose, json!([]))?.as_str().unwrap_or_default().to_owned();
            if text.ends_with("2 and 3 make 5.") || Instant::now() > deadline {
                break text;
            }
            std::thread::sleep(Duration::from_millis(100));
        };
        ensure!(
            prose.starts_with("Let me work it out.")
                && prose.ends_with("2 and 3 make 5.")
                && !prose.contains("use_mcp_tool"),
            "the answer's text is {prose:?}"
        );
        s.wait_for_count("[data-testid=trace-card]", 3, WAIT)?;
        ensure!(s.count("[data-testid=trace-card][data-status=done]")? == 2, "the two calls did not both run");
        Ok(())
    })?;
    let requests = model.requests();
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    ensure!(system.contains("### Server `everything`") && system.contains("- `get-sum`"), "{system}");
    ensure!(!system.contains("<function_call>{"), "one format is taught: {system}");
    let second = requests[1].body["messages"].to_string();
    ensure!(second.contains("The sum of 2 and 3 is 5") && second.contains("a ``` fence"), "{second}");
    let third = requests[2].body["messages"].to_string();
    ensure!(third.contains("The arguments are not valid JSON"), "the broken call's error: {third}");
    let saved = ConfigStore::new(Store::open(&DataDir::new(&data_dir))?).providers()?;
    ensure!(saved[0].prompt_tool_format == PromptToolFormat::UseMcpTool, "{:?}", saved[0]);
    Ok(())
}

#[test]
fn a_tool_call_with_approval_a_stopped_answer_and_a_restart() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let echo = ToolNames::build([("everything", "echo")]).model_name("everything", "echo").unwrap().to_owned();
    let model = runtime.block_on(ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_e2e", &echo, &["{\"message\": ", "\"hello from e2e\"}"])]),
            openai::text_reply(&["The echo ", "came back."]),
            // The title the model gives the conversation after its first answer.
            openai::text_reply(&["Echoing a greeting"]),
            Reply::hanging(vec![
                openai::delta(json!({"role": "assistant", "content": ""})),
                openai::delta(json!({"content": "A partial answer"})),
            ]),
        ],
    ))?;
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    seed(&data_dir, &model.url())?;
    let options = AppOptions { data_dir: Some(data_dir.clone()), ..Default::default() };

    let app = App::start("a_tool_call_with_approval_a_stopped_answer_and_a_restart", options.clone())?;
    app.check(|s| {
        new_chat(s)?;
        send(s, "Please echo a greeting")?;
        s.wait_for("[data-testid=approval-card]", WAIT)?;
        let card = s.text(&s.find("[data-testid=approval-card]")?)?;
        ensure!(card.contains("hello from e2e"), "the approval card hides the arguments: {card}");
        // The card grows when the tool's description arrives, and a click while
        // it moves can land beside the button: click again while it still waits.
        let mut clicks = 0;
        while s.count("[data-testid=approve-once]")? > 0 {
            ensure!(clicks < 5, "the approval card never took the click");
            if let Ok(button) = s.find("[data-testid=approve-once]") {
                let _ = s.click(&button);
            }
            clicks += 1;
            std::thread::sleep(Duration::from_secs(1));
        }
        s.wait_for("[data-testid=trace-card][data-status=done]", WAIT)?;
        let duration = s.text(&s.find("[data-testid=trace-card] [data-testid=trace-duration]")?)?;
        ensure!(duration.chars().any(|c| c.is_ascii_digit()), "no duration on the trace card: {duration:?}");
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("The echo came back."))?;
        // Named after the question, then by the model: the header and the sidebar follow.
        // (Read as textContent: WebDriver's element text of both comes back empty.)
        let titles = "return [...document.querySelectorAll('.conversation-heading, \
                      [data-testid=conversation-list] .conversation-title')].map((e) => e.textContent)";
        let deadline = Instant::now() + WAIT;
        loop {
            let shown = s.execute(titles, json!([]))?;
            if shown == json!(["Echoing a greeting", "Echoing a greeting"]) {
                break;
            }
            ensure!(Instant::now() < deadline, "the header and the sidebar show {shown}");
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    })?;
    app.check(|s| {
        send(s, "Now write something long")?;
        s.wait_for_text("#page-chat", WAIT, |t| t.contains("A partial answer"))?;
        s.click(&s.wait_for("#stop-button", WAIT)?)?;
        s.wait_for("#send-button", WAIT)?;
        ensure!(s.count("#stop-button")? == 0, "the stop button stays after stopping");
        Ok(())
    })?;
    drop(app);

    let app = App::start("a_tool_call_with_approval_a_stopped_answer_and_a_restart-2", options)?;
    app.check(|s| {
        s.click(&s.wait_for("[data-testid=conversation-list] button.conversation", WAIT)?)?;
        s.wait_for("[data-testid=trace-card][data-status=done]", WAIT)?;
        let all = s.text(&s.find("#page-chat")?)?;
        for expected in
            ["Please echo a greeting", "The echo came back.", "Now write something long", "A partial answer"]
        {
            ensure!(all.contains(expected), "after the restart {expected:?} is missing");
        }
        Ok(())
    })?;
    std::thread::sleep(Duration::from_millis(500));
    app.screenshot("chat")?;
    ensure!(model.remaining() == 0, "the model was not asked four times (two rounds, a title, a stopped answer)");
    Ok(())
}

/// Clicks the suggestion `value` under a form field once the server's suggestions arrive.
fn pick_suggestion(s: &Session, dialog: &str, value: &str) -> Result<()> {
    let css = format!("[data-testid={dialog}] .suggestions button[data-value=\"{value}\"]");
    s.click(&s.wait_for(&css, WAIT)?)?;
    s.wait_for_none(&css, WAIT)
}

/// server-everything's "completable-prompt" is filled in from its suggestions
/// (the department narrows the names), and one of its resource templates
/// makes a resource that goes with the message: both reach the model. The
/// server's page reads a resource another template names.
#[test]
fn a_prompt_and_a_resource_template_are_filled_in_with_the_servers_suggestions() -> Result<()> {
    let replies = vec![openai::text_reply(&["Done."]), openai::text_reply(&["A promotion"])];
    let (_runtime, model, _tmp, app) =
        seeded_app("a_prompt_and_a_resource_template_are_filled_in_with_the_servers_suggestions", replies)?;
    app.check(|s| {
        new_chat(s)?;
        s.set_value("#composer-input", "/completable")?;
        s.wait_for_text(".slash-menu", WAIT, |t| t.contains("/completable-prompt"))?;
        s.click(&s.find(".slash-menu button")?)?;
        s.wait_for("[data-testid=prompt-dialog]", WAIT)?;
        s.set_value("[data-testid=prompt-dialog] input[name=department]", "Sa")?;
        pick_suggestion(s, "prompt-dialog", "Sales")?;
        s.click(&s.find("[data-testid=prompt-dialog] input[name=name]")?)?;
        let names = s.wait_for_text("[data-testid=prompt-dialog] .suggestions", WAIT, |t| t.contains("Frank"))?;
        ensure!(names.contains("David") && names.contains("Eve"), "the Sales team is not offered: {names}");
        pick_suggestion(s, "prompt-dialog", "Eve")?;
        s.click(&s.find("[data-testid=prompt-dialog] button[type=submit]")?)?;
        s.wait_for_none("[data-testid=prompt-dialog]", WAIT)?;
        let typed = s.execute("return document.querySelector('#composer-input').value", json!([]))?;
        ensure!(typed == "Please promote Eve to the head of the Sales team.", "the composer holds {typed}");

        // The composer's resource menu: the template is an item of it.
        s.click(&s.wait_for("#attach-resource", WAIT)?)?;
        s.wait_for("[role=menu] [role=menuitem]", WAIT)?;
        let picked = s.execute(
            "const item = [...document.querySelectorAll('[role=menu] [role=menuitem]')]\
               .find((i) => i.textContent.startsWith(arguments[0]));\
             if (item) item.click(); return !!item;",
            json!(["everything: Dynamic Text Resource (from a template"]),
        )?;
        ensure!(picked == json!(true), "the resource menu offers no Dynamic Text Resource template");
        s.wait_for("[data-testid=template-dialog]", WAIT)?;
        s.set_value("[data-testid=template-dialog] input[name=resourceId]", "7")?;
        s.click(&s.find("[data-testid=template-dialog] button[type=submit]")?)?;
        s.wait_for_text("[data-testid=attachment-chip]", WAIT, |t| t.contains("demo://resource/dynamic/text/7"))?;
        s.click(&s.wait_for("#send-button", WAIT)?)?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("Done."))?;

        // The server's page tries the same template: the blob it names is shown as text.
        s.click(&s.find("#nav-settings")?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        s.click(&s.wait_for("[data-testid=server-row][data-server=everything] button.link", WAIT)?)?;
        s.wait_for("[data-testid=server-detail] [role=tab]", WAIT)?;
        s.execute(
            "[...document.querySelectorAll('[data-testid=server-detail] [role=tab]')]
                .find((b) => b.textContent === 'Prompts & resources').click()",
            json!([]),
        )?;
        s.wait_for_count("[data-testid=server-template]", 2, WAIT)?;
        s.execute(
            "[...document.querySelectorAll('[data-testid=server-template]')]
                .find((li) => li.textContent.includes('dynamic/blob')).querySelector('button').click()",
            json!([]),
        )?;
        s.set_value("[data-testid=server-template] input[name=resourceId]", "9")?;
        s.click(&s.find("[data-testid=server-template] button[type=submit]")?)?;
        s.wait_for_text("[data-testid=resource-preview]", WAIT, |t| t.contains("Resource 9: This is a base64 blob"))?;
        // Watching a resource subscribes to it: the box stays ticked once the list is read again.
        let watch = "input[aria-label='Watch architecture.md for changes']";
        s.click(&s.find(watch)?)?;
        let checked = format!("return document.querySelector(\"{watch}\").checked");
        let deadline = Instant::now() + WAIT;
        while s.execute(&checked, json!([]))? != json!(true) {
            ensure!(Instant::now() < deadline, "architecture.md is not watched");
            std::thread::sleep(Duration::from_millis(100));
        }
        // Its entry goes to the clipboard.
        s.click(&s.find("[data-testid=server-copy]")?)?;
        s.wait_for_text("[data-testid=server-copy]", WAIT, |t| t == "Copied")?;
        // On the Logs tab, the level of the messages it sends: changed, and shown as changed.
        s.execute(
            "[...document.querySelectorAll('[data-testid=server-detail] [role=tab]')]
                .find((b) => b.textContent === 'Logs').click()",
            json!([]),
        )?;
        let level = "select[aria-label='Messages the server sends, from']";
        s.wait_for(level, WAIT)?;
        s.set_value(level, "debug")?;
        let shown = format!("return document.querySelector(\"{level}\").value");
        let deadline = Instant::now() + WAIT;
        while s.execute(&shown, json!([]))? != json!("debug") {
            ensure!(Instant::now() < deadline, "the level did not change");
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    })?;
    app.screenshot("server-content")?;
    let sent = model.requests()[0].body.to_string();
    ensure!(sent.contains("Please promote Eve to the head of the Sales team."), "the prompt is not in {sent}");
    ensure!(sent.contains("Resource 7: This is a plaintext resource"), "the template's resource is not in {sent}");
    Ok(())
}

/// Drops a four-byte PNG named `dot.png` on the composer, as the file manager would.
const DROP_PICTURE: &str = r#"
    const file = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], "dot.png", { type: "image/png" });
    const data = new DataTransfer();
    data.items.add(file);
    const composer = document.querySelector("[data-testid=composer]");
    composer.dispatchEvent(new DragEvent("drop", { dataTransfer: data, bubbles: true, cancelable: true }));
"#;

/// A picture dropped on the composer goes with the next message, through the
/// window's drop handler, the `send_message` command's attachments and the
/// real async-openai client, and shows in the question; the answer's formula is typeset and its
/// diagram drawn; a
/// new chat carries on from the answer, and deleting the answer there leaves the first chat whole.
#[test]
fn a_picture_dropped_on_the_composer_reaches_the_model() -> Result<()> {
    let answer = openai::text_reply(&[
        "A single dot, of area \\(\\pi r^2\\).\n\n```mermaid\ngraph LR\n",
        "  Dot[A dot] --> Area[Its area]\n```\n\n```mermaid\nmindmap\n  Picture\n    Dot\n    Area\n```\n",
    ]);
    let title = openai::text_reply(&["A dot"]);
    let (_runtime, model, _tmp, app) =
        seeded_app("a_picture_dropped_on_the_composer_reaches_the_model", vec![answer, title])?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-chat", WAIT)?)?;
        s.click(&s.wait_for("#new-conversation", WAIT)?)?;
        s.wait_for("[data-testid=composer]", WAIT)?;
        s.execute(DROP_PICTURE, json!([]))?;
        s.wait_for_text("[data-testid=attachment-chip]", WAIT, |t| t.contains("dot.png"))?;
        send(s, "What is in the picture?")?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("A single dot, of area"))?;
        ensure!(s.count("[data-testid=message-user] img")? == 1, "the question does not show the picture");
        // The answer's TeX is typeset in the window (KaTeX's code, styles and fonts under the CSP).
        s.wait_for("[data-testid=message-assistant] .katex .katex-html", WAIT)?;
        // Its Mermaid diagram is drawn (Mermaid's code and styles under the CSP), labels as text.
        let drawn =
            s.wait_for_text("[data-testid=mermaid] svg", WAIT, |t| t.contains("A dot") && t.contains("Its area"))?;
        ensure!(s.count("[data-testid=mermaid] svg g.node")? >= 2, "the diagram has not its two nodes: {drawn}");
        // A mind map too (Mermaid lays it out with Cytoscape, which sets prototypes' toString).
        s.wait_for_count("[data-testid=mermaid] svg", 2, WAIT)?;
        ensure!(s.count("[data-testid=mermaid-error]")? == 0, "a diagram was not drawn");
        // "New chat from here" opens a copy; there the answer is deleted (once confirmed) and
        // the question stays, while the first conversation keeps both.
        // Once the diagrams and the citation under them are laid out (a click while they still
        // moved the actions once opened the citation instead).
        s.click(&s.wait_still("[data-testid=message-assistant] [data-testid=fork-message]", WAIT)?)?;
        s.wait_for_count("[data-testid=conversation-list] button.conversation", 2, WAIT)?;
        // The copy draws its diagrams too; the buttons under them stay put once they are drawn.
        s.wait_for_count("[data-testid=mermaid] svg", 2, WAIT)?;
        s.click_when_clear("[data-testid=message-assistant] [data-testid=delete-message]", WAIT)?;
        s.click(&s.wait_for("[data-testid=confirm-delete] button.danger", WAIT)?)?;
        s.wait_for_none("[data-testid=message-assistant]", WAIT)?;
        ensure!(s.count("[data-testid=message-user] img")? == 1, "the copy keeps the question and its picture");
        s.click(&s.find("[data-testid=conversation-list] li:not(.active) button.conversation")?)?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("A single dot"))?;
        Ok(())
    })?;
    let requests = model.requests();
    let user = requests[0].body["messages"].as_array().and_then(|m| m.iter().find(|m| m["role"] == "user")).cloned();
    let parts = user.as_ref().and_then(|u| u["content"].as_array()).cloned().unwrap_or_default();
    ensure!(
        parts.iter().any(|p| p["image_url"]["url"] == "data:image/png;base64,iVBORw=="),
        "the picture is not in the model's request: {user:?}"
    );
    Ok(())
}

#[test]
fn every_settings_page_loads_from_the_backend_without_an_error() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    seed(&data_dir, "http://127.0.0.1:9")?;
    let kb = tmp.path().join("notes");
    std::fs::create_dir_all(&kb)?;
    std::fs::write(kb.join("tides.md"), "# Tides\n\nThe moon raises two tidal bulges.\n")?;
    let options = AppOptions { data_dir: Some(data_dir), ..Default::default() };
    let app = App::start("every_settings_page_loads_from_the_backend_without_an_error", options)?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        for tab in ["general", "providers", "servers", "roots", "import", "kb", "assistants"] {
            s.click(&s.wait_for(&format!("#settings-tab-{tab}"), WAIT)?)?;
            s.wait_for(&format!("#settings-panel-{tab}"), WAIT)?;
            // Give the page's first requests time to answer (or fail).
            std::thread::sleep(Duration::from_millis(500));
            ensure!(
                s.count("[role=alert]")? == 0,
                "the {tab} page shows an error: {}",
                s.text(&s.find("[role=alert]")?)?
            );
        }
        s.wait_for_text("[data-testid=provider-row]", WAIT, |t| t.contains("scripted")).or_else(|_| {
            s.click(&s.find("#settings-tab-providers")?)?;
            s.wait_for_text("[data-testid=provider-row]", WAIT, |t| t.contains("scripted"))
        })?;
        s.click(&s.find("#settings-tab-kb")?)?;
        // The page renders its form again once its folders arrive: type after that.
        s.wait_for_text("[data-testid=kb-settings]", WAIT, |t| t.contains("knowledge_base"))?;
        s.set_value("#kb-folder-path", kb.to_str().unwrap())?;
        s.click(&s.find("#kb-add")?)?;
        s.wait_for_text("[data-testid=kb-settings]", WAIT, |t| t.contains("notes"))?;
        s.set_value("#kb-search", "tidal bulges")?;
        // Indexing runs in the background: search until the new document is found.
        let deadline = Instant::now() + WAIT;
        loop {
            s.click(&s.find("#kb-search ~ button[type=submit]")?)?;
            std::thread::sleep(Duration::from_millis(300));
            let hits = s.text(&s.find("[data-testid=kb-hits]")?)?;
            if hits.contains("tides.md") {
                break;
            }
            ensure!(Instant::now() < deadline, "the new document was never found: {hits:?}");
        }

        s.click(&s.find("#settings-tab-servers")?)?;
        s.wait_for(&ready_dot("everything"), SERVER_WAIT)?;
        s.click(&s.find("[data-testid=server-row][data-server=everything] button.link")?)?;
        s.wait_for("[data-testid=tools-table]", WAIT)?;
        // What the server said about using it, which the model reads with its tools.
        let instructions =
            s.execute("return document.querySelector('[data-testid=server-instructions] pre').textContent", json!([]))?;
        ensure!(
            instructions.as_str().is_some_and(|i| i.starts_with("# Everything Server")),
            "the server's instructions are not shown: {instructions}"
        );
        Ok(())
    })?;
    std::thread::sleep(Duration::from_millis(500));
    app.screenshot("servers")?;
    Ok(())
}

#[test]
fn a_server_that_failed_is_named_on_the_chat_page_and_opens_its_settings() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let broken = McpServerConfig::stdio("broken", "patchbay-no-such-server", &[]);
    seed_with(&data_dir, "http://127.0.0.1:9", &[broken])?;
    let options = AppOptions { data_dir: Some(data_dir), ..Default::default() };
    let app = App::start("a_server_that_failed_is_named_on_the_chat_page_and_opens_its_settings", options)?;
    app.check(|s| {
        // The welcome says which server failed and why (its start could not find the command).
        let failed = "[data-testid=welcome] [data-testid=server-failed][data-server=broken]";
        s.wait_for(failed, SERVER_WAIT)?;
        let why = s.execute("return document.querySelector(arguments[0]).title", json!([failed]))?;
        ensure!(why.as_str().is_some_and(|w| w.contains("patchbay-no-such-server")), "the reason is not given: {why}");
        // A server is set up: the welcome does not suggest adding one.
        s.wait_for_text("[data-testid=welcome-tools]", WAIT, |t| t == "No MCP tools are ready yet.")?;
        Ok(())
    })?;
    std::thread::sleep(Duration::from_millis(500));
    app.screenshot("welcome")?;
    app.check(|s| {
        s.click(&s.find("[data-testid=server-failed][data-server=broken]")?)?;
        // Its page on the servers settings is open.
        s.wait_for("#settings-tab-servers[aria-selected=true]", WAIT)?;
        s.wait_for("[data-testid=server-row][data-server=broken].active", WAIT)?;
        Ok(())
    })?;
    app.screenshot("failed-server")?;
    Ok(())
}

#[test]
fn a_sandboxed_servers_refused_connection_is_allowed_in_one_click() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let mut hostile = McpServerConfig::stdio("hostile", hostile_mcp().to_str().unwrap(), &["escape"]);
    hostile.policy.level = Some(SecurityLevel::Strict);
    hostile.policy.network = Some(Network::Domains(vec!["localhost".into()]));
    seed_with(&data_dir, "http://127.0.0.1:9", &[hostile])?;
    let options = AppOptions { data_dir: Some(data_dir.clone()), ..Default::default() };
    let app = App::start("a_sandboxed_servers_refused_connection_is_allowed_in_one_click", options)?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        s.wait_for(&ready_dot("hostile"), SERVER_WAIT)?;
        s.click_when_clear("[data-testid=server-row][data-server=hostile] button", WAIT)?;
        let line = s.wait_for_text("[data-testid=server-policy]", WAIT, |t| t.starts_with("strict:"))?;
        ensure!(line.contains("writes nothing") && line.ends_with("network: localhost"), "{line}");
        // Tested, `escape` asks its proxy for 127.0.0.1, which is not among its domains.
        s.click_when_clear("[data-testid=tools-table] [data-tool=escape] button", WAIT)?;
        s.click_when_clear("[data-testid=test-tool] button[type=submit]", WAIT)?;
        let refused = "[data-testid=blocked-connection][data-host='127.0.0.1']";
        s.wait_for_text(refused, WAIT, |t| {
            t.contains("blocked a connection to 127.0.0.1: not in the allowed domains")
        })?;
        s.click_when_clear(&format!("{refused} [data-testid=allow-domain]"), WAIT)?;
        s.wait_for_text("[data-testid=server-policy]", WAIT, |t| t.ends_with("network: localhost, 127.0.0.1"))?;
        s.wait_for_none(refused, WAIT)?;
        s.wait_for(&ready_dot("hostile"), SERVER_WAIT)?;
        Ok(())
    })?;
    app.screenshot("domain-allowed")?;
    let saved = ConfigStore::new(Store::open(&DataDir::new(&data_dir))?).server("hostile")?;
    ensure!(
        saved.policy.network == Some(Network::Domains(vec!["localhost".into(), "127.0.0.1".into()])),
        "{:?}",
        saved.policy.network
    );
    Ok(())
}

#[test]
fn servers_found_in_the_mcp_registry_are_added_and_start_a_remote_one_and_a_bundle() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    // The registry lists a real server-everything, served over streamable HTTP here.
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let _everything = Spawned::spawn(
        Command::new(peers::npm_bin("mcp-server-everything"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null()),
    )?;
    runtime.block_on(peers::wait_listening(port));
    let listing = json!({"server": {
        "name": "io.github.modelcontextprotocol/everything",
        "title": "Everything",
        "description": "Exercises every MCP feature.",
        "version": "2026.8.31",
        // The port is left to the user, who types it before the editor opens.
        "remotes": [{"type": "streamable-http", "url": "http://127.0.0.1:{port}/mcp",
                     "variables": {"port": {"description": "The port it listens on"}}}]
    }});
    // And a bundle, downloaded from the registry's own address and checked against its SHA-256.
    let tmp = tempfile::tempdir()?;
    poker_bundle(&tmp.path().join("poker.mcpb"), "1.0.0");
    let poker = std::fs::read(tmp.path().join("poker.mcpb"))?;
    let bundle = json!({"server": {
        "name": "io.github.patchbay/poker",
        "description": "Answers pokes.",
        "version": "1.0.0",
        "packages": [{
            "registryType": "mcpb", "identifier": "{registry}/files/poker.mcpb",
            "fileSha256": hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&poker)), "transport": {"type": "stdio"}
        }]
    }});
    let files = vec![("poker.mcpb".to_owned(), poker)];
    let registry = runtime.block_on(discover::serve_with_files(vec![listing, bundle], files));
    let options = AppOptions { env: vec![("PATCHBAY_MCP_REGISTRY".into(), registry)], ..Default::default() };
    let app = App::start("servers_found_in_the_mcp_registry_are_added_and_start_a_remote_one_and_a_bundle", options)?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        open_registry(s)?;
        s.set_value("#registry-query", "everything")?;
        s.click(&s.find("[data-testid=registry-browser] button[type=submit]")?)?;
        let entry = s.wait_for_text("[data-testid=registry-entry]", WAIT, |t| !t.is_empty())?;
        ensure!(entry.contains("Everything (streamable-http)") && entry.contains("2026.8.31"), "{entry}");
        s.click(&s.find("[data-testid=registry-entry] button")?)?;
        s.wait_for("[data-testid=registry-setup] input[name=port]", WAIT)?;
        s.set_value("[data-testid=registry-setup] input[name=port]", &port.to_string())?;
        s.click(&s.find("[data-testid=registry-setup] button[type=submit]")?)?;
        s.wait_for("[data-testid=registry-template]", WAIT)?;
        let url = s.execute("return document.querySelector('#server-url').value", json!([]))?;
        ensure!(url == json!(format!("http://127.0.0.1:{port}/mcp")), "the port is in the URL: {url}");
        let name = s.execute("return document.querySelector('#server-name').value", json!([]))?;
        ensure!(name == json!("everything"), "the editor starts from the entry: {name}");
        s.click(&s.find("#server-save")?)?;
        s.wait_for(&ready_dot("everything"), SERVER_WAIT)?;
        s.wait_for_text("[data-testid=server-row][data-server=everything] [data-testid=tool-count]", WAIT, |t| {
            t.ends_with(" tools") && t != "0 tools"
        })?;

        open_registry(s)?;
        s.set_value("#registry-query", "poker")?;
        s.click(&s.find("[data-testid=registry-browser] button[type=submit]")?)?;
        let entry = s.wait_for_text("[data-testid=registry-entry]", WAIT, |t| !t.is_empty())?;
        ensure!(entry.contains("io.github.patchbay/poker (mcpb)"), "{entry}");
        s.click(&s.find("[data-testid=registry-entry] button")?)?;
        let about = s.wait_for_text("[data-testid=bundle-about]", WAIT, |t| !t.is_empty())?;
        ensure!(about == "Poker 1.0.0 · by Patchbay tests", "{about}");
        s.set_value("#bundle-setting-token", "registry-token")?;
        install_shown_bundle(s)
    })?;
    app.close()
}

/// Opens the registry browser. When the server list arrives, the line above
/// the buttons ("No MCP server yet…") moves them down, so a click aimed just
/// before lands beside the button: click until the browser opens.
fn open_registry(s: &Session) -> Result<()> {
    s.click_until("#registry-open", WAIT, |s| s.wait_for("#registry-query", Duration::from_secs(2)).is_ok())
}

fn install_shown_bundle(s: &Session) -> Result<()> {
    s.click(&s.wait_for("#bundle-install-confirm", WAIT)?)?;
    s.wait_for("[data-testid=bundle-installed]", WAIT)?;
    s.wait_for(&ready_dot("poker"), SERVER_WAIT)?;
    s.wait_for_text("[data-testid=server-row][data-server=poker] [data-testid=tool-count]", WAIT, |t| t == "1 tool")?;
    // The installed server is selected, its tools listed once it is ready.
    s.wait_for_count("[data-testid=server-detail] [data-testid=tools-table] tbody tr", 1, WAIT)?;
    Ok(())
}

#[test]
fn a_bundle_the_app_is_opened_with_installs_and_a_second_launch_updates_it() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let (first, second) = (tmp.path().join("poker-1.0.0.mcpb"), tmp.path().join("poker-2.0.0.mcpb"));
    poker_bundle(&first, "1.0.0");
    poker_bundle(&second, "2.0.0");
    mcpb(tmp.path(), &["sign", "poker-2.0.0.mcpb", "--self-signed"]);
    let token = "poker-e2e-token-1234";
    let options =
        AppOptions { data_dir: Some(data_dir.clone()), args: vec![first.display().to_string()], ..Default::default() };
    let app = App::start("a_bundle_the_app_is_opened_with_installs_and_a_second_launch_updates_it", options)?;
    app.check(|s| {
        // The window opens on the installer, on Settings → MCP servers.
        let about = s.wait_for_text("[data-testid=bundle-about]", WAIT, |t| !t.is_empty())?;
        ensure!(about == "Poker 1.0.0 · by Patchbay tests", "{about}");
        let signature = s.wait_for_text("[data-testid=bundle-signature]", WAIT, |t| !t.is_empty())?;
        ensure!(signature.starts_with("Unsigned: nothing says who made this bundle."), "{signature}");
        let mode = s.execute("return document.querySelector('#bundle-setting-mode').value", json!([]))?;
        ensure!(mode == json!("huge-result:1"), "the default fills the field: {mode}");
        s.set_value("#bundle-setting-token", token)?;
        install_shown_bundle(s)?;

        // A second launch with the next version hands it to this window.
        let mut launch = Spawned::spawn(
            Command::new(app_binary()?)
                .arg("--data-dir")
                .arg(&data_dir)
                .arg(&second)
                .env_remove("DISPLAY")
                .stdout(Stdio::null()),
        )?;
        let status = launch.wait_timeout(WAIT).context("the second launch did not hand over and exit")?;
        ensure!(status.success(), "the second launch exited with {status}");
        let update = s.wait_for_text("[data-testid=bundle-update]", WAIT, |t| !t.is_empty())?;
        ensure!(update.starts_with("Version 1.0.0 is installed. Installing 2.0.0 replaces it"), "{update}");
        let signature = s.wait_for_text("[data-testid=bundle-signature]", WAIT, |t| t.contains("Self-signed"))?;
        ensure!(signature.starts_with("⚠ Self-signed by MCPB Self-Signed Certificate:"), "{signature}");
        let placeholder = s.execute("return document.querySelector('#bundle-setting-token').placeholder", json!([]))?;
        ensure!(placeholder == json!("stored in keyring"), "{placeholder}");
        install_shown_bundle(s)?;

        // Its settings later, in its form filled in with the values it has, once the install
        // dialog's backdrop is gone. The server's details grow as it becomes ready: the button
        // may move.
        s.wait_for_none(".dialog-backdrop", WAIT)?;
        s.click_when_clear("[data-testid=server-bundle-settings]", WAIT)?;
        let title = s.wait_for_text("[data-testid=bundle-install] h2", WAIT, |t| !t.is_empty())?;
        ensure!(title == "Poker: settings", "{title}");
        let mode = s.execute("return document.querySelector('#bundle-setting-mode').value", json!([]))?;
        ensure!(mode == json!("huge-result:1"), "the value it has fills the field: {mode}");
        s.set_value("#bundle-setting-mode", "huge-result:3")?;
        s.click(&s.find("#bundle-install-confirm")?)?;
        s.wait_for_none("[data-testid=bundle-install]", WAIT)?;
        s.wait_for(&ready_dot("poker"), SERVER_WAIT)?;
        Ok(())
    })?;
    app.close()?;

    // The token is in the keyring only; the new version is in place.
    let dir = DataDir::new(&data_dir);
    let server = ConfigStore::new(Store::open(&dir)?).server("poker")?;
    let TransportConfig::Stdio { env, .. } = &server.transport else { anyhow::bail!("not stdio: {server:?}") };
    ensure!(env.get("POKER_TOKEN") == Some(&ValueSource::Secret("mcp/poker/POKER_TOKEN".into())), "{env:?}");
    ensure!(KeyringStore::for_data_dir(&dir).get("mcp/poker/POKER_TOKEN")?.as_deref() == Some(token));
    let manifest = std::fs::read_to_string(data_dir.join("extensions/poker/manifest.json"))?;
    ensure!(manifest.contains("\"version\":\"2.0.0\""), "{manifest}");
    let TransportConfig::Stdio { args, .. } = &server.transport else { unreachable!() };
    ensure!(args == &["huge-result:3"], "the changed setting: {args:?}");
    Ok(())
}

/// A launch on `data_dir` with `link`, which hands it to the running window and exits.
fn hand_over_link(data_dir: &Path, link: &str) -> Result<()> {
    let mut launch = Spawned::spawn(
        Command::new(app_binary()?)
            .arg("--data-dir")
            .arg(data_dir)
            .arg(link)
            .env_remove("DISPLAY")
            .stdout(Stdio::null()),
    )?;
    let status = launch.wait_timeout(WAIT).context("the launch with a link did not hand over and exit")?;
    ensure!(status.success(), "the launch with a link exited with {status}");
    Ok(())
}

/// An install link starts the closed app on its confirmation, which shows what
/// runs and asks for the empty secret; nothing is added before the user
/// confirms. Links given to later launches reach the running window: a
/// Cursor link adds a second server, one carrying a secret value and one of an
/// unknown scheme are refused there, saying why.
#[test]
fn an_install_link_opens_its_confirmation_whether_the_app_runs_or_not() -> Result<()> {
    use base64::Engine;
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let everything = peers::npm_bin("mcp-server-everything");
    let server = json!({"command": everything, "args": ["stdio"], "env": {"EVERYTHING_API_KEY": ""}});
    let link = patchbay_link("linked", &server);
    let options = AppOptions { data_dir: Some(data_dir.clone()), args: vec![link], ..Default::default() };
    let app = App::start("an_install_link_opens_its_confirmation_whether_the_app_runs_or_not", options)?;
    let typed = "link-e2e-typed-key-2718";
    let stored = || -> Result<Vec<String>> {
        let servers = ConfigStore::new(Store::open(&DataDir::new(&data_dir))?).servers()?;
        Ok(servers.into_iter().map(|s| s.name).collect())
    };
    app.check(|s| {
        // The dialog opens titled "Install link" and names the server once the link is read.
        let title = s.wait_for_text("[data-testid=install-link] h2", WAIT, |t| t.contains("linked"))?;
        ensure!(title == "Add the MCP server linked?", "{title}");
        let command = s.wait_for_text("[data-testid=link-command]", WAIT, |t| !t.is_empty())?;
        ensure!(command == format!("{} stdio", everything.display()), "{command}");
        let policy = s.wait_for_text("[data-testid=link-policy]", WAIT, |t| !t.is_empty())?;
        ensure!(policy.starts_with("Security policy: "), "{policy}");
        ensure!(stored()?.is_empty(), "nothing is added before the user confirms");
        s.set_value("#link-input-linked-EVERYTHING_API_KEY", typed)?;
        s.click(&s.wait_for("#link-confirm:not([disabled])", WAIT)?)?;
        s.wait_for("[data-testid=link-installed]", WAIT)?;
        s.click(&s.find("#link-close")?)?;
        s.wait_for_none("[data-testid=install-link]", WAIT)?;

        // While it runs: a Cursor link from a second launch.
        let second = json!({"command": everything, "args": ["stdio"]});
        let config = escape(&base64::engine::general_purpose::STANDARD.encode(second.to_string()));
        hand_over_link(
            &data_dir,
            &format!("cursor://anysphere.cursor-deeplink/mcp/install?name=cursed&config={config}"),
        )?;
        let title = s.wait_for_text("[data-testid=install-link] h2", WAIT, |t| t.contains("cursed"))?;
        ensure!(title == "Add the MCP server cursed?", "{title}");
        s.click(&s.wait_for("#link-confirm:not([disabled])", WAIT)?)?;
        s.wait_for("[data-testid=link-installed]", WAIT)?;
        s.click(&s.find("#link-close")?)?;

        // Refused: a secret value in the link, and a link that installs nothing.
        let leaky = json!({"command": "npx", "env": {"GITHUB_TOKEN": "ghp_inline_4242"}});
        for (link, said) in [
            (patchbay_link("leaky", &leaky), "(link).env.GITHUB_TOKEN: an install link may not carry a secret value"),
            ("zoommtg://zoom.us/join?confno=1".to_owned(), "(link): a zoommtg: link is not an install link"),
        ] {
            hand_over_link(&data_dir, &link)?;
            let refused = s.wait_for_text("[data-testid=link-refused]", WAIT, |t| t.contains(said))?;
            ensure!(refused.starts_with("Patchbay did not install this link:"), "{refused}");
            ensure!(!refused.contains("ghp_inline_4242"), "the refusal does not show the secret: {refused}");
            ensure!(s.count("#link-confirm")? == 0, "a refused link offers nothing to add");
            s.click(&s.find("#link-close")?)?;
            s.wait_for_none("[data-testid=install-link]", WAIT)?;
        }

        s.click(&s.find("#nav-settings")?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        s.wait_for(&ready_dot("linked"), SERVER_WAIT)?;
        s.wait_for(&ready_dot("cursed"), SERVER_WAIT)?;
        Ok(())
    })?;
    app.close()?;
    ensure!(stored()? == ["linked", "cursed"], "{:?}", stored()?);
    let keyring = KeyringStore::for_data_dir(&DataDir::new(&data_dir));
    ensure!(keyring.get("mcp/linked/EVERYTHING_API_KEY")?.as_deref() == Some(typed), "the typed key is in the keyring");
    Ok(())
}

/// server-everything's elicitation asks for titled choices (MCP 2025-11-25):
/// the window shows their titles, ticks for a multiple choice, and the server
/// gets the values behind them; its research tool runs as a task, whose stages
/// show while it runs and whose question is asked the same way.
#[test]
fn an_elicitation_form_shows_titled_choices_and_the_server_gets_their_values() -> Result<()> {
    let tool = "trigger-elicitation-request";
    let elicit = ToolNames::build([("everything", tool)]).model_name("everything", tool).unwrap().to_owned();
    let replies = vec![
        openai::tool_calls_reply(&[("call_form", &elicit, &["{}"])]),
        openai::text_reply(&["Thanks for the details."]),
        openai::text_reply(&["A form"]),
    ];
    let (_runtime, _model, _tmp, app) =
        seeded_app("an_elicitation_form_shows_titled_choices_and_the_server_gets_their_values", replies)?;
    app.check(|s| {
        new_chat(s)?;
        send(s, "Ask me for my details")?;
        if s.wait_for("[data-testid=approval-card]", Duration::from_secs(5)).is_ok() {
            s.click(&s.find("[data-testid=approve-once]")?)?;
        }
        let form = "[data-testid=elicitation-dialog]";
        s.wait_for(form, WAIT)?;
        let options = s.execute(
            "return [...document.querySelector(arguments[0] + ' select[name=titledSingleSelectEnum]').options]\
             .map((o) => o.textContent)",
            json!([form]),
        )?;
        ensure!(options == json!(["Choose…", "Superman", "Green Lantern", "Wonder Woman"]), "the heroes: {options}");
        s.set_value(&format!("{form} [name=name]"), "Ada Lovelace")?;
        s.set_value(&format!("{form} select[name=titledSingleSelectEnum]"), "hero-3")?;
        s.set_value(&format!("{form} select[name=legacyTitledEnum]"), "pet-2")?;
        s.click(&s.find(&format!("{form} input[name=titledMultipleSelectEnum][value=fish-2]"))?)?;
        press(s, form, "Submit")?;
        s.wait_for_none(form, WAIT)?;
        // The answer first: while it streams in, the list scrolls and a click can miss its target.
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("Thanks for the details."))?;
        // A finished call is one line until opened.
        s.click_when_clear("[data-testid=trace-card][data-status=done] [data-testid=trace-toggle]", WAIT)?;
        let result =
            s.wait_for_text("[data-testid=trace-card][data-status=done]", WAIT, |t| t.contains("Raw result"))?;
        for sent in ["Ada Lovelace", "\"hero-3\"", "\"pet-2\"", "\"fish-1\"", "\"fish-2\""] {
            ensure!(result.contains(sent), "the server did not get {sent}: {result}");
        }

        // Tested on the servers page, the tool's form is asked there too.
        s.click(&s.find("#nav-settings")?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        s.click_when_clear("[data-testid=server-row][data-server=everything] button", WAIT)?;
        s.click_when_clear(&format!("[data-testid=tools-table] tr[data-tool={tool}] button[aria-expanded]"), WAIT)?;
        s.click(&s.find("[data-testid=test-tool] button[type=submit]")?)?;
        s.wait_for(form, WAIT)?;
        press(s, form, "Decline")?;
        s.wait_for_none(form, WAIT)?;
        s.wait_for_text("[data-testid=test-tool] [data-testid=tool-result]", WAIT, |t| t.contains("decline"))?;

        // A tool that runs as a task (MCP 2025-11-25): its stages show while it runs, and
        // the question it stops to ask is a form like any other.
        let research = "simulate-research-query";
        s.click_when_clear(&format!("[data-testid=tools-table] tr[data-tool={research}] button[aria-expanded]"), WAIT)?;
        s.set_value("[data-testid=test-tool] input[name=topic]", "tides")?;
        s.click(&s.find("[data-testid=test-tool] input[name=ambiguous]")?)?;
        s.click(&s.find("[data-testid=test-tool] button[type=submit]")?)?;
        s.wait_for_text("[data-testid=test-tool] .trace-progress small", WAIT, |t| {
            ["Gathering sources", "Analyzing content", "Synthesizing findings"].iter().any(|stage| t.contains(stage))
        })?;
        s.wait_for(form, WAIT)?;
        s.set_value(&format!("{form} select[name=interpretation]"), "historical")?;
        press(s, form, "Submit")?;
        s.wait_for_none(form, WAIT)?;
        s.wait_for_text("[data-testid=test-tool] [data-testid=tool-result]", WAIT, |t| {
            t.contains("Research Report: tides (historical)")
        })?;
        ensure!(s.count("[data-testid=test-tool] .trace-progress")? == 0, "the progress stays after the answer");
        let hint = s.find("[data-testid=tools-table] tr[data-tool=simulate-research-query] [data-hint=task]")?;
        ensure!(s.text(&hint)?.starts_with("runs as a task"), "the task hint: {}", s.text(&hint)?);
        app.screenshot("task-done")?;

        // A server's own question run as a task (it polls Patchbay while the form is open).
        let asks = "trigger-elicitation-request-async";
        s.click_when_clear(&format!("[data-testid=tools-table] tr[data-tool={asks}] button[aria-expanded]"), WAIT)?;
        s.click(&s.find("[data-testid=test-tool] button[type=submit]")?)?;
        s.wait_for(form, WAIT)?;
        s.set_value(&format!("{form} [name=name]"), "Grace Hopper")?;
        press(s, form, "Submit")?;
        s.wait_for_none(form, WAIT)?;
        let result =
            s.wait_for_text("[data-testid=test-tool] [data-testid=tool-result]", WAIT, |t| t.contains("[COMPLETED]"))?;
        ensure!(result.contains("Name: Grace Hopper"), "the server did not get the answer: {result}");
        Ok(())
    })
}

#[test]
fn a_server_says_who_it_is_and_links_open_in_the_browser_never_in_the_window() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let linker = ToolNames::build([("notes", "link_today")]).model_name("notes", "link_today").unwrap().to_owned();
    let answer = "See [the guide](https://example.com/guide?page=2), [this file](file:///etc/hostname) \
                  or [the chat room](xmpp:help@example.com).";
    let model = runtime.block_on(ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::text_reply(&[answer]),
            openai::text_reply(&["Links"]),
            openai::tool_calls_reply(&[("call_link", &linker, &["{}"])]),
            openai::text_reply(&["Your notes are linked above."]),
        ],
    ))?;
    let tmp = tempfile::tempdir()?;
    let script = tmp.path().join("notes_server.py");
    std::fs::write(
        &script,
        r#"from mcp.server import MCPServer
from mcp.types import ResourceLink

mcp = MCPServer("notes-e2e", title="Notes", version="3.1.4", description="Keeps your notes.",
                website_url="https://notes.example.com/about")

@mcp.tool(title="Add a note")
def add_note(text: str) -> str:
    """Adds a note."""
    return "added"

@mcp.resource("notes://today", name="today", mime_type="text/plain")
def today() -> str:
    return "Buy milk at noon."

@mcp.tool()
def link_today() -> list[ResourceLink]:
    """Links today's notes."""
    return [ResourceLink(type="resource_link", uri="notes://today", name="Today's notes", mimeType="text/plain")]

mcp.run()
"#,
    )?;
    let data_dir = tmp.path().join("data");
    let notes = McpServerConfig::stdio("notes", peers::python().to_str().unwrap(), &[script.to_str().unwrap()]);
    seed_with(&data_dir, &model.url(), &[notes])?;
    let browser = RecordingOpener::new(tmp.path())?;
    let (downloads, xdg) = downloads_folder(tmp.path())?;
    let app = App::start(
        "a_server_says_who_it_is_and_links_open_in_the_browser_never_in_the_window",
        AppOptions { data_dir: Some(data_dir), env: [browser.env.clone(), vec![xdg]].concat(), ..Default::default() },
    )?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        s.wait_for(&ready_dot("notes"), SERVER_WAIT)?;
        s.click_when_clear("[data-testid=server-row][data-server=notes] button", WAIT)?;
        let about = s.wait_for_text("[data-testid=server-about]", WAIT, |t| t.contains("Notes"))?;
        for said in ["notes-e2e", "version 3.1.4", "Keeps your notes.", "over stdio", "process "] {
            ensure!(about.contains(said), "{said:?} is not in {about:?}");
        }
        s.wait_for_text("[data-testid=tools-table]", WAIT, |t| t.contains("Add a note") && t.contains("add_note"))?;
        s.click_when_clear("[data-testid=server-website]", WAIT)?;
        ensure!(browser.opened(1, WAIT) == ["https://notes.example.com/about"], "the website went elsewhere");

        s.click(&s.find("#nav-chat")?)?;
        s.click(&s.wait_for("#new-conversation", WAIT)?)?;
        send(s, "Where do I read more?")?;
        // Click once the answer is whole: a link clicked while the answer still
        // streams can be rendered anew under the pointer, and the click is lost.
        s.wait_for("[data-testid=message-assistant] [data-testid=regenerate]", WAIT)?;
        // The answer's citations can arrive just after and draw it anew, losing a click: click
        // again until the browser was handed the link.
        s.click_until("[data-testid=message-assistant] a[href^='https://example.com']", WAIT, |_| {
            browser.opened(2, Duration::from_secs(3)).len() >= 2
        })?;
        // A click taken late may have handed the link on twice: once that has settled, what
        // comes after is counted from here.
        let links = browser.opened(usize::MAX, Duration::from_secs(3));
        ensure!(links[1..].iter().all(|l| l == "https://example.com/guide?page=2"), "{links:?}");
        // A link to a file on this computer is its text only; one the browser
        // may not get is refused, and says why.
        let file = s.find("[data-testid=message-assistant] [data-testid=unopened-link]")?;
        ensure!(s.text(&file)? == "this file", "the file link is {:?}", s.text(&file)?);
        s.click(&file)?;
        s.click_when_clear("[data-testid=message-assistant] a[href^='xmpp:']", WAIT)?;
        let banner = s.wait_for_text("[data-testid=link-error]", WAIT, |t| t.contains("xmpp:"))?;
        ensure!(banner.contains("only http, https and mailto links are opened"), "{banner}");
        ensure!(browser.opened(links.len() + 1, Duration::from_secs(2)) == links, "another link was handed on");
        // The window stayed where it was throughout.
        let here = s.execute("return location.href", json!([]))?;
        ensure!(here.as_str().is_some_and(|h| !h.contains("example.com")), "the window went to {here}");
        s.click(&s.find("[data-testid=link-error] button")?)?;

        // A resource a tool's result links to is read from its server, in the card.
        send(s, "Link today's notes")?;
        s.click_when_clear("[data-testid=approve-once]", WAIT)?;
        // Once the turn has settled (the list is read again then), the card stays put for the click.
        s.wait_for_text("[data-testid=message-list]", WAIT, |t| t.contains("Your notes are linked above."))?;
        s.wait_for_none("#stop-button", WAIT)?;
        s.execute(
            "[...document.querySelectorAll('[data-testid=trace-card][data-status=done]')].pop()\
             .querySelector('[data-testid=trace-toggle]').click()",
            json!([]),
        )?;
        // The card has just opened: the list below it grows and scrolls, so the link is
        // clicked once it has stayed in place (a click on where it was lands on nothing).
        let link = "[data-testid=trace-card][data-status=done] [data-testid=resource-link] button";
        s.wait_still(link, WAIT)?;
        // The list can still scroll as the answer's sources arrive below it, taking the
        // card from under the click: click until the link says it is open.
        s.click_until(link, WAIT, |s| {
            s.wait_for(&format!("{link}[aria-expanded=true]"), Duration::from_secs(3)).is_ok()
        })?;
        let shown = s.wait_for_text("[data-testid=resource-preview]", WAIT, |t| t.contains("Buy milk"))?;
        ensure!(shown.contains("notes://today"), "{shown}");
        // It can be saved as a file, read whole from its server.
        // The preview has just grown its row, and the rows below move down once it is
        // measured: the click waits until nothing covers the button.
        s.click_when_clear("[data-testid=resource-preview] [data-testid=save-file-save]", WAIT)?;
        let outcome = "[data-testid=resource-preview] :is([data-testid=saved-files], [role=alert])";
        let saved = s.wait_for_text(outcome, WAIT, |t| !t.is_empty())?;
        ensure!(saved.starts_with("Saved"), "saving failed: {saved}");
        ensure!(saved.contains("today.txt") && saved.contains(&downloads.display().to_string()), "{saved}");
        let file = std::fs::read_to_string(downloads.join("today.txt"))?;
        ensure!(file == "Buy milk at noon.", "{file}");
        ensure!(browser.opened(links.len() + 1, Duration::from_secs(2)) == links, "the resource went to the browser");
        Ok(())
    })?;
    // The app's log in its data folder tells the server's story.
    let log = std::fs::read_to_string(tmp.path().join("data/logs/patchbay.log"))?;
    ensure!(log.lines().any(|l| l.contains("MCP server ready") && l.contains("server=notes")), "{log}");
    Ok(())
}

/// The view's "Allow" once it answers (a question's buttons wait a moment on screen).
const ARMED_ALLOW: &str = "[data-testid=app-view-allow]:not(:disabled)";

/// The view's `button` asks for display `mode`; the window shows it so (`placed`, a test of
/// the frame's rect `r`), then puts it back in its card. Full screen comes at once when the
/// window saw the click inside the view, else once the user says yes on the card (WebKitGTK
/// tells the window of such a click only when the focus was not in the view already).
fn show_view_as(app: &App, s: &Session, button: &str, mode: &str, placed: &str) -> Result<()> {
    enter_view(s)?;
    s.click(&s.find(button)?)?;
    if mode == "fullscreen" {
        s.leave_frame()?;
        let allow = "[data-testid=app-view-fullscreen-allow]";
        s.wait_for(&format!("[data-testid=app-view-exit], {allow}"), WAIT)?;
        if s.count(allow)? > 0 {
            s.click_when_clear(&format!("{allow}:not(:disabled)"), WAIT)?;
        }
        enter_view(s)?;
    }
    s.wait_for_text("#mode", WAIT, |t| t == mode)?;
    s.leave_frame()?;
    s.wait_for("[data-testid=app-view-exit]", WAIT)?;
    let script = format!(
        "const r = document.querySelector('[data-testid=app-view-frame]').getBoundingClientRect(); return {placed}"
    );
    ensure!(s.execute(&script, json!([]))? == json!(true), "the view is not shown {mode}");
    app.screenshot(&format!("view-{mode}"))?;
    s.click(&s.find("[data-testid=app-view-exit]")?)?;
    enter_view(s)?;
    s.wait_for_text("#mode", WAIT, |t| t == "inline")?;
    s.leave_frame()
}

/// Fails when two rendered rows of the message list still overlap after [`WAIT`] (a row
/// grew or shrank and the rows after it were not moved), naming them and where they are.
/// For a moment after a row's size changed they may: the list moves them once it measured.
fn rows_apart(s: &Session) -> Result<()> {
    let script = "const rows = [...document.querySelectorAll('[data-testid=message-list] [data-index]')]
          .map((r) => [Number(r.dataset.index), r.getBoundingClientRect()])
          .sort((a, b) => a[0] - b[0]);
        const over = [];
        for (let i = 1; i < rows.length; i++) {
          const [a, ra] = rows[i - 1], [b, rb] = rows[i];
          if (b === a + 1 && rb.top < ra.bottom - 1) over.push(`row ${a} ends at ${ra.bottom}, row ${b} starts at ${rb.top}`);
        }
        return over.join('; ')";
    let until = Instant::now() + WAIT;
    loop {
        let over = s.execute(script, json!([]))?;
        if over == json!("") {
            return Ok(());
        }
        ensure!(Instant::now() < until, "rows overlap: {over}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `reply` with its frames a second apart.
fn slowly(reply: Reply) -> Reply {
    match reply {
        Reply::Stream { frames, end, .. } => Reply::Stream { frames, gap: Duration::from_secs(1), end },
        other => other,
    }
}

/// A downloads folder in `dir`, as the user's XDG settings name it, and the
/// app's environment that points there.
fn downloads_folder(dir: &Path) -> Result<(PathBuf, (String, String))> {
    let downloads = dir.join("Downloads");
    let config = dir.join("config");
    std::fs::create_dir_all(&config)?;
    std::fs::write(config.join("user-dirs.dirs"), format!("XDG_DOWNLOAD_DIR=\"{}\"\n", downloads.display()))?;
    Ok((downloads, ("XDG_CONFIG_HOME".to_owned(), config.display().to_string())))
}

/// Makes the commands that follow act in the (first) tool's view, brought into sight
/// first: a click in a frame lands only where the window shows it.
fn enter_view(s: &Session) -> Result<()> {
    let css = "[data-testid=app-view-frame]";
    s.execute("document.querySelector(arguments[0]).scrollIntoView({block: 'center'})", json!([css]))?;
    s.enter_frame(&s.find(css)?)
}

#[test]
fn a_tools_view_runs_in_its_own_sandbox_and_talks_to_its_server_and_the_chat() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let show =
        ToolNames::build([("counter", "show_counter")]).model_name("counter", "show_counter").unwrap().to_owned();
    let model = runtime.block_on(ScriptedServer::start(
        Format::OpenAi,
        vec![
            // Written slowly: the card and its view are there while the model writes the call.
            slowly(openai::tool_calls_reply(&[("call_show", &show, &[r#"{"start""#, ": 4", "2}"])])),
            openai::text_reply(&["Here is your counter."]),
            openai::text_reply(&["Counter"]),
            openai::text_reply(&["Noted: the counter moved."]),
            openai::text_reply(&["It shows 52."]),
            openai::text_reply(&["Fifty-two."]),
        ],
    ))?;
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    // The view is built on the official App SDK (@modelcontextprotocol/ext-apps).
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/counter_app.py");
    let sdk = peers::node_module("@modelcontextprotocol/ext-apps/dist/src/app-with-deps.js");
    let counter = McpServerConfig::stdio(
        "counter",
        peers::python().to_str().unwrap(),
        &[script.to_str().unwrap(), sdk.to_str().unwrap()],
    );
    seed_with(&data_dir, &model.url(), &[counter])?;
    let (downloads, xdg) = downloads_folder(tmp.path())?;
    let app = App::start(
        "a_tools_view_runs_in_its_own_sandbox_and_talks_to_its_server_and_the_chat",
        AppOptions { data_dir: Some(data_dir), env: vec![xdg], ..Default::default() },
    )?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        s.wait_for(&ready_dot("counter"), SERVER_WAIT)?;
        // Testing a tool on its server's page shows its view too.
        s.click_when_clear("[data-testid=server-row][data-server=counter] button", WAIT)?;
        s.click_when_clear("[data-testid=tools-table] tr[data-tool=show_counter] button[aria-expanded]", WAIT)?;
        s.set_value("[data-testid=test-tool] input", "7")?;
        s.click(&s.find("[data-testid=test-tool] button[type=submit]")?)?;
        s.wait_for("[data-testid=test-tool] [data-testid=app-view-frame]", WAIT)?;
        enter_view(s)?;
        s.wait_for_text("#status", WAIT, |t| t == "connected to Patchbay (inline)")?;
        s.wait_for_text("#result", WAIT, |t| t.contains("The counter starts at 7, shown in its view."))?;
        s.leave_frame()?;
        // A test that takes too long is called off.
        s.click_when_clear("[data-testid=tools-table] tr[data-tool=wait] button[aria-expanded]", WAIT)?;
        s.set_value("[data-testid=test-tool] input", "600")?;
        s.click(&s.find("[data-testid=test-tool] button[type=submit]")?)?;
        s.click_when_clear("[data-testid=test-tool] [data-testid=form-cancel]", WAIT)?;
        s.wait_for("[data-testid=test-tool-cancelled]", WAIT)?;
        s.click(&s.find("#nav-chat")?)?;
        s.click(&s.wait_for("#new-conversation", WAIT)?)?;
        send(s, "Show me the counter")?;
        // The call shows as the model writes it; its tool asks first, so its view hears
        // nothing of the arguments, written or whole, until the user allowed the call.
        s.wait_for("[data-testid=trace-card][data-status=writing] [data-testid=trace-args-writing]", WAIT)?;
        s.wait_for("[data-testid=trace-card][data-status=writing] [data-testid=app-view-frame]", WAIT)?;
        app.screenshot("view-writing")?;
        s.wait_for("[data-testid=approve-once]", WAIT)?;
        enter_view(s)?;
        s.wait_for_text("#status", WAIT, |t| t == "connected to Patchbay (inline)")?;
        // What the view heard, as it records it, while the user has not answered yet.
        let heard = s.execute("return [$('partial').textContent, $('args').textContent]", json!([]))?;
        ensure!(heard == json!(["", ""]), "the view heard the arguments before the user allowed the call: {heard}");
        s.leave_frame()?;
        s.click_when_clear("[data-testid=approve-once]", WAIT)?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("Here is your counter."))?;

        // The view connects to the window, and hears the call's arguments and result.
        s.wait_for("[data-testid=app-view-frame]", WAIT)?;
        enter_view(s)?;
        s.wait_for_text("#status", WAIT, |t| t == "connected to Patchbay (inline)")?;
        s.wait_for_text("#args", WAIT, |t| t == r#"{"start":42}"#)?;
        // The server's tool learnt at initialisation that Patchbay shows views.
        s.wait_for_text("#result", WAIT, |t| t.contains("The counter starts at 42, shown in its view."))?;
        // Its own origin, sandboxed: no way to Patchbay's commands.
        let ipc = s.text(&s.find("#ipc")?)?;
        ensure!(ipc == "undefined undefined", "the view can reach Tauri: {ipc}");
        let origin = s.execute("return String(window.origin)", json!([]))?;
        ensure!(origin == json!("null"), "the view's origin is {origin}");

        // A tool made for the view only, whose approval is ask: the window asks first.
        s.click(&s.find("#bump")?)?;
        s.leave_frame()?;
        let asked = s.wait_for_text("[data-testid=app-view-ask]", WAIT, |t| t.contains("bump"))?;
        ensure!(asked.contains("\"by\": 5"), "{asked}");
        s.click_when_clear(ARMED_ALLOW, WAIT)?;
        enter_view(s)?;
        s.wait_for_text("#bumped", WAIT, |t| t == "bumped to 47")?;
        // A tool the server made for the model only is refused.
        s.click(&s.find("#reset")?)?;
        s.wait_for_text("#bumped", WAIT, |t| t.starts_with("refused:") && t.contains("for the model only"))?;
        s.click(&s.find("#bump")?)?;
        s.leave_frame()?;
        s.click_when_clear(ARMED_ALLOW, WAIT)?;
        enter_view(s)?;
        s.wait_for_text("#bumped", WAIT, |t| t == "bumped to 52")?;

        // The view hands over two files, one it made and one its server has; the user saves them.
        s.click(&s.find("#download")?)?;
        s.leave_frame()?;
        let offered = s.wait_for_text("[data-testid=app-view-download]", WAIT, |t| t.contains("counter report"))?;
        ensure!(offered.contains("notes.txt"), "{offered}");
        s.click_when_clear("[data-testid=app-view-save]:not(:disabled)", WAIT)?;
        let saved = s.wait_for_text("[data-testid=app-view-saved]", WAIT, |t| t.starts_with("Saved"))?;
        ensure!(saved.contains("notes.txt, counter report.csv"), "{saved}");
        ensure!(saved.contains(&downloads.display().to_string()), "{saved}");
        enter_view(s)?;
        s.wait_for_text("#downloaded", WAIT, |t| t == "saved")?;
        s.leave_frame()?;
        let notes = std::fs::read_to_string(downloads.join("notes.txt"))?;
        ensure!(notes == "Counter notes: bumped to 52", "{notes}");
        let report = std::fs::read_to_string(downloads.join("counter report.csv"))?;
        ensure!(report == "name,count\ncounter,52\n", "{report}");
        enter_view(s)?;

        // The view sends the user's next message once the user confirmed it, and the model answers it.
        s.click(&s.find("#say")?)?;
        s.leave_frame()?;
        let asked = s.wait_for_text("[data-testid=app-view-ask-message]", WAIT, |t| t.contains("bumped to 52"))?;
        ensure!(asked.contains("wants to send this message as you"), "{asked}");
        std::thread::sleep(Duration::from_secs(2));
        let sent = model.requests().iter().any(|r| r.body.to_string().contains("The counter is at"));
        ensure!(!sent, "the view's message went to the model before the user confirmed it");
        // Shown once: in the question, not yet in the chat.
        let shown = s.text(&s.find("#root")?)?.matches("The counter is at").count();
        ensure!(shown == 1, "the view's message is in the chat unconfirmed ({shown} times on the page)");
        s.click_when_clear("[data-testid=app-view-consent-once]:not(:disabled)", WAIT)?;
        s.wait_for_text("#root", WAIT, |t| t.contains("The counter is at bumped to 52"))?;
        s.wait_for_text("#root", WAIT, |t| t.contains("Noted: the counter moved."))?;

        // What the view gives the model to know waits, shown, for the next message.
        enter_view(s)?;
        s.click(&s.find("#share")?)?;
        s.leave_frame()?;
        let context = s.wait_for_text("[data-testid=view-context]", WAIT, |t| t.contains("Show the counter"))?;
        ensure!(context.contains("From the view of"), "{context}");
        send(s, "What does it show?")?;
        s.wait_for_text("[data-testid=message-list]", WAIT, |t| t.contains("It shows 52."))?;
        ensure!(s.count("[data-testid=view-context]")? == 0, "the context stayed for the message after");

        // Full screen never by the view alone: when it clicks its own button, or takes the
        // focus itself first, the user is asked, and a no keeps it in its card.
        for script in ["$('full').click()", "window.focus(); $('full').focus(); $('full').click()"] {
            s.click(&s.find("#composer-input")?)?;
            enter_view(s)?;
            s.execute("$('mode').textContent = 'asked'", json!([]))?;
            s.execute(script, json!([]))?;
            s.leave_frame()?;
            s.click_when_clear("[data-testid=app-view-fullscreen-deny]:not(:disabled)", WAIT)?;
            enter_view(s)?;
            s.wait_for_text("#mode", WAIT, |t| t == "inline")?;
            s.leave_frame()?;
            ensure!(s.count("[data-testid=app-view-bar]")? == 0, "{script} took the view full screen");
        }
        // Full screen, or the window's corner, when the view asks, until put back; full
        // screen under Patchbay's own bar, which the view's frame does not reach.
        show_view_as(&app, s, "#full", "fullscreen", "r.width > innerWidth * 0.9 && r.height > innerHeight * 0.8 && r.top >= document.querySelector('[data-testid=app-view-bar]').getBoundingClientRect().bottom")?;
        let cornered =
            "r.right > innerWidth - 40 && r.bottom < innerHeight - 100 && r.width < innerWidth / 2 && r.height > 100";
        show_view_as(&app, s, "#corner", "pip", cornered)?;
        enter_view(s)?;
        // The view lists its server's resources, and asks the model once the user has reviewed it.
        s.wait_for_text("#resources", WAIT, |t| t == "ui://counter/report.csv ui://counter/view.html")?;
        s.click(&s.find("#ask")?)?;
        s.leave_frame()?;
        s.wait_for_text("[data-testid=sampling-dialog]", WAIT, |t| t.contains("counter (its view)"))?;
        let asked = s.execute(
            "return [...document.querySelectorAll('[data-testid=sampling-dialog] textarea')].map((t) => t.value)",
            json!([]),
        )?;
        ensure!(asked.to_string().contains("What does the counter show? bumped to 52"), "{asked}");
        s.click(&s.find("[data-testid=sampling-approve]")?)?;
        enter_view(s)?;
        s.wait_for_text("#sampled", WAIT, |t| t == "Fifty-two.")?;

        // The view asks to be closed: torn down first, it has its last word for the model.
        s.click(&s.find("#close")?)?;
        s.leave_frame()?;
        s.wait_for("[data-testid=app-view-closed]", WAIT)?;
        ensure!(s.count("[data-testid=app-view-frame]")? == 0, "the closed view's frame stayed");
        app.screenshot("view-closed")?;
        rows_apart(s)?;
        s.wait_for("[data-testid=view-context][title='The view closed at bumped to 52']", WAIT)?;
        // Opened again, it is a new view that hears the call once more.
        s.click(&s.find("[data-testid=app-view-reopen]")?)?;
        s.wait_for("[data-testid=app-view-frame]", WAIT)?;
        enter_view(s)?;
        s.wait_for_text("#status", WAIT, |t| t == "connected to Patchbay (inline)")?;
        s.wait_for_text("#result", WAIT, |t| t.contains("The counter starts at 42, shown in its view."))?;
        s.leave_frame()?;
        app.screenshot("view-reopened")?;
        rows_apart(s)?;

        // Neither a view's frame nor the window goes anywhere but Patchbay's own pages.
        // (WebKit stops the frame's own navigation before the window's guard is asked;
        // the guard refuses the window's.)
        enter_view(s)?;
        s.execute("location.href = 'https://example.com/frame'", json!([]))?;
        std::thread::sleep(Duration::from_secs(1));
        s.leave_frame()?;
        s.execute("location.href = 'https://example.com/window'", json!([]))?;
        std::thread::sleep(Duration::from_secs(1));
        let here = s.execute("return location.href", json!([]))?;
        ensure!(here.as_str().is_some_and(|h| h.starts_with("tauri://localhost")), "the window went to {here}");
        s.wait_for("[data-testid=app-view-frame]", WAIT)?;
        enter_view(s)?;
        let frame = s.execute("return location.protocol", json!([]))?;
        ensure!(frame == json!("mcp-app:"), "the view's frame went to {frame}");
        s.wait_for_text("#status", WAIT, |t| t == "connected to Patchbay (inline)")?;
        s.leave_frame()?;
        Ok(())
    })?;
    app.screenshot("view")?;
    let log = std::fs::read_to_string(tmp.path().join("data/logs/patchbay.log"))?;
    let refused = log.lines().filter(|l| l.contains("refused a navigation to https://example.com")).count();
    ensure!(refused >= 1, "the log does not say the window's navigation was refused: {log}");
    // The view's context went with the user's message, under the view's name.
    let asked = model.requests()[4].body["messages"].to_string();
    ensure!(asked.contains("The view shows bumped to 52") && asked.contains("What does it show?"), "{asked}");
    // The model was offered the tool with a view, never the one made for the view.
    let tools: Vec<String> = model.requests()[0].body["tools"]
        .as_array()
        .context("no tools offered")?
        .iter()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
        .collect();
    ensure!(tools.iter().any(|t| t.ends_with("show_counter")), "{tools:?}");
    ensure!(tools.iter().any(|t| t.ends_with("reset")), "{tools:?}");
    ensure!(!tools.iter().any(|t| t.contains("bump")), "the model saw the view's tool: {tools:?}");
    Ok(())
}

/// Runs xdotool on the test's display (`args`), and returns what it printed.
fn xdotool(args: &[&str]) -> Result<String> {
    let out = Command::new("xdotool").args(args).output().context("xdotool (Debian package xdotool) did not run")?;
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The X id of `app`'s visible main window, if it shows one (found by its process, so the
/// window of any other Patchbay on the display is never taken for it).
fn main_window(app: &App) -> Result<Option<String>> {
    let pid = app.pid()?.to_string();
    let found = xdotool(&["search", "--all", "--onlyvisible", "--pid", &pid, "--name", "^Patchbay$"])?;
    Ok(found.lines().next().map(str::to_owned))
}

/// Asks the X window `id` to close as a window manager's close button does (a
/// `WM_DELETE_WINDOW` message; Xvfb runs no window manager).
fn close_as_the_window_manager_does(id: &str) -> Result<()> {
    use x11rb::connection::Connection;
    use x11rb::protocol::xproto::{ClientMessageEvent, ConnectionExt, EventMask};
    let window: u32 = id.parse().with_context(|| format!("{id:?} is not an X window id"))?;
    let (x, _) = x11rb::connect(None)?;
    let protocols = x.intern_atom(false, b"WM_PROTOCOLS")?.reply()?.atom;
    let delete = x.intern_atom(false, b"WM_DELETE_WINDOW")?.reply()?.atom;
    let message = ClientMessageEvent::new(32, window, protocols, [delete, x11rb::CURRENT_TIME, 0, 0, 0]);
    x.send_event(false, window, EventMask::NO_EVENT, message)?;
    x.flush()?;
    Ok(())
}

/// The X id of `app`'s visible quick-ask window ("Patchbay · Quick ask"), if it shows one.
fn quick_ask_shown(app: &App) -> Result<Option<String>> {
    let pid = app.pid()?.to_string();
    let found = xdotool(&["search", "--all", "--onlyvisible", "--pid", &pid, "--name", "Quick ask$"])?;
    Ok(found.lines().next().map(str::to_owned))
}

/// `app`'s visible quick-ask window's X id, waiting up to `WAIT` for it (or for none, when `shown` is false).
fn quick_ask_window(app: &App, shown: bool) -> Result<String> {
    let deadline = Instant::now() + WAIT;
    loop {
        let id = quick_ask_shown(app)?.unwrap_or_default();
        if id.is_empty() != shown {
            return Ok(id);
        }
        ensure!(
            Instant::now() < deadline,
            "the quick-ask window was {}",
            if shown { "never shown" } else { "not hidden" }
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The main window's conversations through the app's own command: `[(id, assistant texts)]`.
fn conversations(s: &Session) -> Result<Vec<(String, Vec<String>)>> {
    let script = "const done = arguments[arguments.length - 1];
        const invoke = window.__TAURI_INTERNALS__.invoke;
        invoke('list_conversations', { query: null })
          .then((list) => Promise.all(list.map((c) => invoke('get_conversation', { id: c.id, tail: null })
            .then((d) => [c.id, d.messages.filter((m) => m.role === 'assistant').map((m) => m.text)]))))
          .then(done, (e) => done(String(e.message ?? e)));";
    let value = s.execute_async(script, json!([]))?;
    serde_json::from_value(value.clone()).with_context(|| format!("the conversations came back as {value}"))
}

/// The quick-ask window: the shortcut chosen in Settings opens it over the app,
/// a question typed there goes to the default assistant, the tool call's
/// approval is given from the keyboard, and the answer comes from the scripted
/// model; "Open in Patchbay" (Ctrl+O) shows that conversation in the main
/// window. Escape hides it, and `patchbay-desktop --quick-ask` (what a Wayland
/// user binds) brings it back from a second launch. A shortcut that cannot be
/// read is refused, saying why. After a restart the saved shortcut works again.
#[test]
fn the_quick_ask_shortcut_opens_a_window_that_answers_and_hands_over_to_patchbay() -> Result<()> {
    let runtime = tokio::runtime::Runtime::new()?;
    let sum = ToolNames::build([("everything", "get-sum")]).model_name("everything", "get-sum").unwrap().to_owned();
    let model = runtime.block_on(ScriptedServer::start(
        Format::OpenAi,
        vec![
            openai::tool_calls_reply(&[("call_quick", &sum, &["{\"a\": 2, \"b\": 3}"])]),
            openai::text_reply(&["The sum ", "is 5."]),
            openai::text_reply(&["Adding two and three"]),
        ],
    ))?;
    let tmp = tempfile::tempdir()?;
    let data_dir = tmp.path().join("data");
    let mut everything =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    everything.tool_approval.insert("get-sum".into(), ApprovalMode::Ask);
    seed_with(&data_dir, &model.url(), &[everything])?;
    let options = AppOptions { data_dir: Some(data_dir.clone()), ..Default::default() };
    let app = App::start("the_quick_ask_shortcut_opens_a_window_that_answers_and_hands_over_to_patchbay", options)?;
    app.check(|s| {
        // Settings → General: a shortcut without a modifier is refused; Ctrl+Alt+K is taken.
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        for (typed, said) in [("Space", "has no Ctrl, Alt, Shift or Super"), ("Ctrl+Alt+K", "")] {
            s.wait_for("#quick-ask-shortcut:not([disabled])", WAIT)?;
            s.execute("document.querySelector('#quick-ask-shortcut').focus()", json!([]))?;
            s.set_value("#quick-ask-shortcut", typed)?;
            s.execute("document.querySelector('#quick-ask-shortcut').blur()", json!([]))?;
            if said.is_empty() {
                s.wait_for_text("#quick-ask-shortcut-hint", WAIT, |_| true)?;
                std::thread::sleep(Duration::from_millis(500));
                ensure!(s.count("[data-testid=general-settings] [role=alert]")? == 0, "Ctrl+Alt+K was refused");
            } else {
                let error =
                    s.wait_for_text("[data-testid=general-settings] [role=alert]", WAIT, |t| t.contains(said))?;
                ensure!(error.contains("\"Space\""), "{error}");
                s.click(&s.find("#nav-chat")?)?;
                s.click(&s.wait_for("#nav-settings", WAIT)?)?;
            }
        }
        let stored = s.execute("return document.querySelector('#quick-ask-shortcut').value", json!([]))?;
        ensure!(stored == json!("Ctrl+Alt+K"), "the field shows {stored}");
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        s.wait_for(&ready_dot("everything"), SERVER_WAIT)?;
        s.click(&s.find("#nav-chat")?)?;

        // The shortcut opens the window, which takes the keyboard.
        xdotool(&["key", "ctrl+alt+k"])?;
        let window = quick_ask_window(&app, true)?;
        xdotool(&["windowfocus", "--sync", &window])?;
        std::thread::sleep(Duration::from_millis(500));
        xdotool(&["type", "--delay", "30", "What is 2+3?"])?;
        xdotool(&["key", "Return"])?;
        // The call waits for approval: Tab reaches "Allow once", Return presses it.
        let deadline = Instant::now() + WAIT;
        while model.remaining() == 3 {
            ensure!(Instant::now() < deadline, "the question never reached the model");
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_secs(1));
        xdotool(&["key", "Tab", "Return"])?;
        let deadline = Instant::now() + WAIT;
        let id = loop {
            let listed = conversations(s)?;
            if let [(id, answers)] = listed.as_slice()
                && answers.iter().any(|a| a == "The sum is 5.")
            {
                break id.clone();
            }
            ensure!(Instant::now() < deadline, "quick ask's conversation holds {listed:?}");
            std::thread::sleep(Duration::from_millis(200));
        };
        ensure!(quick_ask_window(&app, true)? == window, "the window stays while it answers");

        // Ctrl+O once the turn (and the title after it) is over: not while it answers, as the
        // answer streams to this window only. The main window shows the conversation, quick ask hides.
        let deadline = Instant::now() + WAIT;
        while model.remaining() > 0 {
            ensure!(Instant::now() < deadline, "the title was never asked for");
            std::thread::sleep(Duration::from_millis(100));
        }
        std::thread::sleep(Duration::from_secs(1));
        xdotool(&["key", "ctrl+o"])?;
        quick_ask_window(&app, false)?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("The sum is 5."))?;
        s.wait_for("[data-testid=trace-card][data-status=done]", WAIT)?;
        let user = s.wait_for_text("[data-testid=message-user]", WAIT, |t| !t.is_empty())?;
        ensure!(user.contains("What is 2+3?"), "the main window shows {user}");
        let active = s.execute(
            "return document.querySelector('[data-testid=conversation-list] [aria-current]')?.textContent ?? ''",
            json!([]),
        )?;
        ensure!(active.as_str().is_some_and(|t| !t.is_empty()), "no conversation is marked open in the sidebar ({id})");

        // Shown again by the shortcut, Escape hides it; a second launch with --quick-ask shows it.
        xdotool(&["key", "ctrl+alt+k"])?;
        let window = quick_ask_window(&app, true)?;
        xdotool(&["windowfocus", "--sync", &window])?;
        xdotool(&["key", "Escape"])?;
        quick_ask_window(&app, false)?;
        let mut launch = Spawned::spawn(
            Command::new(app_binary()?).arg("--data-dir").arg(&data_dir).arg("--quick-ask").stdout(Stdio::null()),
        )?;
        let status = launch.wait_timeout(WAIT).context("the launch with --quick-ask did not hand over and exit")?;
        ensure!(status.success(), "the launch with --quick-ask exited with {status}");
        quick_ask_window(&app, true)?;
        Ok(())
    })?;
    ensure!(model.remaining() == 0, "the model was not asked three times (the call, the answer, the title)");
    drop(app);

    // Started again, the saved shortcut is taken once the window's page has loaded (not
    // before: grabbed while WebKit started the page, it held the window back).
    let options = AppOptions { data_dir: Some(data_dir), ..Default::default() };
    let app = App::start("the_quick_ask_shortcut_opens_a_window_again_after_a_restart", options)?;
    app.check(|s| {
        s.wait_for("#page-chat", WAIT)?;
        let deadline = Instant::now() + WAIT;
        loop {
            xdotool(&["key", "ctrl+alt+k"])?;
            let shown = Instant::now() + Duration::from_secs(3);
            while Instant::now() < shown {
                if quick_ask_shown(&app)?.is_some() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(200));
            }
            ensure!(Instant::now() < deadline, "after a restart, the saved shortcut never opened quick ask");
        }
    })
}

/// A server's form asked while quick ask answers shows in the quick-ask window (the main
/// window may be hidden behind other apps), and in the main window too; declined in quick
/// ask, it goes from both, and the server and the model get the answer.
#[test]
fn a_servers_form_asked_during_quick_ask_is_answered_there_and_goes_from_both_windows() -> Result<()> {
    let tool = "trigger-elicitation-request";
    let elicit = ToolNames::build([("everything", tool)]).model_name("everything", tool).unwrap().to_owned();
    let replies = vec![
        openai::tool_calls_reply(&[("call_form", &elicit, &["{}"])]),
        openai::text_reply(&["Understood, no details."]),
        openai::text_reply(&["A form"]),
    ];
    let (_runtime, model, tmp, app) =
        seeded_app("a_servers_form_asked_during_quick_ask_is_answered_there_and_goes_from_both_windows", replies)?;
    app.check(|s| {
        new_chat(s)?;
        let main = s.window_handle()?;
        let quick = quick_ask_by_launch(s, &tmp.path().join("data"), WAIT)?;
        s.switch_window(&quick)?;
        s.wait_for("#quick-ask-input", WAIT)?;
        s.set_value("#quick-ask-input", "Ask me for my details")?;
        s.click(&s.wait_for("#quick-ask-send:not([disabled])", WAIT)?)?;
        let form = "[data-testid=elicitation-dialog]";
        let deadline = Instant::now() + WAIT;
        while s.count(form)? == 0 {
            // The call may first ask to run (the tool's approval), in this window too.
            if s.count(".quick-ask-approval button")? > 0 {
                s.click(&s.find(".quick-ask-approval button")?)?;
            }
            ensure!(Instant::now() < deadline, "the server's form never showed in quick ask");
            std::thread::sleep(Duration::from_millis(200));
        }
        // The main window shows the same form.
        s.switch_window(&main)?;
        s.wait_for(form, WAIT)?;
        s.switch_window(&quick)?;
        press(s, form, "Decline")?;
        s.wait_for_none(form, WAIT)?;
        s.wait_for_text("[data-testid=quick-ask-answer]", WAIT, |t| t.contains("Understood, no details."))?;
        s.switch_window(&main)?;
        s.wait_for_none(form, WAIT)?;
        Ok(())
    })?;
    let told = model.requests().get(1).context("the model was not asked after the tool")?.body["messages"].to_string();
    ensure!(told.contains("decline"), "the tool's result did not carry the decline: {told}");
    Ok(())
}

/// A session bus of the test's own (`dbus-daemon` with `config`, the session bus's own
/// when `None`). On the session bus's, the desktop's GlobalShortcuts portal answers as in a
/// KDE Plasma session: the bus starts xdg-desktop-portal, its KDE backend and kglobalaccel
/// (which takes the keys on the test's display) when first asked. Dropping it stops the bus
/// and them.
fn private_bus(dir: &Path, config: Option<&Path>) -> Result<(Spawned, String)> {
    use std::io::BufRead;
    let mut daemon = Command::new("dbus-daemon");
    match config {
        Some(config) => daemon.arg(format!("--config-file={}", config.display())),
        None => daemon.arg("--session"),
    };
    let mut bus = Spawned::spawn(
        daemon
            .args(["--nofork", "--print-address=1"])
            .env("XDG_CURRENT_DESKTOP", "KDE")
            .env("XDG_CONFIG_HOME", dir)
            .stdout(Stdio::piped()),
    )?;
    let out = bus.child.stdout.take().context("dbus-daemon's output")?;
    let mut address = String::new();
    std::io::BufReader::new(out).read_line(&mut address).context("dbus-daemon printed no address")?;
    ensure!(address.starts_with("unix:"), "dbus-daemon printed {address:?}");
    Ok((bus, address.trim().to_owned()))
}

/// A session bus of the test's own on which nothing starts by itself (no service files): only
/// the app, and what the test serves there.
fn bare_bus(dir: &Path) -> Result<(Spawned, String)> {
    let config = dir.join("bare-bus.conf");
    std::fs::write(
        &config,
        "<busconfig><type>session</type><listen>unix:tmpdir=/tmp</listen>\
         <policy context=\"default\"><allow send_destination=\"*\" eavesdrop=\"true\"/>\
         <allow eavesdrop=\"true\"/><allow own=\"*\"/></policy></busconfig>",
    )?;
    private_bus(dir, Some(&config))
}

/// The app on `bus`, in a session that says it is Wayland's (the window itself runs on the
/// test's X display: only the session type says Wayland, which is what chooses the portal).
fn on_wayland(name: &str, bus: String) -> Result<App> {
    let env = vec![("DBUS_SESSION_BUS_ADDRESS".into(), bus), ("XDG_SESSION_TYPE".into(), "wayland".into())];
    App::start(name, AppOptions { env, ..Default::default() })
}

/// Types `typed` as the quick-ask shortcut in Settings → General.
fn set_shortcut(s: &Session, typed: &str) -> Result<()> {
    s.wait_for("#quick-ask-shortcut:not([disabled])", WAIT)?;
    s.execute("document.querySelector('#quick-ask-shortcut').focus()", json!([]))?;
    s.set_value("#quick-ask-shortcut", typed)?;
    s.execute("document.querySelector('#quick-ask-shortcut').blur()", json!([]))?;
    Ok(())
}

/// On Wayland the quick-ask shortcut is asked of the desktop's GlobalShortcuts portal (KDE's
/// here: the real xdg-desktop-portal and kglobalaccel). Settings says the desktop holds it,
/// under the key the desktop names; the key opens quick ask and never reaches the window
/// underneath, also after the shortcut was asked for again (a new session); cleared, the
/// desktop lets the key go, and it reaches the window again. Where no portal answers,
/// Settings says so, with what to bind instead.
#[test]
fn on_wayland_the_quick_ask_shortcut_is_held_by_the_desktops_portal() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let (bus, address) = private_bus(tmp.path(), None)?;
    let app = on_wayland("on_wayland_the_quick_ask_shortcut_is_held_by_the_desktops_portal", address)?;
    app.check(|s| {
        // Presses Ctrl+Alt+Space over the main window; whether quick ask opened (it is
        // hidden again) and whether the window's page got the key.
        let press = || -> Result<(bool, bool)> {
            s.execute("window.__keys = []; window.addEventListener('keydown', (e) => window.__keys.push(e.key))", json!([]))?;
            xdotool(&["windowfocus", "--sync", &main_window(&app)?.context("no main window")?])?;
            std::thread::sleep(Duration::from_millis(300));
            xdotool(&["key", "ctrl+alt+space"])?;
            let deadline = Instant::now() + Duration::from_secs(5);
            let mut opened = false;
            while !opened && Instant::now() < deadline {
                opened = quick_ask_shown(&app)?.is_some();
                std::thread::sleep(Duration::from_millis(200));
            }
            if opened {
                let window = quick_ask_window(&app, true)?;
                xdotool(&["windowfocus", "--sync", &window])?;
                xdotool(&["key", "Escape"])?;
                quick_ask_window(&app, false)?;
            }
            let got = s.execute("return window.__keys.includes(' ')", json!([]))? == json!(true);
            Ok((opened, got))
        };
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        // A new install's shortcut went to the portal at start; the desktop names its key.
        let status = "#quick-ask-shortcut-status";
        let said = s.wait_for_text(&format!("{status}[data-state=desktop]"), WAIT, |t| t.contains("Ctrl+Alt+Space"))?;
        ensure!(said.contains("desktop's keyboard settings"), "{said}");
        // Held by the desktop, the key opens quick ask and never reaches the window. (Under load the
        // desktop's answer can come after a press's wait: pressed again, as a user would.)
        let held = |when: &str| -> Result<()> {
            let deadline = Instant::now() + WAIT;
            loop {
                let pressed = press()?;
                if pressed == (true, false) {
                    return Ok(());
                }
                ensure!(!pressed.1, "{when}, the key reached the window: {pressed:?} (opened, reached the window)");
                ensure!(Instant::now() < deadline, "{when}, the key never opened quick ask");
            }
        };
        held("held by the desktop")?;

        // Asked for another key: a new session (the status waits on it, then says what the
        // desktop holds: Plasma keeps the key the user has), and its key works.
        // Watched on the whole page: the status may be drawn anew (the page re-reads its settings).
        s.execute(
            "window.__states = []; new MutationObserver(() => {\
               const state = document.querySelector(arguments[0])?.dataset.state;\
               if (state && window.__states.at(-1) !== state) window.__states.push(state);\
             }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-state'] })",
            json!([status]),
        )?;
        set_shortcut(s, "Ctrl+Alt+J")?;
        let deadline = Instant::now() + WAIT;
        loop {
            let states = s.execute("return window.__states", json!([]))?;
            if states.as_array().is_some_and(|a| a.ends_with(&[json!("waiting"), json!("desktop")])) {
                break;
            }
            ensure!(Instant::now() < deadline, "the new session's status went {states}");
            std::thread::sleep(Duration::from_millis(200));
        }
        ensure!(s.text(&s.find(status)?)?.contains("Ctrl+Alt+Space"), "the desktop's key is not named");
        ensure!(s.count("[data-testid=general-settings] [role=alert]")? == 0, "the portal's shortcut was refused");
        held("after the new session")?;

        // Cleared: the session closes, the desktop lets the key go to the window again.
        set_shortcut(s, "")?;
        s.wait_for(&format!("{status}[data-state=none]"), WAIT)?;
        let deadline = Instant::now() + WAIT;
        loop {
            let pressed = press()?;
            if pressed == (false, true) {
                break;
            }
            ensure!(Instant::now() < deadline, "cleared, the key still went {pressed:?} (opened, reached the window)");
        }
        Ok(())
    })?;
    drop((app, bus));

    // A bus where no portal can start: Settings says so, and what to bind instead.
    let (_bus, address) = bare_bus(tmp.path())?;
    let app = on_wayland("on_wayland_without_a_portal_the_quick_ask_shortcut_says_what_to_bind", address)?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        let said = s.wait_for_text("#quick-ask-shortcut-status[data-state=unbound]", WAIT, |t| !t.is_empty())?;
        ensure!(said.contains("the desktop offers no GlobalShortcuts portal"), "{said}");
        ensure!(said.contains("patchbay-desktop --quick-ask"), "{said}");
        ensure!(s.count("#quick-ask-shortcut-retry")? == 1, "no way to ask again");
        Ok(())
    })
}

/// A desktop panel's side of the tray protocol: the StatusNotifierWatcher that
/// libayatana-appindicator registers the app's icon with. It records who registered what.
#[derive(Clone, Default)]
struct Panel(std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>);

#[zbus::interface(name = "org.kde.StatusNotifierWatcher")]
impl Panel {
    fn register_status_notifier_item(&self, service: &str, #[zbus(header)] header: zbus::message::Header<'_>) {
        let sender = header.sender().map(ToString::to_string).unwrap_or_default();
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((sender, service.to_owned()));
    }

    fn register_status_notifier_host(&self, _service: &str) {}

    #[zbus(property)]
    fn registered_status_notifier_items(&self) -> Vec<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .map(|(s, p)| format!("{s}{p}"))
            .collect()
    }

    #[zbus(property)]
    fn is_status_notifier_host_registered(&self) -> bool {
        true
    }

    #[zbus(property)]
    fn protocol_version(&self) -> i32 {
        0
    }
}

/// The menu of the tray icon `item` (who registered it, and what it named) registered, as
/// a panel reaches it: the icon's `Menu`, served as com.canonical.dbusmenu.
fn tray_menu(bus: &zbus::blocking::Connection, item: &(String, String)) -> Result<zbus::blocking::Proxy<'static>> {
    let (owner, path) = match item.1.starts_with('/') {
        true => (item.0.clone(), item.1.clone()),
        false => (item.1.clone(), "/StatusNotifierItem".to_owned()),
    };
    let icon = zbus::blocking::Proxy::new(bus, owner.clone(), path, "org.kde.StatusNotifierItem")?;
    let menu: zbus::zvariant::OwnedObjectPath = icon.get_property("Menu")?;
    Ok(zbus::blocking::Proxy::new(bus, owner, menu, "com.canonical.dbusmenu")?)
}

/// A dbusmenu item as `GetLayout` gives it: its id, properties and children.
type MenuNode = (i32, HashMap<String, zbus::zvariant::OwnedValue>, Vec<zbus::zvariant::OwnedValue>);

/// A dbusmenu's top items: `(id, label)`, in order (a separator's label is empty).
fn menu_items(menu: &zbus::blocking::Proxy<'_>) -> Result<Vec<(i32, String)>> {
    use zbus::zvariant::Value;
    let reply = menu.call_method("GetLayout", &(0i32, -1i32, Vec::<String>::new()))?;
    let (_revision, (_root, _props, children)): (u32, MenuNode) = reply.body().deserialize()?;
    let mut items = Vec::new();
    for child in children {
        let Value::Structure(fields) = &*child else { continue };
        if let [Value::I32(id), Value::Dict(props), ..] = fields.fields() {
            let label: Option<String> = props.get::<&str, String>(&"label").ok().flatten();
            items.push((*id, label.unwrap_or_default().replace('_', "")));
        }
    }
    Ok(items)
}

/// The tray, as a desktop panel meets it (a StatusNotifierWatcher on the app's session bus;
/// the menu read and clicked through com.canonical.dbusmenu, as panels do): its first line
/// counts the servers that failed, and its items open quick ask and quit Patchbay. With "keep
/// in the tray" on, closing the window (as a window manager asks) hides it, Patchbay runs on,
/// and "Open Patchbay" brings it back. The window turned to Chinese, the menu speaks Chinese.
#[test]
fn the_tray_says_how_the_servers_are_keeps_patchbay_when_the_window_closes_and_quits() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let (_bus, address) = bare_bus(tmp.path())?;
    let panel = Panel::default();
    let bus = zbus::blocking::connection::Builder::address(address.as_str())?
        .name("org.kde.StatusNotifierWatcher")?
        .serve_at("/StatusNotifierWatcher", panel.clone())?
        .build()?;
    let data_dir = tmp.path().join("data");
    let everything =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    let broken = McpServerConfig::stdio("broken", "/nonexistent/patchbay-e2e-server", &[]);
    seed_with(&data_dir, "http://127.0.0.1:9", &[everything, broken])?;
    let options = AppOptions {
        data_dir: Some(data_dir),
        env: vec![("DBUS_SESSION_BUS_ADDRESS".into(), address)],
        ..Default::default()
    };
    let app = App::start("the_tray_says_how_the_servers_are_keeps_patchbay_when_the_window_closes_and_quits", options)?;
    app.check(|s| {
        s.wait_for("#page-chat", WAIT)?;
        let deadline = Instant::now() + WAIT;
        let item = loop {
            if let Some(item) = panel.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).first() {
                break item.clone();
            }
            ensure!(Instant::now() < deadline, "the app never registered a tray icon with the panel");
            std::thread::sleep(Duration::from_millis(200));
        };
        // The first line follows the servers: once everything is ready, one of them failed.
        let menu = tray_menu(&bus, &item)?;
        let deadline = Instant::now() + SERVER_WAIT;
        let items = loop {
            let items = menu_items(&menu)?;
            if items.first().is_some_and(|(_, label)| label.contains("servers failed") && label.starts_with("1 of ")) {
                break items;
            }
            ensure!(Instant::now() < deadline, "the tray's first line never said one server failed: {items:?}");
            std::thread::sleep(Duration::from_millis(300));
        };
        let labels: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).filter(|l| !l.is_empty()).collect();
        ensure!(labels[1..] == ["Open Patchbay", "New chat", "Quick ask", "Quit"], "the tray offers {labels:?}");
        let id = |label: &str| items.iter().find(|(_, l)| l == label).map(|(id, _)| *id).context("no such item");
        let click = |label: &str| -> Result<()> {
            let event = (id(label)?, "clicked", zbus::zvariant::Value::from(0i32), 0u32);
            menu.call_method("Event", &event)?;
            Ok(())
        };
        click("Quick ask")?;
        quick_ask_window(&app, true)?;

        // With "keep in the tray" on, closing the window hides it and Patchbay runs on;
        // "Open Patchbay" brings it back.
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        // Clicked once the page has settled (its sections load and move it down); a click lost
        // all the same (it is checked once saved) is made again.
        let checked = || s.execute("return document.querySelector('#keep-in-tray').checked", json!([]));
        let deadline = Instant::now() + WAIT;
        'switched: loop {
            s.click(&s.wait_still("#keep-in-tray:not([disabled])", WAIT)?)?;
            let saved = Instant::now() + Duration::from_secs(5);
            while Instant::now() < saved {
                if checked()? == json!(true) {
                    break 'switched;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            ensure!(Instant::now() < deadline, "keep in the tray was not switched on");
        }
        std::thread::sleep(Duration::from_millis(500));
        let pid = app.pid()?;
        // Under Xvfb, with no window manager, GTK drops the first WM_DELETE_WINDOW in about half
        // the runs (whether quick ask shows or not; the app never hears it, and a second one 5 s
        // later was always taken): the close is asked for again, as a user clicks again.
        let mut asked = 0;
        let deadline = Instant::now() + WAIT;
        while let Some(window) = main_window(&app)? {
            ensure!(Instant::now() < deadline, "closed {asked} times with keep in the tray on, the window stayed");
            if asked < 2 {
                close_as_the_window_manager_does(&window)?;
                asked += 1;
            }
            let hidden = Instant::now() + Duration::from_secs(5);
            while Instant::now() < hidden && main_window(&app)?.is_some() {
                std::thread::sleep(Duration::from_millis(200));
            }
        }
        eprintln!("closed with keep in the tray on, the window hid (asked {asked} times)");
        std::thread::sleep(Duration::from_secs(1));
        ensure!(main_window(&app)?.is_none(), "hidden by the close, the window came back by itself");
        ensure!(app.pid()? == pid && menu_items(&menu)?.len() == items.len(), "Patchbay did not run on in the tray");
        click("Open Patchbay")?;
        let deadline = Instant::now() + WAIT;
        while main_window(&app)?.is_none() {
            ensure!(Instant::now() < deadline, "Open Patchbay in the tray did not show the window");
            std::thread::sleep(Duration::from_millis(200));
        }
        s.wait_for("#page-settings", WAIT)?;

        // The window turned to Chinese: the menu is made again in Chinese.
        s.click(&s.wait_for("#language option[value=zh]", WAIT)?)?;
        let deadline = Instant::now() + WAIT;
        let (menu, items) = loop {
            // (Made again, the menu may be served at another path.)
            let menu = tray_menu(&bus, &item)?;
            let items = menu_items(&menu)?;
            let labels: Vec<&str> = items.iter().map(|(_, l)| l.as_str()).filter(|l| !l.is_empty()).collect();
            if labels.get(1..) == Some(&["打开 Patchbay", "新对话", "快速提问", "退出"][..]) {
                ensure!(labels[0].contains("个服务器失败"), "the first line is not in Chinese: {labels:?}");
                break (menu, items);
            }
            ensure!(Instant::now() < deadline, "the tray did not turn to Chinese: {labels:?}");
            std::thread::sleep(Duration::from_millis(200));
        };
        let servers: Vec<u32> = processes::process_tree(app.pid()?)
            .into_iter()
            .filter(|p| {
                let line = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                String::from_utf8_lossy(&line).contains("mcp-server-everything")
            })
            .collect();
        ensure!(!servers.is_empty(), "no process of the server everything runs below Patchbay");
        let quit = items.iter().find(|(_, l)| l == "退出").map(|(id, _)| *id).context("no 退出")?;
        menu.call_method("Event", &(quit, "clicked", zbus::zvariant::Value::from(0i32), 0u32))?;
        // Ended, not hidden: the process is gone, its servers stopped first. (Stopping them
        // once held the main thread, which tasks waiting on it kept from ever ending.)
        let deadline = Instant::now() + WAIT;
        while app.pid().is_ok() {
            ensure!(Instant::now() < deadline, "Quit in the tray did not end Patchbay");
            std::thread::sleep(Duration::from_millis(200));
        }
        let left = processes::still_alive(&servers);
        ensure!(left.is_empty(), "Patchbay ended, and the server everything's processes {left:?} run on");
        Ok(())
    })
}

/// A release feed on localhost: answers every request with `manifest`, and counts them.
fn update_feed(manifest: serde_json::Value) -> Result<(String, std::sync::Arc<std::sync::atomic::AtomicUsize>)> {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let url = format!("http://{}/latest.json", listener.local_addr()?);
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = asked.clone();
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let body = manifest.to_string();
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Ok((url, asked))
}

/// Updates: at start the app finds the newer version the feed announces and
/// shows what is new; this build (not installed from a package) says it
/// cannot update itself and opens the release page instead. Switched off in
/// Settings, the next start does not look; "Check now" still does.
#[test]
fn a_newer_version_is_announced_at_start_unless_switched_off() -> Result<()> {
    let tmp = tempfile::tempdir()?;
    let manifest = json!({
        "version": "9.9.9",
        "notes": "Faster search\nA tray icon",
        "pub_date": "2026-12-01T10:00:00Z",
        "platforms": {"linux-x86_64": {"signature": "unused: nothing is downloaded here", "url": "http://127.0.0.1:9/patchbay.deb"}}
    });
    let (url, asked) = update_feed(manifest)?;
    let browser = RecordingOpener::new(tmp.path())?;
    let mut env = browser.env.clone();
    env.push(("PATCHBAY_UPDATE_URL".to_owned(), url));
    let options = AppOptions { data_dir: Some(tmp.path().join("data")), env, ..Default::default() };
    let app = App::start("a_newer_version_is_announced_at_start_unless_switched_off", options.clone())?;
    app.check(|s| {
        let title = s.wait_for_text(".update-banner [data-testid=update] h2", WAIT, |t| !t.is_empty())?;
        ensure!(title == format!("Patchbay 9.9.9 is available (you have {})", env!("CARGO_PKG_VERSION")), "{title}");
        let notes = s.execute("return document.querySelector('[data-testid=update-notes]').textContent", json!([]))?;
        ensure!(notes == json!("Faster search\nA tray icon"), "{notes}");
        let why = s.text(&s.find("[data-testid=update-elsewhere]")?)?;
        ensure!(why.contains("not installed from a package Patchbay can update"), "{why}");
        ensure!(s.count("#update-install")? == 0, "nothing to install here");
        press(s, ".update-banner", "Open the release page")?;
        let opened = browser.opened(1, WAIT);
        ensure!(opened == ["https://github.com/patchbay-app/patchbay/releases/latest"], "{opened:?}");
        press(s, ".update-banner", "Later")?;
        s.wait_for_none(".update-banner", WAIT)?;

        s.click(&s.find("#nav-settings")?)?;
        // The page's sections arrive one by one and move it: click until the switch took it.
        let deadline = Instant::now() + WAIT;
        while s.count("#check-updates:not(:checked)")? == 0 {
            ensure!(Instant::now() < deadline, "the update switch never took the click");
            s.click(&s.wait_for("#check-updates:not([disabled])", WAIT)?)?;
            std::thread::sleep(Duration::from_millis(300));
        }
        Ok(())
    })?;
    let looked = asked.load(std::sync::atomic::Ordering::SeqCst);
    ensure!(looked >= 1, "the app never asked the feed");
    drop(app);

    let app = App::start("a_newer_version_is_announced_at_start_unless_switched_off-2", options)?;
    app.check(|s| {
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        s.wait_for("#check-updates:not(:checked)", WAIT)?;
        std::thread::sleep(Duration::from_secs(2));
        ensure!(s.count(".update-banner")? == 0, "switched off, the start did not look");
        ensure!(asked.load(std::sync::atomic::Ordering::SeqCst) == looked, "switched off, the feed was asked");
        s.click(&s.find("#check-update-now")?)?;
        let title =
            s.wait_for_text("[data-testid=general-settings] [data-testid=update] h2", WAIT, |t| !t.is_empty())?;
        ensure!(title.starts_with("Patchbay 9.9.9 is available"), "{title}");
        Ok(())
    })?;
    Ok(())
}

/// Knowledge from other machines: a server answering in RAGFlow's `ragflow_retrieval` shape
/// (tests/peers/ragflow_retrieval.py) and a second Patchbay's knowledge base served over HTTP
/// (`kb serve`'s and Share's server) are sources of one answer; its citations name both and open
/// their passages, and a source that failed is named under the answer.
#[test]
fn an_answer_cites_a_ragflow_server_and_another_patchbay_and_names_a_source_that_failed() -> Result<()> {
    use patchbay_core::rag::KnowledgeBase;
    use patchbay_core::rag::serve::{HttpServer, KbServer};
    use patchbay_core::rag::sources::{KnowledgeSource, SourceShape};

    let runtime = tokio::runtime::Runtime::new()?;
    let tmp = tempfile::tempdir()?;
    // The second Patchbay: its knowledge base holds birds.md, served with a bearer token.
    let other = DataDir::new(tmp.path().join("other"));
    let docs = tmp.path().join("other-docs");
    std::fs::create_dir_all(&docs)?;
    std::fs::write(docs.join("birds.md"), "# Birds\n\nThe kakapo is a flightless nocturnal parrot.\n")?;
    let kb = KnowledgeBase::open(&other, Store::open(&other)?)?;
    kb.add_folder(&docs)?;
    runtime.block_on(kb.index(std::sync::Arc::new(|_| {}), &tokio_util::sync::CancellationToken::new()))?;
    let served = runtime.block_on(HttpServer::bind(KbServer::new(kb), "127.0.0.1:0".parse()?, "team-token"))?;
    let team_url = format!("http://{}/mcp", served.local_addr()?);
    let stop = tokio_util::sync::CancellationToken::new();
    runtime.spawn(served.run(stop.clone()));

    let answer = openai::text_reply(&["Brakes are checked at Oakridge [1]; the kakapo is flightless [2]."]);
    let model =
        runtime.block_on(ScriptedServer::start(Format::OpenAi, vec![answer, openai::text_reply(&["Brakes"])]))?;
    let data_dir = tmp.path().join("data");
    let python = peers::python().display().to_string();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("peers/ragflow_retrieval.py").display().to_string();
    let ragflow = McpServerConfig::stdio("ragflow", &python, &[&script]);
    let broken = McpServerConfig::stdio("ragflow-down", &python, &[&script, "--broken"]);
    let headers = [("Authorization".to_owned(), ValueSource::Plain("Bearer team-token".into()))].into();
    let team = McpServerConfig::with_transport("team-kb", TransportConfig::StreamableHttp { url: team_url, headers });
    let servers = [ragflow, broken, team];
    seed_with(&data_dir, &model.url(), &servers)?;
    let kb = KnowledgeBase::open(&DataDir::new(&data_dir), Store::open(&DataDir::new(&data_dir))?)?;
    // Sources are pinned to their tools as the running servers offer them, as the app pins them.
    let registry = patchbay_core::mcp::McpRegistry::new(
        std::sync::Arc::new(patchbay_core::secrets::MemoryStore::default()),
        patchbay_core::mcp::RegistryOptions::default(),
    );
    runtime.block_on(async {
        registry.configure(servers);
        registry.start_all().await;
        registry.wait_settled(SERVER_WAIT).await;
    });
    for (name, server, tool, shape) in [
        ("Fleet", "ragflow", "ragflow_retrieval", SourceShape::Ragflow),
        ("Archive", "ragflow-down", "ragflow_retrieval", SourceShape::Ragflow),
        ("Team", "team-kb", "knowledge_search", SourceShape::Patchbay),
    ] {
        let source = KnowledgeSource {
            name: name.into(),
            server: server.into(),
            tool: tool.into(),
            shape,
            server_id: None,
            tool_fingerprint: None,
        };
        kb.put_source(&registry, source)?;
    }
    runtime.block_on(registry.shutdown());
    let name = "an_answer_cites_a_ragflow_server_and_another_patchbay_and_names_a_source_that_failed";
    let app = App::start(name, AppOptions { data_dir: Some(data_dir), ..Default::default() })?;
    app.check(|s| {
        // The sources are listed on the knowledge-base page once their servers are ready.
        s.click(&s.wait_for("#nav-settings", WAIT)?)?;
        s.click(&s.wait_for("#settings-tab-servers", WAIT)?)?;
        for server in ["ragflow", "team-kb"] {
            s.wait_for(&ready_dot(server), SERVER_WAIT)?;
        }
        s.click(&s.wait_for("#settings-tab-kb", WAIT)?)?;
        s.wait_for_count("[data-testid=kb-source]", 3, WAIT)?;
        s.click(&s.find("#nav-chat")?)?;
        s.click(&s.wait_for("#new-conversation", WAIT)?)?;
        send(s, "When are the delivery van brakes checked, and is the kakapo a flightless parrot?")?;
        s.wait_for_text("[data-testid=message-assistant]", WAIT, |t| t.contains("checked at Oakridge"))?;
        s.wait_for_count("[data-testid=citation-chip]", 2, WAIT)?;
        let chips: Vec<String> = (0..2)
            .map(|i| {
                let text = "return document.querySelectorAll('[data-testid=citation-chip]')[arguments[0]].textContent";
                s.execute(text, json!([i])).map(|v| v.as_str().unwrap_or_default().to_owned())
            })
            .collect::<Result<_>>()?;
        ensure!(chips.iter().any(|c| c.contains("Fleet · fleet-maintenance.pdf")), "no RAGFlow citation: {chips:?}");
        ensure!(chips.iter().any(|c| c.contains("Team · birds.md")), "no citation of the other Patchbay: {chips:?}");
        let failed = s.wait_for_text("[data-testid=citation-unavailable]", WAIT, |t| t.contains("Archive"))?;
        ensure!(failed.contains("Cannot process this operation."), "the failed source does not say why: {failed}");
        // A remote passage opens with its source named.
        let fleet = chips.iter().position(|c| c.contains("Fleet")).unwrap_or(0);
        s.execute("document.querySelectorAll('[data-testid=citation-chip]')[arguments[0]].click()", json!([fleet]))?;
        let passage = s.wait_for_text("[data-testid=citation-passage]", WAIT, |t| t.contains("Oakridge depot"))?;
        ensure!(passage.contains("Fleet · "), "the passage does not name its source: {passage}");
        Ok(())
    })?;
    app.screenshot("cited-sources")?;
    stop.cancel();
    let system = model.requests()[0].body["messages"][0]["content"].to_string();
    ensure!(system.contains("Fleet: fleet-maintenance.pdf") && system.contains("Team: "), "{system}");
    Ok(())
}
