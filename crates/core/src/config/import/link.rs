//! Install links: the "Add to …" buttons of server READMEs, read into the
//! one-server document any import reads.
//!
//! Patchbay's own `patchbay://mcp/install?name=NAME&config=BASE64(JSON)` has
//! the shape of Cursor's (`cursor://anysphere.cursor-deeplink/mcp/install`, or
//! its web form `https://cursor.com/install-mcp`); VS Code's
//! `vscode:mcp/install?{json}` carries the name and `inputs` inside the JSON,
//! and its web redirects wrap that link or split it into `name` and `config`.
//! A link is logged, shared and clicked from pages anyone writes, so it may not
//! carry a secret value: one in an env variable, header, URL or argument named
//! like a secret is refused, and an empty one becomes a prompt the user answers.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use serde_json::{Map, Value};
use url::Url;

use super::entry::{ImportIssue, issue};
use super::names::is_secret_name;
use super::values::{INPUT_PREFIX, KEYRING_PREFIX};
use crate::config::env_refs;

/// Where an install link comes from, by its shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    /// `patchbay://mcp/install?name=&config=` (base64 JSON).
    Patchbay,
    /// Cursor's deep link or web install page (base64 JSON).
    Cursor,
    /// VS Code's `vscode:mcp/install?{json}` and its web redirects.
    VsCode,
}

/// What a link read into: the import text and the secret values it carried.
#[derive(Debug)]
pub(super) struct Decoded {
    pub kind: LinkKind,
    /// A `{"servers": {NAME: …}, "inputs": […]}` document.
    pub text: String,
    /// The secret values the link carried, each refused where it is.
    pub refused: Vec<ImportIssue>,
}

/// The path every issue about the link itself is reported at.
const AT: &str = "(link)";

/// The links Patchbay installs from, as the refusal of any other names them.
const TAKEN: &str = "Patchbay installs from patchbay://mcp/install, cursor://anysphere.cursor-deeplink/mcp/install, \
                     https://cursor.com/install-mcp and vscode:mcp/install links";

/// Whether `text` is one word that starts with a URL scheme (`name:`): an
/// install link, not a configuration (which starts with `{`, `[` or a TOML key).
pub fn is_link(text: &str) -> bool {
    let text = text.trim();
    let Some((scheme, _)) = text.split_once(':') else { return false };
    !text.contains(char::is_whitespace)
        && scheme.len() > 1
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Reads an install link, or says where and why it cannot be read.
pub(super) fn read(text: &str) -> Result<Decoded, ImportIssue> {
    let url = Url::parse(text.trim()).map_err(|e| issue(AT, format!("not a valid link: {e}")))?;
    let (kind, name, server, inputs) = match (url.scheme(), url.host_str().unwrap_or(""), url.path()) {
        ("patchbay", "mcp", "/install") => named(LinkKind::Patchbay, &url, base64_json)?,
        ("cursor", "anysphere.cursor-deeplink", "/mcp/install") => named(LinkKind::Cursor, &url, base64_json)?,
        ("https", "cursor.com" | "www.cursor.com", path) if path.ends_with("/install-mcp") => {
            named(LinkKind::Cursor, &url, base64_json)?
        }
        ("vscode" | "vscode-insiders", _, "mcp/install") => vscode(&url)?,
        ("https", "vscode.dev" | "insiders.vscode.dev", "/redirect") => {
            let inner = query(&url, "url")?;
            if !inner.starts_with("vscode") {
                return Err(issue(AT, format!("the VS Code redirect leads to {inner:?}, not a vscode: install link")));
            }
            return read(&inner);
        }
        ("https", "vscode.dev" | "insiders.vscode.dev", "/redirect/mcp/install") => {
            named(LinkKind::VsCode, &url, |config| json(config, "config"))?
        }
        ("patchbay" | "cursor" | "vscode" | "vscode-insiders", _, _) => {
            return Err(issue(AT, format!("{} links do nothing in Patchbay; {TAKEN}", url.scheme())));
        }
        (scheme, host, _) => {
            let what =
                if scheme.starts_with("http") { format!("a link to {host}") } else { format!("a {scheme}: link") };
            return Err(issue(AT, format!("{what} is not an install link; {TAKEN}")));
        }
    };
    let mut server = server;
    let mut inputs = inputs;
    let refused = guard_secrets(&name, &mut server, &mut inputs);
    // VS Code's shape, whatever the link's: it is the one with input descriptions.
    let document = serde_json::json!({"servers": {&name: server}, "inputs": inputs});
    Ok(Decoded { kind, text: document.to_string(), refused })
}

/// A link's one value named `key`; an error when it is missing.
fn query(url: &Url, key: &str) -> Result<String, ImportIssue> {
    url.query_pairs()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
        .filter(|v| !v.trim().is_empty())
        .ok_or_else(|| issue(AT, format!("the link has no {key:?} value")))
}

type Parts = (LinkKind, String, Map<String, Value>, Vec<Value>);

/// A link with `name=` and `config=` (read by `decode`).
fn named(kind: LinkKind, url: &Url, decode: fn(&str) -> Result<Value, ImportIssue>) -> Result<Parts, ImportIssue> {
    let name = query(url, "name")?;
    match decode(&query(url, "config")?)? {
        Value::Object(server) => Ok((kind, name, server, Vec::new())),
        other => Err(issue("(link).config", format!("expected a server object, found {}", describe(&other)))),
    }
}

/// Cursor's `config`: JSON in base64, standard or URL-safe, padded or not (a
/// `+` that came through a query as a space is put back).
fn base64_json(config: &str) -> Result<Value, ImportIssue> {
    let trimmed = config.trim().trim_end_matches('=').replace(' ', "+");
    let bytes = STANDARD_NO_PAD
        .decode(&trimmed)
        .or_else(|_| URL_SAFE_NO_PAD.decode(&trimmed))
        .map_err(|e| issue("(link).config", format!("not base64: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|_| issue("(link).config", "the decoded value is not UTF-8 text"))?;
    json(&text, "config")
}

/// JSON text at `(link).field`.
fn json(text: &str, field: &str) -> Result<Value, ImportIssue> {
    serde_json::from_str(text).map_err(|e| issue(&format!("(link).{field}"), format!("not JSON: {e}")))
}

/// VS Code's `mcp/install?{json}`: the server with its `name` and `inputs`.
fn vscode(url: &Url) -> Result<Parts, ImportIssue> {
    let raw = url.query().ok_or_else(|| issue(AT, "the link carries no server (nothing after \"?\")"))?;
    let text = percent_decode(raw);
    let Value::Object(mut server) = json(&text, "query")? else {
        return Err(issue("(link).query", "expected a server object with a \"name\""));
    };
    let name = match server.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name,
        _ => return Err(issue("(link).query.name", "the server needs a \"name\"")),
    };
    let inputs = match server.remove("inputs") {
        None => Vec::new(),
        Some(Value::Array(inputs)) => inputs,
        Some(other) => {
            return Err(issue("(link).query.inputs", format!("expected an array, found {}", describe(&other))));
        }
    };
    Ok((LinkKind::VsCode, name, server, inputs))
}

fn percent_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("v={}", text.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_default()
}

fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Whether `value` is a reference (to a prompt, the keyring or the
/// environment), which a link may carry, rather than a value.
fn is_reference(value: &str) -> bool {
    value.contains(INPUT_PREFIX) || value.contains(KEYRING_PREFIX) || !env_refs::variables(value).is_empty()
}

/// Refuses every secret value `server` carries, each at its path; an empty
/// secret-named env variable or header becomes an `${input:…}` prompt.
fn guard_secrets(name: &str, server: &mut Map<String, Value>, inputs: &mut Vec<Value>) -> Vec<ImportIssue> {
    let mut refused = Vec::new();
    let mut refuse = |path: String| {
        refused.push(issue(
            &path,
            "an install link may not carry a secret value (links are logged and shared); the link must leave it \
             empty, and Patchbay asks for it",
        ))
    };
    for field in ["env", "headers"] {
        let Some(Value::Object(values)) = server.get_mut(field) else { continue };
        for (key, value) in values.iter_mut() {
            let Value::String(text) = value else { continue };
            if !is_secret_name(key) || is_reference(text) {
                continue;
            }
            if text.trim().is_empty() {
                let id = format!("{name}-{key}");
                *text = format!("{INPUT_PREFIX}{id}}}");
                inputs.push(serde_json::json!({"id": id, "description": format!("{key} for {name}")}));
            } else {
                refuse(format!("(link).{field}.{key}"));
            }
        }
    }
    for field in ["url", "serverUrl", "httpUrl"] {
        let Some(Value::String(text)) = server.get(field) else { continue };
        let Ok(url) = Url::parse(text) else { continue };
        if url.password().is_some() {
            refuse(format!("(link).{field} (its password)"));
        }
        for (key, value) in url.query_pairs() {
            if is_secret_name(&key) && !value.is_empty() && !is_reference(&value) {
                refuse(format!("(link).{field} (its {key:?} parameter)"));
            }
        }
    }
    if let Some(Value::Array(args)) = server.get("args") {
        let args: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
        for (i, arg) in args.iter().enumerate() {
            let Some(flag) = arg.strip_prefix("--") else { continue };
            let (flag, value) = match flag.split_once('=') {
                Some((flag, value)) => (flag, Some(value)),
                None => (flag, args.get(i + 1).copied().filter(|next| !next.starts_with('-'))),
            };
            if is_secret_name(flag) && value.is_some_and(|v| !v.is_empty() && !is_reference(v)) {
                refuse(format!("(link).args[{i}]"));
            }
        }
    }
    refused
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cursor_config(server: &Value) -> String {
        base64::engine::general_purpose::STANDARD.encode(server.to_string())
    }

    fn document(link: &str) -> Value {
        let decoded = read(link).unwrap_or_else(|e| panic!("{link}: {e}"));
        assert!(decoded.refused.is_empty(), "{:?}", decoded.refused);
        serde_json::from_str(&decoded.text).unwrap()
    }

    fn refusal(link: &str) -> String {
        match read(link) {
            Ok(decoded) => decoded.refused.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn patchbay_and_cursor_links_carry_base64_json() {
        let server = serde_json::json!({"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]});
        let expected = serde_json::json!({"servers": {"memory": server}, "inputs": []});
        let config = cursor_config(&server);
        let encoded = url::form_urlencoded::byte_serialize(config.as_bytes()).collect::<String>();
        for link in [
            format!("patchbay://mcp/install?name=memory&config={encoded}"),
            format!("cursor://anysphere.cursor-deeplink/mcp/install?name=memory&config={encoded}"),
            format!("https://cursor.com/en/install-mcp?name=memory&config={encoded}"),
            // Unpadded, URL-safe, and a "+" turned into a space on the way.
            format!("patchbay://mcp/install?name=memory&config={}", URL_SAFE_NO_PAD.encode(server.to_string())),
            format!("patchbay://mcp/install?name=memory&config={}", config.replace('+', "%20")),
        ] {
            assert_eq!(document(&link), expected, "{link}");
        }
        assert!(is_link("  patchbay://mcp/install?name=a&config=e30\n"));
        assert!(!is_link("{\"mcpServers\": {}}") && !is_link("[mcp_servers.a]\ncommand = \"x\"") && !is_link("c:x y"));
    }

    #[test]
    fn vscode_links_carry_the_name_and_inputs_in_the_json() {
        let server = serde_json::json!({
            "name": "github", "type": "http", "url": "https://api.githubcopilot.com/mcp/",
            "headers": {"Authorization": "Bearer ${input:pat}"},
            "inputs": [{"id": "pat", "type": "promptString", "description": "GitHub token", "password": true}],
        });
        let link = format!("vscode:mcp/install?{}", urlencode(&server.to_string()));
        let got = document(&link);
        assert_eq!(got["servers"]["github"]["url"], "https://api.githubcopilot.com/mcp/");
        assert!(got["servers"]["github"].get("name").is_none());
        assert_eq!(got["inputs"][0]["id"], "pat");
        // The GitHub-friendly redirect wraps the same link; the newer badge splits name and config.
        assert_eq!(document(&format!("https://insiders.vscode.dev/redirect?url={}", urlencode(&link))), got);
        let config = serde_json::json!({"command": "uvx", "args": ["mcp-server-time"]});
        let split =
            format!("https://vscode.dev/redirect/mcp/install?name=time&config={}", urlencode(&config.to_string()));
        assert_eq!(document(&split)["servers"]["time"], config);
    }

    fn urlencode(text: &str) -> String {
        url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
    }

    #[test]
    fn a_bad_link_says_where_and_why() {
        for (link, expected) in [
            ("patchbay://mcp/install?name=x&config=%%%", "(link).config: not base64"),
            ("patchbay://mcp/install?name=x&config=bm90IGpzb24", "(link).config: not JSON"),
            ("patchbay://mcp/install?name=x&config=WzFd", "(link).config: expected a server object, found an array"),
            ("patchbay://mcp/install?config=e30", "(link): the link has no \"name\" value"),
            ("patchbay://mcp/remove?name=x", "(link): patchbay links do nothing in Patchbay; Patchbay installs from"),
            ("slack://open?team=1", "(link): a slack: link is not an install link; Patchbay installs from"),
            ("https://example.com/install", "(link): a link to example.com is not an install link"),
            ("vscode:mcp/install?%7B%22command%22%3A%22x%22%7D", "(link).query.name: the server needs a \"name\""),
            ("vscode:mcp/install?%7Bbroken", "(link).query: not JSON"),
            ("https://vscode.dev/redirect?url=https%3A%2F%2Fevil.example", "leads to \"https://evil.example\""),
        ] {
            let got = refusal(link);
            assert!(got.contains(expected), "{link}: {got}");
        }
    }

    #[test]
    fn a_secret_value_is_refused_where_it_is_and_an_empty_one_is_asked_for() {
        let server = serde_json::json!({
            "command": "npx",
            "args": ["server", "--api-key=sk-live-123", "--token", "abc", "--verbose", "--password", "${input:pw}"],
            "env": {"API_KEY": "sk-live-456", "GITHUB_TOKEN": "", "REGION": "eu", "SECRET": "${env:MY_SECRET}"},
        });
        let link = format!("patchbay://mcp/install?name=svc&config={}", urlencode(&cursor_config(&server)));
        let got = refusal(&link);
        for path in ["(link).env.API_KEY", "(link).args[1]", "(link).args[2]"] {
            assert!(got.contains(&format!("{path}: an install link may not carry a secret value")), "{path}: {got}");
        }
        assert_eq!(got.matches("may not carry").count(), 3, "{got}");

        let remote = serde_json::json!({
            "url": "https://u:p@mcp.example.com/sse?apiKey=k1&region=eu",
            "headers": {"Authorization": "Bearer abc", "X-Api-Key": ""},
        });
        let link = format!("patchbay://mcp/install?name=r&config={}", urlencode(&cursor_config(&remote)));
        let decoded = read(&link).unwrap();
        let got: Vec<String> = decoded.refused.iter().map(|i| i.path.clone()).collect();
        assert_eq!(
            got,
            ["(link).headers.Authorization", "(link).url (its password)", "(link).url (its \"apiKey\" parameter)"]
        );
        let text: Value = serde_json::from_str(&decoded.text).unwrap();
        assert_eq!(text["servers"]["r"]["headers"]["X-Api-Key"], "${input:r-X-Api-Key}");

        // The empty token becomes a prompt in the document's inputs.
        let empty = serde_json::json!({"command": "npx", "env": {"GITHUB_TOKEN": ""}});
        let link = format!("patchbay://mcp/install?name=gh&config={}", urlencode(&cursor_config(&empty)));
        let decoded = read(&link).unwrap();
        assert!(decoded.refused.is_empty());
        let text: Value = serde_json::from_str(&decoded.text).unwrap();
        assert_eq!(text["servers"]["gh"]["env"]["GITHUB_TOKEN"], "${input:gh-GITHUB_TOKEN}");
        assert_eq!(text["inputs"][0]["description"], "GITHUB_TOKEN for gh");
    }
}
