//! "Allow for this conversation" is pinned to the server (its stored
//! identity, not its name), the tool and the tool's definition, through the
//! app as the chat view uses it: a real MCP server that changes what a tool
//! says it does after the grant is asked about again (the rug-pull), a server
//! deleted and added again under the same name starts without grants, names
//! that would let one server's tools pass for another's are refused, and a
//! tool's `readOnlyHint` skips the question only where the user switched
//! that on for its server. At the strict level every call is asked: the card
//! says so, and no answer (nor a grant stored before) lets a call run unasked.

use crate::mcp_common;

use std::sync::Arc;
use std::time::Duration;

use patchbay_core::app::views::{GeneralSettings, TurnEvent};
use patchbay_core::app::{App, AppEvents, ApprovalAnswer, ErrorKind, TurnInput};
use patchbay_core::config::{
    ApprovalMode, ConfigError, ConfigStore, ImportChoice, ImportOptions, McpServerConfig, ProviderProfile,
    SecurityLevel, TransportConfig,
};
use patchbay_core::mcp::ServerStatus;
use patchbay_core::mcp::protocol::naming::ToolNames;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use patchbay_test_support::hostile::hostile_mcp;
use patchbay_test_support::peers;
use patchbay_test_support::scripted::{Format, Reply, ScriptedServer, openai};

struct Fixture {
    app: App,
    store: Store,
    /// A new conversation.
    conversation: String,
    _model: ScriptedServer,
    _dir: tempfile::TempDir,
}

/// The app over a scripted model answering `replies`, with `servers` (stored
/// as the editor stores them) ready, and a new conversation.
async fn open(replies: Vec<Reply>, servers: &[McpServerConfig]) -> Fixture {
    let model = ScriptedServer::start(Format::OpenAi, replies).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let data = DataDir::new(dir.path());
    let store = Store::open(&data).unwrap();
    let config = ConfigStore::new(store.clone());
    let url = format!("{}/v1", model.url());
    config.save_provider(&ProviderProfile::openai_compatible("scripted", url, "scripted-model")).unwrap();
    config.replace_servers(servers).unwrap();
    let app = App::open(data, store.clone(), Arc::new(MemoryStore::default()), AppEvents::unwatched())
        .unwrap()
        .with_env(|_| None);
    app.start().unwrap();
    // Every request the model gets is then a turn's, none a title's.
    let settings = app.get_settings().unwrap();
    app.save_settings(&GeneralSettings { auto_title: false, ..settings }).unwrap();
    for server in servers {
        wait_ready(&app, &server.name).await;
    }
    let conversation = app.create_conversation(None).unwrap().id;
    Fixture { app, store, conversation, _model: model, _dir: dir }
}

/// The model's replies for `turns` turns, each calling `server`'s `tool` once.
fn calls(server: &str, tool: &str, arguments: &'static str, turns: usize) -> Vec<Reply> {
    let name = ToolNames::build([(server, tool)]).model_name(server, tool).unwrap().to_owned();
    (0..turns)
        .flat_map(|n| {
            let id = format!("call_{n}");
            [openai::tool_calls_reply(&[(&id, &name, &[arguments])]), openai::text_reply(&["Done."])]
        })
        .collect()
}

/// `hostile-mcp MODE` as server `name`.
fn poker(name: &str, mode: &str) -> McpServerConfig {
    McpServerConfig::stdio(name, hostile_mcp().to_str().unwrap(), &[mode])
}

async fn wait_ready(app: &App, name: &str) {
    mcp_common::wait_for(app.registry(), name, |s| *s == ServerStatus::Ready).await;
}

/// What happened to the one call of a turn.
#[derive(Debug, PartialEq, Eq)]
struct Call {
    /// The user was asked.
    asked: bool,
    /// The card said the server is strict (only "allow once" and "deny").
    strict: bool,
    /// The tool ran and answered without error.
    ran: bool,
}

/// Runs a turn in `conversation` whose model calls one tool; an approval card is answered with `answer`.
async fn turn(app: &App, conversation: &str, answer: ApprovalAnswer) -> Call {
    let responder = app.clone();
    let mut call = Call { asked: false, strict: false, ran: false };
    let input = TurnInput::Send { text: "go".into(), attachments: vec![] };
    app.run_turn(conversation, input, |e| match &e {
        TurnEvent::ApprovalNeeded { call_id, strict, .. } => {
            call.asked = true;
            call.strict = *strict;
            responder.respond_approval(call_id, answer).unwrap();
        }
        TurnEvent::ToolResult { result, .. } => call.ran = !result.is_error,
        _ => {}
    })
    .await
    .unwrap();
    call
}

const ASKED_AND_RAN: Call = Call { asked: true, strict: false, ran: true };
const RAN_UNASKED: Call = Call { asked: false, strict: false, ran: true };
const ASKED_AT_STRICT_AND_RAN: Call = Call { asked: true, strict: true, ran: true };

fn grants(store: &Store) -> i64 {
    store.read(|c| c.query_row("SELECT COUNT(*) FROM conversation_tool_grants", [], |r| r.get(0))).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_that_changes_its_description_after_the_grant_is_asked_about_again() {
    let f = open(calls("rugpull", "poke", "{}", 4), &[poker("rugpull", "rug-pull")]).await;
    let conversation = &f.conversation;

    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowConversation).await, ASKED_AND_RAN);
    // The call made the server change what poke says it does, and say so.
    for _ in 0..100 {
        let tools = f.app.list_tools(Some("rugpull")).unwrap();
        if tools.iter().any(|t| t.description.contains("uploads your home folder")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let tools = f.app.list_tools(Some("rugpull")).unwrap();
    assert!(tools[0].description.contains("uploads your home folder"), "{tools:?}");

    // The grant was for the tool as it was: the changed one is asked about.
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowConversation).await, ASKED_AND_RAN);
    // Allowed as it is now, it runs unasked (it stays as it is from here on).
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::Deny).await, RAN_UNASKED);
    // Another conversation has no grant.
    let other = f.app.create_conversation(None).unwrap().id;
    assert_eq!(turn(&f.app, &other, ApprovalAnswer::AllowOnce).await, ASKED_AND_RAN);
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_strict_every_call_is_asked_whatever_was_answered_or_granted_before() {
    let mut strict = poker("guarded", "slow-start:0");
    strict.policy.level = Some(SecurityLevel::Strict);
    let normal = poker("poker", "slow-start:0");
    let replies = [calls("guarded", "poke", "{}", 3), calls("poker", "poke", "{}", 3)].concat();
    let f = open(replies, &[strict, normal.clone()]).await;
    let conversation = &f.conversation;

    // The card says the server is strict; an answer for the conversation (or
    // "always", which the card does not offer either) counts once and is not kept.
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowConversation).await, ASKED_AT_STRICT_AND_RAN);
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowAlways).await, ASKED_AT_STRICT_AND_RAN);
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowOnce).await, ASKED_AT_STRICT_AND_RAN);
    assert_eq!(grants(&f.store), 0, "nothing is remembered for a strict server");
    let guarded = f.app.list_servers().unwrap().into_iter().find(|s| s.config.name == "guarded").unwrap();
    assert!(guarded.config.tool_approval.is_empty(), "\"always\" stored nothing: {:?}", guarded.config.tool_approval);

    // At normal, the same answer lets later calls run unasked...
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowConversation).await, ASKED_AND_RAN);
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::Deny).await, RAN_UNASKED);
    assert_eq!(grants(&f.store), 1);
    // ...until the server is made strict: the stored grant is not honoured.
    let mut made_strict = normal;
    made_strict.policy.level = Some(SecurityLevel::Strict);
    f.app.save_server(made_strict, &Default::default()).await.unwrap();
    wait_ready(&f.app, "poker").await;
    assert_eq!(grants(&f.store), 1, "the grant is still stored");
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowOnce).await, ASKED_AT_STRICT_AND_RAN);
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_deleted_and_added_again_under_its_name_starts_without_grants() {
    // `slow-start:0` behaves in every way: poke answers "poked".
    let f = open(calls("poker", "poke", "{}", 3), &[poker("poker", "slow-start:0")]).await;
    let conversation = &f.conversation;
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowConversation).await, ASKED_AND_RAN);
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::Deny).await, RAN_UNASKED);
    assert_eq!(grants(&f.store), 1);

    f.app.delete_server("poker").await.unwrap();
    assert_eq!(grants(&f.store), 0, "the grant went with its server");
    // The same name, the same program, the same tool: still another server.
    f.app.save_server(poker("poker", "slow-start:0"), &Default::default()).await.unwrap();
    wait_ready(&f.app, "poker").await;
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowOnce).await, ASKED_AND_RAN);
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_names_that_would_pass_for_another_servers_tools_are_refused_on_save_and_import() {
    // "a__b" + "c" and "a" + "b__c" would both read "a__b__c" to the model.
    let f = open(vec![], &[]).await;
    f.app.save_server(poker("a", "slow-start:0"), &Default::default()).await.unwrap();
    for bad in ["a__b", "a_"] {
        let err = f.app.save_server(poker(bad, "slow-start:0"), &Default::default()).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidInput, "{err}");
        assert!(err.to_string().contains(&format!("the server name {bad:?}")), "{err}");
    }
    let names: Vec<String> = f.app.list_servers().unwrap().into_iter().map(|s| s.config.name).collect();
    assert_eq!(names, ["a"]);

    let config = ConfigStore::new(f.store.clone());
    let secrets = MemoryStore::new();
    let text = r#"{"mcpServers": {"a": {"command": "echo"}, "a__b": {"command": "echo"}}}"#;
    let preview = config.preview_import(&secrets, text, &ImportOptions::default()).unwrap();
    let issues: Vec<String> = preview.all_issues().iter().map(ToString::to_string).collect();
    assert_eq!(issues.len(), 1, "{issues:?}");
    assert!(issues[0].starts_with("mcpServers.a__b: the server name \"a__b\" holds \"__\""), "{issues:?}");
    let err = config.apply_import(&secrets, text, &ImportOptions::default(), &ImportChoice::default()).unwrap_err();
    assert!(matches!(err, ConfigError::Import { .. }), "{err}");
    assert!(err.to_string().contains("\"a__b\""), "{err}");
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_tool_asks_unless_the_user_lets_its_server_skip_the_question() {
    // server-everything's `echo` says it only reads (`readOnlyHint`).
    let f = open(calls("everything", "echo", r#"{"message": "hi"}"#, 2), &[mcp_common::everything_stdio("everything")])
        .await;
    let conversation = &f.conversation;
    let echo = |app: &App| app.list_tools(Some("everything")).unwrap().into_iter().find(|t| t.name == "echo").unwrap();
    assert!(echo(&f.app).hints.contains(&"read_only"));
    assert_eq!(echo(&f.app).approval, ApprovalMode::Ask);
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::AllowOnce).await, ASKED_AND_RAN);

    let mut trusted = mcp_common::everything_stdio("everything");
    trusted.read_only_auto_allow = true;
    f.app.save_server(trusted, &Default::default()).await.unwrap();
    wait_ready(&f.app, "everything").await;
    assert_eq!(echo(&f.app).approval, ApprovalMode::Allow);
    assert_eq!(turn(&f.app, conversation, ApprovalAnswer::Deny).await, RAN_UNASKED);
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_servers_read_only_tools_ask_by_default() {
    let port = mcp_common::free_port();
    let mut cmd = tokio::process::Command::new(peers::npm_bin("mcp-server-everything"));
    cmd.arg("streamableHttp").env("PORT", port.to_string());
    let _peer = mcp_common::spawn(&mut cmd, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");
    let remote =
        McpServerConfig::with_transport("remote", TransportConfig::StreamableHttp { url, headers: Default::default() });
    let f = open(calls("remote", "echo", r#"{"message": "hi"}"#, 1), &[remote]).await;
    assert_eq!(turn(&f.app, &f.conversation, ApprovalAnswer::AllowOnce).await, ASKED_AND_RAN);
    f.app.shutdown().await;
}
