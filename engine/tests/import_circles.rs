//! No import circles (issue 16): inside each crate of the workspace, no
//! source file imports, directly or through others, a file that imports it.
//!
//! Reads every `.rs` file under each crate's `src/` and draws an arrow
//! from a file to each file whose module a path in it names: `use` trees
//! and `crate::` / `super::` / `self::` paths, and paths that start with a
//! child module's name.  A module's own ancestors are not arrows (a child
//! reads its parent's names through `super::`; the parent declaring the
//! child with `mod` is no import either), and neither are `#[cfg(test)]`
//! modules (test code may reach anywhere).  A path resolves to the deepest
//! module it names, so `crate::caps::MAX_GRID_SIZE` is an arrow to
//! caps.rs.  Cargo already forbids circles between crates.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crates whose files are checked, from the workspace root.
const CRATES: &[&str] = &[
    "components",
    "systems",
    "systems/shader",
    "engine",
    "scene",
    "profiling",
    "gltf",
    "demo",
];

/// Module path (`["context", "compute"]`) of a file below `src`.
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("below src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") || !parts.is_empty() && stem != "mod" {
        parts.push(stem.to_owned());
    }
    parts
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            // `src/bin/*.rs` are crate roots of their own.
            if p.file_name().is_some_and(|n| n != "bin") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            // A `main.rs` beside a `lib.rs` is a crate of its own too.
            let main_of_lib =
                p.file_name().is_some_and(|n| n == "main.rs") && dir.join("lib.rs").exists();
            if !main_of_lib {
                out.push(p);
            }
        }
    }
}

/// The text with comments, string and char literals blanked, and every
/// `#[cfg(test)]` item (a test module) removed.
fn code_of(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if b[i] == b'r' && (b.get(i + 1) == Some(&b'"') || b.get(i + 1) == Some(&b'#')) {
            // raw string r"..." / r#"..."#
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(b[i]);
                i += 1;
                continue;
            }
            j += 1;
            let close: Vec<u8> = std::iter::once(b'"')
                .chain(std::iter::repeat_n(b'#', hashes))
                .collect();
            while j < b.len() && !b[j..].starts_with(&close) {
                j += 1;
            }
            i = j + close.len();
            out.extend_from_slice(b"\"\"");
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.extend_from_slice(b"\"\"");
        } else if b[i] == b'\'' && b.get(i + 2) == Some(&b'\'') {
            i += 3;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'\\') {
            i += 2;
            while i < b.len() && b[i] != b'\'' {
                i += 1;
            }
            i += 1;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    let code = String::from_utf8(out).expect("utf-8");
    // Drop `#[cfg(test)]` items: the attribute up to the item's closing
    // brace (or its `;`).
    let mut kept = String::with_capacity(code.len());
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        kept.push_str(&rest[..at]);
        let item = &rest[at..];
        let end = match (item.find('{'), item.find(';')) {
            (Some(open), Some(semi)) if semi < open => semi + 1,
            (Some(open), _) => {
                let mut depth = 0;
                let mut end = item.len();
                for (k, c) in item[open..].char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                end = open + k + 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                end
            }
            (None, Some(semi)) => semi + 1,
            (None, None) => item.len(),
        };
        rest = &item[end..];
    }
    kept.push_str(rest);
    kept
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every path a `use` tree names, flattened (`a::{b, c::d}` gives `a::b`
/// and `a::c::d`).
fn expand_use(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let head = tree[..open].trim().trim_end_matches("::");
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let base = join(prefix, head);
        let mut depth = 0;
        let mut start = 0;
        for (k, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_use(&inner[start..k], &base, out);
                    start = k + 1;
                }
                _ => {}
            }
        }
        expand_use(&inner[start..], &base, out);
    } else {
        let path = tree.split(" as ").next().unwrap_or("").trim();
        if !path.is_empty() {
            out.push(join(prefix, path));
        }
    }
}

fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}::{b}"),
    }
}

/// The paths a file names: its `use` trees, and every other `a::b` path
/// whose first segment is `crate`, `super`, `self` or a module name.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    let mut others = String::with_capacity(code.len());
    loop {
        let found = rest.match_indices("use ").find(|(k, _)| {
            let before = rest[..*k].chars().next_back();
            before.is_none_or(|c| !is_ident(c))
        });
        let Some((at, _)) = found else {
            others.push_str(rest);
            break;
        };
        others.push_str(&rest[..at]);
        let Some(semi) = rest[at..].find(';') else {
            break;
        };
        expand_use(&rest[at + 4..at + semi], "", &mut out);
        rest = &rest[at + semi + 1..];
    }
    let chars: Vec<char> = others.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if is_ident(chars[i]) && (i == 0 || !is_ident(chars[i - 1]) && chars[i - 1] != ':') {
            let mut j = i;
            let mut path = String::new();
            loop {
                let s = j;
                while j < chars.len() && is_ident(chars[j]) {
                    j += 1;
                }
                path.extend(&chars[s..j]);
                if chars.get(j) == Some(&':')
                    && chars.get(j + 1) == Some(&':')
                    && chars.get(j + 2).is_some_and(|&c| is_ident(c))
                {
                    path.push_str("::");
                    j += 2;
                    continue;
                }
                break;
            }
            if path.contains("::") {
                out.push(path);
            }
            i = j.max(i + 1);
        } else {
            i += 1;
        }
    }
    out
}

/// The arrows of one crate: file -> files it imports.
fn arrows(root: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let src = root.join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeMap<Vec<String>, PathBuf> = files
        .iter()
        .map(|f| (module_of(&src, f), f.clone()))
        .collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let me = module_of(&src, file);
        let text = std::fs::read_to_string(file).expect("readable source");
        let mut to = BTreeSet::new();
        for path in paths_in(&code_of(&text)) {
            let segs: Vec<&str> = path.split("::").collect();
            let mut at: Vec<String> = match segs[0] {
                "crate" => Vec::new(),
                "self" => me.clone(),
                "super" => me[..me.len().saturating_sub(1)].to_vec(),
                first => {
                    let mut child = me.clone();
                    child.push(first.to_owned());
                    if modules.contains_key(&child) {
                        me.clone()
                    } else if modules.contains_key(&vec![first.to_owned()]) && me.is_empty() {
                        Vec::new()
                    } else {
                        continue;
                    }
                }
            };
            let mut rest = &segs[usize::from(matches!(segs[0], "crate" | "self" | "super"))..];
            while rest.first() == Some(&"super") {
                at.pop();
                rest = &rest[1..];
            }
            for seg in rest {
                let mut next = at.clone();
                next.push((*seg).to_owned());
                if !modules.contains_key(&next) {
                    break;
                }
                at = next;
            }
            // Ancestors (and the file itself) are no arrows.
            if me.starts_with(&at) {
                continue;
            }
            if let Some(target) = modules.get(&at) {
                to.insert(target.clone());
            }
        }
        graph.insert(file.clone(), to);
    }
    graph
}

/// The circles of `graph`: its strongly connected components of more than
/// one file (Tarjan).
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    struct Walk<'a> {
        graph: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        found: Vec<Vec<PathBuf>>,
    }
    impl<'a> Walk<'a> {
        fn visit(&mut self, v: &'a PathBuf) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on.insert(v);
            for w in &self.graph[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.on.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut comp = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on.remove(w);
                    comp.push(w.clone());
                    if w == v {
                        break;
                    }
                }
                if comp.len() > 1 {
                    comp.sort();
                    self.found.push(comp);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_import_circles() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut report = String::new();
    for krate in CRATES {
        let root = workspace.join(krate);
        let graph = arrows(&root);
        assert!(!graph.is_empty(), "{krate}: no sources read");
        for circle in circles(&graph) {
            let names: Vec<String> = circle
                .iter()
                .map(|f| {
                    f.strip_prefix(&workspace)
                        .unwrap_or(f)
                        .display()
                        .to_string()
                })
                .collect();
            report.push_str(&format!("{krate}: {}\n", names.join(", ")));
        }
    }
    assert!(report.is_empty(), "import circles:\n{report}");
}

#[test]
fn a_circle_is_found() {
    // The checker itself: two files that import each other are a circle,
    // a child reading its parent is not.
    let dir = std::env::temp_dir().join(format!("import-circles-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("a")).expect("temp dir");
    let write = |p: &str, s: &str| std::fs::write(src.join(p), s).expect("write");
    write("lib.rs", "mod a;\nmod b;\npub struct Root;\n");
    write("a/mod.rs", "mod c;\nuse crate::b::B;\npub use c::C;\n");
    write("a/c.rs", "use super::super::Root;\npub struct C;\n");
    write("b.rs", "pub struct B;\nfn f() { let _ = crate::a::C; }\n");
    let graph = arrows(&dir);
    let found = circles(&graph);
    assert_eq!(found.len(), 1, "{graph:?}");
    assert_eq!(found[0], vec![src.join("a/mod.rs"), src.join("b.rs")]);
    write(
        "b.rs",
        "pub struct B;\n// crate::a::C\n#[cfg(test)]\nmod t { use crate::a::C; }\n",
    );
    assert!(circles(&arrows(&dir)).is_empty());
    std::fs::remove_dir_all(&dir).expect("clean up");
}
