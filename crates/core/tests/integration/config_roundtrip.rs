//! Round trip (import of an export gives the same servers) and a fuzz of the importer.

use std::collections::BTreeMap;

use patchbay_core::config::export::render;
use patchbay_core::config::model::{McpServerConfig, TransportConfig, ValueSource};
use patchbay_core::config::{
    ConfigStore, ExportFormat, ExportOptions, ImportChoice, ImportOptions, Network, Policy, RateLimits, SecurityLevel,
};
use patchbay_core::secrets::MemoryStore;
use patchbay_core::store::Store;
use proptest::prelude::*;

/// A plain value, or a secret under one of the names Patchbay gives a server's
/// own secrets (`mcp/<server>/KEY` on import, `mcp/<server>/env/KEY` in the editor).
fn value(server: &str) -> impl Strategy<Value = (String, ValueSource)> + use<> {
    let server = server.to_owned();
    prop_oneof![
        ("[A-Z]{1,6}_(LEVEL|MODE|DIR)", "[a-z0-9 ./:-]{0,12}").prop_map(|(k, v)| (k, ValueSource::Plain(v))),
        ("[A-Z]{1,6}_TOKEN", "(env/|header/)?")
            .prop_map(move |(k, area)| (k.clone(), ValueSource::Secret(format!("mcp/{server}/{area}{k}")))),
    ]
}

fn server(name: String) -> impl Strategy<Value = McpServerConfig> {
    let stdio =
        ("[a-z/.-]{1,12}", prop::collection::vec("[ -~]{0,10}", 0..4), prop::collection::vec(value(&name), 0..3))
            .prop_map(|(command, args, env)| TransportConfig::Stdio {
                command,
                args: args.into_iter().filter(|a| !a.contains("${")).collect(),
                env: env.into_iter().collect::<BTreeMap<_, _>>(),
                cwd: None,
            });
    let remote = (0..3u8, "[a-z]{1,8}", prop::collection::vec(value(&name), 0..3)).prop_map(|(kind, host, headers)| {
        let url = format!("https://{host}.example/mcp");
        let headers = headers.into_iter().collect::<BTreeMap<_, _>>();
        match kind {
            0 => TransportConfig::Auto { url, headers },
            1 => TransportConfig::Sse { url, headers },
            _ => TransportConfig::StreamableHttp { url, headers },
        }
    });
    (prop_oneof![stdio, remote], any::<bool>(), prop::option::of("[a-z]{0,8}")).prop_map(move |(t, enabled, extra)| {
        let mut s = McpServerConfig::with_transport(name.clone(), t);
        s.enabled = enabled;
        if let Some(x) = extra {
            s.extra.insert("xNote".into(), serde_json::Value::String(x));
        }
        s
    })
}

fn servers() -> impl Strategy<Value = Vec<McpServerConfig>> {
    // Names as Patchbay accepts them: no `__` (it joins server and tool for the model).
    prop::collection::btree_set("[a-z][a-z0-9_-]{0,9}[a-z0-9]".prop_filter("no __", |n| !n.contains("__")), 1..5)
        .prop_flat_map(|names| names.into_iter().map(server).collect::<Vec<_>>())
}

fn import_fresh(text: &str) -> Vec<McpServerConfig> {
    let cfg = ConfigStore::new(Store::open_in_memory().unwrap());
    cfg.apply_import(&MemoryStore::new(), text, &ImportOptions::default(), &ImportChoice::default()).unwrap();
    cfg.servers().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn import_of_export_gives_the_same_servers(servers in servers()) {
        for format in [ExportFormat::Claude, ExportFormat::Vscode, ExportFormat::Patchbay] {
            let text = render(&servers, &[], ExportOptions { format, include_secrets: false }, &|_| Ok(None)).unwrap();
            prop_assert_eq!(&import_fresh(&text), &servers, "{:?}\n{}", format, text);
        }
    }
}

fn dump(cfg: &ConfigStore) -> String {
    serde_json::to_string(&cfg.servers().unwrap()).unwrap()
}

thread_local! {
    /// A store no import has changed, with its servers as they were: after a
    /// failed import (which must change nothing) the next case starts from it
    /// instead of opening and migrating a new one.
    static UNCHANGED: std::cell::Cell<Option<(ConfigStore, String)>> = const { std::cell::Cell::new(None) };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]
    #[test]
    fn importer_never_panics_and_failures_change_nothing(
        text in prop_oneof![
            ".{0,200}",
            r#"\{"mcpServers": \{"[a-z ]{0,4}": \{"(command|url|type|args|env)": ("x"|1|\[1\]|\{\}|"http://a"|"ftp://b"|null)(, "args": \[("a"|2)\])?\}\}\}"#,
            r#"[\[\{ ,:"a1\}\]/*]{0,60}"#,
        ]
    ) {
        let (cfg, before) = UNCHANGED.take().unwrap_or_else(|| {
            let cfg = ConfigStore::new(Store::open_in_memory().unwrap());
            cfg.save_server(&McpServerConfig::stdio("keep", "echo", &["a"])).unwrap();
            let before = dump(&cfg);
            (cfg, before)
        });
        let secrets = MemoryStore::new();
        let _ = cfg.preview_import(&secrets, &text, &ImportOptions::default()).unwrap();
        if cfg.apply_import(&secrets, &text, &ImportOptions::default(), &ImportChoice::default()).is_err() {
            prop_assert_eq!(&dump(&cfg), &before);
            UNCHANGED.set(Some((cfg, before)));
        }
    }
}

#[test]
fn export_shapes() {
    let mut github = McpServerConfig::stdio("github", "docker", &["run", "-i", "ghcr.io/github/github-mcp-server"]);
    if let TransportConfig::Stdio { env, .. } = &mut github.transport {
        env.insert("GITHUB_TOKEN".into(), ValueSource::Secret("mcp/github/GITHUB_TOKEN".into()));
        env.insert("LOG_LEVEL".into(), ValueSource::Plain("info".into()));
    }
    let mut remote = McpServerConfig::with_transport(
        "remote",
        TransportConfig::StreamableHttp {
            url: "https://mcp.example/mcp".into(),
            headers: [("Authorization".to_owned(), ValueSource::Secret("mcp/remote/Authorization".into()))].into(),
        },
    );
    remote.enabled = false;
    let servers = [github, remote];
    for (format, name) in [
        (ExportFormat::Claude, "claude"),
        (ExportFormat::Vscode, "vscode"),
        (ExportFormat::Zed, "zed"),
        (ExportFormat::Opencode, "opencode"),
        (ExportFormat::Patchbay, "patchbay"),
    ] {
        let text = render(&servers, &[], ExportOptions { format, include_secrets: false }, &|_| Ok(None)).unwrap();
        insta::assert_snapshot!(format!("export_{name}"), text);
    }
}

#[test]
fn the_patchbay_shape_carries_the_security_policy_and_the_others_give_the_default() {
    let mut files = McpServerConfig::stdio("files", "npx", &["-y", "pkg"]);
    files.policy = Policy {
        level: Some(SecurityLevel::Strict),
        read: vec!["/srv/notes".into()],
        network: Some(Network::Domains(vec!["api.github.com".into()])),
        rate: RateLimits { per_tool_per_min: Some(5), per_server_per_min: Some(30) },
        ..Policy::default()
    };
    let servers = [files];
    let export =
        |format| render(&servers, &[], ExportOptions { format, include_secrets: false }, &|_| Ok(None)).unwrap();
    assert_eq!(import_fresh(&export(ExportFormat::Patchbay))[0].policy, servers[0].policy);
    let claude = export(ExportFormat::Claude);
    assert!(!claude.contains("strict"), "{claude}");
    assert_eq!(import_fresh(&claude)[0].policy, Policy::default());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]
    /// Zed and opencode read fewer fields: what they carry (command line, env,
    /// URL and headers; opencode also the switch) comes back; the rest is left out.
    #[test]
    fn zed_and_opencode_exports_import_back_what_they_carry(servers in servers()) {
        let carried = |s: &McpServerConfig| {
            let transport = match &s.transport {
                TransportConfig::Stdio { command, args, env, .. } => {
                    TransportConfig::Stdio { command: command.clone(), args: args.clone(), env: env.clone(), cwd: None }
                }
                TransportConfig::StreamableHttp { url, headers }
                | TransportConfig::Sse { url, headers }
                | TransportConfig::Auto { url, headers } => TransportConfig::Auto { url: url.clone(), headers: headers.clone() },
                TransportConfig::InProcess => TransportConfig::InProcess,
            };
            (s.name.clone(), transport)
        };
        for format in [ExportFormat::Zed, ExportFormat::Opencode] {
            let text = render(&servers, &[], ExportOptions { format, include_secrets: false }, &|_| Ok(None)).unwrap();
            let expected: Vec<_> = servers.iter().filter(|s| s.enabled || format == ExportFormat::Opencode).map(carried).collect();
            if expected.is_empty() {
                // Zed's form of only disabled servers is empty, and importing nothing is refused.
                continue;
            }
            let back = import_fresh(&text);
            prop_assert_eq!(back.iter().map(carried).collect::<Vec<_>>(), expected, "{:?}\n{}", format, text);
            if format == ExportFormat::Opencode {
                let switches: Vec<bool> = back.iter().map(|s| s.enabled).collect();
                prop_assert_eq!(switches, servers.iter().map(|s| s.enabled).collect::<Vec<_>>());
            }
        }
    }
}
