//! MCP bundles installed through the app services: a Python bundle (the
//! manifest the MCPB spec describes, a server on the real `mcp` 2.x SDK) is
//! unpacked, its settings reach the running server (the sensitive one through
//! the secret store), an update keeps the secret and the policies, its
//! settings change later in its form, and deleting the server deletes its
//! folder. What is installed is the bundle previewed, signed by whom the
//! preview said, even when its file is swapped in between. At strict, a
//! bundle runs in its sandbox with the folders its settings name.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use patchbay_core::app::{App, AppError, AppEvents, ErrorKind};
use patchbay_core::bundle::{BundleInfo, BundleValues, Signature, installed_signature, installed_version};
use patchbay_core::config::{ApprovalMode, SecurityLevel, TransportConfig, ValueSource};
use patchbay_core::llm::ContentPart;
use patchbay_core::mcp::LoginEnv;
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{MemoryStore, SecretStore};
use patchbay_core::store::Store;
use patchbay_test_support::peers;
use patchbay_test_support::signing::{openssl, sign};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const SERVER: &str = r#"
import json, os, sys
from mcp.server.mcpserver import MCPServer

app = MCPServer("notes")

@app.tool()
def write(folder: str, text: str) -> str:
    """Writes text to note.txt in the folder."""
    try:
        with open(os.path.join(folder, "note.txt"), "w") as f:
            f.write(text)
        return "written"
    except OSError as e:
        return "refused: " + e.strerror

@app.tool()
def settings() -> str:
    """What this server was started with."""
    return json.dumps({
        "args": sys.argv[1:],
        "token": os.environ.get("NOTES_TOKEN"),
        "greeting": os.environ.get("NOTES_GREETING"),
        "cwd": os.getcwd(),
    })

app.run()
"#;

fn manifest(version: &str) -> String {
    json!({
        "manifest_version": "0.3",
        "name": "notes",
        "display_name": "Notes",
        "version": version,
        "description": "Reads notes from folders.",
        "author": {"name": "Patchbay tests"},
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python",
                "args": ["${__dirname}/server/main.py", "${user_config.folders}"],
                "env": {"NOTES_TOKEN": "${user_config.token}", "NOTES_GREETING": "${user_config.greeting}"}
            }
        },
        "tools": [
            {"name": "settings", "description": "What this server was started with."},
            {"name": "write", "description": "Writes text to note.txt in the folder."}
        ],
        "user_config": {
            "token": {"type": "string", "title": "Token", "sensitive": true, "required": true},
            "folders": {"type": "directory", "title": "Folders", "multiple": true, "required": true},
            "greeting": {"type": "string", "title": "Greeting", "default": "hello from ${HOME}"}
        }
    })
    .to_string()
}

fn write_bundle(path: &Path, version: &str) {
    write_bundle_with(path, version, &[]);
}

/// A bundle with `extra` entries (name, contents) after its own.
fn write_bundle_with(path: &Path, version: &str, extra: &[(&str, &str)]) {
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("manifest.json", options).unwrap();
    zip.write_all(manifest(version).as_bytes()).unwrap();
    zip.start_file("server/main.py", options).unwrap();
    zip.write_all(SERVER.as_bytes()).unwrap();
    for (name, contents) in extra {
        zip.start_file(*name, options).unwrap();
        zip.write_all(contents.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

/// The preview id and the signer's fingerprint `info` shows: what an install is given.
fn shown(info: &BundleInfo) -> (&str, Option<&str>) {
    (info.preview_id.as_deref().unwrap(), info.signature.signer().map(|s| s.fingerprint.as_str()))
}

/// Previews `file` and installs what the preview showed, as the install form does.
async fn install(app: &App, file: &Path, values: &BundleValues) -> Result<String, AppError> {
    let info = app.bundle_preview(file, "en-US")?;
    let (id, signer) = shown(&info);
    app.install_bundle(id, signer, values).await
}

struct Fixture {
    app: App,
    secrets: Arc<MemoryStore>,
    data: PathBuf,
    dir: tempfile::TempDir,
}

fn open() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let store = Store::open(&DataDir::new(&data)).unwrap();
    let secrets = Arc::new(MemoryStore::default());
    // `python` is the peers' venv, which has the `mcp` SDK.
    let venv_bin = peers::python().parent().unwrap().display().to_string();
    let env =
        LoginEnv::from_parts(std::env::vars_os().collect::<BTreeMap<OsString, OsString>>(), Some(&venv_bin), None);
    let app = App::open(DataDir::new(&data), store, secrets.clone(), AppEvents::unwatched())
        .unwrap()
        .with_env(|_| None)
        .with_login_env(env);
    app.start().unwrap();
    Fixture { app, secrets, data, dir }
}

async fn wait_ready(app: &App, name: &str) {
    for _ in 0..600 {
        let servers = app.list_servers().unwrap();
        if servers.iter().any(|s| s.config.name == name && s.status.state == "ready") {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} did not become ready: {:?}", app.list_servers().unwrap());
}

async fn started_with(app: &App) -> Value {
    let result = app.call_tool("notes", "settings", json!({}), None, CancellationToken::new()).await.unwrap();
    let Some(ContentPart::Text { text }) = result.content.first() else { panic!("text: {result:?}") };
    serde_json::from_str(text).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_installs_runs_with_its_settings_updates_and_is_deleted_with_its_server() {
    let f = open();
    let file = f.dir.path().join("notes-1.0.0.mcpb");
    write_bundle(&file, "1.0.0");
    let folders = [f.dir.path().join("a"), f.dir.path().join("b c")];

    let info = f.app.bundle_preview(&file, "en-US").unwrap();
    assert_eq!((info.server_name.as_str(), info.title.as_str(), info.version.as_str()), ("notes", "Notes", "1.0.0"));
    assert_eq!(info.installed_version, None);
    let home = dirs::home_dir().unwrap().display().to_string();
    let greeting = info.settings.iter().find(|s| s.key == "greeting").unwrap();
    assert_eq!(greeting.default, Some(json!(format!("hello from {home}"))));

    // A required setting left out: refused, and nothing is unpacked.
    let missing: BundleValues = BTreeMap::from([("token".into(), json!("tok-1"))]);
    let (id, signer) = shown(&info);
    let error = f.app.install_bundle(id, signer, &missing).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(error.to_string(), "Folders (user_config.folders): required; the server cannot start without it");
    assert!(!f.data.join("extensions").exists());

    let values: BundleValues = BTreeMap::from([
        ("token".into(), json!("tok-1")),
        ("folders".into(), json!(folders.iter().map(|p| p.display().to_string()).collect::<Vec<_>>())),
    ]);
    assert_eq!(f.app.install_bundle(id, signer, &values).await.unwrap(), "notes");
    let folder = f.data.join("extensions/notes");
    assert!(folder.join("server/main.py").is_file());
    wait_ready(&f.app, "notes").await;
    let started = started_with(&f.app).await;
    assert_eq!(started["args"], json!([folders[0].display().to_string(), folders[1].display().to_string()]));
    assert_eq!(started["token"], "tok-1");
    assert_eq!(started["greeting"], json!(format!("hello from {home}")));
    assert_eq!(Path::new(started["cwd"].as_str().unwrap()).canonicalize().unwrap(), folder.canonicalize().unwrap());

    // The token is in the secret store, the entry names it.
    let config = f.app.list_servers().unwrap().into_iter().find(|s| s.config.name == "notes").unwrap().config;
    let TransportConfig::Stdio { env, .. } = &config.transport else { panic!("stdio: {config:?}") };
    assert_eq!(env["NOTES_TOKEN"], ValueSource::Secret("mcp/notes/NOTES_TOKEN".into()));
    assert_eq!(f.secrets.get("mcp/notes/NOTES_TOKEN").unwrap().as_deref(), Some("tok-1"));
    f.app.set_tool_approval("notes", "settings", ApprovalMode::Allow).unwrap();

    // Version 2: the token left empty is kept, the policy too.
    let file2 = f.dir.path().join("notes-2.0.0.mcpb");
    write_bundle(&file2, "2.0.0");
    let info = f.app.bundle_preview(&file2, "en-US").unwrap();
    assert_eq!(info.installed_version.as_deref(), Some("1.0.0"));
    assert!(info.settings.iter().find(|s| s.key == "token").unwrap().kept);
    let update: BundleValues = BTreeMap::from([
        ("folders".into(), json!([folders[1].display().to_string()])),
        ("greeting".into(), json!("hi")),
    ]);
    let (id, signer) = shown(&info);
    f.app.install_bundle(id, signer, &update).await.unwrap();
    wait_ready(&f.app, "notes").await;
    let started = started_with(&f.app).await;
    assert_eq!(started["args"], json!([folders[1].display().to_string()]));
    assert_eq!((started["token"].as_str(), started["greeting"].as_str()), (Some("tok-1"), Some("hi")));
    let tool = f.app.list_tools(Some("notes")).unwrap().into_iter().find(|t| t.name == "settings").unwrap();
    assert_eq!(tool.approval, ApprovalMode::Allow);
    assert_eq!(installed_version(&folder).as_deref(), Some("2.0.0"));

    f.app.delete_server("notes").await.unwrap();
    assert!(!folder.exists(), "the bundle's folder goes with its server");
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_installed_bundles_settings_change_in_its_form_filled_in_with_the_values_it_has() {
    let f = open();
    let file = f.dir.path().join("notes-1.0.0.mcpb");
    write_bundle(&file, "1.0.0");
    let (a, b) = (f.dir.path().join("a").display().to_string(), f.dir.path().join("b").display().to_string());
    let values: BundleValues = BTreeMap::from([
        ("token".into(), json!("tok-1")),
        ("folders".into(), json!([a])),
        ("greeting".into(), json!("hi")),
    ]);
    install(&f.app, &file, &values).await.unwrap();
    wait_ready(&f.app, "notes").await;
    f.app.set_tool_approval("notes", "settings", ApprovalMode::Allow).unwrap();
    let listed = f.app.list_servers().unwrap();
    assert!(listed.iter().any(|s| s.config.name == "notes" && s.bundle), "{listed:?}");

    // The form again: each value as given, the secret kept, never shown or written beside the files.
    let form = f.app.bundle_settings("notes", "en-US").unwrap();
    let setting = |info: &patchbay_core::bundle::BundleInfo, key: &str| {
        info.settings.iter().find(|s| s.key == key).cloned().unwrap()
    };
    assert_eq!(setting(&form, "folders").value, Some(json!([a])));
    assert_eq!(setting(&form, "greeting").value, Some(json!("hi")));
    let token = setting(&form, "token");
    assert!(token.kept && token.value.is_none(), "{token:?}");
    let folder = f.data.join("extensions/notes");
    let kept_beside = std::fs::read_to_string(folder.join(".patchbay-settings.json")).unwrap();
    assert!(!kept_beside.contains("tok-1"), "{kept_beside}");

    // New values: the server restarts with them; the secret left empty and the policy stay.
    let changed: BundleValues = BTreeMap::from([("folders".into(), json!([b])), ("greeting".into(), json!("hey"))]);
    f.app.configure_bundle("notes", &changed).await.unwrap();
    wait_ready(&f.app, "notes").await;
    let started = started_with(&f.app).await;
    assert_eq!(started["args"], json!([b]));
    assert_eq!((started["token"].as_str(), started["greeting"].as_str()), (Some("tok-1"), Some("hey")));
    let tool = f.app.list_tools(Some("notes")).unwrap().into_iter().find(|t| t.name == "settings").unwrap();
    assert_eq!(tool.approval, ApprovalMode::Allow);
    assert_eq!(setting(&f.app.bundle_settings("notes", "en-US").unwrap(), "folders").value, Some(json!([b])));
    // An update's form starts from them too.
    let file2 = f.dir.path().join("notes-2.0.0.mcpb");
    write_bundle(&file2, "2.0.0");
    assert_eq!(setting(&f.app.bundle_preview(&file2, "en-US").unwrap(), "greeting").value, Some(json!("hey")));

    // A wrong value changes nothing.
    let wrong: BundleValues = BTreeMap::from([("greeting".into(), json!("no folders"))]);
    let error = f.app.configure_bundle("notes", &wrong).await.unwrap_err();
    assert_eq!(error.to_string(), "Folders (user_config.folders): required; the server cannot start without it");
    assert_eq!(started_with(&f.app).await["greeting"], "hey");
    assert_eq!(setting(&f.app.bundle_settings("notes", "en-US").unwrap(), "greeting").value, Some(json!("hey")));

    // A server no bundle installed has no bundle form.
    f.app
        .save_server(patchbay_core::config::McpServerConfig::stdio("plain", "true", &[]), &BTreeMap::new())
        .await
        .unwrap();
    let error = f.app.bundle_settings("plain", "en-US").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(error.to_string(), "the server \"plain\" was not installed from a bundle");
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_never_replaces_a_server_it_did_not_install() {
    let f = open();
    let server = patchbay_core::config::McpServerConfig::stdio("notes", "true", &[]);
    let mut disabled = server.clone();
    disabled.enabled = false;
    f.app.save_server(disabled, &BTreeMap::new()).await.unwrap();
    let file = f.dir.path().join("notes.mcpb");
    write_bundle(&file, "1.0.0");
    let error = f.app.bundle_preview(&file, "en-US").unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(error.to_string().contains("a server named \"notes\" already exists and was not installed from a bundle"));
    let values: BundleValues = BTreeMap::from([("token".into(), json!("t")), ("folders".into(), json!(["/tmp"]))]);
    assert!(install(&f.app, &file, &values).await.is_err());
    assert!(!f.data.join("extensions").exists());
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_that_cannot_be_unpacked_leaves_the_installed_version_running() {
    let f = open();
    let file = f.dir.path().join("notes-1.0.0.mcpb");
    write_bundle(&file, "1.0.0");
    let folder = f.dir.path().join("notes-folder");
    let values: BundleValues =
        BTreeMap::from([("token".into(), json!("tok-1")), ("folders".into(), json!([folder.display().to_string()]))]);
    install(&f.app, &file, &values).await.unwrap();
    wait_ready(&f.app, "notes").await;

    let broken = f.dir.path().join("notes-2.0.0.mcpb");
    write_bundle_with(&broken, "2.0.0", &[("../../escape.py", "print('out')")]);
    let again: BundleValues = BTreeMap::from([("folders".into(), json!([folder.display().to_string()]))]);
    let error = install(&f.app, &broken, &again).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert!(error.to_string().contains("\"../../escape.py\" is not unpacked"), "{error}");
    let installed = f.data.join("extensions/notes");
    assert_eq!(installed_version(&installed).as_deref(), Some("1.0.0"));
    assert!(!f.data.join("escape.py").exists() && !f.data.join("extensions/escape.py").exists());
    wait_ready(&f.app, "notes").await;
    assert_eq!(started_with(&f.app).await["token"], "tok-1");
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_is_shown_in_the_users_language_where_it_has_one() {
    let f = open();
    let file = f.dir.path().join("notes-zh.mcpb");
    let chinese = json!({
        "display_name": "笔记",
        "description": "从文件夹读取笔记。",
        "author": {"name": "Patchbay 测试"},
        "tools": [{"name": "settings", "description": "服务器的启动设置。"}, {"name": "not_declared", "description": "不显示"}]
    });
    write_bundle_with(&file, "1.0.0", &[("mcpb-resources/zh-Hans.json", &chinese.to_string())]);

    let info = f.app.bundle_preview(&file, "zh-CN").unwrap();
    assert_eq!(
        (info.title.as_str(), info.description.as_str(), info.author.as_str()),
        ("笔记", "从文件夹读取笔记。", "Patchbay 测试")
    );
    assert_eq!(info.tools.len(), 2, "a tool only the locale file names is not added");
    assert!(info.tools.iter().all(|t| t.name != "not_declared"), "{:?}", info.tools);
    assert_eq!(info.tools[0].description.as_deref(), Some("服务器的启动设置。"));
    let english = f.app.bundle_preview(&file, "en-US").unwrap();
    assert_eq!((english.title.as_str(), english.description.as_str()), ("Notes", "Reads notes from folders."));
    let french = f.app.bundle_preview(&file, "fr-FR").unwrap();
    assert_eq!(french.title, "Notes", "no French file: the manifest's words");

    // Installed, its settings form is in the user's language too (read from its folder).
    let values: BundleValues = BTreeMap::from([("token".into(), json!("t")), ("folders".into(), json!(["/tmp"]))]);
    install(&f.app, &file, &values).await.unwrap();
    let form = f.app.bundle_settings("notes", "zh-CN").unwrap();
    assert_eq!((form.title.as_str(), form.author.as_str()), ("笔记", "Patchbay 测试"));
    assert_eq!(form.settings.iter().find(|s| s.key == "folders").unwrap().value, Some(json!(["/tmp"])));
    f.app.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bundle_previewed_is_installed_whatever_becomes_of_its_file() {
    let f = open();
    let certs = f.dir.path();
    openssl(certs, "req -x509 -newkey rsa:2048 -nodes -keyout me.key -out me.pem -days 30 -subj /CN=Me");
    let file = f.dir.path().join("notes.mcpb");
    write_bundle(&file, "1.0.0");
    sign(certs, &file, "me.pem", "me.key", None);
    let info = f.app.bundle_preview(&file, "en-US").unwrap();
    let Signature::SelfSigned { signer } = &info.signature else { panic!("self-signed: {:?}", info.signature) };
    let id = info.preview_id.as_deref().unwrap();

    // After the preview, the file is swapped for another: unsigned, with more in it.
    write_bundle_with(&file, "6.6.6", &[("evil.txt", "owned")]);
    let values: BundleValues = BTreeMap::from([("token".into(), json!("t")), ("folders".into(), json!(["/tmp"]))]);

    // An install told of another signer than the preview's is refused.
    let error = f.app.install_bundle(id, None, &values).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::InvalidInput);
    assert_eq!(
        error.to_string(),
        format!(
            "notes is not installed: its preview showed it unsigned, but it is signed with certificate {}",
            signer.fingerprint
        )
    );
    assert!(!f.data.join("extensions").exists());

    // Told what the preview showed, it installs the bundle previewed, recorded as signed by that certificate.
    assert_eq!(f.app.install_bundle(id, Some(&signer.fingerprint), &values).await.unwrap(), "notes");
    let folder = f.data.join("extensions/notes");
    assert_eq!(installed_version(&folder).as_deref(), Some("1.0.0"));
    assert!(!folder.join("evil.txt").exists());
    assert_eq!(installed_signature(&folder).as_ref(), Some(&info.signature));

    // Its private copy went with the install, and so did its preview.
    let copies = std::fs::read_dir(f.data.join("opened-bundles")).unwrap().count();
    assert_eq!(copies, 0, "no copy is left");
    let error = f.app.install_bundle(id, Some(&signer.fingerprint), &values).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound);
    f.app.shutdown().await;
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bundle_at_strict_writes_the_folders_its_settings_name_and_nothing_else() {
    let f = open();
    let file = f.dir.path().join("notes.mcpb");
    write_bundle(&file, "1.0.0");
    let (mine, other) = (f.dir.path().join("mine"), f.dir.path().join("other"));
    for folder in [&mine, &other] {
        std::fs::create_dir_all(folder).unwrap();
    }
    let values: BundleValues =
        BTreeMap::from([("token".into(), json!("tok-1")), ("folders".into(), json!([mine.display().to_string()]))]);
    install(&f.app, &file, &values).await.unwrap();
    let mut config = f.app.list_servers().unwrap().into_iter().find(|s| s.config.name == "notes").unwrap().config;
    config.policy.level = Some(SecurityLevel::Strict);
    f.app.save_server(config, &BTreeMap::new()).await.unwrap();
    wait_ready(&f.app, "notes").await;
    let doctor = f.app.server_doctor("notes").await.unwrap();
    let policy = doctor.policy.expect("the doctor names the policy").to_string();
    let script = f.data.join("extensions/notes/server/main.py").canonicalize().unwrap();
    assert!(policy.starts_with("strict: ") && policy.contains(&format!("writes {} ·", mine.display())), "{policy}");
    assert!(policy.contains(&script.display().to_string()), "its code is readable: {policy}");

    let write = |folder: &Path| {
        let args = json!({"folder": folder.display().to_string(), "text": "from the bundle"});
        let app = &f.app;
        async move {
            let result = app.call_tool("notes", "write", args, None, CancellationToken::new()).await.unwrap();
            let Some(ContentPart::Text { text }) = result.content.first() else { panic!("text: {result:?}") };
            text.clone()
        }
    };
    assert_eq!(write(&mine).await, "written");
    assert_eq!(std::fs::read_to_string(mine.join("note.txt")).unwrap(), "from the bundle");
    let refused = write(&other).await;
    assert!(refused.starts_with("refused: "), "{refused}");
    assert!(!other.join("note.txt").exists());
}
