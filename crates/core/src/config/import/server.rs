//! One server object, in any shape but Patchbay's own: its fields are read by
//! the dialects that know them ([`claude`](super::claude),
//! [`opencode`](super::opencode), [`zed`](super::zed),
//! [`ragflow`](super::ragflow)), then the transport is built from them and
//! each env or header value is stored as plain text or a secret.

use std::collections::BTreeMap;

use super::entry::{Fields, Parsed, check_name, check_url, issue, join};
use super::names::normalize_name;
use super::values::{FieldCtx, secret_field};
use super::{Document, ImportOptions, claude, opencode, ragflow, zed};
use crate::config::jsonc::Node;
use crate::config::model::{McpServerConfig, TransportConfig};

/// A non-empty object whose values are all objects: a map of servers.
pub(super) fn is_map_of_objects(node: &Node) -> bool {
    matches!(node, Node::Object(fields) if !fields.is_empty() && fields.iter().all(|(_, v)| matches!(v, Node::Object(_))))
}

/// Whether `node` is one server object rather than a map of them.
pub(super) fn looks_like_server(node: &Node) -> bool {
    ["command", "url", "serverUrl", "httpUrl"].iter().any(|k| node.get(k).is_some())
}

/// A name for a single pasted server without one: the package or program, or the URL's host.
fn derive_name(node: &Node) -> String {
    let from_command = || {
        let Some(Node::String(command)) = node.get("command") else { return None };
        let args: Vec<&str> = match node.get("args") {
            Some(Node::Array(items)) => {
                items.iter().filter_map(|a| if let Node::String(s) = a { Some(s.as_str()) } else { None }).collect()
            }
            _ => Vec::new(),
        };
        // `npx -y @scope/server-x@1.2` names the package; otherwise the program itself.
        let package = args
            .iter()
            .find(|a| !a.starts_with('-'))
            .filter(|_| matches!(command.rsplit('/').next(), Some("npx" | "uvx" | "bunx" | "pnpx" | "docker")));
        let raw = package.copied().unwrap_or(command.as_str());
        let last = raw.rsplit('/').next().unwrap_or(raw);
        let last = last.split('@').find(|s| !s.is_empty()).unwrap_or(last);
        Some(last.to_owned())
    };
    let from_url = || {
        let url = match ["url", "serverUrl", "httpUrl"].iter().find_map(|k| node.get(k)) {
            Some(Node::String(u)) => u,
            _ => return None,
        };
        reqwest::Url::parse(url).ok()?.host_str().map(str::to_owned)
    };
    from_command().or_else(from_url).filter(|n| !normalize_name(n).is_empty()).unwrap_or_else(|| "server".to_owned())
}

/// Reads each server of the map at `prefix`.
pub(super) fn read_map(servers: &Node, prefix: &str, options: &ImportOptions, doc: &mut Document) {
    let Node::Object(fields) = servers else {
        doc.issues.push(issue(prefix, format!("expected an object of servers, found {}", servers.describe())));
        return;
    };
    if fields.is_empty() {
        doc.issues.push(issue(if prefix.is_empty() { "(root)" } else { prefix }, "there are no servers in it"));
    }
    for (key, node) in fields {
        let path = join(prefix, key);
        let parsed = read_server(key, &path, node, options);
        doc.servers.push(parsed);
    }
}

/// Reads a single pasted server object, named by its `name` or else after its program or host.
pub(super) fn read_single(root: &Node, options: &ImportOptions) -> Parsed {
    let name = match root.get("name") {
        Some(Node::String(n)) if !normalize_name(n).is_empty() => n.clone(),
        _ => derive_name(root),
    };
    read_server(&name, "", root, options)
}

/// Reads one server object of any shape but Patchbay's: each field goes to the
/// dialect that knows it, and a field none knows is kept as it is (`extra`).
fn read_server(raw_name: &str, path: &str, node: &Node, options: &ImportOptions) -> Parsed {
    let name = normalize_name(raw_name);
    let mut p = Parsed {
        name: name.clone(),
        source: if path.is_empty() { "(root)".to_owned() } else { path.to_owned() },
        server: None,
        secrets: Vec::new(),
        issues: Vec::new(),
    };
    let here = |key: &str| join(path, key);
    check_name(raw_name, &p.source, &mut p.issues);
    let Node::Object(fields) = node else {
        p.issues.push(issue(&p.source, format!("expected a server object, found {}", node.describe())));
        return p;
    };
    let marked = options.secret_fields.get(&name);
    let mut f = Fields::new(path, &name);
    let mut extra = serde_json::Map::new();
    for (key, value) in fields {
        let known = claude::field(key, value, &mut f)
            || opencode::field(key, value, &mut f)
            || zed::field(key, value, &mut f)
            || ragflow::field(key, value, &mut f);
        if !known {
            extra.insert(key.clone(), value.to_value());
        }
    }
    let Fields {
        command,
        mut command_args,
        mut args,
        env,
        cwd,
        url,
        kind,
        headers,
        enabled,
        title,
        disabled_tools,
        mut issues,
        ..
    } = f;
    let transport_kind = kind.as_ref().and_then(|(t, _)| opencode::transport_kind(t.to_ascii_lowercase()));
    command_args.append(&mut args);
    let args = command_args;
    let kind_path = kind.as_ref().map(|(_, k)| here(k)).unwrap_or_default();
    let transport = match (transport_kind.as_deref(), command, url) {
        (_, Some(_), Some((_, url_key))) => {
            issues.push(issue(
                &p.source,
                format!("has both \"command\" and \"{url_key}\"; a server is either local or remote"),
            ));
            None
        }
        (None | Some("stdio"), Some(command), None) => {
            if command.trim().is_empty() {
                issues.push(issue(&here("command"), "the command is empty"));
            }
            Some(TransportConfig::Stdio { command, args, env: BTreeMap::new(), cwd })
        }
        (Some("stdio"), None, Some(_)) => {
            issues.push(issue(&kind_path, "\"stdio\" needs a \"command\", not a URL"));
            None
        }
        (t, None, Some((u, url_key))) => {
            check_url(&u, &here(&url_key), &mut issues);
            if !args.is_empty() || cwd.is_some() {
                issues.push(issue(&p.source, "\"args\" and \"cwd\" apply only to local servers with a \"command\""));
            }
            let headers = BTreeMap::new();
            match t {
                None => Some(TransportConfig::Auto { url: u, headers }),
                Some("sse") => Some(TransportConfig::Sse { url: u, headers }),
                Some("http" | "streamable-http" | "streamablehttp" | "streamable_http") => {
                    Some(TransportConfig::StreamableHttp { url: u, headers })
                }
                Some(_) => {
                    let (t, _) = kind.clone().unwrap_or_default();
                    issues.push(issue(
                        &kind_path,
                        format!("unknown transport {t:?}; expected \"stdio\", \"sse\", \"http\", \"streamable-http\" or \"streamableHttp\""),
                    ));
                    None
                }
            }
        }
        (Some(t), Some(_), None) => {
            let (orig, _) = kind.clone().unwrap_or_default();
            let reason = if matches!(t, "sse" | "http" | "streamable-http" | "streamablehttp" | "streamable_http") {
                format!("{orig:?} needs a \"url\", not a \"command\"")
            } else {
                format!(
                    "unknown transport {orig:?}; expected \"stdio\", \"sse\", \"http\", \"streamable-http\" or \"streamableHttp\""
                )
            };
            issues.push(issue(&kind_path, reason));
            None
        }
        // A `command` or `url` of the wrong type was reported already.
        (_, None, None) if looks_like_server(node) => None,
        (_, None, None) => {
            issues.push(issue(&p.source, "needs either \"command\" (a local program) or \"url\" (a remote server)"));
            None
        }
    };
    p.issues.append(&mut issues);
    let Some(mut transport) = transport else { return p };
    let values = |entries: BTreeMap<String, (String, String)>, group: &str, p: &mut Parsed| {
        entries
            .into_iter()
            .map(|(k, (v, field_path))| {
                let ctx = FieldCtx { server: &name, key: &k, field: format!("{group}.{k}"), marked };
                let source = secret_field(&ctx, &v, &field_path, p);
                (k, source)
            })
            .collect::<BTreeMap<_, _>>()
    };
    match &mut transport {
        TransportConfig::Stdio { env: target, .. } => {
            if !headers.is_empty() {
                p.issues.push(issue(&here("headers"), "headers apply only to remote servers with a \"url\""));
            }
            *target = values(env, "env", &mut p);
        }
        TransportConfig::StreamableHttp { headers: target, .. }
        | TransportConfig::Sse { headers: target, .. }
        | TransportConfig::Auto { headers: target, .. } => {
            if !env.is_empty() {
                p.issues.push(issue(&here("env"), "env applies only to local servers with a \"command\""));
            }
            *target = values(headers, "headers", &mut p);
        }
        // The reader above builds only file transports.
        TransportConfig::InProcess => {}
    }
    if p.issues.is_empty() {
        let mut server = McpServerConfig::with_transport(name, transport);
        server.enabled = enabled;
        server.title = title;
        server.disabled_tools = disabled_tools;
        server.extra = extra;
        p.server = Some(server);
    }
    p
}
