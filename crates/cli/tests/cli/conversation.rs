//! `patchbay conversation …` and `patchbay ask` without a provider, against a real data directory.

use patchbay_core::conversations::{AssistantWriter, ConversationStore, MessageStatus};

use crate::common::{ok, patchbay, store};

/// Writes one conversation the way a turn does.
fn seed(dir: &std::path::Path, question: &str, answer: &str) -> i64 {
    let conv = ConversationStore::new(store(dir));
    let c = conv.create(question, None, None).unwrap();
    let user = conv.add_user_message(c.id, None, question, &[]).unwrap();
    let mut w = AssistantWriter::start(&conv, c.id, user, "openai", "gpt-test").unwrap();
    w.push_text(0, answer);
    w.finish(MessageStatus::Complete, None).unwrap();
    c.id
}

#[test]
fn list_search_show_export_rename_delete_fork() {
    let tmp = tempfile::tempdir().unwrap();
    let en = seed(tmp.path(), "How do I bake bread?", "Flour, water, salt and time.");
    let zh = seed(tmp.path(), "上海明天会下雨吗？", "上海明天多云转小雨。");

    let list = ok(&patchbay(tmp.path(), &["conversation", "list"]));
    assert!(list.contains("How do I bake bread?") && list.contains("上海明天会下雨吗？"), "{list}");
    let titles =
        |list: &str| list.lines().map(|l| l.trim_start().split_once("  ").unwrap().1.to_owned()).collect::<Vec<_>>();
    assert_eq!(titles(&list), ["上海明天会下雨吗？", "How do I bake bread?"], "newest first");
    // Pinned, the older one leads; unpinned, it takes its place by date again.
    ok(&patchbay(tmp.path(), &["conversation", "pin", &en.to_string()]));
    let list = ok(&patchbay(tmp.path(), &["conversation", "list"]));
    assert_eq!(titles(&list), ["📌 How do I bake bread?", "上海明天会下雨吗？"]);
    ok(&patchbay(tmp.path(), &["conversation", "unpin", &en.to_string()]));
    let list = ok(&patchbay(tmp.path(), &["conversation", "list"]));
    assert_eq!(titles(&list), ["上海明天会下雨吗？", "How do I bake bread?"], "pinning is not activity");
    let missing = patchbay(tmp.path(), &["conversation", "pin", "999"]);
    assert!(
        !missing.status.success() && String::from_utf8_lossy(&missing.stderr).contains("no conversation with id 999")
    );

    let found = ok(&patchbay(tmp.path(), &["conversation", "search", "明天多云"]));
    assert!(found.contains(&zh.to_string()) && found.contains("[明天多云]"), "{found}");
    assert!(!found.contains("bread"), "{found}");

    let shown = ok(&patchbay(tmp.path(), &["conversation", "show", &en.to_string()]));
    assert!(shown.starts_with("# How do I bake bread?") && shown.contains("Flour, water, salt and time."), "{shown}");

    let file = tmp.path().join("export.json");
    ok(&patchbay(
        tmp.path(),
        &["conversation", "export", &zh.to_string(), "--format", "json", "--output", file.to_str().unwrap()],
    ));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(json["messages"][1]["text"], "上海明天多云转小雨。");

    // Message ids, a fork from the question, and the answer deleted there.
    let lines = ok(&patchbay(tmp.path(), &["conversation", "messages", &en.to_string()]));
    let ids: Vec<&str> = lines.lines().map(|l| l.split_whitespace().next().unwrap()).collect();
    assert_eq!(
        lines.lines().nth(1).map(|l| l.ends_with("assistant  Flour, water, salt and time.")),
        Some(true),
        "{lines}"
    );
    let forked = ok(&patchbay(tmp.path(), &["conversation", "fork", &en.to_string(), ids[1]]));
    let fork = forked.strip_prefix("carried on in conversation ").and_then(|r| r.split_once(' ')).unwrap().0.to_owned();
    let in_fork = ok(&patchbay(tmp.path(), &["conversation", "messages", &fork]));
    assert_eq!(in_fork.lines().count(), 2, "{in_fork}");
    let answer = in_fork.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    let deleted = ok(&patchbay(tmp.path(), &["conversation", "delete-message", &fork, &answer]));
    assert!(deleted.starts_with("deleted; the branch shown ends at message "), "{deleted}");
    assert_eq!(ok(&patchbay(tmp.path(), &["conversation", "messages", &fork])).lines().count(), 1);
    assert_eq!(ok(&patchbay(tmp.path(), &["conversation", "messages", &en.to_string()])).lines().count(), 2);
    ok(&patchbay(tmp.path(), &["conversation", "delete", &fork]));

    ok(&patchbay(tmp.path(), &["conversation", "rename", &en.to_string(), "Bread"]));
    ok(&patchbay(tmp.path(), &["conversation", "delete", &zh.to_string()]));
    let list = ok(&patchbay(tmp.path(), &["conversation", "list"]));
    assert!(list.contains("Bread") && !list.contains("上海"), "{list}");

    let missing = patchbay(tmp.path(), &["conversation", "show", "999"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no conversation with id 999"));
}

#[test]
fn ask_without_any_provider_says_how_to_add_one() {
    let tmp = tempfile::tempdir().unwrap();
    let out = patchbay(tmp.path(), &["ask", "hello"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no model provider is configured") && err.contains("OPENAI_API_KEY"), "{err}");
}

#[test]
fn a_backup_restores_every_conversation_and_keeps_the_database_it_replaces() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    seed(&data, "Kept in the backup", "Yes.");
    let file = tmp.path().join("backup.db");
    let out = ok(&patchbay(&data, &["backup", file.to_str().unwrap()]));
    assert!(out.contains("backed up to") && out.contains("keyring"), "{out}");
    let again = patchbay(&data, &["backup", file.to_str().unwrap()]);
    assert!(!again.status.success() && String::from_utf8_lossy(&again.stderr).contains("a file is already there"));

    seed(&data, "Written after the backup", "Lost on restore, kept aside.");
    let out = ok(&patchbay(&data, &["restore", file.to_str().unwrap()]));
    assert!(out.contains("restored") && out.contains("1 conversations"), "{out}");
    let listed = ok(&patchbay(&data, &["conversation", "list"]));
    assert!(listed.contains("Kept in the backup") && !listed.contains("Written after"), "{listed}");
    let kept = std::fs::read_dir(&data)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find(|n| n.starts_with("patchbay.db.before-restore-") && !n.contains("-wal") && !n.contains("-shm"))
        .expect("the replaced database is kept");
    let old = ConversationStore::new(store(&tmp.path().join("old")));
    drop(old);
    std::fs::copy(data.join(&kept), tmp.path().join("old").join("patchbay.db")).unwrap();
    let listed = ok(&patchbay(&tmp.path().join("old"), &["conversation", "list"]));
    assert!(listed.contains("Written after the backup"), "the replaced database still holds it: {listed}");

    // Not a backup: refused, with the reason, and nothing changes.
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "just some notes, not a database, long enough for a header").unwrap();
    let refused = patchbay(&data, &["restore", text.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a usable Patchbay database"), "{refused:?}");
    assert!(ok(&patchbay(&data, &["conversation", "list"])).contains("Kept in the backup"));
}

/// `ARK_API_KEY` alone names no model (Ark has no default): `ask` says which
/// setting is missing; with `ARK_MODEL` it asks that model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ark_from_the_environment_says_which_model_setting_is_missing_or_uses_ark_model() {
    use patchbay_test_support::scripted::{Format, ScriptedServer, openai};
    let tmp = tempfile::tempdir().unwrap();
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["Hi from Ark."])]).await.unwrap();
    let ark = |model_var: Option<&str>| {
        let mut cmd = crate::common::command(tmp.path());
        cmd.args(["ask", "--no-tools", "hello"])
            .env("ARK_API_KEY", "ark-test")
            .env("ARK_BASE_URL", format!("{}/api/v3", model.url()))
            .env_remove("ARK_MODEL");
        if let Some(m) = model_var {
            cmd.env("ARK_MODEL", m);
        }
        cmd.output().unwrap()
    };
    let out = ark(None);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ARK_API_KEY is set but no model is") && err.contains("set ARK_MODEL"), "{err}");
    assert!(model.requests().is_empty(), "nothing was sent");
    let out = ok(&ark(Some("doubao-seed-1-6-250615")));
    assert!(out.contains("Hi from Ark."), "{out}");
    assert_eq!(model.requests()[0].body["model"], "doubao-seed-1-6-250615");
}
