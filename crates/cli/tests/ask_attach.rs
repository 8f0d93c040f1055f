//! `patchbay ask --attach FILE`: a picture and a text file reach the scripted
//! OpenAI-compatible model as an image part and as text under the file's name;
//! a file that is neither is refused before anything is sent.

use std::path::Path;
use std::process::Output;

use patchbay_test_support::scripted::{Format, ScriptedServer, openai};

async fn ask(dir: &Path, model: &ScriptedServer, files: &[&Path]) -> Output {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchbay"));
    command.arg("--data-dir").arg(dir).arg("ask").args(["--no-tools", "--kb", "off", "--model", "scripted"]);
    for file in files {
        command.arg("--attach").arg(file);
    }
    command
        .arg("What is in these?")
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_BASE_URL", format!("{}/v1", model.url()))
        .env_remove("ARK_API_KEY")
        .output()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attached_files_reach_the_model_and_a_binary_file_is_refused() {
    let data = tempfile::tempdir().unwrap();
    let files = tempfile::tempdir().unwrap();
    let png = files.path().join("dot.png");
    std::fs::write(&png, b"\x89PNG").unwrap();
    let notes = files.path().join("notes.md");
    std::fs::write(&notes, "squares are red").unwrap();
    let archive = files.path().join("backup.zip");
    std::fs::write(&archive, b"PK\x03\x04\0\0\xff").unwrap();
    let model = ScriptedServer::start(Format::OpenAi, vec![openai::text_reply(&["A dot and a note."])]).await.unwrap();

    let out = ask(data.path(), &model, &[&png, &notes]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("A dot and a note."));
    let body = &model.requests()[0].body;
    let user = body["messages"].as_array().unwrap().iter().find(|m| m["role"] == "user").expect("a user message");
    let parts = user["content"].as_array().expect("content parts");
    assert_eq!(parts[0]["text"], "What is in these?");
    assert_eq!(parts[1]["image_url"]["url"], "data:image/png;base64,iVBORw==");
    assert_eq!(parts[2]["text"], "<attachment title=\"notes.md\">\nsquares are red\n</attachment>");

    let out = ask(data.path(), &model, &[&notes, &archive]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("backup.zip is not a text file"), "{stderr}");
    assert_eq!(model.requests().len(), 1, "nothing was sent with a refused file");
}
