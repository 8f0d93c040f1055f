//! References to the environment in a configured value: VS Code's
//! `${env:NAME}` and the `${NAME}` of Claude-style configs. Such a value is
//! stored as written (the variable's value never reaches the database) and
//! expanded when the server starts, from the environment Patchbay runs in.

/// Where each reference in `text` is: `(start, end, variable)` by byte.
fn references(text: &str) -> Vec<(usize, usize, &str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("${").map(|i| from + i) {
        let Some(close) = text[at..].find('}').map(|i| at + i) else { break };
        let inner = &text[at + 2..close];
        let name = inner.strip_prefix("env:").unwrap_or(inner);
        let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if valid {
            found.push((at, close + 1, name));
        }
        from = at + 2;
    }
    found
}

/// The environment variables `text` refers to, in order.
pub fn variables(text: &str) -> Vec<&str> {
    references(text).into_iter().map(|(_, _, name)| name).collect()
}

/// `text` with each reference replaced by its variable's value from `lookup`;
/// the first variable `lookup` does not know is the error.
pub fn expand(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end, name) in references(text) {
        out.push_str(&text[last..start]);
        out.push_str(&lookup(name).ok_or_else(|| name.to_owned())?);
        last = end;
    }
    out.push_str(&text[last..]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_spellings_are_references_and_other_placeholders_are_not() {
        assert_eq!(variables("Bearer ${env:GH_TOKEN}"), ["GH_TOKEN"]);
        assert_eq!(variables("${HOME}/data:${_X1}"), ["HOME", "_X1"]);
        for text in ["${keyring:patchbay/gh/TOKEN}", "${input:token}", "${1X}", "${}", "$HOME", "${A-B}", "${A"] {
            assert!(variables(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn expansion_uses_the_lookup_and_names_the_first_missing_variable() {
        let lookup = |name: &str| (name == "GH_TOKEN").then(|| "ghp_1".to_owned());
        assert_eq!(expand("Bearer ${env:GH_TOKEN}!", lookup).unwrap(), "Bearer ghp_1!");
        assert_eq!(expand("no references, $GH_TOKEN", lookup).unwrap(), "no references, $GH_TOKEN");
        assert_eq!(expand("${GH_TOKEN}:${env:NOPE}:${ALSO_NOPE}", lookup).unwrap_err(), "NOPE");
    }
}
