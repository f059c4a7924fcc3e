//! The recording of a replay ([`super::Replay`]) as one HTML page: the
//! trace's rows, each with both sides' stacks and answers, inline CSS and
//! no script; every piece of text from the trace, the file name or an
//! error escaped ([`escape`]).

use super::{Cell, End, EntryKind, LinkView, Replay, Row, StackView};
use crate::lockstep::Answer;
use model::vocab::{AsyncId, Observation};
use std::fmt::Write as _;

/// Escape text for HTML element content and double- or single-quoted
/// attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// What the page says about where the trace came from.
#[derive(Clone, Debug, Default)]
pub struct PageInfo {
    /// The trace file as given on the command line.
    pub file: String,
    /// The comment lines at the top of the trace file, without their `#`.
    pub intro: Option<String>,
}

/// The comment block at the top of a trace file (lines starting with `#`
/// before the first other non-blank line), without the `# ` prefixes.
pub fn leading_comment(text: &str) -> Option<String> {
    let mut lines = Vec::new();
    for raw in text.lines() {
        let t = raw.trim_start();
        if let Some(rest) = t.strip_prefix('#') {
            lines.push(rest.strip_prefix(' ').unwrap_or(rest).trim_end());
        } else if t.is_empty() {
            if lines.is_empty() {
                continue;
            }
            break;
        } else {
            break;
        }
    }
    while lines.last() == Some(&"") {
        lines.pop();
    }
    if lines.is_empty() {
        None
    } else {
        Some(lines.join("\n"))
    }
}

const CSS: &str = r#"
:root { --mono: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", Menlo, Consolas, monospace;
  --ink: #1d2330; --muted: #5d6778; --line: #d5dae3; --bg: #f6f7f9;
  --eager: #2f5d8a; --lazy: #7a3fb0; --bad: #b3261e; --badbg: #fdecea; --warn: #8a5a00; --warnbg: #fff4d6;
  --ok: #1e6b3a; --okbg: #e6f4ea; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); }
header.page { padding: 18px 24px 8px; background: #fff; border-bottom: 1px solid var(--line); }
h1 { font-size: 20px; margin: 0 0 4px; }
h1 code { font-size: 18px; }
h2 { font-size: 15px; margin: 14px 0 6px; }
p { margin: 4px 0; }
code, .mono { font-family: var(--mono); font-size: 12.5px; }
.sub { color: var(--muted); }
.banner { margin: 12px 24px 0; padding: 10px 14px; border-radius: 6px; font-weight: 600; }
.banner a { color: inherit; }
.banner .detail { font-weight: 400; margin-top: 4px; font-family: var(--mono); font-size: 12.5px; white-space: pre-wrap; }
.banner.divergence { background: var(--badbg); color: var(--bad); border: 2px solid var(--bad); }
.banner.refinement { background: var(--warnbg); color: var(--warn); border: 2px solid #d9a21b; }
.banner.clean { background: var(--okbg); color: var(--ok); border: 1px solid #9fd0ae; }
.banner.rejected { background: var(--warnbg); color: var(--warn); border: 2px solid #d9a21b; }
.explain { display: grid; grid-template-columns: 1fr 1fr; gap: 8px 28px; margin: 10px 24px 0; padding: 12px 16px; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
.explain ul { margin: 4px 0; padding-left: 18px; }
.legend { display: flex; flex-wrap: wrap; gap: 10px 18px; align-items: center; }
.legend span.item { display: inline-flex; gap: 6px; align-items: center; }
.swatch { display: inline-block; width: 34px; height: 16px; border-radius: 3px; }
details.intro { margin: 10px 24px 0; background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; }
details.intro pre.cols { column-count: 2; column-gap: 28px; }
details.intro pre { font-family: var(--mono); font-size: 12px; white-space: pre-wrap; margin: 6px 0; color: var(--muted); }
.rows { margin: 14px 24px 40px; }
.colhead, .op-row { display: grid; grid-template-columns: minmax(250px, 26%) 1fr 1fr; gap: 0 12px; }
.colhead { position: sticky; top: 0; z-index: 2; background: var(--bg); padding: 6px 0; border-bottom: 2px solid var(--line); font-weight: 600; }
.colhead .eager-h { color: var(--eager); }
.colhead .lazy-h { color: var(--lazy); }
.op-row { background: #fff; border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 8px 10px; }
.op-row:target { outline: 3px solid #3b82f6; }
.op-row.diverged { border: 2px solid var(--bad); background: #fffafa; }
.op-row.refinement-break { border: 2px solid #d9a21b; background: #fffdf5; }
.op-row.rejected { border: 2px solid #d9a21b; }
.op-head { display: flex; gap: 8px; align-items: baseline; flex-wrap: wrap; }
.opno { font-weight: 700; color: var(--muted); font-size: 12px; }
.lineno { color: var(--muted); font-size: 12px; }
.op-text { font-family: var(--mono); font-size: 13px; font-weight: 600; white-space: pre; }
.tag { display: inline-block; font-size: 11px; font-weight: 700; padding: 0 6px; border-radius: 8px; }
.tag.bad { background: var(--bad); color: #fff; }
.tag.warn { background: #d9a21b; color: #fff; }
.obs { margin-top: 6px; }
.obs .side { font-size: 11px; font-weight: 700; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin-top: 4px; }
.obs .side.eager { color: var(--eager); }
.obs .side.lazy { color: var(--lazy); }
.obs ul { list-style: none; margin: 2px 0; padding: 0; }
.obs li { font-family: var(--mono); font-size: 12px; padding: 1px 6px; border-radius: 3px; margin: 1px 0; background: #f1f3f6; overflow-wrap: anywhere; }
.obs li.none { background: none; color: var(--muted); font-style: italic; }
.obs li.error { background: var(--warnbg); color: var(--warn); }
.obs.differ li { background: var(--badbg); color: var(--bad); font-weight: 600; }
.obs.differ li.none { font-weight: 400; }
.why { margin-top: 6px; font-family: var(--mono); font-size: 11.5px; color: var(--warn); background: var(--warnbg); padding: 4px 6px; border-radius: 3px; overflow-wrap: anywhere; }
.stack { font-family: var(--mono); font-size: 12px; min-width: 0; }
.fields { color: var(--muted); font-size: 11.5px; margin-bottom: 3px; }
.fields div { white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.fields b { color: var(--ink); font-weight: 600; }
.current { display: grid; grid-template-columns: 7ch 1fr; padding: 3px 6px; border-radius: 4px; color: #fff; margin-bottom: 3px; }
.eager .current { background: var(--eager); }
.lazy .current { background: var(--lazy); }
.current.mismatch { box-shadow: inset 6px 0 0 var(--bad); padding-left: 12px; }
.entry, .slots-head { display: grid; grid-template-columns: 4ch 17ch 10ch 1fr 1fr; gap: 0 6px; padding: 2px 6px; align-items: baseline; }
.slots-head { color: var(--muted); font-size: 10.5px; padding-top: 0; padding-bottom: 0; }
.entry { border: 1px solid #c9d3e0; background: #f7f9fc; border-radius: 3px; margin: 2px 0; }
.entry.lazy-scope { border: 2px dashed var(--lazy); background: #f8f2fd; }
.entry.past-top { border: 1px dotted #aab; background: none; color: var(--muted); }
.entry.mismatch { box-shadow: inset 5px 0 0 var(--bad); }
.entry .d { color: var(--muted); }
.entry .holds { grid-column: 2 / span 4; font-size: 11px; color: var(--lazy); }
.badge { display: inline-block; font-size: 10px; font-weight: 700; color: #fff; background: var(--lazy); border-radius: 3px; padding: 0 4px; margin-right: 4px; }
.badge.stack-badge { background: var(--eager); }
.empty-stack { color: var(--muted); font-style: italic; padding: 2px 6px; }
.chain { margin-top: 4px; font-size: 11px; color: var(--lazy); overflow-wrap: anywhere; }
.unplaced { margin-top: 4px; font-size: 11px; color: var(--bad); }
.c-absent { color: #a0a7b4; }
.c-empty { color: var(--muted); font-style: italic; }
.ended { margin: 12px 0; padding: 8px 12px; color: var(--muted); font-style: italic; border: 1px dashed var(--line); border-radius: 6px; background: #fff; }
footer { margin: 0 24px 30px; color: var(--muted); font-size: 12px; }
"#;

fn cell_html(out: &mut String, cell: &Cell) {
    let class = match cell {
        Cell::Absent => "c-absent",
        Cell::Empty => "c-empty",
        Cell::Value(_) => "c-value",
    };
    let _ = write!(
        out,
        "<span class=\"{class}\">{}</span>",
        escape(cell.text())
    );
}

fn pair_text(p: (AsyncId, AsyncId)) -> String {
    format!("[{}, {}]", p.0, p.1)
}

fn render_stack(out: &mut String, side: &str, view: &StackView, current_mismatch: bool) {
    let _ = write!(out, "<div class=\"stack {side}\">");
    out.push_str("<div class=\"fields\">");
    for (n, line) in view.fields.iter().enumerate() {
        out.push_str("<div>");
        for (i, (name, value)) in line.iter().enumerate() {
            if i > 0 {
                out.push_str(" \u{b7} ");
            }
            let _ = write!(out, "{} <b>{}</b>", escape(name), escape(value));
        }
        if n == 0 && view.exited {
            out.push_str(" <span class=\"tag bad\">process exited</span>");
        }
        out.push_str("</div>");
    }
    out.push_str("</div>");
    let _ = write!(
        out,
        "<div class=\"current{}\" title=\"kExecutionAsyncId, kTriggerAsyncId\"><span>now</span><span>execution {} \u{b7} trigger {}</span></div>",
        if current_mismatch { " mismatch" } else { "" },
        view.current.0,
        view.current.1
    );
    out.push_str("<div class=\"slots-head\"><span>d</span><span>entry</span><span>saved</span><span>native[d]</span><span>js[d]</span></div>");
    for p in view.past_top.iter().rev() {
        let _ = write!(
            out,
            "<div class=\"entry past-top\" title=\"a resource-array slot past the top of the stack\"><span class=\"d\">{}</span><span>past the top</span><span></span>",
            p.depth
        );
        cell_html(out, &p.native);
        cell_html(out, &p.js);
        out.push_str("</div>");
    }
    if view.entries.is_empty() {
        out.push_str("<div class=\"empty-stack\">(stack empty)</div>");
    }
    for e in view.entries.iter().rev() {
        let mismatch = if e.mismatch { " mismatch" } else { "" };
        match &e.kind {
            EntryKind::Stack(i) => {
                let _ = write!(
                    out,
                    "<div class=\"entry stack-entry{mismatch}\"><span class=\"d\">{}</span><span><span class=\"badge stack-badge\">stack</span>[{i}]</span><span>{}</span>",
                    e.depth,
                    pair_text(e.saved)
                );
            }
            EntryKind::Lazy(link) => {
                let _ = write!(
                    out,
                    "<div class=\"entry lazy-scope{mismatch}\" title=\"a lazy scope: its pair is swapped in place, not pushed\"><span class=\"d\">{}</span><span><span class=\"badge\">lazy</span>scope {}</span><span>{}</span>",
                    e.depth,
                    link.async_id,
                    pair_text(e.saved)
                );
            }
        }
        cell_html(out, &e.native);
        cell_html(out, &e.js);
        if let EntryKind::Lazy(link) = &e.kind {
            let _ = write!(
                out,
                "<span class=\"holds\">chain #{} \u{b7} stack_position {} \u{b7} holds {}</span>",
                link.chain_index,
                link.stack_position,
                escape(&link.resource)
            );
        }
        out.push_str("</div>");
    }
    if side == "lazy" {
        out.push_str("<div class=\"chain\">chain: ");
        if view.chain_len == 0 {
            out.push_str("(empty)");
        } else {
            let mut links: Vec<&LinkView> = view
                .entries
                .iter()
                .filter_map(|e| match &e.kind {
                    EntryKind::Lazy(l) => Some(l),
                    EntryKind::Stack(_) => None,
                })
                .chain(view.unplaced.iter())
                .collect();
            links.sort_by_key(|l| l.chain_index);
            let parts: Vec<String> = links
                .iter()
                .map(|l| format!("{}@{}", l.async_id, l.stack_position))
                .collect();
            let _ = write!(
                out,
                "{} (outermost \u{2192} innermost, id@stack_position)",
                escape(&parts.join(" \u{2192} "))
            );
        }
        out.push_str("</div>");
    }
    if !view.unplaced.is_empty() {
        out.push_str("<div class=\"unplaced\">lazy scopes the merge cannot place (stack_position past kStackLength or out of order): ");
        let parts: Vec<String> = view
            .unplaced
            .iter()
            .map(|l| {
                format!(
                    "scope {} saved {} @{} holds {}",
                    l.async_id,
                    pair_text(l.saved),
                    l.stack_position,
                    l.resource
                )
            })
            .collect();
        out.push_str(&escape(&parts.join("; ")));
        out.push_str("</div>");
    }
    out.push_str("</div>");
}

fn answer_items(out: &mut String, answer: &Answer) {
    out.push_str("<ul>");
    match answer {
        Ok(obs) if obs.is_empty() => out.push_str("<li class=\"none\">(nothing observed)</li>"),
        Ok(obs) => {
            for o in obs {
                let class = if o.is_terminal() {
                    " class=\"terminal\""
                } else {
                    ""
                };
                let _ = write!(out, "<li{class}>{}</li>", escape(&o.to_string()));
            }
        }
        Err(e) => {
            let _ = write!(out, "<li class=\"error\">{}</li>", escape(&e.to_string()));
        }
    }
    out.push_str("</ul>");
}

fn render_row(out: &mut String, row: &Row) {
    let n = row.index + 1;
    let diverged = row.diverged();
    let rejected = !diverged && row.eager.is_err();
    let mut class = String::from("op-row");
    if diverged {
        class.push_str(" diverged");
    }
    if row.refinement.is_some() {
        class.push_str(" refinement-break");
    }
    if rejected {
        class.push_str(" rejected");
    }
    let _ = write!(
        out,
        "<section class=\"{class}\" id=\"op-{n}\" data-line=\"{}\">",
        row.line
    );
    out.push_str("<div class=\"left\"><div class=\"op-head\">");
    let _ = write!(
        out,
        "<span class=\"opno\">#{n}</span><span class=\"lineno\">line {}</span>",
        row.line
    );
    if diverged {
        out.push_str("<span class=\"tag bad\">first divergence</span>");
    }
    if row.refinement.is_some() {
        out.push_str("<span class=\"tag warn\">refinement break</span>");
    }
    if rejected {
        out.push_str("<span class=\"tag warn\">impossible op</span>");
    }
    out.push_str("</div>");
    let _ = write!(
        out,
        "<div class=\"op-text\">{}{}</div>",
        "  ".repeat(row.indent),
        escape(&row.op.to_string())
    );
    if diverged {
        out.push_str("<div class=\"obs differ\"><div class=\"side eager\">eager</div>");
        answer_items(out, &row.eager);
        out.push_str("<div class=\"side lazy\">lazy</div>");
        answer_items(out, &row.lazy);
        out.push_str("</div>");
    } else {
        out.push_str("<div class=\"obs same\"><div class=\"side\">both sides</div>");
        answer_items(out, &row.eager);
        out.push_str("</div>");
    }
    if let Some(why) = &row.refinement {
        let _ = write!(out, "<div class=\"why\">refinement: {}</div>", escape(why));
    }
    out.push_str("</div>");
    let current_mismatch = row.eager_state.current != row.lazy_state.current;
    render_stack(out, "eager", &row.eager_state, current_mismatch);
    render_stack(out, "lazy", &row.lazy_state, current_mismatch);
    out.push_str("</section>\n");
}

fn op_label(row: &Row) -> String {
    format!("#{} (line {}) `{}`", row.index + 1, row.line, row.op)
}

/// Render the page: header, verdict banners, explanation and legend, the
/// trace's own comment, then one row per op that ran.
pub fn render(replay: &Replay, info: &PageInfo) -> String {
    let mut out = String::with_capacity(4096 + replay.rows.len() * 3000);
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    let _ = writeln!(
        out,
        "<title>scopecheck replay: {}</title>",
        escape(&info.file)
    );
    out.push_str(
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>",
    );
    out.push_str(CSS);
    out.push_str("</style>\n</head>\n<body>\n");

    // Header.
    out.push_str("<header class=\"page\">");
    let _ = write!(
        out,
        "<h1>scopecheck replay: <code>{}</code></h1>",
        escape(&info.file)
    );
    let mutant = match replay.mutant {
        Some(m) => format!(
            " The lazy side runs with the deliberate mistake <code>{}</code> switched on.",
            escape(&m.name())
        ),
        None => String::new(),
    };
    let _ = write!(
        out,
        "<p class=\"sub\">Node.js PR 66511 (lazy async-context scopes). The same trace runs op by op on the <b>eager model</b> (Node today: every <code>InternalCallbackScope</code> pushes its pair on <code>async_ids_stack</code>) and on the <b>lazy implementation</b> (a scope opened with no hook and no <code>executionAsyncResource()</code> user swaps the pair in place and joins a chain of lazy scopes counted in <code>kLazyScopes</code>). Every observation is compared after every op, and the refinement relation (<code>docs/refinement.md</code>) is checked.{mutant}</p>"
    );
    let _ = write!(
        out,
        "<p class=\"sub\">{} of {} ops ran.</p>",
        replay.rows.len(),
        replay.total_ops
    );
    out.push_str("</header>\n");

    // Banners, the earlier op first: a refinement break comes before (or at)
    // the divergence it leads to.
    let divergence = replay.divergence();
    if let Some(r) = replay.refinement_break {
        let row = &replay.rows[r];
        let later = match divergence {
            Some(_) => " It becomes observable at the first divergence (below).",
            None => " Nothing observable differs in this trace (the text replay exits 0).",
        };
        let _ = writeln!(
            out,
            "<div class=\"banner refinement\" id=\"refinement-break\">Refinement break at <a href=\"#op-{}\">op {}</a>: the answers agree, but the lazy state no longer stands for the eager one (the entries marked in red differ).{}<div class=\"detail\">{}</div></div>",
            row.index + 1,
            escape(&op_label(row)),
            escape(later),
            escape(row.refinement.as_deref().unwrap_or(""))
        );
    }
    if let Some(d) = divergence {
        let row = &replay.rows[d];
        let earlier = match replay.refinement_break {
            Some(r) => format!(
                " The lazy state had already stopped standing for the eager one at op #{} (above).",
                replay.rows[r].index + 1
            ),
            None => String::new(),
        };
        let _ = writeln!(
            out,
            "<div class=\"banner divergence\" id=\"divergence\">First divergence at <a href=\"#op-{}\">op {}</a>: the two sides answer differently; a Node program can tell them apart.{}<div class=\"detail\">eager: {}\nlazy:  {}</div></div>",
            row.index + 1,
            escape(&op_label(row)),
            escape(&earlier),
            escape(&answer_text(&row.eager)),
            escape(&answer_text(&row.lazy))
        );
    }
    match &replay.end {
        End::Completed | End::Terminated { .. } if replay.refinement_break.is_none() => {
            let extra = match replay.end {
                End::Terminated { remaining } => format!(
                    " The process ended; the last {remaining} op(s) of the trace did not run."
                ),
                _ => String::new(),
            };
            let _ = writeln!(
                out,
                "<div class=\"banner clean\" id=\"verdict\">No divergence: both sides observed the same at every op, and the lazy state stood for the eager one after every op.{}</div>",
                escape(&extra)
            );
        }
        End::Rejected(why) => {
            if let Some(row) = replay.rows.last() {
                let _ = writeln!(
                    out,
                    "<div class=\"banner rejected\" id=\"rejected\">Both sides reject <a href=\"#op-{}\">op {}</a> as impossible; the replay stops there.<div class=\"detail\">{}</div></div>",
                    row.index + 1,
                    escape(&op_label(row)),
                    escape(why)
                );
            }
        }
        _ => {}
    }

    // How to read the page.
    out.push_str("<section class=\"explain\"><div><h2>How to read a row</h2><ul>");
    out.push_str("<li>Left: the op (<code>#n</code> in the trace, its line in the file, indented by the frames open around it) and what the program observed. Equal answers are shown once; different answers are shown per side, in red.</li>");
    out.push_str("<li>Middle and right: each side's async-context state <i>after</i> the op, innermost entry at the top. The dark bar is the current pair (<code>kExecutionAsyncId</code>, <code>kTriggerAsyncId</code>). Each entry below it shows its depth <code>d</code>, the <code>saved</code> pair its pop restores, and what <code>native_execution_async_resources_[d]</code> and the JS <code>execution_async_resources[d]</code> hold.</li>");
    out.push_str("<li>The bottom entry is the main-script scope (<code>{1, 0}</code>, resource <code>main</code>) that <code>StartExecution</code> opens before the first op; on the lazy side it is a lazy scope from the start.</li>");
    out.push_str("<li>On the lazy side the depth is <code>kStackLength + kLazyScopes</code>: each lazy scope is drawn where eager Node would have pushed it, above the <code>stack_position</code> stack entries below it. The line above each lazy stack says whether a scope opened now would take the lazy path.</li>");
    out.push_str("</ul></div><div><h2>Legend</h2><div class=\"legend\">");
    let legend: [(&str, &str); 7] = [
        ("<span class=\"entry stack-entry swatch\"></span>", "stack entry (<code>async_ids_stack[i]</code>)"),
        ("<span class=\"entry lazy-scope swatch\"></span>", "<span class=\"badge\">lazy</span> lazy scope in the chain, drawn at its <code>stack_position</code>"),
        ("<span class=\"entry past-top swatch\"></span>", "resource-array slot past the top (left by a pop)"),
        ("<span class=\"entry mismatch swatch\"></span>", "differs from the other side at that depth"),
        ("<code>\u{b7}</code>", "past the array's end; <code>empty</code>: a hole, <code>undefined</code> or an empty slot"),
        ("<span class=\"swatch\" style=\"border:2px solid #b3261e\"></span>", "first divergence"),
        ("<span class=\"swatch\" style=\"border:2px solid #d9a21b\"></span>", "refinement break (answers equal, states not)"),
    ];
    for (swatch, what) in legend {
        let _ = write!(
            out,
            "<span class=\"item\">{swatch}<span>{what}</span></span>"
        );
    }
    out.push_str("</div></div></section>\n");

    if let Some(intro) = &info.intro {
        let _ = writeln!(
            out,
            "<details class=\"intro\" open=\"\"><summary>The trace's own comment</summary><pre class=\"{}\">{}</pre></details>",
            if intro.lines().count() > 10 { "cols" } else { "" },
            escape(intro)
        );
    }

    // The rows.
    out.push_str("<main class=\"rows\">\n<div class=\"colhead\"><div>op and observations</div><div class=\"eager-h\">eager model (Node today)</div><div class=\"lazy-h\">lazy implementation (PR 66511)</div></div>\n");
    for row in &replay.rows {
        render_row(&mut out, row);
    }
    match &replay.end {
        End::Terminated { remaining } => {
            let _ = writeln!(
                out,
                "<div class=\"ended\">The process ended; the remaining {remaining} op(s) of the trace do not run.</div>"
            );
        }
        End::Diverged => {
            out.push_str("<div class=\"ended\">The replay stops at the first divergence.</div>\n");
        }
        End::Rejected(_) => {
            out.push_str("<div class=\"ended\">The replay stops at the impossible op.</div>\n");
        }
        End::Completed => {
            out.push_str("<div class=\"ended\">End of the trace.</div>\n");
        }
    }
    out.push_str("</main>\n<footer>Generated by <code>scopecheck replay --html</code>. The page is self-contained: no scripts, no external resources.</footer>\n</body>\n</html>\n");
    out
}

fn answer_text(answer: &Answer) -> String {
    match answer {
        Ok(obs) if obs.is_empty() => "(nothing observed)".to_string(),
        Ok(obs) => obs
            .iter()
            .map(Observation::to_string)
            .collect::<Vec<_>>()
            .join("; "),
        Err(e) => e.to_string(),
    }
}
