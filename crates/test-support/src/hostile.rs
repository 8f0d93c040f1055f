//! The `hostile-mcp` binary: MCP servers that misbehave on purpose.
//!
//! Tests of other crates cannot name this crate's binaries with
//! `CARGO_BIN_EXE_*`, so [`hostile_mcp`] finds it next to the running test's
//! target directory and builds it there with cargo when it is missing.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// Path of the built `hostile-mcp` binary (see its module docs for the modes).
pub fn hostile_mcp() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        // A test executable lives in `<target>/<profile>/deps/`.
        let exe = std::env::current_exe().expect("the test knows its own path");
        let profile_dir = exe.parent().and_then(|deps| deps.parent()).expect("test binary in <target>/<profile>/deps");
        let bin = profile_dir.join(format!("hostile-mcp{}", std::env::consts::EXE_SUFFIX));
        if !bin.exists() {
            let target_dir = profile_dir.parent().expect("profile directory inside the target directory");
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut build = Command::new(cargo);
            build.args(["build", "--quiet", "-p", "patchbay-test-support", "--bin", "hostile-mcp", "--target-dir"]);
            build.arg(target_dir);
            if profile_dir.file_name().is_some_and(|p| p == "release") {
                build.arg("--release");
            }
            let status = build.status().expect("cargo runs");
            assert!(status.success(), "building hostile-mcp failed: {status}");
        }
        assert!(bin.exists(), "hostile-mcp is not at {}", bin.display());
        bin
    })
    .clone()
}

/// Writes an MCP bundle (`.mcpb`) named `poker` at `version` to `path`, whose
/// server is a copy of [`hostile_mcp`] packed without its mode bits (as
/// archives made on Windows are). Its settings: `mode` (the hostile mode,
/// default `huge-result:1`, which answers a small poke with "poked") and
/// `token` (sensitive, passed as `POKER_TOKEN`). Its strings are in Chinese
/// too (`mcpb-resources/zh-Hans.json`).
pub fn poker_bundle(path: &std::path::Path, version: &str) {
    use std::io::Write;
    let manifest = serde_json::json!({
        "manifest_version": "0.3",
        "name": "poker",
        "display_name": "Poker",
        "version": version,
        "description": "Answers pokes.",
        "author": {"name": "Patchbay tests"},
        "server": {
            "type": "binary",
            "entry_point": "server/poker",
            "mcp_config": {"command": "${__dirname}/server/poker", "args": ["${user_config.mode}"], "env": {"POKER_TOKEN": "${user_config.token}"}}
        },
        "tools": [{"name": "poke", "description": "Pokes."}],
        "user_config": {
            "mode": {"type": "string", "title": "Mode", "required": true, "default": "huge-result:1"},
            "token": {"type": "string", "title": "Token", "sensitive": true, "required": true}
        }
    });
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).expect("create the bundle"));
    let options = zip::write::SimpleFileOptions::default().unix_permissions(0o644);
    zip.start_file("manifest.json", options).expect("zip");
    zip.write_all(manifest.to_string().as_bytes()).expect("zip");
    let chinese = serde_json::json!({"display_name": "戳一戳", "tools": [{"name": "poke", "description": "戳一下。"}]});
    zip.start_file("mcpb-resources/zh-Hans.json", options).expect("zip");
    zip.write_all(chinese.to_string().as_bytes()).expect("zip");
    zip.start_file("server/poker", options).expect("zip");
    zip.write_all(&std::fs::read(hostile_mcp()).expect("read hostile-mcp")).expect("zip");
    zip.finish().expect("zip");
}
