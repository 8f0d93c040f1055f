//! `patchbay roots list | add | remove`: the folders shared with MCP servers,
//! and the roots a server started by the CLI sees (server-everything's
//! `get-roots-list`).

use std::path::Path;
use std::process::{Command, Output};

use patchbay_core::config::{ConfigStore, McpServerConfig};
use patchbay_core::mcp::McpRoot;
use patchbay_core::paths::DataDir;
use patchbay_core::store::Store;
use patchbay_test_support::peers;

fn patchbay(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_patchbay")).arg("--data-dir").arg(dir).args(args).output().expect("run patchbay")
}

fn lines(out: &Output) -> Vec<String> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn shared_folders_are_listed_with_the_knowledge_base_and_reach_servers() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let shared = tmp.path().join("project");
    std::fs::create_dir(&shared).unwrap();
    let shared = shared.canonicalize().unwrap();
    let kb = tmp.path().join("notes");
    std::fs::create_dir(&kb).unwrap();
    let kb = kb.canonicalize().unwrap();

    assert_eq!(lines(&patchbay(&data, &["kb", "add", kb.to_str().unwrap()])).len(), 1);
    assert_eq!(
        lines(&patchbay(&data, &["roots", "add", shared.to_str().unwrap()])),
        vec![shared.display().to_string()]
    );
    let listed = lines(&patchbay(&data, &["roots", "list"]));
    // The knowledge-base folders (the samples, then notes) come first, the shared folder last.
    assert_eq!(listed.last(), Some(&shared.display().to_string()), "{listed:?}");
    assert!(listed.contains(&kb.display().to_string()), "{listed:?}");
    assert!(listed.len() >= 3, "{listed:?}");

    let twice = patchbay(&data, &["roots", "add", shared.to_str().unwrap()]);
    assert!(!twice.status.success());
    assert!(String::from_utf8_lossy(&twice.stderr).contains("is shared already"));

    // A server the CLI starts sees them.
    let store = Store::open(&DataDir::resolve(Some(data.clone())).unwrap()).unwrap();
    let mut everything =
        McpServerConfig::stdio("everything", peers::npm_bin("mcp-server-everything").to_str().unwrap(), &["stdio"]);
    everything.share_roots = true;
    ConfigStore::new(store).replace_servers(&[everything]).unwrap();
    let roots = lines(&patchbay(&data, &["mcp", "call", "everything", "get-roots-list"])).join("\n");
    assert!(roots.contains(&McpRoot::from_path(&shared).uri), "{roots}");
    assert!(roots.contains(&McpRoot::from_path(&kb).uri), "{roots}");

    lines(&patchbay(&data, &["roots", "remove", shared.to_str().unwrap()]));
    let listed = lines(&patchbay(&data, &["roots", "list"]));
    assert!(!listed.contains(&shared.display().to_string()), "{listed:?}");
    assert!(listed.contains(&kb.display().to_string()), "{listed:?}");

    let missing = patchbay(&data, &["roots", "add", tmp.path().join("nope").to_str().unwrap()]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("does not exist"));
}
