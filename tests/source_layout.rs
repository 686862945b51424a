//! The shape of `src/`, read from the source files themselves: every file at most 800 lines and
//! opening with a `//!` line that says its job, no import circle between files, and the layers
//! pointing one way (docs/architecture.md). A change detector for the house rules: it holds no
//! outside truth, only what the rules say.
//!
//! **The import graph.** A file's module path is its place under `src/` (`a/b.rs` and
//! `a/b/mod.rs` are `a::b`; `lib.rs` and `main.rs` are the crate root, which no edge reaches).
//! A file depends on the file of every module it names: in a `use` of `crate::…`, `super::…`,
//! `self::…` or of a child module it declares, and in any such path in its code (comments and
//! literals left out). A path leads to the longest prefix of it that is a file; when that file
//! imports the next name (`pub use child::name`, or a `use` its children reach by `super::`),
//! it leads on to where the name comes from, so an import is a door, not a dependency of its
//! own. Test code is left out: a file declared under
//! `#[cfg(test)]` and an inline `#[cfg(test)] mod … { }` may reach whatever they check.
//!
//! **Circles.** Any cycle among files is a circle, with one exception: a file may use what its
//! ancestors define (the `mod.rs` of its folder and those above it), since a folder's root is
//! where its files share their types. An edge from a file to one of its ancestors is left out;
//! every other edge counts, a root's use of its own files included.
//!
//! **Layers.** `base` ◄ `harness` ◄ `tools` ◄ `exec` ◄ `eval`, `bench` ◄ `cli`: a file under
//! one of these folders imports only from its own folder and those to its left; `eval` and
//! `bench` never import each other. `model_path.rs`, outside the chain, is a leaf: any layer may
//! use it, and like `base` it imports nothing else of the crate.
//!
//! `KNOWN_CIRCLES` and `KNOWN_LONG_FILES` name what is left to fix in code under other work;
//! a name whose problem is gone fails the test until it is taken off.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

/// The most lines a source file may have.
const MAX_LINES: usize = 800;

/// Circles known and not yet broken, each as the set of files in it.
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// Files known to be over [`MAX_LINES`], not yet split.
const KNOWN_LONG_FILES: &[&str] = &[];

/// The layers, left to right: a folder may import from its own and those before it.
const LAYERS: &[&[&str]] = &[
    &["base", "model_path"],
    &["harness"],
    &["tools"],
    &["exec"],
    &["eval", "bench"],
    &["cli"],
];

/// A module path: the names from the crate root down.
type ModulePath = Vec<String>;

/// One source file, read.
struct SourceFile {
    /// Relative to the crate, with `/`: `src/eval/pack/mod.rs`.
    name: String,
    module: ModulePath,
    text: String,
}

fn src_files() -> Vec<SourceFile> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut paths = Vec::new();
    collect_rs(&root.join("src"), &mut paths);
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            SourceFile {
                module: module_of(&name),
                text: std::fs::read_to_string(&path).unwrap(),
                name,
            }
        })
        .collect()
}

fn collect_rs(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect_rs(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`; `src/lib.rs` and `src/main.rs` the root.
fn module_of(name: &str) -> ModulePath {
    let inner = name
        .strip_prefix("src/")
        .unwrap()
        .strip_suffix(".rs")
        .unwrap();
    let mut parts: Vec<String> = inner.split('/').map(String::from).collect();
    if parts.len() == 1 && (parts[0] == "lib" || parts[0] == "main") {
        return Vec::new();
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts
}

/// The text with comments, string and character literals blanked (line breaks kept), so that
/// what remains is code.
fn code_of(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let ident_at = |k: usize| chars[k].is_alphanumeric() || chars[k] == '_';
        let after_ident = i > 0 && ident_at(i - 1);
        // `b'x'` and `b"x"`: a byte literal, the `b` no identifier.
        let after_byte_prefix = i > 0 && chars[i - 1] == 'b' && !(i > 1 && ident_at(i - 2));
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(chars[i]));
                    i += 1;
                }
            }
        } else if (c == 'r' || c == 'b') && !after_ident && raw_string_at(&chars, i).is_some() {
            let (hashes, start) = raw_string_at(&chars, i).unwrap();
            let closing: Vec<char> = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            out.extend(chars[i..start].iter().map(|&c| blank(c)));
            i = start;
            while i < chars.len() && !chars[i..].starts_with(&closing) {
                out.push(blank(chars[i]));
                i += 1;
            }
            out.extend(std::iter::repeat_n(' ', closing.len()));
            i += closing.len();
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                let step = if chars[i] == '\\' { 2 } else { 1 };
                for k in 0..step {
                    if let Some(&c) = chars.get(i + k) {
                        out.push(blank(c));
                    }
                }
                i += step;
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (!after_ident || after_byte_prefix) {
            // A character literal ('x', '\n', '\u{1f}'); otherwise a lifetime, kept.
            let end = if next == Some('\\') {
                chars[i + 3..]
                    .iter()
                    .position(|&c| c == '\'')
                    .map(|p| i + 3 + p)
            } else if chars.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            match end {
                Some(end) => {
                    out.extend(std::iter::repeat_n(' ', end + 1 - i));
                    i = end + 1;
                }
                None => {
                    out.push(c);
                    i += 1;
                }
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// At a raw string (`r"…"`, `r#"…"#`, `br"…"`): how many `#` close it, and where its text
/// starts.
fn raw_string_at(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = i;
    if chars[j] == 'b' {
        j += 1;
    }
    if chars.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = chars[j..].iter().take_while(|&&c| c == '#').count();
    (chars.get(j + hashes) == Some(&'"')).then_some((hashes, j + hashes + 1))
}

/// Where each `mod name { … }` of the code begins and ends (byte offsets), and whether it is
/// test code.
fn inline_modules(code: &str) -> Vec<(usize, usize, bool)> {
    let opening =
        Regex::new(r"(?:#\[cfg\(test\)\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{").unwrap();
    opening
        .find_iter(code)
        .map(|m| {
            let bytes = code.as_bytes();
            let mut depth = 0usize;
            let mut end = code.len();
            for (k, &b) in bytes.iter().enumerate().skip(m.end() - 1) {
                match b {
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            (m.start(), end, m.as_str().starts_with("#[cfg(test)]"))
        })
        .collect()
}

/// The child modules a file declares as files (`mod name;`), and those among them that are
/// test code (`#[cfg(test)] mod name;`).
fn declared_children(code: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let declaration =
        Regex::new(r"(#\[cfg\(test\)\]\s*)?(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;").unwrap();
    let mut all = BTreeSet::new();
    let mut test = BTreeSet::new();
    for c in declaration.captures_iter(code) {
        all.insert(c[2].to_string());
        if c.get(1).is_some() {
            test.insert(c[2].to_string());
        }
    }
    (all, test)
}

/// What one file names: the module paths it uses, and the names it imports (name → path).
#[derive(Default)]
struct Names {
    used: Vec<ModulePath>,
    imported: BTreeMap<String, ModulePath>,
}

/// Every path a file's code names, made absolute; test code left out.
fn names_of(file: &SourceFile, children: &BTreeSet<String>) -> Names {
    let mut code = code_of(&file.text);
    // Test modules are blanked; the other inline modules shift what `super` means.
    let inline = inline_modules(&code);
    for &(start, end, test) in &inline {
        if test {
            code.replace_range(start..end, &" ".repeat(end - start));
        }
    }
    let depth_at = |at: usize| {
        inline
            .iter()
            .filter(|(start, end, test)| !test && *start <= at && at < *end)
            .count()
    };
    // The module a path written `depth` inline modules deep names, from the crate root: for a
    // path from `crate`, `super`, `self` or a child module; none for another crate's or a
    // local name's.
    let absolute = |head: &[&str], depth: usize| -> Option<ModulePath> {
        match head[0] {
            "crate" => Some(head[1..].iter().map(|s| s.to_string()).collect()),
            "super" | "self" => {
                let supers = head.iter().take_while(|&&s| s == "super").count();
                let rest = if head[0] == "self" {
                    &head[1..]
                } else {
                    &head[supers..]
                };
                // Above the file's inline modules, `super` climbs the file's own path.
                let up = supers.saturating_sub(depth);
                if up > file.module.len() {
                    return None;
                }
                let mut path = file.module[..file.module.len() - up].to_vec();
                if supers >= depth {
                    path.extend(rest.iter().map(|s| s.to_string()));
                }
                Some(path)
            }
            child if children.contains(child) && depth == 0 => {
                let mut path = file.module.clone();
                path.extend(head.iter().map(|s| s.to_string()));
                Some(path)
            }
            _ => None,
        }
    };
    let mut names = Names::default();
    let statement = Regex::new(r"(?s)\buse\s+([^;]+);").unwrap();
    let mut blanked = code.clone();
    for c in statement.captures_iter(&code) {
        let whole = c.get(0).unwrap();
        let depth = depth_at(whole.start());
        let mut trees = Vec::new();
        expand_use(&c[1], &mut trees);
        for tree in trees {
            let segments: Vec<&str> = tree.iter().map(String::as_str).collect();
            let Some(path) = absolute(&segments, depth) else {
                continue;
            };
            // A name a file imports (publicly or not) is reached through it as from where it
            // comes: a child's `super::Name` reaches its sibling.
            if let Some(name) = tree.last().filter(|n| *n != "*" && *n != "self") {
                names.imported.insert(name.clone(), path.clone());
            }
            names.used.push(path);
        }
        blanked.replace_range(whole.range(), &" ".repeat(whole.len()));
    }
    let inline_path = Regex::new(r"(?:^|[^\w:$])((?:\w+::)+\w+)").unwrap();
    for c in inline_path.captures_iter(&blanked) {
        let m = c.get(1).unwrap();
        let segments: Vec<&str> = m.as_str().split("::").collect();
        if let Some(path) = absolute(&segments, depth_at(m.start())) {
            names.used.push(path);
        }
    }
    names
}

/// The paths of a `use` tree (without `use` and `;`), each as its segments; `a::{self, b as
/// c}` gives `a` and `a::b`.
fn expand_use(tree: &str, out: &mut Vec<Vec<String>>) {
    fn walk(prefix: &[String], tree: &str, out: &mut Vec<Vec<String>>) {
        let tree = tree.trim();
        if tree.is_empty() {
            return;
        }
        if let Some(inner) = tree.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
            let mut depth = 0;
            let mut start = 0;
            for (k, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        walk(prefix, &inner[start..k], out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            walk(prefix, &inner[start..], out);
            return;
        }
        match tree.split_once("::") {
            Some((head, rest)) => {
                let mut longer = prefix.to_vec();
                longer.push(head.to_string());
                walk(&longer, rest, out);
            }
            None => {
                // `name as alias`: the path is the name's.
                let name = tree.split_whitespace().next().unwrap_or(tree);
                let mut path = prefix.to_vec();
                if name != "self" {
                    path.push(name.to_string());
                }
                out.push(path);
            }
        }
    }
    walk(&[], tree, out);
}

/// The whole crate read: each file's module and what it names.
struct Crate {
    files: Vec<SourceFile>,
    /// Module path → index in `files`.
    modules: BTreeMap<ModulePath, usize>,
    /// Files that are test code, by index.
    test_files: BTreeSet<usize>,
    names: Vec<Names>,
}

impl Crate {
    fn read() -> Crate {
        let files = src_files();
        let modules: BTreeMap<ModulePath, usize> = files
            .iter()
            .enumerate()
            .filter(|(_, f)| !f.name.ends_with("src/main.rs"))
            .map(|(i, f)| (f.module.clone(), i))
            .collect();
        let mut test_files = BTreeSet::new();
        let mut names = Vec::new();
        for file in &files {
            let (children, test_children) = declared_children(&code_of(&file.text));
            for child in test_children {
                let mut path = file.module.clone();
                path.push(child);
                if let Some(&i) = modules.get(&path) {
                    test_files.insert(i);
                }
            }
            names.push(names_of(file, &children));
        }
        Crate {
            files,
            modules,
            test_files,
            names,
        }
    }

    /// The file a module path leads to, through re-exports.
    fn resolve(&self, path: &[String]) -> Option<usize> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let length = (0..=path.len())
                .rev()
                .find(|&n| self.modules.contains_key(&path[..n]))?;
            let file = self.modules[&path[..length]];
            let through = path
                .get(length)
                .and_then(|name| self.names[file].imported.get(name))
                .filter(|target| target.as_slice() != &path[..=length]);
            match through {
                Some(target) => {
                    let mut next = target.clone();
                    next.extend(path[length + 1..].iter().cloned());
                    path = next;
                }
                None => return Some(file),
            }
        }
        None
    }

    /// Every edge of the graph, as (from, to) file indices: test code, the crate root and a
    /// file's own ancestors left out.
    fn edges(&self) -> BTreeSet<(usize, usize)> {
        let mut edges = BTreeSet::new();
        for (from, file) in self.files.iter().enumerate() {
            if self.test_files.contains(&from) || file.module.is_empty() {
                continue;
            }
            for path in &self.names[from].used {
                let Some(to) = self.resolve(path) else {
                    continue;
                };
                let target = &self.files[to].module;
                let ancestor =
                    target.len() < file.module.len() && file.module[..target.len()] == target[..];
                if to != from && !target.is_empty() && !ancestor && !self.test_files.contains(&to) {
                    edges.insert((from, to));
                }
            }
        }
        edges
    }

    /// Every circle: the strongly connected components of more than one file, each sorted.
    fn circles(&self) -> Vec<Vec<String>> {
        let edges = self.edges();
        let count = self.files.len();
        let mut next: Vec<Vec<usize>> = vec![Vec::new(); count];
        for &(a, b) in &edges {
            next[a].push(b);
        }
        let mut tarjan = Tarjan {
            next,
            index: vec![None; count],
            low: vec![0; count],
            on_stack: vec![false; count],
            stack: Vec::new(),
            counter: 0,
            components: Vec::new(),
        };
        for v in 0..count {
            if tarjan.index[v].is_none() {
                tarjan.visit(v);
            }
        }
        let mut circles: Vec<Vec<String>> = tarjan
            .components
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|c| {
                let mut names: Vec<String> =
                    c.into_iter().map(|i| self.files[i].name.clone()).collect();
                names.sort();
                names
            })
            .collect();
        circles.sort();
        circles
    }
}

/// Tarjan's strongly connected components.
struct Tarjan {
    next: Vec<Vec<usize>>,
    index: Vec<Option<usize>>,
    low: Vec<usize>,
    on_stack: Vec<bool>,
    stack: Vec<usize>,
    counter: usize,
    components: Vec<Vec<usize>>,
}

impl Tarjan {
    fn visit(&mut self, v: usize) {
        self.index[v] = Some(self.counter);
        self.low[v] = self.counter;
        self.counter += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
        for w in self.next[v].clone() {
            match self.index[w] {
                None => {
                    self.visit(w);
                    self.low[v] = self.low[v].min(self.low[w]);
                }
                Some(index) if self.on_stack[w] => self.low[v] = self.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(self.low[v]) == self.index[v] {
            let mut component = Vec::new();
            while let Some(w) = self.stack.pop() {
                self.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            self.components.push(component);
        }
    }
}

/// The layer of a top-level module, if it is in one.
fn layer_of(top: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&top))
}

#[test]
fn no_source_file_is_over_800_lines() {
    let long: Vec<String> = src_files()
        .iter()
        .filter(|f| f.text.lines().count() > MAX_LINES)
        .map(|f| f.name.clone())
        .collect();
    let new: Vec<&String> = long
        .iter()
        .filter(|n| !KNOWN_LONG_FILES.contains(&n.as_str()))
        .collect();
    assert!(
        new.is_empty(),
        "over {MAX_LINES} lines: {new:?}; split each by job"
    );
    let fixed: Vec<&&str> = KNOWN_LONG_FILES
        .iter()
        .filter(|n| !long.iter().any(|l| l == *n))
        .collect();
    assert!(
        fixed.is_empty(),
        "no longer over {MAX_LINES} lines: take {fixed:?} off KNOWN_LONG_FILES"
    );
}

#[test]
fn every_source_file_opens_with_a_line_saying_its_job() {
    let bare: Vec<String> = src_files()
        .into_iter()
        .filter(|f| !f.text.starts_with("//! "))
        .map(|f| f.name)
        .collect();
    assert!(
        bare.is_empty(),
        "no leading `//!` line saying the file's job: {bare:?}"
    );
}

#[test]
fn no_two_source_files_import_each_other_even_through_others() {
    let krate = Crate::read();
    let circles = krate.circles();
    let known: Vec<Vec<String>> = KNOWN_CIRCLES
        .iter()
        .map(|c| c.iter().map(|s| s.to_string()).collect())
        .collect();
    let new: Vec<&Vec<String>> = circles.iter().filter(|c| !known.contains(c)).collect();
    assert!(
        new.is_empty(),
        "import circles (a file uses another that, directly or not, uses it): {new:#?}"
    );
    let gone: Vec<&Vec<String>> = known.iter().filter(|k| !circles.contains(k)).collect();
    assert!(
        gone.is_empty(),
        "broken since: take {gone:?} off KNOWN_CIRCLES"
    );
    // The graph is read at all: a root's use of its own file, and a door through a re-export.
    let index = |name: &str| krate.files.iter().position(|f| f.name == name).unwrap();
    let edges = krate.edges();
    assert!(edges.contains(&(
        index("src/eval/pack/mod.rs"),
        index("src/eval/pack/source.rs")
    )));
    assert!(edges.contains(&(
        index("src/eval/runner/finish.rs"),
        index("src/eval/record/load.rs")
    )));
}

#[test]
fn the_layers_point_one_way() {
    let krate = Crate::read();
    let mut crossings = Vec::new();
    for (from, to) in krate.edges() {
        let (a, b) = (&krate.files[from], &krate.files[to]);
        let (top_a, top_b) = (a.module[0].as_str(), b.module[0].as_str());
        if top_a == top_b {
            continue;
        }
        let allowed = match (layer_of(top_a), layer_of(top_b)) {
            (Some(la), Some(lb)) => lb < la,
            _ => false,
        };
        if !allowed {
            crossings.push(format!("{} uses {}", a.name, b.name));
        }
    }
    assert!(
        crossings.is_empty(),
        "imports against the layers (base, model_path ◄ harness ◄ tools ◄ exec ◄ eval, bench ◄ cli): {crossings:#?}"
    );
}

#[test]
fn the_reader_sees_paths_as_rust_does() {
    // Comments, strings and character literals hold no paths; lifetimes stay.
    let code = code_of(
        "let a = \"crate::x\"; // crate::y\nlet c = ('\"', b'\"', '\\''); fn f<'a>() {} /* crate::z */ r#\"crate::w\"#",
    );
    assert!(!code.contains("crate::"), "{code}");
    assert!(code.contains("<'a>"), "{code}");
    let mut trees = Vec::new();
    expand_use("crate::a::{self, b::{c, d}, e as f, eas}", &mut trees);
    let joined: Vec<String> = trees.iter().map(|t| t.join("::")).collect();
    assert_eq!(
        joined,
        [
            "crate::a",
            "crate::a::b::c",
            "crate::a::b::d",
            "crate::a::e",
            "crate::a::eas"
        ]
    );
}
