//! Registry entries from the API's JSON (the shapes of the registry's own
//! examples), and searches over real HTTP against a registry served on
//! 127.0.0.1 (test-support's `discover`).

use patchbay_test_support::discover::{serve, serve_with_files};
use serde_json::{Value, json};
use sha2::Digest;

use super::*;

/// A server with an npm and a PyPI package, an OCI image and two remotes.
fn weather() -> Value {
    json!({
        "server": {
            "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
            "name": "io.github.acme/weather",
            "title": "Weather",
            "description": "Forecasts.",
            "version": "1.2.0",
            "websiteUrl": "https://acme.example/weather",
            "packages": [
                {
                    "registryType": "npm", "identifier": "@acme/weather-mcp", "version": "1.2.0",
                    "transport": {"type": "stdio"},
                    "packageArguments": [
                        {"type": "positional", "valueHint": "city"},
                        {"type": "named", "name": "--units", "default": "metric"}
                    ],
                    "environmentVariables": [
                        {"name": "WEATHER_API_KEY", "description": "Your key from acme.example", "isRequired": true, "isSecret": true},
                        {"name": "WEATHER_LANG", "default": "en"}
                    ]
                },
                {"registryType": "pypi", "identifier": "acme-weather", "version": "1.2.0", "transport": {"type": "stdio"}},
                {
                    "registryType": "oci", "identifier": "ghcr.io/acme/weather", "version": "1.2.0",
                    "transport": {"type": "stdio"},
                    "environmentVariables": [{"name": "WEATHER_API_KEY", "isSecret": true}]
                },
                {"registryType": "nuget", "identifier": "Acme.Weather", "version": "1.2.0", "transport": {"type": "stdio"}},
                {"registryType": "npm", "identifier": "@acme/weather-http", "transport": {"type": "streamable-http", "url": "http://localhost:3000/mcp"}}
            ],
            "remotes": [
                {
                    "type": "streamable-http", "url": "https://mcp.acme.example/weather",
                    "headers": [
                        {"name": "Authorization", "value": "Bearer {token}", "isSecret": true},
                        {"name": "X-Region", "value": "eu"}
                    ]
                },
                {"type": "sse", "url": "https://mcp.acme.example/weather/sse"},
                {"type": "websocket", "url": "wss://mcp.acme.example/ws"}
            ]
        },
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active", "isLatest": true}}
    })
}

fn list(servers: Vec<Value>, next: Option<&str>) -> wire::List {
    serde_json::from_value(json!({"servers": servers, "metadata": {"nextCursor": next, "count": 1}})).unwrap()
}

fn stdio(entry: &RegistryEntry) -> (&str, Vec<&str>, &BTreeMap<String, ValueSource>) {
    match &entry.config.transport {
        TransportConfig::Stdio { command, args, env, .. } => (command, args.iter().map(String::as_str).collect(), env),
        other => panic!("not stdio: {other:?}"),
    }
}

#[test]
fn each_way_of_running_a_server_is_an_entry() {
    let page = page(list(vec![weather()], Some("c2")));
    assert_eq!(page.next_cursor.as_deref(), Some("c2"));
    let via: Vec<&str> = page.entries.iter().map(|e| e.via.as_str()).collect();
    // NuGet, a package served over HTTP, and a websocket remote are not something a desktop host runs.
    assert_eq!(via, ["npm", "pypi", "oci", "streamable-http", "sse"]);
    assert!(page.entries.iter().all(|e| e.id == "weather" && e.config.name == "weather" && e.version == "1.2.0"));
    assert_eq!(page.entries[0].label, "Weather (npm)");
    assert_eq!(page.entries[0].website.as_deref(), Some("https://acme.example/weather"));

    let (command, args, env) = stdio(&page.entries[0]);
    assert_eq!((command, page.entries[0].needs.as_deref()), ("npx", Some("npx")));
    assert_eq!(args, ["-y", "@acme/weather-mcp@1.2.0", "<city>", "--units", "metric"]);
    assert_eq!(env["WEATHER_API_KEY"], ValueSource::Secret(String::new()), "a secret to type");
    assert_eq!(env["WEATHER_LANG"], ValueSource::Plain("en".into()));
    let described: Vec<(&str, &str, bool, bool, bool)> = page.entries[0]
        .settings
        .iter()
        .map(|s| (s.name.as_str(), s.description.as_str(), s.required, s.secret, s.placeholder))
        .collect();
    assert_eq!(
        described,
        [
            ("WEATHER_API_KEY", "Your key from acme.example", true, true, false),
            ("WEATHER_LANG", "", false, false, false),
            ("city", "", true, false, true)
        ]
    );
    let remote: Vec<(&str, bool, bool)> =
        page.entries[3].settings.iter().map(|s| (s.name.as_str(), s.secret, s.placeholder)).collect();
    assert_eq!(remote, [("X-Region", false, false), ("token", true, true)], "a remote's headers are described too");

    assert_eq!(stdio(&page.entries[1]).1, ["acme-weather==1.2.0"]);
    let (command, args, _) = stdio(&page.entries[2]);
    assert_eq!(
        (command, args),
        ("docker", vec!["run", "-i", "--rm", "-e", "WEATHER_API_KEY", "ghcr.io/acme/weather:1.2.0"])
    );

    let TransportConfig::StreamableHttp { url, headers } = &page.entries[3].config.transport else { panic!("http") };
    assert_eq!(url, "https://mcp.acme.example/weather");
    assert_eq!(headers["Authorization"], ValueSource::Plain("Bearer {token}".into()), "filled in by `fill`");
    assert_eq!(headers["X-Region"], ValueSource::Plain("eu".into()));
    assert!(matches!(&page.entries[4].config.transport, TransportConfig::Sse { url, .. } if url.ends_with("/sse")));
}

#[test]
fn an_mcpb_package_is_a_bundle_to_download_and_one_without_a_digest_is_left_out() {
    let sha = "AB".repeat(32);
    let listing = json!({"server": {"name": "io.github.ada/notes", "version": "2.0.0", "packages": [
        {"registryType": "mcpb", "identifier": "https://github.com/ada/notes/releases/download/v2/notes.mcpb",
         "fileSha256": sha, "transport": {"type": "stdio"}},
        {"registryType": "mcpb", "identifier": "https://example.com/unchecked.mcpb", "transport": {"type": "stdio"}}
    ]}});
    let page = page(list(vec![listing], None));
    assert_eq!(page.entries.len(), 1);
    let entry = &page.entries[0];
    assert_eq!((entry.via.as_str(), entry.label.as_str()), ("mcpb", "io.github.ada/notes (mcpb)"));
    let source = entry.bundle.as_ref().unwrap();
    assert_eq!(source.url, "https://github.com/ada/notes/releases/download/v2/notes.mcpb");
    assert_eq!(source.sha256, "ab".repeat(32));
}

#[tokio::test]
async fn a_bundle_is_downloaded_only_with_the_listed_digest_and_only_over_https_or_from_this_computer() {
    let bytes = b"PK\x05\x06 a bundle".to_vec();
    let sha256 = hex::encode(sha2::Sha256::digest(&bytes));
    let base = serve_with_files(vec![], vec![("notes.mcpb".into(), bytes.clone())]).await;
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let source = |path: &str, sha256: &str| BundleSource { url: format!("{base}/files/{path}"), sha256: sha256.into() };

    let path = download_bundle(&source("notes.mcpb", &sha256), dir.path(), &cancel).await.unwrap();
    assert_eq!(path, dir.path().join(format!("{sha256}.mcpb")));
    assert_eq!(std::fs::read(&path).unwrap(), bytes);

    let wrong = "0".repeat(64);
    let e = download_bundle(&source("notes.mcpb", &wrong), dir.path(), &cancel).await.unwrap_err().to_string();
    assert!(e.contains(&format!("its SHA-256 is {sha256}, not the {wrong} the registry lists")), "{e}");
    let missing = download_bundle(&source("gone.mcpb", &wrong), dir.path(), &cancel).await.unwrap_err().to_string();
    assert!(missing.ends_with("the server answered 404 Not Found"), "{missing}");
    let plain = BundleSource { url: "http://example.com/notes.mcpb".into(), sha256: sha256.clone() };
    let e = download_bundle(&plain, dir.path(), &cancel).await.unwrap_err().to_string();
    assert_eq!(e, "cannot download the bundle http://example.com/notes.mcpb: only https URLs are downloaded");
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(files, [std::ffi::OsString::from(format!("{sha256}.mcpb"))], "nothing is left of the failed downloads");
}

#[test]
fn a_sparse_listing_still_reads_and_names_are_made_safe() {
    let sparse = json!({"server": {"name": "com.example/my server!", "packages": [{"registryType": "pypi", "identifier": "x"}]}});
    let page = page(list(vec![sparse, json!({"server": {"name": "only.a/name"}})], None));
    assert_eq!(page.entries.len(), 1, "a server with nothing to run gives no entry");
    assert_eq!(page.entries[0].id, "my-server");
    assert_eq!(page.entries[0].label, "com.example/my server! (pypi)");
    assert_eq!(stdio(&page.entries[0]).1, ["x"], "no version: the latest");
    assert_eq!(page.next_cursor, None);
}

#[tokio::test]
async fn a_search_reads_pages_over_http_and_failures_name_the_registry() {
    let base = serve(vec![weather()]).await;
    let registry = HttpRegistry::new(format!("{base}/"));
    let cancel = CancellationToken::new();
    let first = registry.search(" weat ", None, &cancel).await.unwrap();
    assert_eq!((first.entries.len(), first.next_cursor.as_deref()), (5, Some("page-2")));
    let last = registry.search("weat", Some("page-2"), &cancel).await.unwrap();
    assert_eq!(last.next_cursor, None);
    assert!(registry.search("nothing", None, &cancel).await.unwrap().entries.is_empty());

    let down = registry.search("down", None, &cancel).await.unwrap_err().to_string();
    assert_eq!(down, format!("the MCP registry at {base}/v0.1/servers answered 503: maintenance"));
    let garbage = registry.search("garbage", None, &cancel).await.unwrap_err().to_string();
    assert!(
        garbage
            .starts_with(&format!("the MCP registry at {base}/v0.1/servers sent something that is not a server list"))
    );
    let flood = registry.search("flood", None, &cancel).await.unwrap_err().to_string();
    assert!(flood.ends_with("is not a server list: the answer is over 8 MiB"), "{flood}");
    let unreachable = HttpRegistry::new("http://127.0.0.1:9").search("x", None, &cancel).await.unwrap_err();
    assert!(matches!(unreachable, RegistryError::Request { .. }), "{unreachable}");

    cancel.cancel();
    assert!(matches!(registry.search("weat", None, &cancel).await, Err(RegistryError::Cancelled)));
}

/// A server whose values leave parts to the user, as the registry's schema
/// allows: `{name}` variables in arguments, variables, headers and the URL,
/// and an argument given only as a hint.
fn placeholders() -> Value {
    json!({"server": {
        "name": "io.github.acme/vault", "description": "Secrets.", "version": "2.0.0",
        "packages": [{
            "registryType": "npm", "identifier": "vault-mcp", "version": "2.0.0", "transport": {"type": "stdio"},
            "packageArguments": [
                {"type": "positional", "valueHint": "root_dir", "description": "The folder it serves"},
                {"type": "named", "name": "--port", "value": "{port}",
                 "variables": {"port": {"default": "8080", "choices": ["8080", "9090"]}}},
                {"type": "named", "name": "--label", "valueHint": "label"}
            ],
            "environmentVariables": [
                {"name": "API_URL", "value": "https://{region}.api.example/v1",
                 "variables": {"region": {"isRequired": true, "choices": ["eu", "us"], "description": "Where your data is"}}},
                {"name": "AUTH", "value": "Bearer {token}", "variables": {"token": {"isSecret": true, "isRequired": true}}}
            ]
        }],
        "remotes": [
            {"type": "streamable-http", "url": "https://{tenant}.vault.example/mcp",
             "variables": {"tenant": {"description": "Your tenant"}},
             "headers": [{"name": "Authorization", "value": "Bearer {key}", "isSecret": true, "description": "An API key"}]},
            {"type": "sse", "url": "https://vault.example/sse?key={key}", "variables": {"key": {"isSecret": true}}}
        ]
    }})
}

#[test]
fn placeholders_are_asked_for_filled_in_and_secrets_kept_in_the_keyring_only() {
    let page = page(list(vec![placeholders()], None));
    let [local, remote, sse] = &page.entries[..] else { panic!("{:?}", page.entries) };
    let asked: Vec<(&str, bool, bool, Option<&str>)> =
        local.settings.iter().map(|s| (s.name.as_str(), s.required, s.secret, s.default.as_deref())).collect();
    assert_eq!(
        asked,
        [
            ("region", true, false, None),
            ("token", true, true, None),
            ("root_dir", true, false, None),
            ("port", false, false, Some("8080")),
            ("label", false, false, None)
        ]
    );
    assert!(local.settings.iter().all(|s| s.placeholder), "each is a part of a value, none a whole variable");
    assert_eq!(local.settings[0].choices, ["eu", "us"]);
    assert_eq!(stdio(local).1, ["-y", "vault-mcp@2.0.0", "<root_dir>", "--port", "{port}", "--label", "<label>"]);

    let values = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    };
    let (config, secrets) =
        fill(local, "vault", &values(&[("root_dir", "/srv/data"), ("region", "eu"), ("token", "t0k")])).unwrap();
    let TransportConfig::Stdio { args, env, .. } = &config.transport else { panic!("stdio") };
    assert_eq!(config.name, "vault");
    assert_eq!(
        args,
        &["-y", "vault-mcp@2.0.0", "/srv/data", "--port", "8080"],
        "an optional hint left out, with its flag"
    );
    assert_eq!(env["API_URL"], ValueSource::Plain("https://eu.api.example/v1".into()));
    assert_eq!(env["AUTH"], ValueSource::Secret("mcp/vault/AUTH".into()), "a variable a secret went into is a secret");
    assert_eq!(secrets, values(&[("mcp/vault/AUTH", "Bearer t0k")]));
    assert!(!serde_json::to_string(&config).unwrap().contains("t0k"), "the token is in no setting");

    let refused = |pairs: &[(&str, &str)]| fill(local, "vault", &values(pairs)).unwrap_err().to_string();
    assert_eq!(refused(&[("root_dir", "/a"), ("token", "t")]), "region: required (Where your data is)");
    assert_eq!(
        refused(&[("root_dir", "/a"), ("token", "t"), ("region", "asia")]),
        "region: \"asia\" is not one of eu, us"
    );
    assert_eq!(
        refused(&[("root_dir", "/a"), ("token", "t"), ("region", "eu"), ("colour", "red")]),
        "colour: io.github.acme/vault takes no such setting; it takes region, token, root_dir, port, label"
    );

    let (config, secrets) = fill(remote, "vault", &values(&[("tenant", "acme"), ("key", "k-1")])).unwrap();
    let TransportConfig::StreamableHttp { url, headers } = &config.transport else { panic!("http") };
    assert_eq!(url, "https://acme.vault.example/mcp");
    assert_eq!(headers["Authorization"], ValueSource::Secret("mcp/vault/Authorization".into()));
    assert_eq!(secrets["mcp/vault/Authorization"], "Bearer k-1");
    let err = fill(sse, "vault", &values(&[("key", "k-1")])).unwrap_err().to_string();
    assert!(err.starts_with("key: a secret would go into the URL"), "{err}");
}
