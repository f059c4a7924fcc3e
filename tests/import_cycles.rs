//! No import cycle between the files of a crate of the workspace, but the
//! ones listed in [`ALLOWED`] with their reason. `cargo test --test
//! import_cycles -- --nocapture` prints every cycle and the imports that
//! make it.
//!
//! Each file is parsed with `syn`. A file imports another when a path in it
//! (a `use`, a type, an expression, or the tokens of a macro call) names an
//! item of the other's module: `crate::`, `self::` and `super::` paths, and
//! paths that start with a child module's name. Doc comments are not paths.
//! A child naming its ancestor (`use super::X`) is not an import: a module's
//! children are part of it, as its `mod` lines say. Unit tests
//! (`#[cfg(test)] mod`) are left out: a test may use its crate from anywhere.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The crates' source directories, from the workspace root.
const CRATES: &[&str] = &["src", "model/src", "impl/src"];

/// The cycles allowed, each the set of its files and why it is there.
const ALLOWED: &[(&[&str], &str)] = &[
    (
        &[
            "model/src/env/async_hooks.rs",
            "model/src/env/async_id_stack.rs",
        ],
        "Node's `class AsyncHooks` is one class split in two files: the \
         members the pull request changes (the seam) and the rest; they call \
         each other (`push_async_context` asks `grows_at`, the JS pop falls \
         back to `pop_async_context`)",
    ),
    (
        &[
            "model/src/env/callback_scope.rs",
            "model/src/env/microtasks.rs",
            "model/src/env/ticks.rs",
        ],
        "Node's own recursion: `InternalCallbackScope::Close` runs the \
         microtask checkpoint and the tick queue, whose callbacks run in \
         frames that a `Close` ends",
    ),
];

/// A module of a crate: its path from the crate root and its file.
type Modules = BTreeMap<Vec<String>, PathBuf>;

/// Every `.rs` file under `root` by module path (`a/mod.rs` and `a.rs` are
/// `a`; `lib.rs` is the root). `main.rs` beside a `lib.rs` is another crate
/// (the binary) and is left out.
fn modules(root: &Path) -> Modules {
    let mut out = Modules::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("a source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let rel = path.strip_prefix(root).expect("under the root");
            let mut segs: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            let last = segs.last().map(String::as_str);
            if segs.len() == 1 && last == Some("main") && root.join("lib.rs").exists() {
                continue;
            }
            if matches!(last, Some("mod" | "lib" | "main")) {
                segs.pop();
            }
            out.insert(segs, path);
        }
    }
    out
}

/// What one file names: absolute module paths (with the item names after
/// them), collected while walking the file.
struct Names<'a> {
    modules: &'a Modules,
    /// The module being walked (a file's, or an inline `mod` inside it).
    here: Vec<String>,
    found: BTreeSet<Vec<String>>,
}

impl Names<'_> {
    /// `segs` as written in the module being walked, made absolute; `None`
    /// for another crate's path or a local item's.
    fn absolute(&self, segs: &[String]) -> Option<Vec<String>> {
        let mut base = self.here.clone();
        let mut rest = segs;
        match segs.first()?.as_str() {
            "crate" => {
                base.clear();
                rest = &segs[1..];
            }
            "self" => rest = &segs[1..],
            "super" => {}
            first => {
                let mut child = self.here.clone();
                child.push(first.to_string());
                if !self.modules.contains_key(&child) {
                    return None;
                }
            }
        }
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    fn add(&mut self, segs: &[String]) {
        if let Some(path) = self.absolute(segs) {
            self.found.insert(path);
        }
    }

    /// Each full path of a `use` tree.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                if n.ident != "self" {
                    prefix.push(n.ident.to_string());
                    self.add(prefix);
                    prefix.pop();
                } else {
                    self.add(prefix);
                }
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.add(prefix);
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.add(prefix),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    /// Paths in a macro call's tokens: an identifier followed by `::` and
    /// more identifiers.
    fn tokens(&mut self, tokens: TokenStream) {
        let trees: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < trees.len() {
            if let TokenTree::Group(g) = &trees[i] {
                self.tokens(g.stream());
            }
            let mut segs = Vec::new();
            let mut j = i;
            while let Some(TokenTree::Ident(id)) = trees.get(j) {
                segs.push(id.to_string());
                let colons = matches!(
                    (trees.get(j + 1), trees.get(j + 2)),
                    (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                        if a.as_char() == ':' && b.as_char() == ':'
                );
                if !colons {
                    break;
                }
                j += 3;
            }
            if segs.len() > 1 {
                self.add(&segs);
            }
            i = j.max(i) + 1;
        }
    }
}

impl<'ast> Visit<'ast> for Names<'_> {
    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_none() {
            self.use_tree(&mut Vec::new(), &item.tree);
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let segs: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            self.add(&segs);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let unit_tests = item.attrs.iter().any(|a| {
            a.path().is_ident("cfg") && a.parse_args::<syn::Ident>().is_ok_and(|i| i == "test")
        });
        if item.content.is_some() && !unit_tests {
            self.here.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.here.pop();
        }
    }
}

/// The module of `path`: its longest prefix that is a file's module.
fn file_of<'a>(modules: &'a Modules, path: &[String]) -> Option<&'a Vec<String>> {
    (0..=path.len())
        .rev()
        .find_map(|n| modules.get_key_value(&path[..n]).map(|(k, _)| k))
}

/// The imports between the files of one crate: file → (file, a path that
/// makes the import).
fn imports(modules: &Modules) -> BTreeMap<Vec<String>, BTreeMap<Vec<String>, String>> {
    let mut graph = BTreeMap::new();
    for (module, file) in modules {
        let text = std::fs::read_to_string(file).expect("a source file");
        let ast = syn::parse_file(&text)
            .unwrap_or_else(|e| panic!("{}: not Rust syn can parse: {e}", file.display()));
        let mut names = Names {
            modules,
            here: module.clone(),
            found: BTreeSet::new(),
        };
        names.visit_file(&ast);
        let edges: &mut BTreeMap<Vec<String>, String> = graph.entry(module.clone()).or_default();
        for path in names.found {
            let Some(target) = file_of(modules, &path) else {
                continue;
            };
            let ancestor = module.starts_with(target);
            if !ancestor {
                edges
                    .entry(target.clone())
                    .or_insert_with(|| path.join("::"));
            }
        }
    }
    graph
}

/// The strongly connected sets of more than one file (Tarjan).
fn cycles<K: Ord + Clone>(graph: &BTreeMap<K, BTreeMap<K, String>>) -> Vec<Vec<K>> {
    struct Tarjan<'g, K> {
        graph: &'g BTreeMap<K, BTreeMap<K, String>>,
        index: BTreeMap<K, usize>,
        low: BTreeMap<K, usize>,
        stack: Vec<K>,
        out: Vec<Vec<K>>,
    }
    impl<K: Ord + Clone> Tarjan<'_, K> {
        fn visit(&mut self, v: &K) {
            let n = self.index.len();
            self.index.insert(v.clone(), n);
            self.low.insert(v.clone(), n);
            self.stack.push(v.clone());
            for w in self.graph.get(v).into_iter().flat_map(|e| e.keys()) {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let lw = self.low[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(lw);
                } else if self.stack.contains(w) {
                    let iw = self.index[w];
                    let lv = self.low.get_mut(v).expect("visited");
                    *lv = (*lv).min(iw);
                }
            }
            if self.low[v] == self.index[v] {
                let mut set = Vec::new();
                while let Some(w) = self.stack.pop() {
                    let done = &w == v;
                    set.push(w);
                    if done {
                        break;
                    }
                }
                if set.len() > 1 {
                    set.sort();
                    self.out.push(set);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out
}

#[test]
fn no_import_cycle_but_the_allowed_ones() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found: Vec<BTreeSet<String>> = Vec::new();
    for root in CRATES {
        let modules = modules(&workspace.join(root));
        let graph = imports(&modules);
        let name = |m: &Vec<String>| {
            let file = modules[m]
                .strip_prefix(workspace)
                .expect("in the workspace");
            file.display().to_string()
        };
        for cycle in cycles(&graph) {
            println!("cycle in {root}:");
            for from in &cycle {
                for (to, via) in &graph[from] {
                    if cycle.contains(to) {
                        println!("  {} -> {} ({via})", name(from), name(to));
                    }
                }
            }
            found.push(cycle.iter().map(name).collect());
        }
    }
    println!("{} import cycle(s)", found.len());
    let allowed: Vec<BTreeSet<String>> = ALLOWED
        .iter()
        .map(|(files, _)| files.iter().map(|f| f.to_string()).collect())
        .collect();
    let unexpected: Vec<_> = found.iter().filter(|c| !allowed.contains(c)).collect();
    let stale: Vec<_> = allowed.iter().filter(|c| !found.contains(c)).collect();
    assert!(
        unexpected.is_empty(),
        "import cycles not allowed: {unexpected:?}"
    );
    assert!(
        stale.is_empty(),
        "allowed cycles that are gone (drop them from ALLOWED): {stale:?}"
    );
}
