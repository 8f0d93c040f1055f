//! `patchbay mcp list | status | tools | call | doctor | prompts | prompt |
//! resources | read | complete` against real servers seeded into a temporary
//! data directory.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use patchbay_core::config::McpServerConfig;
use patchbay_test_support::peers;

use crate::common::{command, everything, ok, patchbay, seed_servers, stderr, stdout};

fn seeded() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let mut off = McpServerConfig::stdio("off", "true", &[]);
    off.enabled = false;
    seed_servers(
        tmp.path(),
        &[everything("everything"), McpServerConfig::stdio("broken", "surely-not-a-command-xyz", &["--flag"]), off],
    );
    tmp
}

#[test]
fn list_prints_every_configured_server() {
    let tmp = seeded();
    let out = patchbay(tmp.path(), &["mcp", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("everything  stdio  enabled  ") && lines[0].ends_with("mcp-server-everything stdio"));
    assert_eq!(lines[1], "broken  stdio  enabled  surely-not-a-command-xyz --flag");
    assert_eq!(lines[2], "off  stdio  disabled  true");
}

#[test]
fn status_starts_enabled_servers_and_reports_each() {
    let tmp = seeded();
    let out = patchbay(tmp.path(), &["mcp", "status"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let everything = text.lines().find(|l| l.starts_with("everything  ")).unwrap_or_else(|| panic!("{text}"));
    let tools: usize =
        everything.strip_prefix("everything  ready  ").and_then(|r| r.strip_suffix(" tools")).unwrap().parse().unwrap();
    assert!(tools > 5, "{everything}");
    assert!(text.lines().any(|l| l.starts_with("broken  failed: ") && l.contains("not found on PATH")), "{text}");
    assert!(text.lines().any(|l| l == "off  disabled"), "{text}");
    // A ready server's health, checked now.
    let health = text.lines().skip_while(|l| !l.starts_with("everything  ")).find(|l| l.starts_with("  health: "));
    assert!(health.is_some_and(|h| h.contains("answered a ping in") && h.contains("Z,")), "{text}");

    let out = patchbay(tmp.path(), &["mcp", "ping", "everything"]);
    let pinged = stdout(&out);
    assert!(out.status.success() && pinged.starts_with("everything: checked 20"), "{pinged}{}", stderr(&out));
    assert!(pinged.contains("answered a ping in") && pinged.trim_end().ends_with(" ms"), "{pinged}");
    let out = patchbay(tmp.path(), &["mcp", "ping", "broken"]);
    assert!(!out.status.success() && stderr(&out).contains("is not ready"), "{}", stderr(&out));
}

#[test]
fn tools_and_call_use_the_server() {
    let tmp = seeded();
    let out = patchbay(tmp.path(), &["mcp", "tools", "everything"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).lines().any(|l| l == "echo  Echo Tool: Echoes back the input string"), "{}", stdout(&out));
    let research = stdout(&out).lines().find(|l| l.starts_with("simulate-research-query  ")).map(str::to_owned);
    assert!(research.as_deref().is_some_and(|l| l.ends_with("(runs as a task)")), "{research:?}");

    let out = patchbay(tmp.path(), &["mcp", "call", "everything", "get-sum", "--args", r#"{"a": 20, "b": 22}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("42"), "{}", stdout(&out));

    // An isError result: the error text, non-zero exit.
    let out = patchbay(tmp.path(), &["mcp", "call", "everything", "get-sum", "--args", r#"{"a": "x"}"#]);
    assert!(!out.status.success());
    assert!(!stderr(&out).trim().is_empty());

    let out = patchbay(tmp.path(), &["mcp", "call", "everything", "echo", "--args", "[1]"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("must be a JSON object"), "{}", stderr(&out));
}

#[test]
fn a_call_shows_its_progress_on_stderr_and_a_task_tool_runs_as_a_task() {
    let tmp = seeded();
    let args = r#"{"topic": "tides"}"#;
    let out = patchbay(tmp.path(), &["mcp", "call", "everything", "simulate-research-query", "--args", args]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("# Research Report: tides"), "{}", stdout(&out));
    // Each stage the server reported, in order, then the end.
    let err = stderr(&out);
    let progress: Vec<&str> = err.lines().filter(|l| l.starts_with("  … ")).collect();
    let gathering = progress.iter().position(|l| l.ends_with(" Gathering sources..."));
    let report = progress.iter().position(|l| l.ends_with(" Generating report..."));
    assert!(gathering.is_some() && gathering < report, "{progress:?}");
    assert!(progress.last().is_some_and(|l| l.ends_with(" completed")), "{progress:?}");

    // Ctrl-C calls a running call off: the command says so and fails.
    let mut running = command(tmp.path())
        .args(["mcp", "call", "everything", "simulate-research-query", "--args", args])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(running.stderr.take().unwrap()).lines();
    let first = lines.by_ref().map_while(Result::ok).find(|l| l.starts_with("  … "));
    assert!(first.is_some(), "the call never showed progress");
    let interrupted = Command::new("kill").args(["-INT", &running.id().to_string()]).status().unwrap();
    assert!(interrupted.success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let out = running.wait_with_output().unwrap();
    assert!(!out.status.success());
    assert!(rest.iter().any(|l| l.contains("was cancelled")), "{rest:?}");
    assert!(!stdout(&out).contains("Research Report"), "{}", stdout(&out));
}

#[test]
fn info_says_who_the_server_is_and_how_it_is_reached() {
    let tmp = seeded();
    let out = patchbay(tmp.path(), &["mcp", "info", "everything"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let value = |key: &str| {
        let prefix = format!("{key}:");
        text.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(str::trim)
            .unwrap_or_else(|| panic!("no {key} in {text}"))
    };
    assert_eq!(value("name"), "mcp-servers/everything");
    assert_eq!(value("title"), "Everything Reference Server");
    assert_eq!(value("version"), "2.0.0");
    assert_eq!(value("transport"), "stdio");
    assert!(value("pid").parse::<u32>().is_ok(), "{text}");
    assert!(value("command").ends_with("mcp-server-everything"), "{text}");
    assert!(value("offers").starts_with("tools, tools.list_changed, prompts"), "{text}");

    let out = patchbay(tmp.path(), &["mcp", "info", "broken"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("\"broken\" is not ready"), "{}", stderr(&out));
}

#[test]
fn doctor_explains_a_server_that_does_not_start() {
    let tmp = seeded();
    let out = patchbay(tmp.path(), &["mcp", "doctor", "broken"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("status:    failed"), "{text}");
    assert!(text.contains("surely-not-a-command-xyz not found on PATH; looked in /"), "{text}");

    let out = patchbay(tmp.path(), &["mcp", "tools", "broken"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("patchbay mcp doctor broken"), "{}", stderr(&out));
}

#[test]
fn prompts_resources_and_completions_of_a_server() {
    let tmp = seeded();
    let run = |args: &[&str]| {
        let out = patchbay(tmp.path(), args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    let prompts = run(&["mcp", "prompts", "everything"]);
    assert!(prompts.lines().any(|l| l.starts_with("args-prompt (city*, state)  ")), "{prompts}");
    assert!(prompts.lines().any(|l| l.starts_with("completable-prompt (department*, name*)  ")), "{prompts}");
    let text =
        run(&["mcp", "prompt", "everything", "completable-prompt", "--arg", "department=Sales", "--arg", "name=Eve"]);
    assert_eq!(text, "Please promote Eve to the head of the Sales team.\n");
    // A prompt that embeds a resource brings its text along.
    let text =
        run(&["mcp", "prompt", "everything", "resource-prompt", "--arg", "resourceType=Text", "--arg", "resourceId=2"]);
    assert!(
        text.contains("\n\n[resource demo://resource/dynamic/text/2]\nResource 2: This is a plaintext resource"),
        "{text}"
    );

    let resources = run(&["mcp", "resources", "everything"]);
    assert!(resources.lines().any(|l| l == "demo://resource/static/document/features.md  features.md"), "{resources}");
    assert!(
        resources.lines().any(|l| l == "demo://resource/dynamic/text/{resourceId}  Dynamic Text Resource (template)"),
        "{resources}"
    );
    let read =
        run(&["mcp", "read", "everything", "demo://resource/dynamic/blob/{resourceId}", "--arg", "resourceId=3"]);
    assert!(read.starts_with("Resource 3: This is a base64 blob created at "), "{read}");

    let complete = ["mcp", "complete", "everything", "--prompt", "completable-prompt"];
    assert_eq!(run(&[&complete[..], &["department", "S"]].concat()), "Sales\nSupport\n");
    assert_eq!(run(&[&complete[..], &["name", "--arg", "department=Marketing"]].concat()), "Grace\nHenry\nIris\n");
    let template = ["mcp", "complete", "everything", "--template", "demo://resource/dynamic/text/{resourceId}"];
    assert_eq!(run(&[&template[..], &["resourceId", "12"]].concat()), "12\n");

    let out = patchbay(tmp.path(), &["mcp", "read", "everything", "demo://{broken", "--arg", "a=1"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("URI template \"demo://{broken\" is not valid: the `{` at 7 is never closed"),
        "{}",
        stderr(&out)
    );
    let out = patchbay(tmp.path(), &["mcp", "prompt", "everything", "args-prompt", "--arg", "city"]);
    assert!(stderr(&out).contains("--arg city: write KEY=VALUE"), "{}", stderr(&out));
}

#[test]
fn tools_says_which_have_a_view_and_which_the_model_never_sees() {
    let tmp = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/peers/counter_app.py");
    seed_servers(tmp.path(), &[McpServerConfig::stdio("counter", peers::python().to_str().unwrap(), &[script])]);
    let out = patchbay(tmp.path(), &["mcp", "tools", "counter"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let line =
        |name: &str| text.lines().find(|l| l.starts_with(&format!("{name}  "))).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        line("show_counter"),
        "show_counter  Show the counter: Shows the counter, starting at `start`.  (view ui://counter/view.html)"
    );
    assert!(
        line("bump").ends_with("(view ui://counter/view.html; for its view only: the model does not see it)"),
        "{text}"
    );
    assert!(line("reset").ends_with("(view ui://counter/view.html)"), "{text}");
    // The terminal shows no views, and says so to the server.
    let out = patchbay(tmp.path(), &["mcp", "call", "counter", "show_counter", "--args", r#"{"start": 1}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "The counter starts at 1, shown as text only.");
}

/// An imported `${env:NAME}` is read from the environment `patchbay` runs in when
/// the server starts (the server sees the value; the database keeps the
/// reference), and a variable that is not set says which field names it.
#[test]
fn an_environment_reference_is_read_at_start_and_a_missing_one_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("mcp.json");
    let everything = peers::npm_bin("mcp-server-everything");
    let text = serde_json::json!({"mcpServers": {"everything": {
        "command": everything, "args": ["stdio"], "env": {"GREETING": "hello ${env:PB_TEST_GREETING}"}}}});
    std::fs::write(&config, text.to_string()).unwrap();
    let data = tmp.path().join("data");
    // The dry run says what the server will read from the environment.
    let dry = command(&data)
        .args(["config", "import", "--dry-run", config.to_str().unwrap()])
        .env_remove("PB_TEST_GREETING")
        .output()
        .unwrap();
    let dry = ok(&dry);
    assert!(dry.contains("env.GREETING: reads $PB_TEST_GREETING from the environment (not set)"), "{dry}");
    ok(&patchbay(&data, &["config", "import", config.to_str().unwrap()]));

    let out = command(&data)
        .args(["mcp", "call", "everything", "get-env"])
        .env("PB_TEST_GREETING", "from the shell")
        .output()
        .unwrap();
    assert!(ok(&out).contains("hello from the shell"), "{}", stdout(&out));
    let stored = ok(&patchbay(&data, &["config", "export", "--format", "patchbay"]));
    assert!(stored.contains("hello ${env:PB_TEST_GREETING}") && !stored.contains("from the shell"), "{stored}");

    let out =
        command(&data).args(["mcp", "call", "everything", "get-env"]).env_remove("PB_TEST_GREETING").output().unwrap();
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("env.GREETING refers to the environment variable PB_TEST_GREETING, which is not set"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tools_with_their_schemas_or_as_json() {
    let tmp = seeded();
    let out = ok(&patchbay(tmp.path(), &["mcp", "tools", "everything", "--schema"]));
    let at = out.find("get-sum  ").unwrap_or_else(|| panic!("{out}"));
    let schema: String = out[at..].lines().skip(1).take_while(|l| l.starts_with("    ")).collect::<Vec<_>>().join("\n");
    let schema: serde_json::Value = serde_json::from_str(&schema).unwrap_or_else(|e| panic!("{e}: {schema}"));
    assert_eq!(schema["type"], "object");
    assert!(schema["properties"]["a"].is_object() && schema["properties"]["b"].is_object(), "{schema}");

    let listing: serde_json::Value =
        serde_json::from_str(&ok(&patchbay(tmp.path(), &["mcp", "tools", "everything", "--json"]))).unwrap();
    let tools = listing.as_array().unwrap();
    let sum = tools.iter().find(|t| t["name"] == "get-sum").unwrap_or_else(|| panic!("{listing}"));
    assert_eq!(sum["inputSchema"], schema, "the same schema both ways");
    assert!(tools.len() > 5 && tools.iter().all(|t| t["description"].is_string() || t["description"].is_null()));
}
