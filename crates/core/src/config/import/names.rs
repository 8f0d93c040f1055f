//! The names an import gives and checks: a server's stored name, the names
//! Patchbay reserves or cannot tell apart, and the secret store's names for a
//! server's fields (with the rule for which fields hold secrets).

use serde::Serialize;

use crate::config::model::BUILTIN_SERVER;

/// The stored form of a server name: trimmed, runs of characters other than
/// letters, digits, `-` and `_` turned into one `-`.
pub fn normalize_name(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.trim().chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

/// Two names that differ only in case name the same server.
pub(super) fn fold(name: &str) -> String {
    normalize_name(name).to_ascii_lowercase()
}

pub(super) const MAX_NAME_LEN: usize = 48;

/// Which env and header names hold secrets, read on the name in ASCII capitals
/// with `-` as `_`. The one rule: the server editor applies the same data
/// (`ui/src/lib/secretNames.json`, written from this by a test that fails when
/// the two differ).
#[derive(Debug, Serialize)]
pub struct SecretNameRule {
    /// A name ending in one of these (`GITHUB_TOKEN`, `X-Api-Key`).
    pub suffixes: &'static [&'static str],
    /// A name that is one of these (`Authorization`).
    pub names: &'static [&'static str],
    /// A name with one of these in it (`DB_PASSWORD_FILE`).
    pub contains: &'static [&'static str],
}

/// The rule [`is_secret_name`] applies.
pub const SECRET_NAMES: SecretNameRule = SecretNameRule {
    suffixes: &["_KEY", "_TOKEN", "_SECRET"],
    names: &["KEY", "TOKEN", "SECRET", "APIKEY", "AUTHORIZATION", "PROXY_AUTHORIZATION"],
    contains: &["PASSWORD", "PASSWD"],
};

/// Whether an environment variable changes which program runs, what it loads or
/// where its packages come from (`LD_PRELOAD`, `NODE_OPTIONS`, `PATH`, proxies…):
/// an install's confirmation points these out.
pub fn steers_program(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    const PREFIXES: &[&str] = &["LD_", "DYLD_", "NPM_CONFIG_", "PIP_", "UV_", "BUN_", "GIT_CONFIG"];
    const EXACT: &[&str] = &[
        "NODE_OPTIONS",
        "NODE_PATH",
        "PATH",
        "PYTHONPATH",
        "PYTHONSTARTUP",
        "PYTHONHOME",
        "PERLLIB",
        "PERL5LIB",
        "PERL5OPT",
        "RUBYOPT",
        "RUBYLIB",
        "NODE_EXTRA_CA_CERTS",
        "JDK_JAVA_OPTIONS",
        "_JAVA_OPTIONS",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "JAVA_TOOL_OPTIONS",
        "BASH_ENV",
        "ENV",
        "GIT_SSH_COMMAND",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p)) || EXACT.contains(&name.as_str())
}

/// Whether an env or header name holds a secret (see [`SECRET_NAMES`]).
pub fn is_secret_name(key: &str) -> bool {
    let k = key.to_ascii_uppercase().replace('-', "_");
    SECRET_NAMES.suffixes.iter().any(|s| k.ends_with(s))
        || SECRET_NAMES.names.contains(&k.as_str())
        || SECRET_NAMES.contains.iter().any(|s| k.contains(s))
}

/// The secret-store name for a field of a server, e.g. `mcp/github/GITHUB_TOKEN`.
pub fn secret_name(server: &str, key: &str) -> String {
    format!("mcp/{server}/{key}")
}

/// The secret name that holds a server's OAuth credentials (`crate::mcp::oauth`).
pub fn oauth_secret_name(server: &str) -> String {
    format!("mcp/{server}/oauth")
}

/// How an MCP server's secret is named in an exported `${keyring:…}`
/// placeholder: `mcp/github/TOKEN` is written `patchbay/github/TOKEN`, so a
/// reader sees which app's keyring holds it. Other names are written as they are.
pub(crate) fn placeholder_name(secret: &str) -> String {
    match secret.strip_prefix("mcp/") {
        Some(rest) => format!("patchbay/{rest}"),
        None => secret.to_owned(),
    }
}

/// The secret a `${keyring:…}` placeholder refers to: the exported form
/// (`patchbay/github/TOKEN`) and the stored name (`mcp/github/TOKEN`) are both accepted.
pub(super) fn secret_from_placeholder(reference: &str) -> String {
    match reference.strip_prefix("patchbay/") {
        Some(rest) => format!("mcp/{rest}"),
        None => reference.to_owned(),
    }
}

/// What Patchbay puts between a server's and a tool's name for the model
/// (`server__tool`, see `crate::mcp::protocol::naming`).
pub const TOOL_NAME_SEPARATOR: &str = "__";

/// Why `server` cannot be a server's name under the model-facing naming
/// scheme (`crate::mcp::protocol::naming`), if it cannot.
///
/// A server name holding the separator (`a__b`) or ending in `_` (`a_`) would
/// read like another server's tool: `a__b` + `c` and `a` + `b__c` are both
/// `a__b__c`, `a_` + `b` and `a` + `_b` both `a___b`. Names are refused when
/// a server is saved or imported, so the first `__` of a model-facing name
/// always ends its server part.
pub fn server_name_problem(server: &str) -> Option<String> {
    if server.contains(TOOL_NAME_SEPARATOR) {
        Some(format!(
            "the server name {server:?} holds {TOOL_NAME_SEPARATOR:?}, which Patchbay puts between a server's and a tool's \
             name for the model, so its tools could pass for another server's; use a single \"_\" or \"-\""
        ))
    } else if server.ends_with('_') {
        Some(format!(
            "the server name {server:?} ends in \"_\", so its tools' names (server{TOOL_NAME_SEPARATOR}tool) could pass for \
             another server's; remove the trailing \"_\""
        ))
    } else {
        None
    }
}

/// Whether `name` is the built-in tools' server name, which no configured server may take.
pub fn is_reserved_name(name: &str) -> bool {
    name.eq_ignore_ascii_case(BUILTIN_SERVER)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_names_that_break_the_scheme_are_refused() {
        for bad in ["a__b", "__a", "a___b", "a_", "_"] {
            let problem = server_name_problem(bad).unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(problem.contains(&format!("{bad:?}")), "{problem}");
        }
        for good in ["a", "a_b", "_a", "my-server", "a-_b"] {
            assert_eq!(server_name_problem(good), None, "{good:?}");
        }
    }

    /// Names the UI's copy of the rule is checked against, with the core's verdicts.
    const EXAMPLES: &[&str] = &[
        "GITHUB_TOKEN",
        "api-key",
        "X-Api-Key",
        "Authorization",
        "proxy-authorization",
        "apikey",
        "Secret",
        "DB_PASSWORD_FILE",
        "mysql_passwd",
        "CLIENT_SECRET",
        "LOG_LEVEL",
        "TOKENIZER",
        "KEYBOARD",
        "X-Team",
        "MONKEY",
        "\u{017F}ecret",
        "token\u{0131}",
        "",
    ];

    /// The server editor marks new env and header rows by the rule the import
    /// uses: `ui/src/lib/secretNames.json` holds it and these verdicts.
    /// `PATCHBAY_WRITE_UI=1` rewrites the file.
    #[test]
    fn the_ui_has_the_secret_name_rule_of_the_core() {
        #[derive(Serialize)]
        struct ForUi {
            rule: SecretNameRule,
            examples: Vec<(&'static str, bool)>,
        }
        let examples = EXAMPLES.iter().map(|n| (*n, is_secret_name(n))).collect();
        let expected = format!("{}\n", serde_json::to_string_pretty(&ForUi { rule: SECRET_NAMES, examples }).unwrap());
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../ui/src/lib/secretNames.json");
        if std::env::var_os("PATCHBAY_WRITE_UI").is_some() {
            std::fs::write(path, &expected).unwrap();
        }
        let found = std::fs::read_to_string(path).unwrap_or_default();
        assert!(found == expected, "{path} differs from the core's rule; run this test with PATCHBAY_WRITE_UI=1");
    }

    #[test]
    fn variables_that_steer_the_program_are_told_apart() {
        for name in [
            "LD_PRELOAD",
            "dyld_insert_libraries",
            "NODE_OPTIONS",
            "PATH",
            "PYTHONPATH",
            "https_proxy",
            "NPM_CONFIG_REGISTRY",
            "GIT_CONFIG_GLOBAL",
        ] {
            assert!(super::steers_program(name), "{name}");
        }
        for name in ["GITHUB_TOKEN", "DEBUG", "PATHS", "NODE_ENV", "HOME", "LOG_LEVEL"] {
            assert!(!super::steers_program(name), "{name}");
        }
    }
}
