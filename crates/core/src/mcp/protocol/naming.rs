//! Model-facing tool names.
//!
//! Models see every server's tools in one flat list, and providers only accept
//! names matching `^[a-zA-Z0-9_-]{1,64}$`. [`ToolNames`] gives each
//! `(server, tool)` pair a name of the form `server__tool`, where both parts are
//! sanitized (any other character becomes `_`). A short hash of the original
//! pair is appended when the plain form would be longer than 64 characters,
//! when sanitizing changed something, or when two pairs would end up with the
//! same name. The table keeps an exact reverse mapping, so a name the model
//! calls always resolves to the one tool it was given for.
//!
//! Names are deterministic: the same set of tools always yields the same
//! names, whatever order they are listed in, and a pair whose plain name is
//! valid and unique keeps it whatever else is in the set.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

// The separator between the server prefix and the tool name; config owns it, beside the rule
// that keeps it out of server names.
use crate::config::import::TOOL_NAME_SEPARATOR as SEPARATOR;

/// The longest name providers accept.
pub const MAX_NAME_LEN: usize = 64;
/// Longest server prefix kept before the separator.
const MAX_PREFIX_LEN: usize = 24;
/// Hex digits of the hash suffix in the common case.
const SHORT_HASH_LEN: usize = 8;

/// Whether `name` is acceptable to providers: `^[a-zA-Z0-9_-]{1,64}$`.
pub fn is_valid_model_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME_LEN && name.bytes().all(is_name_byte)
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Replaces every character outside `[a-zA-Z0-9_-]` with `_`.
fn sanitize(part: &str) -> String {
    part.chars().map(|c| if c.is_ascii() && is_name_byte(c as u8) { c } else { '_' }).collect()
}

/// The hex sha256 of the original pair (NUL-separated, so no two pairs share input).
fn pair_hash(server: &str, tool: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    hex::encode(hasher.finalize())
}

/// The sanitized prefix `server__` (truncated so long server names leave room for the tool).
fn prefix(server: &str) -> String {
    let mut prefix = sanitize(server);
    prefix.truncate(MAX_PREFIX_LEN);
    if prefix.is_empty() {
        prefix.push('_');
    }
    prefix.push_str(SEPARATOR);
    prefix
}

/// The name without any hash, if it is valid and faithful to the original pair.
fn plain_name(server: &str, tool: &str) -> Option<String> {
    let name = format!("{}{tool}", prefix(server));
    let faithful = sanitize(server) == server && server.len() <= MAX_PREFIX_LEN && !server.is_empty();
    (faithful && is_valid_model_name(&name)).then_some(name)
}

/// The name with a hash suffix of `hash_len` hex digits, cut to fit 64 characters.
fn hashed_name(server: &str, tool: &str, hash_len: usize) -> String {
    let hash = &pair_hash(server, tool)[..hash_len];
    let mut name = prefix(server);
    name.push_str(&sanitize(tool));
    // Every character is ASCII after sanitizing, so byte truncation is safe.
    name.truncate(MAX_NAME_LEN - 1 - hash_len);
    name.push('_');
    name.push_str(hash);
    name
}

/// One tool of one server, as the host knows it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ToolRef {
    /// The configured server name.
    pub server: String,
    /// The tool's name as the server reported it.
    pub tool: String,
}

/// The model-facing names of a set of tools, both ways.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolNames {
    forward: BTreeMap<ToolRef, String>,
    reverse: BTreeMap<String, ToolRef>,
}

impl ToolNames {
    /// Names every `(server, tool)` pair. Duplicate pairs are named once.
    pub fn build<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let pairs: BTreeSet<ToolRef> = pairs
            .into_iter()
            .map(|(server, tool)| ToolRef { server: server.to_owned(), tool: tool.to_owned() })
            .collect();

        // Plain names claimed by exactly one pair keep it; the others are hashed.
        let mut claims: BTreeMap<String, usize> = BTreeMap::new();
        let plain: Vec<Option<String>> = pairs.iter().map(|p| plain_name(&p.server, &p.tool)).collect();
        for name in plain.iter().flatten() {
            *claims.entry(name.clone()).or_default() += 1;
        }

        let mut names = Self::default();
        let mut hashed = Vec::new();
        for (pair, plain) in pairs.into_iter().zip(plain) {
            match plain {
                Some(name) if claims[&name] == 1 => names.insert(pair, name),
                _ => hashed.push(pair),
            }
        }
        // Hashed names are placed in sorted order; a clash (vanishingly rare, or
        // crafted) lengthens the hash until the name is free.
        for pair in hashed {
            let name = (SHORT_HASH_LEN..=MAX_NAME_LEN / 2)
                .step_by(4)
                .map(|len| hashed_name(&pair.server, &pair.tool, len))
                .find(|name| !names.reverse.contains_key(name) && !claims.contains_key(name))
                .unwrap_or_else(|| {
                    // 32 hex digits of sha256 collided: number the clash instead.
                    (0u32..)
                        .map(|n| {
                            let mut name = hashed_name(&pair.server, &pair.tool, SHORT_HASH_LEN);
                            let suffix = format!("-{n}");
                            name.truncate(MAX_NAME_LEN - suffix.len());
                            name + &suffix
                        })
                        .find(|name| !names.reverse.contains_key(name) && !claims.contains_key(name))
                        .expect("an unbounded counter finds a free name")
                });
            names.insert(pair, name);
        }
        names
    }

    fn insert(&mut self, pair: ToolRef, name: String) {
        debug_assert!(is_valid_model_name(&name), "invalid tool name {name:?}");
        self.reverse.insert(name.clone(), pair.clone());
        self.forward.insert(pair, name);
    }

    /// The model-facing name of a server's tool.
    pub fn model_name(&self, server: &str, tool: &str) -> Option<&str> {
        self.forward.get(&ToolRef { server: server.to_owned(), tool: tool.to_owned() }).map(String::as_str)
    }

    /// The server and tool behind a model-facing name.
    pub fn resolve(&self, model_name: &str) -> Option<&ToolRef> {
        self.reverse.get(model_name)
    }

    /// Every `(tool, model-facing name)`, sorted by server then tool.
    pub fn iter(&self) -> impl Iterator<Item = (&ToolRef, &str)> {
        self.forward.iter().map(|(pair, name)| (pair, name.as_str()))
    }

    /// How many tools are named.
    pub fn len(&self) -> usize {
        self.forward.len()
    }

    /// Whether no tool is named.
    pub fn is_empty(&self) -> bool {
        self.forward.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_names_stay_readable() {
        let names = ToolNames::build([("files", "read_file"), ("time", "get-time")]);
        assert_eq!(names.model_name("files", "read_file"), Some("files__read_file"));
        assert_eq!(names.model_name("time", "get-time"), Some("time__get-time"));
        assert_eq!(names.resolve("files__read_file").map(|r| r.tool.as_str()), Some("read_file"));
        assert_eq!(names.resolve("files__nope"), None);
    }

    #[test]
    fn sanitized_and_long_names_get_a_hash() {
        let long = "x".repeat(100);
        let names = ToolNames::build([("my server", "a.b"), ("s", long.as_str())]);
        let sanitized = names.model_name("my server", "a.b").unwrap();
        assert!(sanitized.starts_with("my_server__a_b_"), "{sanitized}");
        assert_eq!(sanitized.len(), "my_server__a_b_".len() + SHORT_HASH_LEN);
        let cut = names.model_name("s", &long).unwrap();
        assert_eq!(cut.len(), MAX_NAME_LEN);
        assert!(cut.starts_with("s__xxx"));
    }

    #[test]
    fn ambiguous_prefixes_do_not_collide() {
        // "a__b" + "c" and "a" + "b__c" both read "a__b__c" in plain form.
        let names = ToolNames::build([("a__b", "c"), ("a", "b__c")]);
        let first = names.model_name("a__b", "c").unwrap();
        let second = names.model_name("a", "b__c").unwrap();
        assert_ne!(first, second);
        assert_eq!(names.resolve(first).unwrap().server, "a__b");
        assert_eq!(names.resolve(second).unwrap().server, "a");
    }

    #[test]
    fn same_tool_on_two_servers_gets_two_names() {
        let names = ToolNames::build([("one", "echo"), ("two", "echo")]);
        assert_eq!(names.model_name("one", "echo"), Some("one__echo"));
        assert_eq!(names.model_name("two", "echo"), Some("two__echo"));
    }

    #[test]
    fn a_name_shaped_like_a_hashed_one_does_not_steal_it() {
        let hashed = hashed_name("s", "a.b", SHORT_HASH_LEN);
        let tool = hashed.trim_start_matches("s__").to_owned();
        let names = ToolNames::build([("s", "a.b"), ("s", tool.as_str())]);
        assert_ne!(names.model_name("s", "a.b"), names.model_name("s", &tool));
        assert_eq!(names.len(), 2);
    }

    fn pair() -> impl Strategy<Value = (String, String)> {
        // Small alphabets make sanitizing and prefix collisions frequent.
        (r"[a-b_. é]{0,30}", r"[a-b_.\-/ é]{0,80}")
    }

    proptest! {
        #[test]
        fn names_are_valid_unique_reversible_and_order_independent(
            pairs in proptest::collection::vec(pair(), 0..40)
        ) {
            let borrowed: Vec<(&str, &str)> = pairs.iter().map(|(s, t)| (s.as_str(), t.as_str())).collect();
            let names = ToolNames::build(borrowed.iter().copied());
            let distinct: BTreeSet<_> = borrowed.iter().copied().collect();
            prop_assert_eq!(names.len(), distinct.len());
            let mut seen = BTreeSet::new();
            for (server, tool) in &distinct {
                let name = names.model_name(server, tool).unwrap();
                prop_assert!(is_valid_model_name(name), "{:?}", name);
                prop_assert!(seen.insert(name.to_owned()), "duplicate {:?}", name);
                let back = names.resolve(name).unwrap();
                prop_assert_eq!((back.server.as_str(), back.tool.as_str()), (*server, *tool));
            }
            let reversed = ToolNames::build(borrowed.iter().rev().copied());
            prop_assert_eq!(reversed, names);
        }
    }
}
