//! The core's floors: **each top-level module imports only modules on floors below it**.
//!
//! [`FLOORS`] lists the modules of `src/lib.rs`, lowest floor first. The test reads every file under
//! `src/`, drops comments, string and char literals and every item under `#[cfg(test)]` (tests may
//! reach anywhere), and follows each path that leaves its top-level module: `crate::x…`, the groups of
//! `use crate::{x, y}`, and `super::` climbing above it. Re-exports (`pub use`) count as imports. A
//! path to a module on the same floor or above fails, naming the file and the path; so would any
//! cycle. A module missing from the list fails too: put it on the floor it belongs to.
//!
//! Only the top level is checked here: the floors inside `mcp/` (wire, protocol, registry) are not.

use std::collections::BTreeSet;
use std::path::Path;

/// The core's modules, lowest floor first; a module may import only modules on earlier lines.
const FLOORS: &[&[&str]] = &[
    &["clock", "file_name", "folder", "logfile", "paths"],
    &["downloads", "secrets", "store"],
    &["config", "info", "net"],
    &["bundle", "catalog", "llm"],
    &["conversations"],
    &["agent"],
    &["assistants", "mcp"],
    &["rag"],
    &["attach", "builtin", "roots"],
    &["app"],
];

#[test]
fn each_module_imports_only_floors_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_dir(&src, &src, &mut files);
    let problems = problems(&files);
    assert!(problems.is_empty(), "the core's floors are broken:\n  {}", problems.join("\n  "));
}

#[test]
fn the_check_names_upward_imports_and_unlisted_modules() {
    let files = [
        ("lib.rs", "pub mod paths;\npub mod store;\npub mod shiny;\n"),
        (
            "paths.rs",
            "// crate::store in a comment\nconst S: &str = \"crate::store\";\n#[cfg(test)]\nmod tests {\n    use crate::store::Store;\n}\n",
        ),
        ("store/mod.rs", "use crate::paths::DataDir;\nmod backup;\n#[cfg(test)]\nmod tests;\n"),
        ("store/backup.rs", "use super::super::{paths, store};\n"),
        ("store/tests.rs", "use crate::app::App;\n"),
        ("shiny.rs", "use crate::{paths::DataDir, store::Store};\n"),
        ("paths/deep.rs", "use super::super::{store::X};\npub(crate) fn f() -> u8 { crate::store::X }\n"),
    ];
    let files = files.map(|(p, s)| (p.to_owned(), s.to_owned()));
    assert_eq!(
        problems_with(&[&["paths"], &["store"]], &files),
        [
            "src/lib.rs declares `mod shiny`, which is on no floor: add it to FLOORS in crates/core/tests/floors.rs",
            "src/paths/deep.rs: `super::super::store`: paths (floor 0) imports store (floor 1); a module imports only floors below its own",
            "src/paths/deep.rs: `crate::store`: paths (floor 0) imports store (floor 1); a module imports only floors below its own",
        ]
    );
}

/// Every `.rs` file under `dir`, with its path relative to `root` (`/`-separated).
fn read_dir(root: &Path, dir: &Path, files: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).expect("read src/") {
        let path = entry.expect("read src/").path();
        if path.is_dir() {
            read_dir(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).expect("under src/").to_string_lossy().replace('\\', "/");
            files.push((relative, std::fs::read_to_string(&path).expect("read a source file")));
        }
    }
}

fn problems(files: &[(String, String)]) -> Vec<String> {
    problems_with(FLOORS, files)
}

/// What breaks `floors` in `files` (paths relative to `src/`, `lib.rs` among them).
fn problems_with(floors: &[&[&str]], files: &[(String, String)]) -> Vec<String> {
    let floor = |module: &str| floors.iter().position(|f| f.contains(&module));
    let mut problems = Vec::new();
    let lib = files.iter().find(|(p, _)| p == "lib.rs").map(|(_, s)| strip(s)).expect("src/lib.rs");
    let declared = declared_modules(&lib);
    for module in &declared {
        if floor(module).is_none() {
            problems.push(format!(
                "src/lib.rs declares `mod {module}`, which is on no floor: add it to FLOORS in crates/core/tests/floors.rs"
            ));
        }
    }
    for module in floors.iter().flat_map(|f| f.iter()) {
        if !declared.contains(*module) {
            problems.push(format!("FLOORS lists `{module}`, which src/lib.rs does not declare"));
        }
    }
    let sources: Vec<(Vec<String>, String)> =
        files.iter().filter(|(p, _)| p != "lib.rs").map(|(p, s)| (module_path(p), without_tests(&strip(s)))).collect();
    let skipped: BTreeSet<Vec<String>> = files
        .iter()
        .filter(|(p, _)| p != "lib.rs")
        .flat_map(|(p, s)| test_modules(&strip(s)).into_iter().map(move |name| child(p, &name)))
        .collect();
    for ((path, _), (module, text)) in files.iter().filter(|(p, _)| p != "lib.rs").zip(&sources) {
        if skipped.iter().any(|s| module.starts_with(s)) {
            continue;
        }
        let own = &module[0];
        for (target, shown) in outside_paths(module, text) {
            if &target == own {
                continue;
            }
            match (floor(own), floor(&target)) {
                (Some(from), Some(to)) if to >= from => problems.push(format!(
                    "src/{path}: `{shown}`: {own} (floor {from}) imports {target} (floor {to}); a module imports only \
                     floors below its own"
                )),
                (Some(_), Some(_)) => {}
                (_, None) if !declared.contains(&target) => problems
                    .push(format!("src/{path}: `{shown}` names no module of the crate; name the module it lives in")),
                // A module on no floor is reported once, from lib.rs.
                _ => {}
            }
        }
    }
    problems
}

/// `store/backup.rs` → `[store, backup]`; `store/mod.rs` → `[store]`.
fn module_path(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = path.trim_end_matches(".rs").split('/').map(str::to_owned).collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The module path of `mod name;` declared in the file at `path`.
fn child(path: &str, name: &str) -> Vec<String> {
    let mut module = module_path(path);
    module.push(name.to_owned());
    module
}

/// The modules `lib.rs` declares.
fn declared_modules(lib: &str) -> BTreeSet<String> {
    let tokens = tokens(lib);
    tokens.windows(2).filter(|w| w[0] == "mod").map(|w| w[1].clone()).collect()
}

/// The names of `#[cfg(test)] mod name;` declarations: their files are tests.
fn test_modules(text: &str) -> Vec<String> {
    test_items(text)
        .into_iter()
        .filter_map(|(start, end)| {
            let item = tokens(&text[start..end]);
            let at = item.iter().position(|t| t == "mod")?;
            (item.last().map(String::as_str) == Some(";")).then(|| item[at + 1].clone())
        })
        .collect()
}

/// `text` with every `#[cfg(test)]` item blanked out.
fn without_tests(text: &str) -> String {
    let mut out = text.to_owned();
    for (start, end) in test_items(text) {
        out.replace_range(start..end, &" ".repeat(end - start));
    }
    out
}

/// The byte ranges of the items under `#[cfg(test)]`: to the first `;` or the `}` closing the first `{`.
fn test_items(text: &str) -> Vec<(usize, usize)> {
    const ATTRIBUTE: &str = "#[cfg(test)]";
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut from = 0;
    while let Some(found) = text[from..].find(ATTRIBUTE) {
        let start = from + found;
        let mut i = start + ATTRIBUTE.len();
        let mut depth = 0usize;
        while i < bytes.len() {
            match bytes[i] {
                b';' if depth == 0 => break,
                b'{' => depth += 1,
                b'}' if depth <= 1 => break,
                b'}' => depth -= 1,
                _ => {}
            }
            i += 1;
        }
        let end = (i + 1).min(bytes.len());
        items.push((start, end));
        from = end;
    }
    items
}

/// Each path that leaves the top-level module of `module`, as `(top-level module, path as written)`.
fn outside_paths(module: &[String], text: &str) -> Vec<(String, String)> {
    let tokens = tokens(text);
    let mut found = Vec::new();
    // Inline modules (`mod wire { … }`) open at a brace depth and move `super::` one level down.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        let next = |k: usize| tokens.get(i + k).map(String::as_str);
        match token.as_str() {
            "{" => {
                depth += 1;
                if i >= 2 && tokens[i - 2] == "mod" {
                    inline.push((tokens[i - 1].clone(), depth));
                }
            }
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            "crate" if next(1) == Some("::") && (i == 0 || tokens[i - 1] != "$") => {
                found.extend(heads(&tokens[i + 2..]).into_iter().map(|h| (h.clone(), format!("crate::{h}"))));
            }
            "super" if next(1) == Some("::") && (i == 0 || tokens[i - 1] != "::") => {
                let mut at = module.to_vec();
                at.extend(inline.iter().map(|(name, _)| name.clone()));
                let mut k = i;
                let mut written = String::new();
                while tokens.get(k).map(String::as_str) == Some("super")
                    && tokens.get(k + 1).map(String::as_str) == Some("::")
                {
                    at.pop();
                    written.push_str("super::");
                    k += 2;
                }
                if at.is_empty() {
                    found.extend(heads(&tokens[k..]).into_iter().map(|h| (h.clone(), format!("{written}{h}"))));
                }
            }
            _ => {}
        }
    }
    found
}

/// The first names after `crate::`: one name, or each of a `{a, b::c}` group's.
fn heads(rest: &[String]) -> Vec<String> {
    match rest.first().map(String::as_str) {
        Some("{") => {
            let mut names = Vec::new();
            let mut depth = 0usize;
            let mut expect_name = true;
            for token in rest {
                match token.as_str() {
                    "{" => {
                        depth += 1;
                        expect_name = depth == 1;
                    }
                    "}" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    "," if depth == 1 => expect_name = true,
                    name if expect_name && depth == 1 => {
                        names.push(name.to_owned());
                        expect_name = false;
                    }
                    _ => {}
                }
            }
            names
        }
        Some(name) => vec![name.to_owned()],
        None => Vec::new(),
    }
}

/// Identifiers, `::`, and single punctuation characters.
fn tokens(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
        } else {
            if !c.is_whitespace() {
                out.push(c.to_string());
            }
            i += 1;
        }
    }
    out
}

/// `src` with comments and string and char literals replaced by spaces (line breaks kept).
fn strip(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && !ident_before(&chars, i) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', hashes)).collect();
            i += hashes + 2;
            while i < chars.len() && !chars[i..].iter().take(close.len()).copied().eq(close.chars()) {
                blank(&mut out, chars[i]);
                i += 1;
            }
            i += close.len();
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    i += 1;
                }
                if let Some(&ch) = chars.get(i) {
                    blank(&mut out, ch);
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: '\n', '\'', '\u{..}'.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `i` ends an identifier (`bar"`) rather than opening a raw string (`r"`, `br"`).
fn ident_before(chars: &[char], i: usize) -> bool {
    let ident = |at: usize| chars[at].is_alphanumeric() || chars[at] == '_';
    match i {
        0 => false,
        1 => chars[0] != 'b' && ident(0),
        // `br"` opens a byte raw string, unless that `b` continues an identifier (`subr"`).
        _ => ident(i - 1) && (chars[i - 1] != 'b' || ident(i - 2)),
    }
}
