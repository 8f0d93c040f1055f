//! The core's floors: **each module imports only modules on floors below it, and no files import
//! one another in a circle**.
//!
//! [`FLOORS`] lists the modules of `src/lib.rs`, lowest floor first; [`MCP_FLOORS`] those of
//! `src/mcp/mod.rs` (see ARCHITECTURE.md). The test reads every file under `src/`, drops comments,
//! literals and items under `#[cfg(test)]`, and follows each path that leaves its module (`crate::x…`
//! anywhere in the code, each branch of a `use` group, `super::` climbing up; `pub use` counts). It
//! fails, naming the file and the path, when a module imports one on its own floor or above, or is
//! on no floor; when a file inside `mcp/` names an item through a re-export of `mcp/mod.rs`
//! (`super::McpError`) instead of its floor module; and when files anywhere in the core import one
//! another in a circle (a file's use of the modules it is inside of does not count).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The core's modules, lowest floor first; a module may import only modules on earlier lines.
const FLOORS: &[&[&str]] = &[
    &["clock", "file_name", "folder", "logfile", "paths", "text"],
    &["downloads", "secrets", "store"],
    &["config", "info", "net", "schedules"],
    &["bundle", "discover", "llm"],
    &["conversations"],
    &["agent"],
    &["assistants", "mcp"],
    &["rag"],
    &["attach", "builtin", "roots"],
    &["host"],
    &["app"],
];

/// The modules of `mcp/`, lowest floor first; a module may import only modules on earlier lines.
///
/// - `status`: a server's state; `wire`: framing, pipes, the lane, HTTP, SSE, event streams, and
///   the seams where rmcp lacks something; it imports nothing else of `mcp/`.
/// - `oauth`: sign-in for remote servers, on the wire's HTTP client.
/// - `error`: `McpError`, which wraps the wire's and OAuth's errors.
/// - `launch`: finding a command, its process, its sandbox and its egress proxy.
/// - `protocol`: what messages mean: the client handler, tasks, the inventory, content, naming, approval.
/// - `registry`: the facade, the supervisor, connecting, calls with deadlines and cancellation.
/// - `traces`, then `tools`: the registry's calls recorded, and served to the chat engine.
const MCP_FLOORS: &[&[&str]] =
    &[&["status", "wire"], &["oauth"], &["error"], &["launch"], &["protocol"], &["registry"], &["traces"], &["tools"]];

/// A module whose children stand on floors.
struct Plan<'a> {
    /// The module's path (`[]`: the crate).
    module: &'a [&'a str],
    floors: &'a [&'a [&'a str]],
    /// The constant in this file that holds `floors`.
    name: &'a str,
}

const PLANS: &[Plan] = &[
    Plan { module: &[], floors: FLOORS, name: "FLOORS" },
    Plan { module: &["mcp"], floors: MCP_FLOORS, name: "MCP_FLOORS" },
];

#[test]
fn each_module_imports_only_floors_below_it_and_no_files_import_one_another_in_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    read_dir(&src, &src, &mut files);
    let problems = problems(PLANS, &files);
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
        problems(&[Plan { module: &[], floors: &[&["paths"], &["store"]], name: "FLOORS" }], &files),
        [
            "src/lib.rs declares `mod shiny`, which is on no floor: add it to FLOORS in crates/core/tests/integration/floors.rs",
            "src/paths/deep.rs: `super::super::store`: paths (floor 0) imports store (floor 1); a module imports only floors below its own",
            "src/paths/deep.rs: `crate::store`: paths (floor 0) imports store (floor 1); a module imports only floors below its own",
        ]
    );
}

#[test]
fn the_check_names_upward_imports_inside_a_module_re_exports_and_circles() {
    let files = [
        ("lib.rs", "pub mod net;\n"),
        ("net/mod.rs", "pub mod wire;\npub mod talk;\npub use talk::Talker;\npub enum NetError {}\n"),
        ("net/wire/mod.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("net/wire/a.rs", "use super::b;\n"),
        ("net/wire/b.rs", "use crate::net::{wire::{a::X, b}, NetError};\n"),
        // A path in code, not in a `use` line, and one in a string that is not one.
        ("net/wire/c.rs", "fn f() { let _ = crate::net::talk::Talker::new(\"crate::net::talk\"); }\n"),
        // Down a floor, and through the crate's root: allowed.
        ("net/talk.rs", "use super::wire::a;\nuse super::super::net::wire::b::Y;\n"),
    ];
    let files = files.map(|(p, s)| (p.to_owned(), s.to_owned()));
    let plans = [
        Plan { module: &[], floors: &[&["net"]], name: "FLOORS" },
        Plan { module: &["net"], floors: &[&["wire"], &["talk"]], name: "NET_FLOORS" },
    ];
    assert_eq!(
        problems(&plans, &files),
        [
            "src/net/wire/b.rs: `crate::net::NetError` names no module of net (something net/mod.rs defines or re-exports): name the module it lives in, on a floor",
            "src/net/wire/c.rs: `crate::net::talk`: net::wire (floor 0) imports net::talk (floor 1); a module imports only floors below its own",
            "files import one another in a circle: net::wire::a (`super::b`) → net::wire::b (`crate::net::wire::a`) → net::wire::a",
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

/// A file's module path and the paths it uses that leave it.
struct Source<'a> {
    path: &'a str,
    module: Vec<String>,
    uses: Vec<Use>,
}

/// What breaks `plans`, or makes a circle, in `files` (paths relative to `src/`, `lib.rs` among them).
fn problems(plans: &[Plan], files: &[(String, String)]) -> Vec<String> {
    let skipped: BTreeSet<Vec<String>> =
        files.iter().flat_map(|(p, s)| test_modules(&strip(s)).into_iter().map(move |name| child(p, &name))).collect();
    let sources: Vec<Source> = files
        .iter()
        .map(|(path, text)| {
            let module = module_path(path);
            let uses = paths(&module, &without_tests(&strip(text)));
            Source { path, module, uses }
        })
        .filter(|s| !skipped.iter().any(|t| s.module.starts_with(t)))
        .collect();
    let mut problems = Vec::new();
    for plan in plans {
        problems.extend(plan_problems(plan, files, &sources));
    }
    problems.extend(circles(&sources));
    problems
}

/// `module` as the messages name it: `mcp::wire`, or `store` at the top.
fn named(module: &[impl AsRef<str>]) -> String {
    module.iter().map(AsRef::as_ref).collect::<Vec<_>>().join("::")
}

/// What breaks one plan: a child of `plan.module` that imports a sibling on its own floor or above.
fn plan_problems(plan: &Plan, files: &[(String, String)], sources: &[Source]) -> Vec<String> {
    let floor = |module: &str| plan.floors.iter().position(|f| f.contains(&module));
    let parent: Vec<String> = plan.module.iter().map(|m| (*m).to_owned()).collect();
    let parent_file = if parent.is_empty() { "lib.rs".to_owned() } else { format!("{}/mod.rs", parent.join("/")) };
    let text = files.iter().find(|(p, _)| *p == parent_file).map(|(_, s)| without_tests(&strip(s)));
    let Some(text) = text else { return vec![format!("{} has no src/{parent_file}", plan.name)] };
    let inside = |name: &str| {
        let mut module = plan.module.to_vec();
        module.push(name);
        named(&module)
    };
    let mut problems = Vec::new();
    let declared = declared_modules(&text);
    for module in &declared {
        if floor(module).is_none() {
            problems.push(format!(
                "src/{parent_file} declares `mod {module}`, which is on no floor: add it to {} in crates/core/tests/integration/floors.rs",
                plan.name
            ));
        }
    }
    for module in plan.floors.iter().flat_map(|f| f.iter()) {
        if !declared.contains(*module) {
            problems.push(format!("{} lists `{module}`, which src/{parent_file} does not declare", plan.name));
        }
    }
    let depth = parent.len();
    for source in sources.iter().filter(|s| s.module.len() > depth && s.module.starts_with(&parent)) {
        let own = &source.module[depth];
        for used in &source.uses {
            let Some(target) = used.absolute.get(depth).filter(|_| used.absolute.starts_with(&parent)) else {
                continue;
            };
            if target == own {
                continue;
            }
            let (path, shown) = (source.path, used.shown(depth + 1));
            match (floor(own), floor(target)) {
                (Some(from), Some(to)) if to >= from => problems.push(format!(
                    "src/{path}: `{shown}`: {} (floor {from}) imports {} (floor {to}); a module imports only \
                     floors below its own",
                    inside(own),
                    inside(target)
                )),
                (Some(_), Some(_)) => {}
                (_, None) if !declared.contains(target) && depth == 0 => problems
                    .push(format!("src/{path}: `{shown}` names no module of the crate; name the module it lives in")),
                (_, None) if !declared.contains(target) => problems.push(format!(
                    "src/{path}: `{shown}` names no module of {} (something {parent_file} defines or re-exports): \
                     name the module it lives in, on a floor",
                    named(&parent)
                )),
                // A module on no floor is reported once, from its parent's file.
                _ => {}
            }
        }
    }
    problems
}

/// One circle of files importing one another per group of files that reach one another, in file order.
fn circles(sources: &[Source]) -> Vec<String> {
    let modules: BTreeSet<&[String]> = sources.iter().map(|s| s.module.as_slice()).collect();
    // Each file's edges: the file module a path reaches (its longest prefix that is a file), and the path.
    let mut edges: BTreeMap<&[String], Vec<(&[String], String)>> = BTreeMap::new();
    for source in sources {
        let from = source.module.as_slice();
        for used in &source.uses {
            let Some(to) = (1..=used.absolute.len()).rev().map(|n| &used.absolute[..n]).find(|m| modules.contains(m))
            else {
                continue;
            };
            // A file may use the modules it is inside of, and itself.
            if from.starts_with(to) {
                continue;
            }
            let shown = used.shown(to.len());
            let list = edges.entry(from).or_default();
            if !list.iter().any(|(t, _)| *t == to) {
                list.push((to, shown));
            }
        }
    }
    let mut problems = Vec::new();
    let mut reported: BTreeSet<&[String]> = BTreeSet::new();
    for start in edges.keys().copied() {
        if reported.contains(start) {
            continue;
        }
        if let Some(circle) = circle_from(start, &edges) {
            let mut text = String::from("files import one another in a circle: ");
            for (module, shown) in &circle {
                text.push_str(&format!("{} (`{shown}`) → ", named(module)));
            }
            text.push_str(&named(start));
            // One circle per group of files that reach one another: the rest of the group is not repeated.
            let group = reachable(start, &edges).into_iter().filter(|m| reachable(m, &edges).contains(start));
            reported.extend(group);
            problems.push(text);
        }
    }
    problems
}

/// The modules reached from `start` along `edges`.
fn reachable<'a>(
    start: &'a [String],
    edges: &BTreeMap<&'a [String], Vec<(&'a [String], String)>>,
) -> BTreeSet<&'a [String]> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![start];
    while let Some(at) = stack.pop() {
        for (to, _) in edges.get(at).into_iter().flatten() {
            if seen.insert(*to) {
                stack.push(*to);
            }
        }
    }
    seen
}

/// A path of edges from `start` back to `start`, if there is one (breadth first: the shortest).
fn circle_from<'a>(
    start: &'a [String],
    edges: &BTreeMap<&'a [String], Vec<(&'a [String], String)>>,
) -> Option<Vec<(&'a [String], String)>> {
    let mut came_from: BTreeMap<&[String], (&[String], &str)> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(at) = queue.pop_front() {
        for (to, shown) in edges.get(at).into_iter().flatten() {
            if *to == start {
                let mut circle = vec![(at, shown.clone())];
                let mut back = at;
                while back != start {
                    let (previous, shown) = came_from[back];
                    circle.push((previous, shown.to_owned()));
                    back = previous;
                }
                circle.reverse();
                return Some(circle);
            }
            if !came_from.contains_key(to) {
                came_from.insert(*to, (at, shown.as_str()));
                queue.push_back(*to);
            }
        }
    }
    None
}

/// A path in the code that leaves its file's module.
struct Use {
    /// From the crate root: `[store, Store]`.
    absolute: Vec<String>,
    /// How it starts as written: `crate::` or `super::super::`.
    written: String,
    /// How many leading segments of `absolute` the written start stands for.
    base: usize,
}

impl Use {
    /// The path as written, down to `depth` segments from the crate root (at least one past its start).
    fn shown(&self, depth: usize) -> String {
        let end = depth.max(self.base + 1).min(self.absolute.len());
        format!("{}{}", self.written, self.absolute[self.base..end].join("::"))
    }
}

/// Each `crate::…` and `super::…` path in `text`, the file of `module`, with each branch of a group.
fn paths(module: &[String], text: &str) -> Vec<Use> {
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
                let written = "crate::".to_owned();
                found.extend(tree(&tokens[i + 2..]).into_iter().map(|absolute| Use {
                    absolute,
                    written: written.clone(),
                    base: 0,
                }));
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
                found.extend(tree(&tokens[k..]).into_iter().map(|rest| Use {
                    absolute: [at.as_slice(), &rest].concat(),
                    written: written.clone(),
                    base: at.len(),
                }));
            }
            _ => {}
        }
    }
    found
}

/// The paths a use tree (or a path in code) at the start of `rest` names: `a::b`, or each branch of
/// `{a::b, c::{d, e}}`; `self` and `*` end a branch, `as x` is dropped.
fn tree(rest: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    branch(rest, &mut 0, Vec::new(), &mut out);
    out
}

fn branch(tokens: &[String], i: &mut usize, mut path: Vec<String>, out: &mut Vec<Vec<String>>) {
    loop {
        match tokens.get(*i).map(String::as_str) {
            Some("{") => {
                *i += 1;
                loop {
                    match tokens.get(*i).map(String::as_str) {
                        None => return,
                        Some("}") => {
                            *i += 1;
                            return;
                        }
                        Some(",") => *i += 1,
                        Some(_) => {
                            let before = *i;
                            branch(tokens, i, path.clone(), out);
                            // Something that is no path (a stray token): step over it.
                            if *i == before {
                                *i += 1;
                            }
                        }
                    }
                }
            }
            Some(name) if name.starts_with(|c: char| c.is_alphabetic() || c == '_') => {
                *i += 1;
                if name != "self" {
                    path.push(name.to_owned());
                }
                if tokens.get(*i).map(String::as_str) == Some("::") {
                    *i += 1;
                    continue;
                }
                if tokens.get(*i).map(String::as_str) == Some("as") {
                    *i += 2;
                }
                out.push(path);
                return;
            }
            Some("*") => {
                *i += 1;
                out.push(path);
                return;
            }
            _ => {
                if !path.is_empty() {
                    out.push(path);
                }
                return;
            }
        }
    }
}

/// `store/backup.rs` → `[store, backup]`; `store/mod.rs` → `[store]`; `lib.rs` → `[]`.
fn module_path(path: &str) -> Vec<String> {
    if path == "lib.rs" {
        return Vec::new();
    }
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

/// The modules a file declares (`lib.rs`, `mcp/mod.rs`).
fn declared_modules(text: &str) -> BTreeSet<String> {
    let tokens = tokens(text);
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
