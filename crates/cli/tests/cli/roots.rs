//! `patchbay roots list | add | remove`: the folders shared with MCP servers,
//! and the roots a server started by the CLI sees (server-everything's
//! `get-roots-list`).

use std::process::Output;

use patchbay_core::mcp::McpRoot;

use crate::common::{everything, ok, patchbay, seed_servers};

/// The lines a run that must have succeeded printed.
fn lines(out: &Output) -> Vec<String> {
    ok(out).lines().map(str::to_owned).collect()
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
    let mut sharing = everything("everything");
    sharing.share_roots = true;
    seed_servers(&data, &[sharing]);
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
