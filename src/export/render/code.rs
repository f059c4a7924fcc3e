//! The code tree: blocks of lines and calls with callbacks, the block the
//! next statement goes into, and the tree written out indented.

use super::*;

pub(super) fn line(depth: usize, text: &str, out: &mut String) {
    for _ in 0..depth {
        out.push_str("  ");
    }
    out.push_str(text);
    out.push('\n');
}

impl<S: AsyncIdStack> Writer<S> {
    pub(super) fn push(&mut self, text: impl Into<String>) -> usize {
        let block = self.current();
        self.blocks[block].items.push(Item::Line(text.into()));
        block
    }

    pub(super) fn new_block(&mut self) -> usize {
        self.blocks.push(Block::default());
        self.blocks.len() - 1
    }

    /// The block the next statement goes into.
    pub(super) fn current(&mut self) -> usize {
        if let Some(f) = self.frames.last() {
            return f.block;
        }
        self.event_loop_block()
    }

    /// The block of the callback that runs from the event loop once the
    /// main script is over (registered at the main script's end, or just
    /// before the exception that ended it).
    pub(super) fn event_loop_block(&mut self) -> usize {
        if let Some(b) = self.event_loop {
            return b;
        }
        let body = self.new_block();
        self.event_loop = Some(body);
        self.binding = true;
        let item = Item::Call {
            parts: vec![(
                "binding.runFromEventLoop(common.mustCall(() => {".to_string(),
                body,
            )],
            tail: "}));".to_string(),
        };
        match self.main_threw_at {
            Some(at) => self.blocks[0].items.insert(at, item),
            None => self.blocks[0].items.push(item),
        }
        body
    }

    /// Run B's id for an op argument that names an id Node handed out (not
    /// a number the trace wrote before that).
    pub(super) fn node_id(&self, id: AsyncId) -> Option<AsyncId> {
        if self.literals.contains(&id) {
            return None;
        }
        self.handed.get(&id).copied()
    }

    /// Check the hook calls seen so far, here.
    pub(super) fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let calls = std::mem::take(&mut self.pending);
        let mut text = String::from("assert.deepStrictEqual(calls.splice(0), [\n");
        for c in calls {
            let _ = writeln!(text, "  {c},");
        }
        text.push_str("]);");
        self.push(text);
    }

    /// Run `f` with `block` as the current block.
    pub(super) fn in_block(
        &mut self,
        block: usize,
        f: impl FnOnce(&mut Self) -> Result<(), NotWritten>,
    ) -> Result<(), NotWritten> {
        self.frames.push(CodeFrame {
            block,
            call: None,
            dead: false,
            scope_args: None,
        });
        let result = f(self);
        self.frames.pop();
        result
    }

    pub(super) fn write_block(&self, block: usize, depth: usize, out: &mut String) {
        for item in &self.blocks[block].items {
            match item {
                Item::Line(text) => {
                    for l in text.lines() {
                        line(depth, l, out);
                    }
                }
                Item::Anchor(ids) => {
                    if let Some(text) = self.anchor_text(block, ids) {
                        line(depth, &text, out);
                    }
                }
                Item::Call { parts, tail } => {
                    // A scheduled callback the model never runs (the process
                    // died first, or a Timeout that is never due) has no
                    // body: `common.mustNotCall()`.
                    if let [(head, body)] = parts.as_slice() {
                        if is_scheduled(head)
                            && !self.ran.contains(body)
                            && !self.blocks[*body].items.iter().any(Item::is_code)
                        {
                            if let Some(rest) = tail.strip_prefix("})") {
                                let call =
                                    head.replace("common.mustCall(() => {", "common.mustNotCall()");
                                line(depth, &format!("{call}{rest}"), out);
                                continue;
                            }
                        }
                    }
                    for (k, (head, body)) in parts.iter().enumerate() {
                        let head = if self.ran.contains(body) || k > 0 || !is_scheduled(head) {
                            head.clone()
                        } else {
                            // A callback the model never runs (the process
                            // died first): no common.mustCall.
                            head.replace("common.mustCall(() => {", "() => {")
                        };
                        line(depth, &head, out);
                        self.write_block(*body, depth + 1, out);
                    }
                    let tail = match parts.first() {
                        Some((head, body)) if is_scheduled(head) && !self.ran.contains(body) => {
                            tail.replacen("})", "}", 1)
                        }
                        _ => tail.clone(),
                    };
                    line(depth, &tail, out);
                }
            }
        }
    }
}

impl Item {
    /// Whether the item is code the test runs (an anchor where Node hands
    /// out no id is not).
    pub(super) fn is_code(&self) -> bool {
        !matches!(self, Item::Anchor(ids) if ids.is_empty())
    }
}
