//! Registry entries from the API's JSON (the shapes of the registry's own
//! examples), and searches over real HTTP against a registry served on
//! 127.0.0.1 (test-support's `catalog`).

use patchbay_test_support::catalog::serve;
use serde_json::{Value, json};

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
                        {"name": "WEATHER_API_KEY", "isRequired": true, "isSecret": true},
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

    assert_eq!(stdio(&page.entries[1]).1, ["acme-weather==1.2.0"]);
    let (command, args, _) = stdio(&page.entries[2]);
    assert_eq!(
        (command, args),
        ("docker", vec!["run", "-i", "--rm", "-e", "WEATHER_API_KEY", "ghcr.io/acme/weather:1.2.0"])
    );

    let TransportConfig::StreamableHttp { url, headers } = &page.entries[3].config.transport else { panic!("http") };
    assert_eq!(url, "https://mcp.acme.example/weather");
    assert_eq!(headers["Authorization"], ValueSource::Secret(String::new()));
    assert_eq!(headers["X-Region"], ValueSource::Plain("eu".into()));
    assert!(matches!(&page.entries[4].config.transport, TransportConfig::Sse { url, .. } if url.ends_with("/sse")));
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
    let unreachable = HttpRegistry::new("http://127.0.0.1:9").search("x", None, &cancel).await.unwrap_err();
    assert!(matches!(unreachable, RegistryError::Request { .. }), "{unreachable}");

    cancel.cancel();
    assert!(matches!(registry.search("weat", None, &cancel).await, Err(RegistryError::Cancelled)));
}
