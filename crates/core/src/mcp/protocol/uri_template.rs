//! URI templates (RFC 6570, levels 1–3 and the prefix modifier) for MCP
//! resource templates: the names of a template's variables, for a form that
//! asks for them, and the URI their values make.
//!
//! Explode (`*`) is read as a plain variable: MCP's values are strings, never
//! lists or maps. A variable with no value is left out, as the RFC says.

use std::collections::BTreeMap;

use crate::mcp::error::McpError;

/// One `{…}` expression: its operator and its variables (name, prefix length).
struct Expression<'a> {
    operator: Option<char>,
    variables: Vec<(&'a str, Option<usize>)>,
}

/// Splits `template` into literal text and expressions.
fn parse(template: &str) -> Result<Vec<Result<&str, Expression<'_>>>, McpError> {
    let invalid = |reason: String| McpError::UriTemplate { template: template.to_owned(), reason };
    let mut parts = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        if open > 0 {
            parts.push(Ok(&rest[..open]));
        }
        let close = rest[open..]
            .find('}')
            .ok_or_else(|| invalid(format!("the `{{` at {} is never closed", template.len() - rest.len() + open)))?;
        let body = &rest[open + 1..open + close];
        let (operator, list) = match body.chars().next() {
            Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => (Some(c), &body[1..]),
            _ => (None, body),
        };
        let mut variables = Vec::new();
        for spec in list.split(',') {
            let spec = spec.trim_end_matches('*');
            let (name, prefix) = match spec.split_once(':') {
                Some((name, n)) => {
                    let n = n
                        .parse::<usize>()
                        .map_err(|_| invalid(format!("{spec:?} has a prefix that is not a number")))?;
                    (name, Some(n))
                }
                None => (spec, None),
            };
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%')) {
                return Err(invalid(format!("{{{body}}} has a variable name that is not valid")));
            }
            variables.push((name, prefix));
        }
        parts.push(Err(Expression { operator, variables }));
        rest = &rest[open + close + 1..];
    }
    if rest.contains('}') {
        return Err(invalid("it has a `}` with no `{` before it".into()));
    }
    if !rest.is_empty() {
        parts.push(Ok(rest));
    }
    Ok(parts)
}

/// The names of `template`'s variables, each once, in order.
pub fn variables(template: &str) -> Result<Vec<String>, McpError> {
    let mut names: Vec<String> = Vec::new();
    for part in parse(template)? {
        if let Err(expression) = part {
            for (name, _) in expression.variables {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_owned());
                }
            }
        }
    }
    Ok(names)
}

/// The URI `template` makes with `values`; values are percent-encoded as the
/// expression's operator requires.
pub fn expand(template: &str, values: &BTreeMap<String, String>) -> Result<String, McpError> {
    let mut out = String::with_capacity(template.len());
    for part in parse(template)? {
        let expression = match part {
            Ok(literal) => {
                out.push_str(literal);
                continue;
            }
            Err(expression) => expression,
        };
        let (first, separator, named, if_empty, reserved) = match expression.operator {
            None => ("", ",", false, "", false),
            Some('+') => ("", ",", false, "", true),
            Some('#') => ("#", ",", false, "", true),
            Some('.') => (".", ".", false, "", false),
            Some('/') => ("/", "/", false, "", false),
            Some(';') => (";", ";", true, "", false),
            Some('?') => ("?", "&", true, "=", false),
            Some('&') => ("&", "&", true, "=", false),
            Some(_) => unreachable!("parse only keeps the RFC's operators"),
        };
        let mut written = false;
        for (name, prefix) in expression.variables {
            let Some(value) = values.get(name) else { continue };
            out.push_str(if written { separator } else { first });
            written = true;
            let value: String = match prefix {
                Some(n) => value.chars().take(n).collect(),
                None => value.clone(),
            };
            if named {
                out.push_str(name);
                if value.is_empty() {
                    out.push_str(if_empty);
                    continue;
                }
                out.push('=');
            }
            encode(&value, reserved, &mut out);
        }
    }
    Ok(out)
}

/// Percent-encodes `value` into `out`: unreserved characters stay, and with
/// `reserved` so do reserved ones and existing `%XX` escapes.
fn encode(value: &str, reserved: bool, out: &mut String) {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let keep = b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (reserved && b":/?#[]@!$&'()*+,;=".contains(&b));
        let escape =
            reserved && b == b'%' && bytes.get(i + 1..i + 3).is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit));
        if keep {
            out.push(b as char);
        } else if escape {
            out.push_str(&value[i..i + 3]);
            i += 3;
            continue;
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
        i += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn expands_the_rfcs_examples() {
        // RFC 6570, section 1.2 and 3.2, with var = "value", hello = "Hello World!", path = "/foo/bar".
        let v = values(&[
            ("var", "value"),
            ("hello", "Hello World!"),
            ("path", "/foo/bar"),
            ("x", "1024"),
            ("y", "768"),
            ("empty", ""),
        ]);
        for (template, expected) in [
            ("{var}", "value"),
            ("{hello}", "Hello%20World%21"),
            ("{+hello}", "Hello%20World!"),
            ("{+path}/here", "/foo/bar/here"),
            ("{#hello}", "#Hello%20World!"),
            ("map?{x,y}", "map?1024,768"),
            ("{.var}", ".value"),
            ("{/var,x}/here", "/value/1024/here"),
            ("{;x,y,empty}", ";x=1024;y=768;empty"),
            ("{?x,y,empty}", "?x=1024&y=768&empty="),
            ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
            ("{var:3}", "val"),
            ("{undef}X{?undef}", "X"),
            ("{+half}", "50%25"),
            ("{+escaped}", "a%20b"),
            ("demo://resource/dynamic/text/{resourceId}", "demo://resource/dynamic/text/7"),
        ] {
            let mut v = v.clone();
            v.insert("half".into(), "50%".into());
            v.insert("escaped".into(), "a%20b".into());
            v.insert("resourceId".into(), "7".into());
            assert_eq!(expand(template, &v).unwrap(), expected, "{template}");
        }
        assert_eq!(expand("file:///{path}", &values(&[("path", "ünï code")])).unwrap(), "file:///%C3%BCn%C3%AF%20code");
    }

    #[test]
    fn lists_each_variable_once_and_names_what_is_wrong() {
        assert_eq!(
            variables("repo://{owner}/{repo}/blob{/path*}{?ref,owner}").unwrap(),
            ["owner", "repo", "path", "ref"]
        );
        assert_eq!(variables("plain://no/variables").unwrap(), Vec::<String>::new());
        let err = variables("x://{open").unwrap_err().to_string();
        assert!(err.contains("\"x://{open\"") && err.contains("the `{` at 4 is never closed"), "{err}");
        let err = variables("x://}").unwrap_err().to_string();
        assert!(err.contains("`}` with no `{`"), "{err}");
        let err = variables("x://{a b}").unwrap_err().to_string();
        assert!(err.contains("{a b} has a variable name that is not valid"), "{err}");
        let err = variables("x://{a:z}").unwrap_err().to_string();
        assert!(err.contains("prefix that is not a number"), "{err}");
    }
}
