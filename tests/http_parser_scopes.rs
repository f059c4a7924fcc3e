//! `kSkipTaskQueues` on a public path: two pipelined HTTP requests, read in
//! one `OnStreamRead` of the server's parser (`src/node_http_parser.cc`).
//! Each parser callback runs in `InternalCallbackScope(this,
//! kSkipTaskQueues)` and `Call`s JS (the `'request'` handler from
//! `on_headers_complete`); after `Execute`, `MakeCallback` runs `kOnExecute`
//! in a scope without the flag, whose `Close` runs the ticks and microtasks
//! both handlers queued. The program runs on every binary
//! (`crate::binaries`); the model runs the same scopes as a trace
//! (`callback-scope ... skip-queues`, then `make-callback`), lazy and eager
//! in lockstep; what the handlers, ticks and microtasks see must be equal,
//! ids renamed in order of first appearance (the binaries' ids depend on
//! the resources their own JS makes). The translator of `conform` writes
//! scopes with chosen ids through an addon, which cannot set the flag, so
//! the flag is checked here.

use crate::binaries;

use model::vocab::{trace, NodeVersion, Op};
use scopecheck::lockstep::Pair;
use scopecheck::process::{self, Limits};
use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

/// The node program, read from stdin (`node - [resource]`). It prints its
/// observations in the model's words, one a line.
const PROGRAM: &str = r#"'use strict';
const http = require('http');
const net = require('net');
const ah = require('async_hooks');
const readResource = process.argv[2] === 'resource';
const out = [];
const names = new Map();
const name = (r) => {
  if (!names.has(r)) names.set(r, `R${names.size + 1}`);
  return names.get(r);
};
const payload = 'GET /1 HTTP/1.1\r\nHost: x\r\n\r\n' +
  'GET /2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n';
let oneRead = true;
const server = http.createServer((req, res) => {
  if (req.socket.bytesRead !== payload.length) oneRead = false;
  out.push(`executionAsyncId = ${ah.executionAsyncId()}`);
  out.push(`triggerAsyncId = ${ah.triggerAsyncId()}`);
  if (readResource) {
    out.push(`executionAsyncResource = ${name(ah.executionAsyncResource())}`);
  }
  process.nextTick(() => {
    const e = ah.executionAsyncId();
    out.push(`tick ${e} sees [${e}, ${ah.triggerAsyncId()}]`);
  });
  queueMicrotask(() => {
    out.push(`microtask sees [${ah.executionAsyncId()}, ${ah.triggerAsyncId()}]`);
  });
  res.end('ok');
});
server.listen(0, '127.0.0.1', () => {
  const c = net.connect(server.address().port, '127.0.0.1', () => c.write(payload));
  c.resume();
  c.on('end', () => {
    server.close();
    if (!oneRead) out.unshift('the two requests came in more than one read');
    console.log(out.join('\n'));
  });
});
"#;

/// The scopes Node opens for the two requests, as a trace: the main
/// script's scope ends, then for each request `on_message_begin`,
/// `on_headers_complete` (the handler's reads, `next-tick`,
/// `queue-microtask`) and `on_message_complete`, each a `skip-queues`
/// scope of the parser (id 12, trigger 11: what both binaries print), and
/// last the `kOnExecute` make-callback. `skip` false is the control: the
/// same program if the flag were not set.
fn model_trace(version: NodeVersion, read_resource: bool, skip: bool) -> String {
    let flag = if skip { " skip-queues" } else { "" };
    let scope = format!("callback-scope 12 11 R1{flag}\n");
    let mut t = String::new();
    if version == NodeVersion::V20 {
        t.push_str("node-version 20\n");
    }
    t.push_str("close\n");
    for _ in 0..2 {
        t.push_str(&scope);
        t.push_str("close\n");
        t.push_str(&scope);
        t.push_str("execution-async-id\ntrigger-async-id\n");
        if read_resource {
            t.push_str("execution-async-resource\n");
        }
        t.push_str("next-tick\nqueue-microtask\nclose\n");
        t.push_str(&scope);
        t.push_str("close\n");
    }
    t.push_str("make-callback 12 11 R1\nclose\n");
    t
}

/// What the model says the program prints, lazy and eager agreeing at
/// every op (and the refinement relation holding), with how many lazy
/// scopes were in the chain at each handler's reads.
fn model_prints(text: &str) -> (Vec<String>, Vec<u32>) {
    let ops: Vec<Op> = trace::parse(text).unwrap_or_else(|e| panic!("{e}")).ops();
    let mut pair = Pair::new();
    let mut lines = Vec::new();
    let mut chain = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let answer = pair
            .checked_step(i, op, true)
            .unwrap_or_else(|d| panic!("the lazy side differs:\n{d}\n{text}"));
        let obs = answer.unwrap_or_else(|e| panic!("op {} `{op}`: {e}\n{text}", i + 1));
        lines.extend(obs.iter().map(|o| o.to_string()));
        if matches!(op, Op::ExecutionAsyncId) {
            chain.push(pair.lazy.async_hooks.store.k_lazy_scopes);
        }
    }
    (lines, chain)
}

/// `lines` with every async id but 0 renamed `#1`, `#2`, ... in order of
/// first appearance: every word of digits alone in these lines is an async
/// id (a resource's name, `R1`, is a word of its own).
fn renamed(lines: &[String]) -> Vec<String> {
    let mut names: HashMap<String, usize> = HashMap::new();
    let mut rename = |word: &str| -> String {
        if word.is_empty() || word == "0" || !word.bytes().all(|b| b.is_ascii_digit()) {
            return word.to_string();
        }
        let next = names.len() + 1;
        format!("#{}", names.entry(word.to_string()).or_insert(next))
    };
    lines
        .iter()
        .map(|line| {
            let mut out = String::new();
            let mut word = String::new();
            for c in line.chars() {
                if c.is_ascii_alphanumeric() {
                    word.push(c);
                } else {
                    out.push_str(&rename(&std::mem::take(&mut word)));
                    out.push(c);
                }
            }
            out.push_str(&rename(&word));
            out
        })
        .collect()
}

/// `node - VARIANT` on `PROGRAM`, within a minute and the default output
/// bounds; its stdout lines.
fn node_prints(node: &std::path::Path, read_resource: bool) -> Vec<String> {
    let mut cmd = Command::new(node);
    cmd.arg("-");
    if read_resource {
        cmd.arg("resource");
    }
    let out = process::run(
        &mut cmd,
        Some(PROGRAM.as_bytes()),
        &Limits::new(Duration::from_secs(60)),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", node.display()));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{}: {}\n{stdout}{}",
        node.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.lines().map(str::to_string).collect()
}

#[test]
fn skip_task_queues_in_the_http_parser_is_what_the_model_says_on_every_binary() {
    for h in binaries::all() {
        let version = h.capabilities.node_version;
        for read_resource in [false, true] {
            let seen = node_prints(&h.node, read_resource);
            let on = format!(
                "node {} (resource read: {read_resource}):\n{}",
                h.node_version,
                seen.join("\n")
            );
            assert!(
                !seen.iter().any(|l| l.contains("more than one read")),
                "{on}"
            );
            let (model, chain) = model_prints(&model_trace(version, read_resource, true));
            assert_eq!(renamed(&seen), renamed(&model), "{on}");
            // Both handlers' reads come before the first tick: the flag
            // kept the queues from running at the first handler's close.
            let first_tick = seen.iter().position(|l| l.starts_with("tick "));
            let last_read = seen.iter().rposition(|l| l.starts_with("executionAsyncId"));
            assert!(
                matches!((last_read, first_tick), (Some(r), Some(t)) if r < t),
                "{on}"
            );
            // Without the flag the model would run the first tick inside
            // the first handler's scope's close, before the second request:
            // the comparison tells the two apart.
            let (control, _) = model_prints(&model_trace(version, read_resource, false));
            assert_ne!(renamed(&seen), renamed(&control), "{on}");
            // The lazy side took the pull request's path: with no hook and
            // no resource read, each handler ran in a lazy scope; after the
            // first `executionAsyncResource()` the second one is eager.
            let want = if read_resource { [1, 0] } else { [1, 1] };
            assert_eq!(chain, want, "{on}");
        }
    }
}

#[test]
fn renaming_keeps_zero_and_resources_and_follows_first_appearance() {
    let lines = [
        "executionAsyncId = 12".to_string(),
        "executionAsyncResource = R1".to_string(),
        "tick 14 sees [14, 12]".to_string(),
        "executionAsyncResource = R12".to_string(),
        "microtask sees [0, 0]".to_string(),
    ];
    assert_eq!(
        renamed(&lines),
        [
            "executionAsyncId = #1",
            "executionAsyncResource = R1",
            "tick #2 sees [#2, #1]",
            "executionAsyncResource = R12",
            "microtask sees [0, 0]",
        ]
    );
}
