//! A proxy's login (`user:password@` in its URL) is a secret: saved through
//! the settings page it goes to the keyring, never into the database or a
//! backup, and errors show the URL with `***` instead; the proxy still gets
//! it as `Proxy-Authorization`. A login an older version kept in the database
//! moves to the keyring at the next start, and its bytes leave the file. The
//! proxy is process-wide, so this file holds one test.

mod common;

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use common::{run, sample_request};
use patchbay_core::app::views::GeneralSettings;
use patchbay_core::app::{App, AppEvents};
use patchbay_core::config::ProviderProfile;
use patchbay_core::llm;
use patchbay_core::net::{self, ProxyChoice};
use patchbay_core::paths::DataDir;
use patchbay_core::secrets::{MemoryStore, SecretStore};
use patchbay_core::store::Store;
use patchbay_test_support::proxy::RecordingProxy;
use patchbay_test_support::scripted::{Format, ScriptedServer, openai};

const USER: &str = "patchbay-user";
const PASSWORD: &str = "hunter2-s3cret";

fn open_app(data: &Path, secrets: Arc<MemoryStore>) -> App {
    let store = Store::open(&DataDir::new(data)).unwrap();
    App::open(DataDir::new(data), store, secrets, AppEvents::unwatched()).unwrap()
}

fn custom(url: String) -> ProxyChoice {
    ProxyChoice::Custom { url }
}

/// Fails when a file under `dir` (the database, its WAL, a backup) holds the user or the password.
fn assert_no_login_in(dir: &Path) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_no_login_in(&path);
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        for secret in [USER, PASSWORD] {
            let found = bytes.windows(secret.len()).any(|w| w == secret.as_bytes());
            assert!(!found, "{} holds {secret:?}", path.display());
        }
    }
}

/// One chat through the installed proxy; the text, or the error's message.
async fn chat() -> Result<String, String> {
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["through ", "the proxy"])]);
    let model = model.await.unwrap();
    let profile = ProviderProfile::openai_compatible("scripted", format!("{}/v1", model.url()), "m");
    let provider = llm::from_profile(&profile, &MemoryStore::new()).unwrap();
    match run(provider.as_ref(), sample_request("m")).await {
        (_, Some(error)) => Err(error.to_string()),
        (summary, None) => Ok(summary.text),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_proxy_login_stays_in_the_keyring_and_out_of_messages() {
    let proxy = RecordingProxy::start().await.unwrap();
    let port = proxy.url().rsplit(':').next().unwrap().to_owned();
    let with_login = custom(format!("http://{USER}:{PASSWORD}@127.0.0.1:{port}"));
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let secrets = Arc::new(MemoryStore::new());
    let app = open_app(&data, secrets.clone());

    // Saved through the settings page: shown back to the page, used.
    let settings = GeneralSettings { proxy: with_login.clone(), ..app.get_settings().unwrap() };
    app.save_settings(&settings).unwrap();
    assert_eq!(app.get_settings().unwrap().proxy, with_login);
    assert_eq!(chat().await.unwrap(), "through the proxy");
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    assert_eq!(proxy.authorizations().last(), Some(&Some(format!("Basic {basic}"))));

    // Neither the database nor a backup holds it, the keyring does; `Debug` does not show it.
    app.backup(&dir.path().join("backup.db"), false).unwrap();
    assert_no_login_in(dir.path());
    assert_eq!(secrets.get("net/proxy/login").unwrap(), Some(format!("{USER}:{PASSWORD}")));
    let shown = format!("{:?} {:?}", app.get_settings().unwrap(), net::proxy());
    assert!(!shown.contains(PASSWORD) && !shown.contains(USER) && shown.contains("***@127.0.0.1"), "{shown}");

    // Errors show the URL redacted: a refused URL, and an unreachable proxy.
    let refused =
        GeneralSettings { proxy: custom(format!("ftp://{USER}:{PASSWORD}@127.0.0.1:21")), ..settings.clone() };
    let message = app.save_settings(&refused).unwrap_err().to_string();
    assert_eq!(message, "proxy \"ftp://***@127.0.0.1:21\": only http:// and https:// proxies are supported");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = custom(format!("http://{USER}:{PASSWORD}@127.0.0.1:{closed}"));
    app.save_settings(&GeneralSettings { proxy: unreachable, ..settings.clone() }).unwrap();
    let message = chat().await.unwrap_err();
    assert!(!message.contains(PASSWORD) && !message.contains(USER), "{message}");

    // Without a login, the keyring entry goes.
    app.save_settings(&GeneralSettings { proxy: custom(proxy.url()), ..settings }).unwrap();
    assert_eq!(secrets.get("net/proxy/login").unwrap(), None);
    app.shutdown().await;

    // A login an older version saved in the database moves to the keyring at the next start.
    let old = dir.path().join("old");
    Store::open(&DataDir::new(&old)).unwrap().set_setting("net.proxy", &with_login).unwrap();
    let secrets = Arc::new(MemoryStore::new());
    let app = open_app(&old, secrets.clone());
    assert_eq!(secrets.get("net/proxy/login").unwrap(), Some(format!("{USER}:{PASSWORD}")));
    assert_eq!(net::proxy(), with_login, "the proxy is used with its login");
    assert_eq!(app.get_settings().unwrap().proxy, with_login);
    assert_no_login_in(&old);
    app.shutdown().await;
}
