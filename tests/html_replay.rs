//! `scopecheck replay --html`: the built binary writes a self-contained page;
//! the page is parsed structurally (a small tag parser below: no browser, no
//! HTML crate) and checked against what the replay did.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp_dir(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("html_replay")
        .join(test);
    std::fs::create_dir_all(&dir).expect("create the temp dir");
    dir
}

fn write_trace(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write the trace");
    path
}

fn scopecheck(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scopecheck"))
        .args(args)
        .output()
        .expect("run scopecheck")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/scenarios")
        .join(name)
}

/// `replay --html OUT FILE [--mutant M]`: the exit code and the page.
fn replay_html(dir: &Path, trace: &Path, mutant: Option<&str>) -> (Output, String) {
    let out = dir.join("page.html");
    let _ = std::fs::remove_file(&out);
    let mut args = vec![
        "replay",
        "--html",
        out.to_str().expect("utf-8 path"),
        trace.to_str().expect("utf-8 path"),
    ];
    if let Some(m) = mutant {
        args.extend(["--mutant", m]);
    }
    let output = scopecheck(&args);
    let page = std::fs::read_to_string(&out)
        .unwrap_or_else(|e| panic!("no page written ({e}); stderr: {}", text(&output.stderr)));
    (output, page)
}

// ---------------------------------------------------------------------------
// A small HTML parser: enough for the page `scopecheck` writes, strict about
// everything else (an unknown element, an unescaped `<` in text or a stray
// `>` in an attribute fails the parse).

/// Elements the page may contain; anything else (a `<script>` smuggled in
/// through trace text, say) is a parse error.
const KNOWN: &[&str] = &[
    "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "p", "code", "b", "i",
    "div", "section", "span", "ul", "li", "a", "main", "details", "summary", "pre", "footer",
];
const VOID: &[&str] = &["meta"];

#[derive(Debug)]
struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    children: Vec<usize>,
    parent: Option<usize>,
    text: String,
}

struct Dom {
    nodes: Vec<Element>,
}

impl Dom {
    fn attr(&self, i: usize, name: &str) -> Option<&str> {
        self.nodes[i]
            .attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn has_class(&self, i: usize, class: &str) -> bool {
        self.attr(i, "class")
            .is_some_and(|c| c.split_whitespace().any(|w| w == class))
    }

    fn all_with_class(&self, class: &str) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&i| self.has_class(i, class))
            .collect()
    }

    fn by_id(&self, id: &str) -> Option<usize> {
        (0..self.nodes.len()).find(|&i| self.attr(i, "id") == Some(id))
    }

    fn descendants(&self, i: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut todo = self.nodes[i].children.clone();
        while let Some(c) = todo.pop() {
            out.push(c);
            todo.extend(self.nodes[c].children.iter().copied());
        }
        out
    }

    /// All text inside `i`, entities left as written.
    fn text_of(&self, i: usize) -> String {
        let mut s = self.nodes[i].text.clone();
        for c in &self.nodes[i].children {
            s.push_str(&self.text_of(*c));
        }
        s
    }
}

fn parse_attrs(inside: &str) -> Result<(String, Vec<(String, String)>), String> {
    let mut chars = inside.char_indices().peekable();
    let mut name = String::new();
    while let Some(&(_, c)) = chars.peek() {
        if c.is_ascii_alphanumeric() {
            name.push(c);
            chars.next();
        } else {
            break;
        }
    }
    if name.is_empty() {
        return Err(format!("tag without a name: <{inside}>"));
    }
    let mut attrs = Vec::new();
    loop {
        while chars.peek().is_some_and(|&(_, c)| c == ' ') {
            chars.next();
        }
        let Some(&(_, c)) = chars.peek() else { break };
        if c == '/' {
            return Err(format!("self-closing syntax in <{inside}>"));
        }
        let mut key = String::new();
        while let Some(&(_, c)) = chars.peek() {
            if c.is_ascii_alphanumeric() || c == '-' {
                key.push(c);
                chars.next();
            } else {
                break;
            }
        }
        if key.is_empty() || chars.next().map(|(_, c)| c) != Some('=') {
            return Err(format!("bad attribute in <{inside}>"));
        }
        if chars.next().map(|(_, c)| c) != Some('"') {
            return Err(format!("unquoted attribute in <{inside}>"));
        }
        let mut value = String::new();
        loop {
            match chars.next() {
                Some((_, '"')) => break,
                Some((_, '<')) => return Err(format!("'<' in an attribute of <{inside}>")),
                Some((_, c)) => value.push(c),
                None => return Err(format!("unterminated attribute in <{inside}>")),
            }
        }
        attrs.push((key, value));
    }
    Ok((name, attrs))
}

fn parse_html(page: &str) -> Result<Dom, String> {
    let rest = page
        .strip_prefix("<!DOCTYPE html>")
        .ok_or("the page does not start with <!DOCTYPE html>")?;
    let mut dom = Dom {
        nodes: vec![Element {
            name: "#document".into(),
            attrs: Vec::new(),
            children: Vec::new(),
            parent: None,
            text: String::new(),
        }],
    };
    let mut open = vec![0usize];
    let mut s = rest;
    while !s.is_empty() {
        let Some(lt) = s.find('<') else {
            dom.nodes[*open.last().expect("document")].text.push_str(s);
            break;
        };
        let (before, after) = s.split_at(lt);
        if before.contains('>') {
            return Err(format!("a stray '>' in text: {before:?}"));
        }
        dom.nodes[*open.last().expect("document")]
            .text
            .push_str(before);
        let gt = after
            .find('>')
            .ok_or_else(|| format!("unterminated tag: {:?}", &after[..after.len().min(60)]))?;
        let inside = &after[1..gt];
        s = &after[gt + 1..];
        if let Some(name) = inside.strip_prefix('/') {
            let top = open.pop().ok_or("close tag with nothing open")?;
            if dom.nodes[top].name != name {
                return Err(format!(
                    "</{name}> closes <{}> (element {top})",
                    dom.nodes[top].name
                ));
            }
            continue;
        }
        if inside.contains('<') {
            return Err(format!("'<' inside a tag: <{inside}>"));
        }
        let (name, attrs) = parse_attrs(inside)?;
        if !KNOWN.contains(&name.as_str()) {
            return Err(format!("unexpected element <{name}>"));
        }
        let parent = *open.last().ok_or("element after </html>")?;
        let index = dom.nodes.len();
        dom.nodes.push(Element {
            name: name.clone(),
            attrs,
            children: Vec::new(),
            parent: Some(parent),
            text: String::new(),
        });
        dom.nodes[parent].children.push(index);
        if name == "style" {
            // Raw text up to </style>.
            let end = s.find("</style>").ok_or("unterminated <style>")?;
            dom.nodes[index].text = s[..end].to_string();
            s = &s[end + "</style>".len()..];
        } else if !VOID.contains(&name.as_str()) {
            open.push(index);
        }
    }
    if open != [0] {
        let names: Vec<&str> = open.iter().map(|&i| dom.nodes[i].name.as_str()).collect();
        return Err(format!("elements left open: {names:?}"));
    }
    Ok(dom)
}

/// The structure every page has: html > head + body; the op rows are
/// sections directly in main, numbered op-1, op-2, ... in order, each with
/// its op text, an observation block and the two stacks.
fn check_structure(dom: &Dom) -> Vec<usize> {
    let doc = &dom.nodes[0];
    assert_eq!(doc.children.len(), 1, "one root element");
    let html = doc.children[0];
    assert_eq!(dom.nodes[html].name, "html");
    let top: Vec<&str> = dom.nodes[html]
        .children
        .iter()
        .map(|&c| dom.nodes[c].name.as_str())
        .collect();
    assert_eq!(top, vec!["head", "body"]);
    let rows = dom.all_with_class("op-row");
    for (k, &r) in rows.iter().enumerate() {
        assert_eq!(dom.nodes[r].name, "section");
        let parent = dom.nodes[r].parent.expect("a parent");
        assert_eq!(dom.nodes[parent].name, "main", "rows sit in <main>");
        assert_eq!(dom.attr(r, "id"), Some(format!("op-{}", k + 1).as_str()));
        let inner = dom.descendants(r);
        for class in ["op-text", "obs", "eager", "lazy", "current"] {
            assert!(
                inner.iter().any(|&i| dom.has_class(i, class)),
                "row {} has no .{class}",
                k + 1
            );
        }
        // Eager on the left, lazy on the right.
        let stacks: Vec<usize> = dom.nodes[r]
            .children
            .iter()
            .copied()
            .filter(|&c| dom.has_class(c, "stack"))
            .collect();
        assert_eq!(stacks.len(), 2, "two stacks in row {}", k + 1);
        assert!(dom.has_class(stacks[0], "eager") && dom.has_class(stacks[1], "lazy"));
    }
    rows
}

/// The lazy scopes drawn inside the op rows.
fn lazy_scopes_in_rows(dom: &Dom, rows: &[usize]) -> usize {
    rows.iter()
        .flat_map(|&r| dom.descendants(r))
        .filter(|&i| dom.has_class(i, "lazy-scope"))
        .count()
}

fn ops_in(trace: &Path) -> usize {
    let text = std::fs::read_to_string(trace).expect("read the trace");
    model::vocab::trace::parse(&text)
        .expect("the trace parses")
        .steps
        .len()
}

#[test]
fn clean_scenario_page() {
    let dir = tmp_dir("clean");
    let trace = scenario("execution-async-resource-depths.trace");
    let (out, page) = replay_html(&dir, &trace, None);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    let rows = check_structure(&dom);
    assert_eq!(rows.len(), ops_in(&trace), "one row per op");
    assert!(dom.by_id("divergence").is_none(), "no divergence banner");
    assert!(dom.by_id("refinement-break").is_none());
    assert!(dom.by_id("verdict").is_some(), "the clean verdict");
    assert!(rows.iter().all(|&r| !dom.has_class(r, "diverged")));
    // The main-script scope is lazy until the first executionAsyncResource().
    assert!(lazy_scopes_in_rows(&dom, &rows) > 0, "the chain is drawn");
    let first = dom.text_of(rows[0]);
    assert!(first.contains("kLazyScopes") && first.contains("kStackLength"));
    assert!(first.contains("execution-async-resource"));
    assert!(first.contains("executionAsyncResource = main"));
    // The trace's own comment is shown.
    assert!(page.contains("Scenario: execution-async-resource-depths"));
}

#[test]
fn divergence_page_marks_the_op() {
    let dir = tmp_dir("divergence");
    let trace = write_trace(&dir, "t.trace", "emit-after -1\nexecution-async-id\n");
    let (out, page) = replay_html(&dir, &trace, Some("lazy-pop-skips-check"));
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    let rows = check_structure(&dom);
    assert_eq!(rows.len(), 1, "the replay stops at the divergence");
    let banner = dom.by_id("divergence").expect("a divergence banner");
    let links: Vec<&str> = dom
        .descendants(banner)
        .into_iter()
        .filter(|&i| dom.nodes[i].name == "a")
        .filter_map(|i| dom.attr(i, "href"))
        .collect();
    assert_eq!(links, vec!["#op-1"]);
    assert!(dom.has_class(rows[0], "diverged"));
    assert!(dom.by_id("verdict").is_none());
    // Different answers: both shown.
    let row = dom.text_of(rows[0]);
    assert!(row.contains("async hook stack has become corrupted (actual: 1, expected: -1)"));
    assert!(row.contains("(nothing observed)"));
}

#[test]
fn divergence_after_clear_points_at_the_close() {
    let dir = tmp_dir("close");
    let trace = write_trace(
        &dir,
        "t.trace",
        "callback-scope 5 1 R1\n  clear-async-id-stack\nclose\nexecution-async-id\n",
    );
    let (out, page) = replay_html(&dir, &trace, Some("lazy-close-restores-own"));
    assert_eq!(out.status.code(), Some(1), "stderr: {}", text(&out.stderr));
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    let rows = check_structure(&dom);
    assert_eq!(rows.len(), 3);
    let banner = dom.by_id("divergence").expect("a divergence banner");
    assert!(dom
        .descendants(banner)
        .iter()
        .any(|&i| dom.attr(i, "href") == Some("#op-3")));
    assert!(dom.has_class(rows[2], "diverged"));
    assert!(!dom.has_class(rows[0], "diverged") && !dom.has_class(rows[1], "diverged"));
    assert_eq!(dom.attr(rows[2], "data-line"), Some("3"));
}

#[test]
fn refinement_break_is_marked_before_the_divergence() {
    let dir = tmp_dir("refinement");
    // The lazy scope saves its own ids: invisible until the close restores them.
    let trace = write_trace(
        &dir,
        "t.trace",
        "callback-scope 5 1 R1\n  execution-async-id\nclose\nexecution-async-id\n",
    );
    let (out, page) = replay_html(&dir, &trace, Some("link-saves-own-ids"));
    assert_eq!(out.status.code(), Some(1));
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    let rows = check_structure(&dom);
    assert_eq!(rows.len(), 4);
    let brk = dom.by_id("refinement-break").expect("a refinement banner");
    assert!(dom
        .descendants(brk)
        .iter()
        .any(|&i| dom.attr(i, "href") == Some("#op-1")));
    assert!(dom.has_class(rows[0], "refinement-break"));
    let div = dom.by_id("divergence").expect("a divergence banner");
    assert!(dom
        .descendants(div)
        .iter()
        .any(|&i| dom.attr(i, "href") == Some("#op-4")));
    assert!(brk < div, "the earlier op's banner comes first");
    // The entries that differ are marked.
    assert!(dom
        .descendants(rows[0])
        .iter()
        .any(|&i| dom.has_class(i, "mismatch")));

    // A break that never becomes observable: marked, exit code 0 as in the
    // text replay.
    let trace = write_trace(&dir, "quiet.trace", "callback-scope 5 1 R1\n");
    let (out, page) = replay_html(&dir, &trace, Some("link-saves-own-ids"));
    assert_eq!(out.status.code(), Some(0));
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    check_structure(&dom);
    assert!(dom.by_id("refinement-break").is_some());
    assert!(dom.by_id("divergence").is_none());
}

#[test]
fn stops_after_a_terminal_observation() {
    let dir = tmp_dir("terminal");
    let trace = write_trace(
        &dir,
        "t.trace",
        "emit-after -1\nexecution-async-id\nexecution-async-id\n",
    );
    let (out, page) = replay_html(&dir, &trace, None);
    assert_eq!(out.status.code(), Some(0));
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    let rows = check_structure(&dom);
    assert_eq!(rows.len(), 1, "nothing runs after the process died");
    assert!(page.contains("the remaining 2 op(s) of the trace do not run"));
}

#[test]
fn trace_text_and_file_names_are_escaped() {
    let dir = tmp_dir("escape");
    let trace = write_trace(
        &dir,
        "a<b>&'\".trace",
        "# <script>alert(1)</script> & <b>bold</b>\n\
         callback-scope 5 1 R1\n\
         \x20 execution-async-id\n\
         close\n",
    );
    let (out, page) = replay_html(&dir, &trace, None);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", text(&out.stderr));
    // The strict parser rejects any element it does not know (<script>, <b>
    // from the file name would still be known: check the text instead).
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    check_structure(&dom);
    assert!(!page.contains("<script"));
    assert!(!page.contains("a<b>"));
    assert!(page.contains("a&lt;b&gt;&amp;&#39;&quot;.trace"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;"));
}

#[test]
fn impossible_op_exits_2_and_still_writes_the_page() {
    let dir = tmp_dir("impossible");
    let trace = write_trace(&dir, "t.trace", "close\nclose\nexecution-async-id\n");
    let (out, page) = replay_html(&dir, &trace, None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("t.trace:2:1:"),
        "{}",
        text(&out.stderr)
    );
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    let rows = check_structure(&dom);
    assert_eq!(rows.len(), 2);
    assert!(dom.by_id("rejected").is_some());
    assert!(dom.by_id("divergence").is_none());
}

#[test]
fn unwritable_output_is_a_clear_error() {
    let dir = tmp_dir("unwritable");
    let trace = write_trace(&dir, "t.trace", "execution-async-id\n");
    let missing = dir.join("no-such-dir").join("page.html");
    let out = scopecheck(&[
        "replay",
        "--html",
        missing.to_str().expect("utf-8"),
        trace.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("cannot write the HTML page"),
        "{stderr}"
    );
    assert!(stderr.contains("page.html"), "{stderr}");
    assert_eq!(text(&out.stdout), "", "nothing runs before the check");
    // A directory as the output path.
    let out = scopecheck(&[
        "replay",
        "--html",
        dir.to_str().expect("utf-8"),
        trace.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn text_output_is_unchanged_by_html() {
    let dir = tmp_dir("same-text");
    for (trace, mutant) in [
        (scenario("nested-native-scopes-with-hooks.trace"), None),
        (
            write_trace(&dir, "t.trace", "emit-after -1\n"),
            Some("lazy-pop-skips-check"),
        ),
    ] {
        let t = trace.to_str().expect("utf-8");
        let mut plain = vec!["replay", t];
        if let Some(m) = mutant {
            plain.extend(["--mutant", m]);
        }
        let without = scopecheck(&plain);
        let (with, _) = replay_html(&dir, &trace, mutant);
        assert_eq!(without.status.code(), with.status.code());
        assert_eq!(text(&without.stderr), text(&with.stderr));
        let expected = format!(
            "{}html: wrote {}\n",
            text(&without.stdout),
            dir.join("page.html").display()
        );
        assert_eq!(text(&with.stdout), expected);
    }
}

#[test]
fn every_scenario_renders_a_well_formed_page() {
    let dir = tmp_dir("all");
    let scenarios = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios");
    let mut seen = 0;
    for entry in std::fs::read_dir(scenarios).expect("list scenarios") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("trace") {
            continue;
        }
        let (out, page) = replay_html(&dir, &path, None);
        assert_eq!(out.status.code(), Some(0), "{}", path.display());
        let dom =
            parse_html(&page).unwrap_or_else(|e| panic!("{}: malformed page: {e}", path.display()));
        let rows = check_structure(&dom);
        assert!(!rows.is_empty(), "{}", path.display());
        seen += 1;
    }
    assert!(seen > 10);
}

#[test]
fn the_parser_rejects_broken_pages() {
    let wrap = |body: &str| {
        format!(
            "<!DOCTYPE html><html><head><meta charset=\"utf-8\"></head><body>{body}</body></html>"
        )
    };
    assert!(parse_html(&wrap("<div class=\"x\">ok &lt; fine</div>")).is_ok());
    for bad in [
        "<div>a < b</div>",           // an unescaped '<' in text
        "<div>a > b</div>",           // a stray '>'
        "<div><span></div></span>",   // crossed nesting
        "<div>",                      // left open
        "<script>alert(1)</script>",  // an element the page never emits
        "<div class=\"a<b\">x</div>", // '<' in an attribute
        "<div class=x>x</div>",       // unquoted attribute
    ] {
        assert!(parse_html(&wrap(bad)).is_err(), "accepted {bad:?}");
    }
}

#[test]
fn lazy_scopes_the_merge_cannot_place_are_listed() {
    let dir = tmp_dir("unplaced");
    // A lazy scope linked above a pushed entry; the broken clear keeps it in
    // the chain while the stack it sat on is gone.
    let trace = write_trace(
        &dir,
        "t.trace",
        "create-hook H1 before\nenable-hook H1\ncallback-scope 5 1 R1\n  disable-hook H1\n  \
         callback-scope 6 5 R2\n    clear-async-id-stack\n    execution-async-id\n  close\nclose\n",
    );
    let (out, page) = replay_html(&dir, &trace, Some("clear-keeps-chain"));
    assert_eq!(out.status.code(), Some(0), "nothing observable differs");
    let dom = parse_html(&page).unwrap_or_else(|e| panic!("malformed page: {e}"));
    let rows = check_structure(&dom);
    assert_eq!(rows.len(), 9);
    let brk = dom.by_id("refinement-break").expect("a refinement banner");
    assert!(dom
        .descendants(brk)
        .iter()
        .any(|&i| dom.attr(i, "href") == Some("#op-6")));
    assert!(dom.by_id("divergence").is_none());
    let unplaced: Vec<usize> = dom
        .descendants(rows[5])
        .into_iter()
        .filter(|&i| dom.has_class(i, "unplaced"))
        .collect();
    assert_eq!(unplaced.len(), 1);
    assert!(dom.text_of(unplaced[0]).contains("scope 6"));
    // Before the clear, scope 6 is drawn above stack entry 0 (depth 2).
    let row5 = dom.text_of(rows[4]);
    assert!(row5.contains("stack_position 1"), "{row5}");
}
