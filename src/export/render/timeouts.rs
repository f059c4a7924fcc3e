//! The Timeouts (`set-timeout`, `timer`, `end-timer`, `clear-timeout`):
//! real `setTimeout`s, unref'd, each with a duration of its own, whose
//! callbacks the test runs by calling Node's own `processTimers` in
//! `Environment::RunTimers`' scope (`runTimeouts`, [`RUN_TIMEOUTS`]), as
//! the conformance program does.

use super::*;

impl<S: AsyncIdStack> Writer<S> {
    /// `set-timeout`: `timeoutN = setTimeout(common.mustCall(() => {...}),
    /// 1e9 + N).unref();`, its callback a block the ops of its `timer` go
    /// into. A `const` in the main script's own block, else a `let`
    /// declared up front.
    pub(super) fn set_timeout(&mut self) {
        let id = self.a.async_hooks.async_id_fields.k_async_id_counter + 1;
        let n = self.timeouts.len() + 1;
        let binding = if self.current() == 0 {
            "const "
        } else {
            self.timeouts_declared.insert(n);
            ""
        };
        let block = self.schedule_with(
            &format!("{binding}timeout{n} = setTimeout(common.mustCall(() => {{"),
            &format!("}}), 1e9 + {n}).unref();"),
        );
        self.timeouts.insert(id, (n, block));
    }

    /// `timer`: the next Timeout's callback runs, its block the frame's.
    /// The first of a `processTimers` call is `runTimeouts(timeoutN)` in
    /// RunTimers' scope; one that the same call runs next (right after
    /// the `end-timer` of the one before) moves that line's `timeoutN` on
    /// to its own.
    pub(super) fn timer(&mut self, i: usize) -> Result<(), NotWritten> {
        let Some(front) = self.a.timers.waiting.front() else {
            return refuse(i, "no Timeout is waiting");
        };
        let Some(&(n, block)) = self.timeouts.get(&front.async_id) else {
            return refuse(i, "a Timeout runs that the test did not make");
        };
        let call = format!("runTimeouts(timeout{n});");
        match self.timer_call.filter(|_| self.a.timers.call.is_some()) {
            Some((at_block, at)) => self.blocks[at_block].items[at] = Item::Line(call),
            None => {
                let at_block = self.push(call);
                self.timer_call = Some((at_block, self.blocks[at_block].items.len() - 1));
            }
        }
        self.runs_timeouts = true;
        self.ran.insert(block);
        self.frames.push(CodeFrame {
            block,
            call: None,
            dead: false,
            scope_args: None,
        });
        Ok(())
    }

    /// `clear-timeout N`: `clearTimeout(timeoutN.ref())`. The Timeout is
    /// ref'd first, as the conformance program does: lib/timers.js'
    /// `unenroll` deletes the list it leaves empty only for a ref'd
    /// Timeout, and an unref'd one's empty list would stay queued for
    /// `processTimers` to count.
    pub(super) fn clear_timeout(&mut self, i: usize, id: AsyncId) -> Result<(), NotWritten> {
        let Some(&(n, _)) = self.timeouts.get(&id) else {
            return refuse(
                i,
                format!("clear-timeout {id}: a Timeout the test did not make"),
            );
        };
        self.push("// Ref'd first: lib/timers.js' unenroll deletes the list it leaves empty");
        self.push("// only for a ref'd Timeout.");
        self.push(format!("clearTimeout(timeout{n}.ref());"));
        Ok(())
    }

    /// Once the test is written: a Timeout that no `runTimeouts` or
    /// `clearTimeout` names is made without a name (`setTimeout(...)`
    /// alone; a `timer` may have moved a call on past it), and only the
    /// named ones made outside the main script's block are declared.
    pub(super) fn unbind_unused_timeouts(&mut self) {
        let named = |text: &str| -> Option<usize> {
            let rest = (text.strip_prefix("runTimeouts(timeout"))
                .or_else(|| text.strip_prefix("clearTimeout(timeout"))?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        let used: BTreeSet<usize> = (self.blocks.iter())
            .flat_map(|b| &b.items)
            .filter_map(|item| match item {
                Item::Line(text) => named(text),
                Item::Call { .. } | Item::Anchor(_) => None,
            })
            .collect();
        for block in &mut self.blocks {
            for item in &mut block.items {
                let Item::Call { parts, .. } = item else {
                    continue;
                };
                let Some((head, _)) = parts.first_mut() else {
                    continue;
                };
                let Some((binding, call)) = head.split_once(" = setTimeout(") else {
                    continue;
                };
                let n = binding
                    .trim_start_matches("const ")
                    .trim_start_matches("timeout");
                if n.parse().is_ok_and(|n: usize| !used.contains(&n)) {
                    *head = format!("setTimeout({call}");
                }
            }
        }
        self.timeouts_declared.retain(|n| used.contains(n));
    }
}
