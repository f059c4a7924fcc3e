//! The test file's assembly: the header, the names it takes from each
//! module, the hooks and storages, the blocks, and how a test that dies is
//! checked from its parent.

use super::*;

impl<S: AsyncIdStack> Writer<S> {
    pub(super) fn finish(mut self, comment: &str) -> Rendered {
        self.unbind_unused_timeouts();
        self.named = self.ids_named();
        let addon = self.binding || self.napi;
        let crash = self.ending.is_some();
        // An ES module entry that needs the addon is already a child's
        // entry (`module_runner`): its runner checks how it dies.
        let runner_checks = self.module && addon;
        let wrapped = crash && !runner_checks;
        let depth = usize::from(wrapped || self.stopped);
        let mut body = String::new();
        self.write_block(0, depth, &mut body);
        // After a scope deleted out of order, V8's TryCatch chain points at
        // the deleted scope's TryCatch: a check that threw would be lost
        // or corrupt memory, so the checks of such a test throw nothing.
        let quiet = self.heap_scopes > 0 && !crash;
        if quiet {
            body = body
                .replace("assert.strictEqual(", "expectSame(")
                .replace("assert.deepStrictEqual(", "expectDeep(");
        }
        let quiet = quiet && (body.contains("expectSame(") || body.contains("expectDeep("));
        let ids = self.id_plan();
        let takes_ids = ids.takes_ids();
        // An AsyncResource's frame is set by the test (`async-resource`).
        let captures = !self.captured.is_empty();
        let mut flags = Vec::new();
        let internal = !self.from_internal.is_empty()
            || takes_ids
            || self.uses_symbol
            || self.uses_rias
            || captures
            || self.timers
            || self.uses_timer_symbol
            || (self.module && !self.hooks.is_empty());
        if internal {
            flags.push("--expose-internals");
        }
        if self.no_force {
            flags.push("--no-force-async-hooks-checks");
        }
        // The flag that makes an uncaught exception abort goes to the child
        // that is to die (or to the module's runner's child), not to the
        // test's own process.
        let mut child_flags = flags.clone();
        if self.abort_on_uncaught {
            if wrapped || (self.module && addon) {
                child_flags.push("--abort-on-uncaught-exception");
            } else {
                flags.push("--abort-on-uncaught-exception");
            }
        }
        let mut decls = String::new();
        let d = |text: &str, out: &mut String| line(depth, text, out);
        if self.module && self.a.version == NodeVersion::V20 {
            // What the model's `entry-module` on v20 starts from (the
            // conformance program waits the same way, src/conform/emit.rs).
            for text in ESM_WAIT_V20 {
                d(text, &mut decls);
            }
        } else if self.module && self.has_top_level_await() {
            // `entry-module tla` on 26: the same loop, a top-level await
            // that does not run there (no loader request is open).
            for text in ESM_TLA_V26.iter().chain(&ESM_WAIT_V20[2..]) {
                d(text, &mut decls);
            }
        }
        if self.module && !self.hooks.is_empty() {
            for text in ESM_NO_PROMISE_HOOKS {
                d(text, &mut decls);
            }
        }
        if self.timers {
            for text in TIMERS_SCOPE {
                d(text, &mut decls);
            }
        }
        if self.runs_timeouts {
            for text in RUN_TIMEOUTS {
                d(text, &mut decls);
            }
        }
        if !self.timeouts_declared.is_empty() {
            let names: Vec<String> = (self.timeouts_declared.iter())
                .map(|n| format!("timeout{n}"))
                .collect();
            d(&format!("let {};", names.join(", ")), &mut decls);
        }
        if captures {
            d(
                "// The symbol under which an AsyncResource keeps the AsyncContextFrame it",
                &mut decls,
            );
            d(
                "// captured (lib/async_hooks.js), read off one made before any hook is on.",
                &mut decls,
            );
            d(
                "const contextFrameSymbol = Object.getOwnPropertySymbols(",
                &mut decls,
            );
            d(
                "  new AsyncResource('probe', { requireManualDestroy: true }),",
                &mut decls,
            );
            d(
                ").find((s) => s.description === 'context_frame');",
                &mut decls,
            );
        }
        for text in self.id_preamble(&ids) {
            d(&text, &mut decls);
        }
        for n in &self.resources {
            d(
                &format!("const {} = {{ name: '{}' }};", r(*n), r(*n)),
                &mut decls,
            );
        }
        for s in &self.storages {
            d(
                &match self.defaults.get(s) {
                    Some(v) => {
                        format!("const als{s} = new AsyncLocalStorage({{ defaultValue: {v} }});")
                    }
                    None => format!("const als{s} = new AsyncLocalStorage();"),
                },
                &mut decls,
            );
        }
        let mut unbound = Vec::new();
        if self.main_bound {
            unbound.push("mainResource");
        }
        if self.top_bound {
            unbound.push("topLevelResource");
        }
        unbound.retain(|n| !self.bound_inline.contains(n));
        if !unbound.is_empty() {
            d(
                "// The main script's resource and topLevelResource: named when first seen.",
                &mut decls,
            );
            d(&format!("let {};", unbound.join(", ")), &mut decls);
        }
        if self.lost > 0 {
            d(
                "// What a bare make-callback's callback throws is lost here: each such",
                &mut decls,
            );
            d(
                "// callback counts its end, so that an assertion failing in it is not lost.",
                &mut decls,
            );
            d("let callbackEnds = 0;", &mut decls);
        }
        if !self.hooks.is_empty() {
            d("// Each hook call: [hook, callback, ...arguments, executionAsyncId(), triggerAsyncId()].", &mut decls);
        }
        if !self.hooks.is_empty() || self.rejects {
            d("const calls = [];", &mut decls);
        }
        if self.rejects {
            d(
                "// Each unhandled rejection: ['unhandledRejection', executionAsyncId(), triggerAsyncId()].",
                &mut decls,
            );
            let record = "calls.push(['unhandledRejection', executionAsyncId(), triggerAsyncId()])";
            if self.rejections_seen == 0 {
                d(
                    "process.on('unhandledRejection', common.mustNotCall());",
                    &mut decls,
                );
            } else {
                let times = match self.rejections_seen {
                    1 => String::new(),
                    n => format!(", {n}"),
                };
                d(
                    "process.on('unhandledRejection', common.mustCall(() => {",
                    &mut decls,
                );
                d(&format!("  {record};"), &mut decls);
                d(&format!("}}{times}));"), &mut decls);
            }
        }
        if !self.hooks.is_empty() {
            d("function record(hook, ...callbacks) {", &mut decls);
            d("  const recorder = {};", &mut decls);
            d("  for (const callback of callbacks) {", &mut decls);
            d(
                "    recorder[callback] = (id, type, trigger, resource) => {",
                &mut decls,
            );
            d("      if (!ownIds.has(id)) return;", &mut decls);
            d("      const args = callback === 'init' ?", &mut decls);
            d(
                "        [id, type, trigger, resource?.name ?? resource?.constructor.name] : [id];",
                &mut decls,
            );
            d("      calls.push([hook, callback, ...args, executionAsyncId(), triggerAsyncId()]);", &mut decls);
            d("    };", &mut decls);
            d("  }", &mut decls);
            d("  return recorder;", &mut decls);
            d("}", &mut decls);
            for (h, callbacks) in &self.hooks {
                let names: Vec<String> = callbacks.iter().map(|c| format!("'{c}'")).collect();
                let sep = if names.is_empty() { "" } else { ", " };
                // A hook the test never enables is made and not bound.
                let bound = if body.contains(&format!("hook{h}.")) {
                    format!("const hook{h} = ")
                } else {
                    String::new()
                };
                d(
                    &format!(
                        "{bound}createHook(record('hook{h}'{sep}{}));",
                        names.join(", ")
                    ),
                    &mut decls,
                );
            }
        }
        if quiet {
            let same = body.contains("expectSame(").then_some(QUIET_SAME);
            let deep = body.contains("expectDeep(").then_some(QUIET_DEEP);
            for text in [Some(QUIET_CHECKS), same, deep]
                .into_iter()
                .flatten()
                .flatten()
            {
                d(text, &mut decls);
            }
        }
        if self.uses_rias {
            d(
                "// AsyncResource.prototype.runInAsyncScope on `resource`, given its two ids.",
                &mut decls,
            );
            d(
                "function runInAsyncScope(resource, asyncId, triggerId, fn) {",
                &mut decls,
            );
            d("  resource[async_id_symbol] = asyncId;", &mut decls);
            d(
                "  resource[trigger_async_id_symbol] = triggerId;",
                &mut decls,
            );
            d(
                "  return AsyncResource.prototype.runInAsyncScope.call(resource, fn);",
                &mut decls,
            );
            d("}", &mut decls);
        }

        let mut out = String::new();
        if !flags.is_empty() {
            let _ = writeln!(out, "// Flags: {}", flags.join(" "));
        }
        if !self.module {
            out.push_str("'use strict';\n");
        }
        for l in wrap_comment(comment) {
            let _ = writeln!(out, "// {l}");
        }
        out.push('\n');
        let dir = if addon { "../../common" } else { "../common" };
        // Node requires `common` first in every test, bound only if used.
        // The parent of a child that is to abort checks it with
        // `common.nodeProcessAborted()`.
        let parent_uses_common = wrapped && self.ending.as_ref().is_some_and(Ending::aborts);
        let uses = |what: &str| {
            body.contains(what) || decls.contains(what) || (what == "common." && parent_uses_common)
        };
        if self.module {
            // An ES module imports `common` first, then makes `require` for
            // the rest (internal modules, the binding).
            if uses("common.") || addon {
                let _ = writeln!(out, "import * as common from '{dir}/index.mjs';");
            } else {
                let _ = writeln!(out, "import '{dir}/index.mjs';");
            }
            out.push_str("import { createRequire } from 'module';\n\n");
            out.push_str("const require = createRequire(import.meta.url);\n");
        } else if uses("common.") || addon {
            let _ = writeln!(out, "const common = require('{dir}');");
        } else {
            let _ = writeln!(out, "require('{dir}');");
        }
        if uses("assert.") || parent_uses_common || self.stopped {
            out.push_str("const assert = require('assert');\n");
        }
        let mut from_public: BTreeSet<&str> = self.from_async_hooks.clone();
        if !self.hooks.is_empty() {
            from_public.extend(["createHook", "executionAsyncId", "triggerAsyncId"]);
        }
        if self.rejections_seen > 0 {
            from_public.extend(["executionAsyncId", "triggerAsyncId"]);
        }
        if !self.storages.is_empty() {
            from_public.insert("AsyncLocalStorage");
        }
        if self.uses_rias || captures {
            from_public.insert("AsyncResource");
        }
        if !from_public.is_empty() {
            let names: Vec<&str> = from_public.iter().copied().collect();
            destructure(&names, "async_hooks", &mut out);
        }
        let mut from_internal: BTreeSet<String> =
            self.from_internal.iter().map(|s| s.to_string()).collect();
        if takes_ids {
            from_internal.insert("newAsyncId".to_string());
        }
        if self.uses_symbol || self.uses_rias {
            let mut symbols = vec!["async_id_symbol"];
            if self.uses_rias {
                symbols.push("trigger_async_id_symbol");
            }
            from_internal.insert(format!("symbols: {{ {} }}", symbols.join(", ")));
        }
        if !from_internal.is_empty() {
            let names: Vec<String> = from_internal.into_iter().collect();
            destructure(&names, "internal/async_hooks", &mut out);
        }
        if captures {
            out.push_str("const AsyncContextFrame = require('internal/async_context_frame');\n");
        }
        if self.timers {
            // Its warning's tick would run, and be seen by the hooks,
            // after the main script.
            for text in [
                "// internal/test/binding warns through process.emitWarning, whose tick",
                "// the hooks would see: no warning while it loads.",
                "const { emitWarning } = process;",
                "process.emitWarning = () => {};",
                "const { internalBinding } = require('internal/test/binding');",
                "process.emitWarning = emitWarning;",
            ] {
                out.push_str(text);
                out.push('\n');
            }
        }
        let mut from_timers = Vec::new();
        if self.uses_timer_symbol {
            from_timers.push("async_id_symbol: timer_async_id_symbol");
        }
        if self.timers {
            from_timers.push("getTimerCallbacks");
        }
        if !from_timers.is_empty() {
            destructure(&from_timers, "internal/timers", &mut out);
        }
        if quiet {
            out.push_str("const util = require('util');\n");
        }
        if wrapped {
            let helper = parent_checks(&[], self.ending.as_ref()).1;
            let _ = writeln!(
                out,
                "const {{ {helper} }} = require('{dir}/child_process');"
            );
            if self.module {
                out.push_str("const { fileURLToPath } = require('url');\n");
            }
        }
        if self.stopped {
            out.push_str("const { isMainThread, Worker } = require('worker_threads');\n");
        }
        // A test that stops loads the addon in its Worker only (an addon
        // that is not context-aware loads into one environment).
        let mut addons = String::new();
        let indent = if self.stopped { "  " } else { "" };
        if self.binding {
            let _ = writeln!(
                addons,
                "{indent}const binding = require(`./build/${{common.buildType}}/binding`);"
            );
        }
        if self.napi {
            let _ = writeln!(
                addons,
                "{indent}const napi = require(`./build/${{common.buildType}}/napi_binding`);"
            );
        }
        if !self.stopped {
            out.push_str(&addons);
        }
        out.push('\n');
        if self.stopped {
            for text in [
                "if (isMainThread) {",
                "  // The test runs in a Worker, whose process.exit() stops its environment",
                "  // with scopes open, as worker.terminate() would.",
                "  new Worker(__filename)",
                "    .on('error', common.mustNotCall())",
                "    .on('exit', common.mustCall((code) => assert.strictEqual(code, 0)));",
                "} else {",
            ] {
                out.push_str(text);
                out.push('\n');
            }
            out.push_str(&addons);
            out.push_str(&decls);
            if !decls.is_empty() {
                out.push('\n');
            }
            out.push_str(&body);
            out.push_str("}\n");
        } else if let Some(ending) = self.ending.as_ref().filter(|_| wrapped) {
            out.push_str("if (process.argv[2] === 'child') {\n");
            out.push_str(&decls);
            if !decls.is_empty() {
                out.push('\n');
            }
            out.push_str(&body);
            out.push_str("} else {\n");
            let args: Vec<String> = child_flags
                .iter()
                .map(|f| format!("'{f}'"))
                .chain([
                    if self.module {
                        "fileURLToPath(import.meta.url)".to_string()
                    } else {
                        "__filename".to_string()
                    },
                    "'child'".to_string(),
                ])
                .collect();
            for l in parent_checks(&args, Some(ending)).0 {
                let _ = writeln!(out, "  {l}");
            }
            out.push_str("}\n");
        } else {
            out.push_str(&decls);
            if !decls.is_empty() {
                out.push('\n');
            }
            out.push_str(&body);
        }
        if self.module && addon {
            return Rendered {
                source: module_runner(comment, &child_flags, self.ending.as_ref()),
                binding: true,
                ending: None,
                module: true,
                fixture: Some(out),
            };
        }
        Rendered {
            source: out,
            binding: addon,
            ending: self.ending,
            module: self.module,
            fixture: None,
        }
    }
}

/// The longest line Node's lint allows (`max-len` in its eslint.config.mjs).
pub(super) const MAX_LEN: usize = 120;

/// How the parent runs the child (`node ARGS`) and checks how it ended,
/// with Node's helpers of `test/common/child_process.js`: with no `ending`,
/// `spawnSyncAndExitWithoutError`; else `spawnSyncAndExit` with its status
/// and signal (or, for an abort, `common.nodeProcessAborted()` after it,
/// as Node's own tests check one: the signal, or the exit code a shell
/// reports for it, depends on the compiler and the platform) and its stderr
/// (the heartbeat, then Node's message), as
/// test/async-hooks/test-improper-order.js checks them. The lines, and the
/// helper they use.
pub(super) fn parent_checks(
    args: &[String],
    ending: Option<&Ending>,
) -> (Vec<String>, &'static str) {
    let call = |helper: &str, tail: &str| -> Vec<String> {
        let one = format!("{helper}(process.execPath, [{}]{tail}", args.join(", "));
        if one.len() + 2 <= MAX_LEN {
            vec![one]
        } else {
            vec![
                format!("{helper}(process.execPath, ["),
                format!("  {},", args.join(", ")),
                format!("]{tail}"),
            ]
        }
    };
    let Some(ending) = ending else {
        return (
            call("spawnSyncAndExitWithoutError", ");"),
            "spawnSyncAndExitWithoutError",
        );
    };
    let corrupted = |actual: &str, expected: &str| {
        format!(
            "async hook stack has become corrupted \\(actual: {actual}, expected: {expected}\\)"
        )
    };
    let (exit, message) = match ending {
        Ending::Corrupted { actual, expected } => (Some("1"), corrupted(actual, expected)),
        Ending::Check(c) => (
            None,
            format!("Assertion failed: {}", regex_escape(check_text(*c))),
        ),
        Ending::Uncaught(message) => (Some("1"), format!("Error: {message}")),
        // The thrown error's message is the test's own (`uncaught`, or `the
        // callback throws` out of a make-callback).
        Ending::Aborted(_) => (None, "Uncaught Error: ".to_string()),
        Ending::CorruptedAbort { actual, expected } => (None, corrupted(actual, expected)),
    };
    let stderr = format!("  stderr: /heartbeat: still alive\\n[^]*{message}/,");
    let mut lines = match exit {
        Some(status) => {
            let mut lines = call("spawnSyncAndExit", ", {");
            lines.push(format!("  status: {status},"));
            lines.push("  signal: null,".to_string());
            lines.push(stderr);
            lines.push("});".to_string());
            lines
        }
        None => {
            let mut lines = call("const { child } = spawnSyncAndExit", ", {");
            lines.push(stderr);
            lines.push("});".to_string());
            lines.push(
                "assert.ok(common.nodeProcessAborted(child.status, child.signal));".to_string(),
            );
            lines
        }
    };
    lines.shrink_to_fit();
    (lines, "spawnSyncAndExit")
}

/// The `.js` test of an ES module entry that needs the addon: it runs the
/// module beside it (its own name with `.mjs`) as a child's entry, with the
/// module's flags, and checks that it ends as the model says (`ending`: how
/// it dies; none: exit 0).
pub(super) fn module_runner(comment: &str, flags: &[&str], ending: Option<&Ending>) -> String {
    let mut out = String::from("'use strict';\n");
    for l in wrap_comment(comment) {
        let _ = writeln!(out, "// {l}");
    }
    out.push('\n');
    let aborts = ending.is_some_and(Ending::aborts);
    if aborts {
        out.push_str("const common = require('../../common');\n");
        out.push_str("const assert = require('assert');\n");
    } else {
        out.push_str("require('../../common');\n");
    }
    let args: Vec<String> = flags
        .iter()
        .map(|f| format!("'{f}'"))
        .chain(["entry".to_string()])
        .collect();
    let (checks, helper) = parent_checks(&args, ending);
    let _ = writeln!(
        out,
        "const {{ {helper} }} = require('../../common/child_process');\n"
    );
    out.push_str("// The test is an ES module entry: this file's name with .mjs, beside it\n");
    out.push_str("// (the addon test runner runs .js files only), run as a child's entry.\n");
    out.push_str("const entry = __filename.replace(/\\.js$/, '.mjs');\n");
    for l in checks {
        let _ = writeln!(out, "{l}");
    }
    out
}

/// The test's one-line description, wrapped as Node's comments are (80
/// columns).
pub(super) fn wrap_comment(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = vec![String::new()];
    for word in text.split_whitespace() {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.len() + 1 + word.len() > 77 {
            lines.push(word.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(word);
        }
    }
    lines
}

/// `const { a, b } = require('module');`, one name a line when that is
/// longer than [`MAX_LEN`].
pub(super) fn destructure<N: AsRef<str>>(names: &[N], module: &str, out: &mut String) {
    let names: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
    let one = format!("const {{ {} }} = require('{module}');", names.join(", "));
    if one.len() <= MAX_LEN {
        out.push_str(&one);
        out.push('\n');
        return;
    }
    out.push_str("const {\n");
    for n in names {
        let _ = writeln!(out, "  {n},");
    }
    let _ = writeln!(out, "}} = require('{module}');");
}

/// A tick's or a microtask's callback (it runs later, if at all).
pub(super) fn is_scheduled(head: &str) -> bool {
    head.starts_with("process.nextTick(")
        || head.starts_with("queueMicrotask(")
        || head.starts_with("Promise.resolve().then(")
        || head.contains("setTimeout(")
}

/// `text` with the characters a JS regexp gives meaning escaped.
pub(super) fn regex_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    for c in text.chars() {
        if "\\^$.|?*+()[]{}/".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
