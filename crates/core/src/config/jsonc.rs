//! Lenient JSON for pasted configs: comments, trailing commas, key order kept.
//!
//! VS Code writes `mcp.json` with `//` and `/* */` comments and trailing
//! commas; users paste what they have. [`parse`] blanks those out (keeping
//! line and column numbers), then reads the text with `serde_json` into a
//! [`Node`] tree that keeps key order and rejects duplicate keys, which plain
//! `serde_json::Value` would silently collapse.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

/// The largest import accepted, in bytes. Real configs are a few kilobytes.
pub const MAX_IMPORT_BYTES: usize = 1024 * 1024;

/// A JSON value with object keys in document order.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    /// What kind of value this is, for error messages ("a number").
    pub fn describe(&self) -> &'static str {
        match self {
            Node::Null => "null",
            Node::Bool(_) => "a boolean",
            Node::Number(_) => "a number",
            Node::String(_) => "a string",
            Node::Array(_) => "an array",
            Node::Object(_) => "an object",
        }
    }

    /// The value under `key` when this is an object.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match self {
            Node::Object(fields) => fields.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Converts to a `serde_json::Value` (key order follows `serde_json::Map`).
    pub fn to_value(&self) -> serde_json::Value {
        use serde_json::Value;
        match self {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(*b),
            Node::Number(n) => Value::Number(n.clone()),
            Node::String(s) => Value::String(s.clone()),
            Node::Array(items) => Value::Array(items.iter().map(Node::to_value).collect()),
            Node::Object(fields) => Value::Object(fields.iter().map(|(k, v)| (k.clone(), v.to_value())).collect()),
        }
    }
}

/// Why the text is not readable JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Where: `line 3, column 7`, or `input` for problems with the whole text.
    pub location: String,
    /// What is wrong.
    pub reason: String,
}

/// Reads `text` as lenient JSON.
pub fn parse(text: &str) -> Result<Node, SyntaxError> {
    if text.len() > MAX_IMPORT_BYTES {
        return Err(SyntaxError {
            location: "input".into(),
            reason: format!(
                "it is {} bytes, more than the {} bytes a configuration can be; paste only the servers",
                text.len(),
                MAX_IMPORT_BYTES
            ),
        });
    }
    let cleaned = strip(text);
    if cleaned.trim().is_empty() {
        return Err(SyntaxError { location: "input".into(), reason: "it is empty".into() });
    }
    serde_json::from_str::<Node>(&cleaned).map_err(|e| SyntaxError {
        location: format!("line {}, column {}", e.line(), e.column()),
        reason: reason_of(&e),
    })
}

/// serde_json's message without its trailing " at line X column Y".
fn reason_of(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let text = text.strip_suffix(&suffix).unwrap_or(&text).to_owned();
    if e.is_syntax() && text.contains("recursion limit") { "it is nested too deeply".to_owned() } else { text }
}

/// Blanks out comments and trailing commas, keeping every newline so that
/// positions in errors still match the user's text.
fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    // Position in `out` of a comma that may turn out to be trailing.
    let mut pending_comma: Option<usize> = None;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                pending_comma = None;
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                let end = (i + 2).min(bytes.len());
                for b in &mut out[start..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
            }
            b',' => {
                pending_comma = Some(i);
                i += 1;
            }
            b']' | b'}' => {
                if let Some(at) = pending_comma.take() {
                    out[at] = b' ';
                }
                i += 1;
            }
            b if b.is_ascii_whitespace() => i += 1,
            _ => {
                pending_comma = None;
                i += 1;
            }
        }
    }
    // Only ASCII bytes outside strings were replaced by ASCII spaces, so this stays UTF-8;
    // a multi-byte character inside a comment is blanked byte by byte, which is also ASCII.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

/// Writes objects in document order (unlike `serde_json::Map`, which sorts keys).
impl Serialize for Node {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Node::Null => serializer.serialize_unit(),
            Node::Bool(b) => serializer.serialize_bool(*b),
            Node::Number(n) => n.serialize(serializer),
            Node::String(s) => serializer.serialize_str(s),
            Node::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                items.iter().try_for_each(|item| seq.serialize_element(item))?;
                seq.end()
            }
            Node::Object(fields) => {
                let mut map = serializer.serialize_map(Some(fields.len()))?;
                fields.iter().try_for_each(|(k, v)| map.serialize_entry(k, v))?;
                map.end()
            }
        }
    }
}

impl From<&serde_json::Value> for Node {
    fn from(value: &serde_json::Value) -> Self {
        use serde_json::Value;
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(*b),
            Value::Number(n) => Node::Number(n.clone()),
            Value::String(s) => Node::String(s.clone()),
            Value::Array(items) => Node::Array(items.iter().map(Node::from).collect()),
            Value::Object(map) => Node::Object(map.iter().map(|(k, v)| (k.clone(), Node::from(v))).collect()),
        }
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Node::Null, Node::Number))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut fields: Vec<(String, Node)> = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            if fields.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format_args!("duplicate key {key:?}")));
            }
            let value = map.next_value()?;
            fields.push((key, value));
        }
        Ok(Node::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let text = r#"{
            // servers
            "a": [1, 2, /* two */ ],
            "b": "// not a comment, /* nor this */",
        }"#;
        let node = parse(text).unwrap();
        assert_eq!(node.get("a"), Some(&Node::Array(vec![Node::Number(1.into()), Node::Number(2.into())])));
        assert_eq!(node.get("b"), Some(&Node::String("// not a comment, /* nor this */".into())));
    }

    #[test]
    fn key_order_is_kept() {
        let Node::Object(fields) = parse(r#"{"z": 1, "a": 2, "m": 3}"#).unwrap() else { panic!() };
        let keys: Vec<_> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a", "m"]);
    }

    #[test]
    fn errors_give_line_and_column() {
        let err = parse("{\n  \"a\": 1,\n  \"a\": 2\n}").unwrap_err();
        assert!(err.reason.contains("duplicate key \"a\""), "{err:?}");
        assert!(err.location.starts_with("line 3"), "{err:?}");
        let err = parse("{\"a\": }").unwrap_err();
        assert_eq!(err.location, "line 1, column 7");
    }

    #[test]
    fn escaped_quotes_do_not_end_strings() {
        let node = parse(r#"{"a": "x\"//y", }"#).unwrap();
        assert_eq!(node.get("a"), Some(&Node::String("x\"//y".into())));
    }
}
