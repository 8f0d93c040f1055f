//! `patchbay ask` on a terminal asks before a call that needs approval; a
//! strict server's calls are asked every time, so "always in this
//! conversation" is not offered for them, while a normal server's answer
//! holds for the rest of the conversation. The servers are `hostile-mcp
//! slow-start:0` (its `poke` answers "poked") in the real sandbox; the
//! terminal is a pseudo-terminal driven by `tests/cli/fixtures/pty_answer.py`.

use std::path::Path;
use std::process::{Command, Stdio};

use patchbay_core::config::{McpServerConfig, SecurityLevel};
use patchbay_test_support::hostile::hostile_mcp;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};

use crate::common::{BIN, command, env_model, fixture, seed_servers, stderr};

const STRICT_PROMPT: &str = "Allow guarded/poke with {}? [y]es once / [N]o (strict: every call is asked): ";
const NORMAL_PROMPT: &str = "Allow poker/poke with {}? [y]es once / [a]lways in this conversation / [N]o: ";

fn seed(dir: &Path) {
    let poker = |name: &str| McpServerConfig::stdio(name, hostile_mcp().to_str().unwrap(), &["slow-start:0"]);
    let mut guarded = poker("guarded");
    guarded.policy.level = Some(SecurityLevel::Strict);
    seed_servers(dir, &[guarded, poker("poker")]);
}

/// The model's replies to one `ask` that calls `server`'s `poke`.
fn poke(server: &str) -> [Reply; 2] {
    let name = format!("{server}__poke");
    [openai::tool_calls_reply(&[("call_1", &name, &["{}"])]), openai::text_reply(&["Done."])]
}

/// Runs `patchbay ask` on a pseudo-terminal that allows the strict server's
/// call once and the normal server's for the conversation; what the terminal showed.
fn ask_on_terminal(dir: &Path, model: &ScriptedServer, conversation: Option<&str>, flags: &[&str]) -> String {
    let rules = serde_json::json!([["guarded/poke", "y"], ["poker/poke", "a"]]);
    let mut cmd = Command::new(peers::python());
    cmd.arg(fixture("pty_answer.py")).arg(rules.to_string()).arg("--").arg(BIN);
    cmd.arg("--data-dir").arg(dir).args(["ask", "--model", "scripted"]).args(flags);
    if let Some(id) = conversation {
        cmd.args(["--conversation", id]);
    }
    let out =
        env_model(cmd.arg("Poke it."), model).env_remove("ARK_API_KEY").output().expect("run the terminal driver");
    let screen = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    assert!(out.status.success(), "{screen}{}", String::from_utf8_lossy(&out.stderr));
    assert!(screen.contains(": poked"), "the call did not run: {screen}");
    screen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_servers_calls_are_asked_every_time_and_a_normal_servers_once_per_conversation() {
    let data = tempfile::tempdir().unwrap();
    seed(data.path());
    let replies = [poke("guarded"), poke("guarded"), poke("poker"), poke("poker")].concat();
    let model = ScriptedServer::start(Format::OpenAi, replies).await.unwrap();

    let first = ask_on_terminal(data.path(), &model, None, &[]);
    assert!(first.contains(STRICT_PROMPT), "{first}");
    let id = first
        .lines()
        .find_map(|l| l.trim().strip_prefix("conversation "))
        .unwrap_or_else(|| panic!("no conversation id: {first}"))
        .to_owned();
    // The same conversation: asked again.
    let again = ask_on_terminal(data.path(), &model, Some(&id), &[]);
    assert!(again.contains(STRICT_PROMPT), "{again}");

    // A normal server offers "always in this conversation", and keeps to it.
    let allowed = ask_on_terminal(data.path(), &model, Some(&id), &[]);
    assert!(allowed.contains(NORMAL_PROMPT), "{allowed}");
    let unasked = ask_on_terminal(data.path(), &model, Some(&id), &[]);
    assert!(!unasked.contains("Allow poker/poke"), "{unasked}");
}

/// `--auto-approve` runs a normal server's calls unasked, but a strict
/// server's calls are still asked, and denied where there is no terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auto_approve_does_not_lift_the_strict_level() {
    let data = tempfile::tempdir().unwrap();
    seed(data.path());
    let replies = [poke("poker"), poke("guarded"), poke("guarded")].concat();
    let model = ScriptedServer::start(Format::OpenAi, replies).await.unwrap();
    let ask = || {
        let mut cmd = command(data.path());
        cmd.args(["ask", "--model", "scripted", "--auto-approve", "Poke it."]).stdin(Stdio::null());
        let out = env_model(&mut cmd, &model).output().expect("run patchbay ask");
        assert!(out.status.success(), "{}", stderr(&out));
        stderr(&out)
    };
    let normal = ask();
    assert!(normal.contains(": poked") && !normal.contains("Allow poker/poke"), "{normal}");

    let strict = ask();
    assert!(
        strict.contains("Denied guarded/poke: guarded is strict, every call is asked, and there is no terminal"),
        "{strict}"
    );
    assert!(!strict.contains(": poked"), "the strict call ran: {strict}");

    // On a terminal it is asked (and allowed once here).
    let asked = ask_on_terminal(data.path(), &model, None, &["--auto-approve"]);
    assert!(asked.contains(STRICT_PROMPT), "{asked}");
}

/// A result larger than the model gets is cut for it, and `ask` says so and where the rest is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_cut_for_the_model_is_said_to_be_kept() {
    let data = tempfile::tempdir().unwrap();
    seed_servers(data.path(), &[McpServerConfig::stdio("big", hostile_mcp().to_str().unwrap(), &["huge-result:1"])]);
    let model = ScriptedServer::start(Format::OpenAi, poke("big").to_vec()).await.unwrap();
    let mut cmd = command(data.path());
    cmd.args(["ask", "--model", "scripted", "--auto-approve", "Poke it."]).stdin(Stdio::null());
    let out = env_model(&mut cmd, &model).output().expect("run patchbay ask");
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains("(the model was sent 100000 of 1048576 characters; the whole result is kept as result 1)"),
        "{said}"
    );
}
