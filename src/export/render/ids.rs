//! The ids of a test: each observation's and op's async ids, mapped from
//! the model's numbers to Node's (`SHIFT`; Node's named `idN`, the trace's
//! own [`OWN_IDS`] above), and written as JavaScript and as regular
//! expressions.

use super::*;

/// The ids of an observation, in a fixed order.
pub(super) fn ids_of(o: &Observation) -> Vec<AsyncId> {
    let mut v = Vec::new();
    map_ids(o, &mut |id| {
        v.push(id);
        id
    });
    v
}

/// `o` with each id replaced by `f(id)`, in [`ids_of`]'s order (the
/// explorer's walk of an observation's ids, `canonical::visit_observation_ids`).
pub(super) fn map_ids(o: &Observation, f: &mut dyn FnMut(AsyncId) -> AsyncId) -> Observation {
    let mut o = o.clone();
    crate::canonical::visit_observation_ids(&mut o, &mut |id| *id = f(*id));
    o
}

/// The model's id of an observed id that may be marked as handed out by
/// Node (`HANDED +` it).
pub(super) fn model_id(id: AsyncId) -> AsyncId {
    if id < HANDED / 2 {
        id - HANDED
    } else {
        id
    }
}

/// How far above its trace's numbers a test writes its own ids (those of
/// 2 and up): ids Node handed out before the test began (to `test/common`'s
/// own async work) lie below it, so none is one of the test's by chance,
/// and the hooks' recorder leaves their calls out.
pub(super) const OWN_IDS: AsyncId = 1000;

/// A trace's own id (not one Node hands out) as the test writes it: 0, 1
/// and below as they are, others [`OWN_IDS`] above.
pub(super) fn literal(id: AsyncId) -> AsyncId {
    if id >= 2 {
        id + OWN_IDS
    } else {
        id
    }
}

/// A model id as the test writes it.
pub(super) fn id_js(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        return literal(id).to_string();
    }
    handed_name(id - HANDED)
}

/// The name of the model's id `m`, one Node handed out to the test: `id1`
/// for the first Node hands out (the model's counter starts at 1).
pub(super) fn handed_name(m: AsyncId) -> String {
    format!("id{}", m - 1)
}

/// The model ids of the names `idN` in `text` (as [`handed_name`] writes
/// them, each a whole word).
pub(super) fn handed_names_in(text: &str, out: &mut BTreeSet<AsyncId>) {
    let bytes = text.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let mut at = 0;
    while let Some(k) = text[at..].find("id") {
        let start = at + k;
        let mut end = start + 2;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        let whole = (start == 0 || !word(bytes[start - 1]))
            && end > start + 2
            && (end == bytes.len() || !word(bytes[end]));
        if whole {
            if let Ok(n) = text[start + 2..end].parse::<AsyncId>() {
                out.insert(n + 1);
            }
        }
        at = start + 2;
    }
}

/// A model id as the test's regexp of a crash message matches it.
pub(super) fn id_re(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        literal(id).to_string()
    } else {
        "\\d+".to_string()
    }
}

/// The JS name of a trace resource, hook or storage.
pub(super) fn r(n: u32) -> String {
    format!("r{n}")
}

impl<S: AsyncIdStack> Writer<S> {
    /// The names of the Node-handed ids the test's code refers to.
    pub(super) fn ids_named(&self) -> BTreeSet<AsyncId> {
        let mut named = BTreeSet::new();
        for item in self.blocks.iter().flat_map(|b| &b.items) {
            match item {
                Item::Line(text) => handed_names_in(text, &mut named),
                Item::Call { parts, tail } => {
                    for (head, _) in parts {
                        handed_names_in(head, &mut named);
                    }
                    handed_names_in(tail, &mut named);
                }
                Item::Anchor(_) => {}
            }
        }
        named
    }

    /// The anchor line for Node-handed `ids` in `block`: each id the test
    /// names is bound (`const` in the main script's block, assigned to a
    /// `let` declared up front elsewhere); with hooks, an id it does not
    /// name is still read, so that the hooks record its calls.
    pub(super) fn anchor_text(&self, block: usize, ids: &[AsyncId]) -> Option<String> {
        if ids.is_empty() {
            return None;
        }
        let names: Vec<Option<String>> = (ids.iter())
            .map(|m| self.named.contains(m).then(|| handed_name(*m)))
            .collect();
        let read = match ids.len() {
            1 => "nextAsyncId()".to_string(),
            n => format!("nextAsyncIds({n})"),
        };
        let target = match names.as_slice() {
            [Some(name)] => name.clone(),
            _ if names.iter().all(Option::is_none) => {
                return self.hooks_record().then(|| format!("{read};"));
            }
            _ => {
                let slots: Vec<&str> = names.iter().map(|n| n.as_deref().unwrap_or("")).collect();
                format!("[{}]", slots.join(", "))
            }
        };
        Some(if block == 0 {
            format!("const {target} = {read};")
        } else {
            format!("{target} = {read};")
        })
    }

    /// Whether hooks record calls (and keep only those of the test's ids).
    pub(super) fn hooks_record(&self) -> bool {
        !self.hooks.is_empty()
    }

    /// The Node-handed ids bound outside the main script's block: declared
    /// with `let` up front.
    pub(super) fn ids_declared(&self) -> Vec<AsyncId> {
        let mut out = Vec::new();
        for block in self.blocks.iter().skip(1) {
            for item in &block.items {
                if let Item::Anchor(ids) = item {
                    out.extend(ids.iter().filter(|m| self.named.contains(m)));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Whether any anchor reads more than one id at once.
    pub(super) fn reads_several(&self) -> bool {
        (self.blocks.iter().flat_map(|b| &b.items))
            .any(|item| matches!(item, Item::Anchor(ids) if ids.len() > 1))
    }

    /// Whether the test reads any id Node hands out.
    pub(super) fn reads_ids(&self) -> bool {
        (0..self.blocks.len()).any(|b| {
            (self.blocks[b].items.iter())
                .any(|item| matches!(item, Item::Anchor(ids) if self.anchor_text(b, ids).is_some()))
        })
    }
}

/// The preamble's comment on the test's own ids: the numbers it `writes`
/// (as written), whether Node's ids are taken past them (`takes`), and
/// whether hooks record calls (and leave out those of lower ids).
fn own_ids_comment(written: &[AsyncId], takes: bool, hooks: bool) -> Vec<String> {
    let mut text = format!("The test's own ids lie above {OWN_IDS}: ");
    let numbers = match written {
        [] => None,
        [n] => Some(format!("the one it writes, {n}")),
        [a, b] => Some(format!("those it writes, {a} and {b}")),
        [a, .., b] => Some(format!("those it writes, {a} to {b}")),
    };
    let mut parts: Vec<String> = numbers.into_iter().collect();
    if takes {
        parts.push("the ones Node hands out from here on".to_string());
    }
    if parts.is_empty() {
        parts.push("none but 0 and 1 here".to_string());
    }
    text.push_str(&parts.join(", and "));
    text.push_str(". Node handed out fewer before the test began");
    text.push_str(" (test/common's async work).");
    if hooks {
        text.push_str(" The hooks record only the calls of the test's own ids.");
    }
    wrap_comment(&text)
        .into_iter()
        .map(|l| format!("// {l}"))
        .collect()
}

/// The helpers that read the ids Node hands out to the test: each just
/// before Node hands it out, so that ids Node handed out before (or to
/// async work not the test's, in between) change nothing. With `hooks`,
/// each is one of the test's own ids.
fn next_async_id(hooks: bool, several: bool) -> Vec<String> {
    let mut out = vec![
        "// The id Node hands out next, read just before it does: the test reads".to_string(),
        "// each id Node hands out to it so, and ids taken by others change nothing.".to_string(),
        "function nextAsyncId() {".to_string(),
    ];
    if hooks {
        out.extend([
            "  const id = newAsyncId() + 1;".to_string(),
            "  ownIds.add(id);".to_string(),
            "  return id;".to_string(),
        ]);
    } else {
        out.push("  return newAsyncId() + 1;".to_string());
    }
    out.push("}".to_string());
    if several {
        out.extend([
            "// The n ids Node hands out next, in one go.".to_string(),
            "function nextAsyncIds(n) {".to_string(),
            "  const ids = [nextAsyncId()];".to_string(),
        ]);
        if hooks {
            out.extend([
                "  while (ids.length < n) {".to_string(),
                "    const id = ids[0] + ids.length;".to_string(),
                "    ownIds.add(id);".to_string(),
                "    ids.push(id);".to_string(),
                "  }".to_string(),
            ]);
        } else {
            out.push("  while (ids.length < n) ids.push(ids[0] + ids.length);".to_string());
        }
        out.extend(["  return ids;".to_string(), "}".to_string()]);
    }
    out
}

/// What a test does about its ids, decided once its code is written.
pub(super) struct IdPlan {
    /// It reads ids Node hands out to it (`nextAsyncId()`).
    reads: bool,
    /// Its hooks record calls (of its own ids only).
    hooks: bool,
    /// The numbers it writes (the trace's own of 2 and up), ascending.
    written: Vec<AsyncId>,
    /// It takes Node's ids up to this one first: Node's ids must not equal
    /// the test's numbers by chance (the model's second run, its counter
    /// moved, says the expectations hold when they differ).
    take_to: Option<AsyncId>,
    /// It checks first that Node handed out fewer than [`OWN_IDS`] ids.
    guard: bool,
}

impl IdPlan {
    /// It calls `newAsyncId()`.
    pub(super) fn takes_ids(&self) -> bool {
        self.reads || self.guard
    }
}

impl<S: AsyncIdStack> Writer<S> {
    /// The test's own ids lie above [`OWN_IDS`]: the numbers it writes, and
    /// Node's from its preamble on; those `test/common` took lie below.
    pub(super) fn id_plan(&self) -> IdPlan {
        let hooks = self.hooks_record();
        let written: Vec<AsyncId> = (self.literals.iter().copied())
            .filter(|&m| m >= 2)
            .map(literal)
            .collect();
        let take_to = (!self.handed.is_empty() && (hooks || !written.is_empty()))
            .then(|| written.last().copied().unwrap_or(OWN_IDS));
        IdPlan {
            reads: self.reads_ids(),
            hooks,
            guard: take_to.is_some() || hooks,
            written,
            take_to,
        }
    }

    /// The lines of the preamble that `plan` asks for: the check that
    /// `test/common` took fewer than [`OWN_IDS`] ids, Node's ids taken past
    /// the test's numbers, `ownIds`, `nextAsyncId()`, and the `let` of the
    /// ids read inside callbacks.
    pub(super) fn id_preamble(&self, plan: &IdPlan) -> Vec<String> {
        let mut out = Vec::new();
        if plan.guard {
            out.extend(own_ids_comment(
                &plan.written,
                plan.take_to.is_some(),
                plan.hooks,
            ));
            out.push(format!("assert.ok(newAsyncId() < {OWN_IDS});"));
        }
        if let Some(m) = plan.take_to {
            out.push(format!("while (newAsyncId() < {m});"));
        }
        if plan.hooks {
            let own: BTreeSet<AsyncId> = (self.literals.iter().copied().map(literal))
                .chain([0, 1])
                .collect();
            let own: Vec<String> = own.iter().map(ToString::to_string).collect();
            out.push(
                "// The test's own ids: those it writes, 0 and 1, and each nextAsyncId() reads."
                    .to_string(),
            );
            out.push(format!("const ownIds = new Set([{}]);", own.join(", ")));
        }
        if plan.reads {
            out.extend(next_async_id(plan.hooks, self.reads_several()));
        }
        let declared: Vec<String> = self.ids_declared().into_iter().map(handed_name).collect();
        if !declared.is_empty() {
            out.push(format!("let {};", declared.join(", ")));
        }
        out
    }
}
