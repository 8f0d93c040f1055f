//! Bundles built here as zip files: manifests read and checked, settings
//! validated and substituted, secrets kept out of the entry, unpacking safe.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use zip::write::SimpleFileOptions;

use super::*;

/// Writes a bundle with `manifest` (its text) and `files` (path, contents,
/// mode) to `dir/name`.
pub(super) fn bundle_file(dir: &Path, name: &str, manifest: &str, files: &[(&str, &[u8], u32)]) -> PathBuf {
    let path = dir.join(name);
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    zip.start_file("manifest.json", SimpleFileOptions::default()).unwrap();
    zip.write_all(manifest.as_bytes()).unwrap();
    for (entry, data, mode) in files {
        zip.start_file(*entry, SimpleFileOptions::default().unix_permissions(*mode)).unwrap();
        zip.write_all(data).unwrap();
    }
    zip.finish().unwrap();
    path
}

pub(super) fn manifest(mcp_config: Value, user_config: Value) -> Value {
    json!({
        "manifest_version": "0.3",
        "name": "notes server",
        "display_name": "Notes",
        "version": "1.2.0",
        "description": "Keeps notes.",
        "author": {"name": "Ada"},
        "server": {"type": "node", "entry_point": "server/index.js", "mcp_config": mcp_config},
        "tools": [{"name": "add_note", "description": "Adds a note."}],
        "compatibility": {"platforms": ["darwin", "win32", "linux"], "runtimes": {"node": ">=18"}},
        "user_config": user_config,
    })
}

pub(super) fn settings() -> Value {
    json!({
        "folders": {"type": "directory", "title": "Folders", "multiple": true, "required": true},
        "api_key": {"type": "string", "title": "API key", "sensitive": true, "required": true},
        "limit": {"type": "number", "title": "Limit", "default": 10, "min": 1, "max": 100},
        "verbose": {"type": "boolean", "title": "Verbose", "default": false},
        "region": {"type": "string", "title": "Region"}
    })
}

pub(super) fn node_config() -> Value {
    json!({
        "command": "node",
        "args": ["${__dirname}/server/index.js", "${user_config.folders}", "--region", "${user_config.region}", "--verbose=${user_config.verbose}"],
        "env": {"API_KEY": "${user_config.api_key}", "LIMIT": "${user_config.limit}", "REGION": "${user_config.region}", "SEP": "${/}"}
    })
}

fn open(manifest: &Value, files: &[(&str, &[u8], u32)]) -> (tempfile::TempDir, Result<Bundle, BundleError>) {
    open_text(&manifest.to_string(), files)
}

fn open_text(manifest: &str, files: &[(&str, &[u8], u32)]) -> (tempfile::TempDir, Result<Bundle, BundleError>) {
    let dir = tempfile::tempdir().unwrap();
    let file = bundle_file(dir.path(), "b.mcpb", manifest, files);
    let bundle = Bundle::open(&file, dir.path());
    (dir, bundle)
}

pub(super) const INDEX: (&str, &[u8], u32) = ("server/index.js", b"console.log(1)", 0o644);

#[test]
fn info_lists_what_the_form_shows_in_the_manifest_order() {
    // `json!` sorts keys; a manifest's own text does not.
    let text = manifest(node_config(), json!({})).to_string().replacen(
        r#""user_config":{}"#,
        &format!(
            r#""user_config":{{"folders":{},"api_key":{},"limit":{},"verbose":{},"region":{}}}"#,
            settings()["folders"],
            settings()["api_key"],
            settings()["limit"],
            settings()["verbose"],
            settings()["region"]
        ),
        1,
    );
    let (dir, bundle) = open_text(&text, &[INDEX]);
    let info = bundle.unwrap().info(&dir.path().join("x"), None);
    assert_eq!(info.server_name, "notes-server");
    assert_eq!(info.title, "Notes");
    assert_eq!((info.version.as_str(), info.author.as_str()), ("1.2.0", "Ada"));
    assert_eq!(info.runtime.as_deref(), Some("node >=18"));
    assert_eq!(info.tools[0].name, "add_note");
    let keys: Vec<&str> = info.settings.iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys, ["folders", "api_key", "limit", "verbose", "region"]);
    assert!(info.settings[1].sensitive && info.settings[1].required && !info.settings[1].kept);
    assert_eq!(info.settings[2].default, Some(json!(10)));
}

#[test]
fn settings_are_substituted_lists_expand_and_the_secret_goes_to_the_keyring() {
    let (dir, bundle) = open(&manifest(node_config(), settings()), &[INDEX]);
    let bundle = bundle.unwrap();
    let home = dir.path().join("ext/notes-server");
    let values: BundleValues =
        BTreeMap::from([("folders".into(), json!(["/a", "/b c"])), ("api_key".into(), json!("sk-123"))]);
    let (server, secrets) = bundle.server_config(&home, &values, None, |_| true).unwrap();
    let TransportConfig::Stdio { command, args, env, cwd } = &server.transport else { panic!("stdio") };
    assert_eq!(command, "node");
    let index = format!("{}/server/index.js", home.display());
    // The unset optional region drops its whole argument but leaves "--region".
    assert_eq!(args, &[index.as_str(), "/a", "/b c", "--region", "--verbose=false"]);
    assert_eq!(cwd.as_deref(), Some(home.as_path()));
    assert_eq!(env.get("API_KEY"), Some(&ValueSource::Secret("mcp/notes-server/API_KEY".into())));
    assert_eq!(env.get("LIMIT"), Some(&ValueSource::Plain("10".into())));
    assert_eq!(env.get("SEP"), Some(&ValueSource::Plain(MAIN_SEPARATOR.to_string())));
    assert!(!env.contains_key("REGION"), "an unset optional setting drops its variable");
    assert_eq!(secrets, BTreeMap::from([("mcp/notes-server/API_KEY".to_owned(), "sk-123".to_owned())]));
    assert!(!serde_json::to_string(&server).unwrap().contains("sk-123"));
}

#[test]
fn bad_values_are_refused_with_the_setting_named() {
    let (dir, bundle) = open(&manifest(node_config(), settings()), &[INDEX]);
    let bundle = bundle.unwrap();
    let home = dir.path().join("ext");
    let attempt = |values: Value| {
        let values: BundleValues = serde_json::from_value(values).unwrap();
        bundle.server_config(&home, &values, None, |_| true).unwrap_err().to_string()
    };
    assert_eq!(
        attempt(json!({"folders": ["/a"]})),
        "API key (user_config.api_key): required; the server cannot start without it"
    );
    assert!(
        attempt(json!({"folders": ["/a"], "api_key": "k", "limit": 500})).contains("500 is more than the maximum, 100")
    );
    assert!(attempt(json!({"folders": ["/a"], "api_key": "k", "limit": "many"})).contains("expected a number"));
    assert!(attempt(json!({"folders": ["docs"], "api_key": "k"})).contains("\"docs\" is not an absolute path"));
    assert!(attempt(json!({"folders": ["/a"], "api_key": "k", "verbose": "yes"})).contains("expected true or false"));
}

#[test]
fn a_reinstall_keeps_policies_and_a_secret_left_empty() {
    let (dir, bundle) = open(&manifest(node_config(), settings()), &[INDEX]);
    let bundle = bundle.unwrap();
    let home = dir.path().join("ext");
    let first: BundleValues = BTreeMap::from([("folders".into(), json!(["/a"])), ("api_key".into(), json!("sk-1"))]);
    let (mut installed, _) = bundle.server_config(&home, &first, None, |_| true).unwrap();
    installed.approval = crate::config::ApprovalMode::Allow;
    installed.disabled_tools.insert("add_note".into());
    let info = bundle.info(&home, Some(&installed));
    let kept: Vec<&str> = info.settings.iter().filter(|s| s.kept).map(|s| s.key.as_str()).collect();
    assert_eq!(kept, ["api_key"]);
    let again: BundleValues = BTreeMap::from([("folders".into(), json!(["/b"]))]);
    let (server, secrets) = bundle.server_config(&home, &again, Some(&installed), |_| true).unwrap();
    assert!(secrets.is_empty(), "nothing new to store: {secrets:?}");
    assert_eq!(server.approval, crate::config::ApprovalMode::Allow);
    assert!(server.disabled_tools.contains("add_note"));
    let TransportConfig::Stdio { env, .. } = &server.transport else { panic!("stdio") };
    assert_eq!(env.get("API_KEY"), Some(&ValueSource::Secret("mcp/notes-server/API_KEY".into())));
}

#[test]
fn a_type_without_mcp_config_runs_its_entry_point_and_python_falls_back_to_python3() {
    let mut m = manifest(json!(null), json!({}));
    m["server"] = json!({"type": "python", "entry_point": "server/main.py"});
    let (dir, bundle) = open(&m, &[("server/main.py", b"print(1)", 0o644)]);
    let home = dir.path().join("ext");
    let (server, _) = bundle.unwrap().server_config(&home, &BundleValues::new(), None, |c| c == "python3").unwrap();
    let TransportConfig::Stdio { command, args, env, .. } = &server.transport else { panic!("stdio") };
    assert_eq!(command, "python3");
    assert_eq!(args, &[format!("{}/server/main.py", home.display())]);
    assert_eq!(env.get("PYTHONPATH"), Some(&ValueSource::Plain(format!("{}/server/lib", home.display()))));
}

#[test]
fn a_binary_entry_point_is_made_runnable_and_a_relative_command_runs_from_the_bundle() {
    let mut m = manifest(json!({"command": "server/tool", "args": ["--stdio"]}), json!({}));
    m["server"]["type"] = json!("binary");
    m["server"]["entry_point"] = json!("server/tool");
    // Written without an executable bit, as archives made on Windows are.
    let (dir, bundle) = open(&m, &[("server/tool", b"#!/bin/sh\n", 0o644), ("server/data.txt", b"x", 0o644)]);
    let bundle = bundle.unwrap();
    let home = dir.path().join("extensions/notes-server");
    bundle.unpack(&home).unwrap();
    let (server, _) = bundle.server_config(&home, &BundleValues::new(), None, |_| true).unwrap();
    let TransportConfig::Stdio { command, .. } = &server.transport else { panic!("stdio") };
    assert_eq!(Path::new(command), home.join("server/tool"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &str| std::fs::metadata(home.join(p)).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode("server/tool"), 0o755);
        assert_eq!(mode("server/data.txt"), 0o644);
    }
    assert_eq!(std::fs::read(home.join("manifest.json")).unwrap()[0], b'{');
}

#[test]
fn unpacking_again_replaces_the_folder_and_leaves_nothing_beside_it() {
    let (dir, bundle) = open(&manifest(node_config(), settings()), &[INDEX]);
    let home = dir.path().join("extensions/notes");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("stale.js"), "old").unwrap();
    bundle.unwrap().unpack(&home).unwrap();
    assert!(!home.join("stale.js").exists());
    assert!(home.join("server/index.js").is_file());
    let beside: Vec<_> = std::fs::read_dir(home.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["notes"]);
}

#[test]
fn an_entry_leading_outside_the_folder_is_refused_and_the_old_version_stays() {
    let (dir, bundle) = open(&manifest(node_config(), settings()), &[INDEX, ("../escape.js", b"x", 0o644)]);
    let home = dir.path().join("extensions/notes");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("kept.js"), "old").unwrap();
    let error = bundle.unwrap().unpack(&home).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the bundle's entry \"../escape.js\" is not unpacked: its path leads outside the bundle folder"
    );
    assert!(home.join("kept.js").is_file(), "the installed version is untouched");
    assert!(!dir.path().join("extensions/escape.js").exists() && !dir.path().join("escape.js").exists());
    let beside: Vec<_> =
        std::fs::read_dir(dir.path().join("extensions")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(beside, ["notes"], "no staging folder is left behind");
}

#[test]
fn manifests_a_host_cannot_use_are_refused_with_the_reason() {
    let refuse = |m: Value, files: &[(&str, &[u8], u32)]| open(&m, files).1.unwrap_err().to_string();

    let mut other_platform = manifest(node_config(), settings());
    other_platform["compatibility"]["platforms"] = json!(["plan9"]);
    assert!(
        refuse(other_platform, &[INDEX])
            .ends_with(&format!("is made for plan9; this computer runs {}", current_platform()))
    );

    let secret_in_args = manifest(json!({"command": "node", "args": ["--key", "${user_config.api_key}"]}), settings());
    assert!(
        refuse(secret_in_args, &[INDEX])
            .contains("args[1] passes the sensitive setting \"api_key\" on the command line")
    );

    let undeclared = manifest(json!({"command": "node", "args": ["${user_config.nope}"]}), settings());
    assert!(
        refuse(undeclared, &[INDEX]).contains("args[0] uses ${user_config.nope}, which user_config does not declare")
    );

    let mut no_entry = manifest(json!(null), json!({}));
    no_entry["server"] = json!({"type": "node", "entry_point": "server/missing.js"});
    assert!(refuse(no_entry, &[INDEX]).contains("server.entry_point \"server/missing.js\" is not in the bundle"));

    let mut unknown_type = manifest(node_config(), settings());
    unknown_type["server"]["type"] = json!("ruby");
    assert!(refuse(unknown_type, &[INDEX]).contains("unknown variant `ruby`"));

    let mut broken = manifest(node_config(), settings());
    broken.as_object_mut().unwrap().remove("version");
    assert!(refuse(broken, &[INDEX]).contains("missing field `version`"));
}

#[test]
fn a_file_that_is_not_a_bundle_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.mcpb");
    std::fs::write(&text, "just text").unwrap();
    let error = Bundle::open(&text, dir.path()).unwrap_err().to_string();
    assert!(error.starts_with(&format!("{} is not an MCP bundle", text.display())), "{error}");

    let empty_zip = dir.path().join("empty.mcpb");
    zip::ZipWriter::new(std::fs::File::create(&empty_zip).unwrap()).finish().unwrap();
    assert!(Bundle::open(&empty_zip, dir.path()).unwrap_err().to_string().ends_with("it has no manifest.json"));

    let missing = dir.path().join("missing.mcpb");
    assert!(
        Bundle::open(&missing, dir.path())
            .unwrap_err()
            .to_string()
            .starts_with(&format!("cannot read {}", missing.display()))
    );
}

#[test]
fn platform_overrides_replace_the_command_line_for_this_platform() {
    let config = json!({
        "command": "node",
        "args": ["${__dirname}/server/index.js"],
        "env": {"A": "common"},
        current_platform(): {"unused": true},
        "platform_overrides": {current_platform(): {"args": ["${__dirname}/server/other.js"], "env": {"B": "mine"}}, "beos": {"command": "nope"}}
    });
    let (dir, bundle) = open(&manifest(config, json!({})), &[INDEX]);
    let home = dir.path().join("ext");
    let (server, _) = bundle.unwrap().server_config(&home, &BundleValues::new(), None, |_| true).unwrap();
    let TransportConfig::Stdio { command, args, env, .. } = &server.transport else { panic!("stdio") };
    assert_eq!(command, "node");
    assert_eq!(args, &[format!("{}/server/other.js", home.display())]);
    assert_eq!(env.len(), 2);
}

#[test]
fn a_link_in_the_bundle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("link.mcpb");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    zip.start_file("manifest.json", SimpleFileOptions::default()).unwrap();
    zip.write_all(manifest(node_config(), settings()).to_string().as_bytes()).unwrap();
    zip.start_file(INDEX.0, SimpleFileOptions::default()).unwrap();
    zip.write_all(INDEX.1).unwrap();
    zip.add_symlink("server/passwd", "/etc/passwd", SimpleFileOptions::default()).unwrap();
    zip.finish().unwrap();
    let home = dir.path().join("extensions/notes");
    let error = Bundle::open(&path, dir.path()).unwrap().unpack(&home).unwrap_err();
    assert_eq!(error.to_string(), "the bundle's entry \"server/passwd\" is not unpacked: it is a symbolic link");
    assert!(!home.exists());
}

#[test]
fn the_icon_is_shown_only_when_it_is_a_png_in_the_bundle() {
    let png: &[u8] = b"\x89PNG\r\n\x1a\n-the-rest-of-a-png";
    let mut with_icon = manifest(node_config(), settings());
    with_icon["icon"] = json!("icon.png");
    let (dir, bundle) = open(&with_icon, &[INDEX, ("icon.png", png, 0o644)]);
    let icon = bundle.unwrap().info(dir.path(), None).icon.expect("an icon");
    assert!(icon.starts_with("data:image/png;base64,iVBORw0KGgo"), "{icon}");

    let (dir, bundle) = open(&with_icon, &[INDEX, ("icon.png", b"not a png", 0o644)]);
    assert_eq!(bundle.unwrap().info(dir.path(), None).icon, None, "not a PNG");
    let mut remote = with_icon.clone();
    remote["icon"] = json!("https://example.com/icon.png");
    let (dir, bundle) = open(&remote, &[INDEX]);
    assert_eq!(bundle.unwrap().info(dir.path(), None).icon, None, "never fetched");
}

#[test]
fn an_entry_point_written_with_a_leading_dot_slash_is_found() {
    let mut m = manifest(json!(null), json!({}));
    m["server"] = json!({"type": "node", "entry_point": "./server/index.js"});
    let (_dir, bundle) = open(&m, &[INDEX]);
    assert!(bundle.is_ok(), "{:?}", bundle.err());
}

#[test]
fn a_secret_made_of_two_sensitive_settings_is_asked_again_on_update() {
    let config = json!({"command": "node", "args": ["${__dirname}/server/index.js"], "env": {"AUTH": "${user_config.user}:${user_config.password}"}});
    let settings = json!({
        "user": {"type": "string", "title": "User", "sensitive": true, "required": true},
        "password": {"type": "string", "title": "Password", "sensitive": true, "required": true}
    });
    let (dir, bundle) = open(&manifest(config, settings), &[INDEX]);
    let bundle = bundle.unwrap();
    let home = dir.path().join("ext");
    let first: BundleValues = BTreeMap::from([("user".into(), json!("ada")), ("password".into(), json!("pw1"))]);
    let (installed, secrets) = bundle.server_config(&home, &first, None, |_| true).unwrap();
    assert_eq!(secrets.values().collect::<Vec<_>>(), ["ada:pw1"]);
    assert!(bundle.info(&home, Some(&installed)).settings.iter().all(|s| !s.kept));
    // Only the password given: the stored "ada:pw1" cannot be half kept.
    let only_password: BundleValues = BTreeMap::from([("password".into(), json!("pw2"))]);
    let error = bundle.server_config(&home, &only_password, Some(&installed), |_| true).unwrap_err();
    assert_eq!(error.to_string(), "User (user_config.user): required; the server cannot start without it");
}

#[test]
fn strings_come_from_the_locale_file_the_manifest_points_to_and_a_bad_one_is_passed_over() {
    let mut m = manifest(node_config(), settings());
    m["localization"] = json!({"resources": "i18n/${locale}/strings.json", "default_locale": "en-GB"});
    m["prompts"] = json!([{"name": "recap", "description": "Recaps the notes."}]);
    m["long_description"] = json!("Long.");
    let german = json!({
        "display_name": "Notizen",
        "long_description": "Lang.",
        "description": "  ",
        "prompts": [{"name": "recap", "description": "Fasst die Notizen zusammen."}]
    })
    .to_string();
    let files = [
        INDEX,
        ("i18n/de/strings.json", german.as_bytes(), 0o644),
        ("i18n/fr/strings.json", b"{not json" as &[u8], 0o644),
        // The default path is not read when the manifest names another.
        ("mcpb-resources/de.json", br#"{"display_name": "Falsch"}"# as &[u8], 0o644),
    ];
    let (dir, bundle) = open(&m, &files);
    let bundle = bundle.unwrap();
    let info = |locale: &str| bundle.clone().localized(locale).info(&dir.path().join("x"), None);
    let de = info("de_AT.UTF-8");
    assert_eq!((de.title.as_str(), de.long_description.as_deref()), ("Notizen", Some("Lang.")));
    assert_eq!(de.description, "Keeps notes.", "an empty string overrides nothing");
    assert_eq!(de.prompts[0].description.as_deref(), Some("Fasst die Notizen zusammen."));
    assert_eq!((de.tools[0].description.as_deref(), de.author.as_str()), (Some("Adds a note."), "Ada"));
    assert_eq!(info("fr").title, "Notes", "a locale file that is not JSON is passed over");
    assert_eq!(info("en-GB").title, "Notes");
    assert_eq!(info("C").title, "Notes");

    // Unpacked, it reads the same files from its folder.
    let unpacked = dir.path().join("unpacked");
    bundle.unpack(&unpacked).unwrap();
    let installed = Bundle::installed(&unpacked).unwrap();
    let de = installed.clone().localized("de_AT.UTF-8").info(&unpacked, None);
    assert_eq!(
        (de.title.as_str(), de.prompts[0].description.as_deref()),
        ("Notizen", Some("Fasst die Notizen zusammen."))
    );
    assert_eq!(installed.clone().localized("fr").info(&unpacked, None).title, "Notes");
    std::fs::write(unpacked.join("manifest.json"), "{").unwrap();
    let broken = Bundle::installed(&unpacked).unwrap_err().to_string();
    assert!(broken.starts_with(&format!("{}: manifest.json: ", unpacked.join("manifest.json").display())), "{broken}");
}
