//! The lockstep runner: every op applied to the eager model and to the lazy
//! implementation, all observations compared after every op, and the
//! refinement relation checked (`crate::refinement`).

use lazy::mutant::{Mutant, Mutated};
use lazy::{LazyStack, LazyStore};
use model::vocab::{trace, Observation, Op, OpError, Runtime};
use model::{Eager, Environment};
use serde::Serialize;
use std::fmt;

/// What one side answered to one op.
pub type Answer = Result<Vec<Observation>, OpError>;

/// Whether the lazy answer is one the eager answer allows: the same, or the
/// same but for resources the eager model calls unspecified (a read of freed
/// memory in Node, [`model::vocab::ResourceView::Unspecified`]).
pub fn agree(eager: &Answer, lazy: &Answer) -> bool {
    match (eager, lazy) {
        (Ok(e), Ok(l)) => Observation::admits_all(e, l),
        _ => eager == lazy,
    }
}

/// The first op where the two sides differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Divergence {
    /// Index of the op in the trace (0-based).
    pub index: usize,
    /// The op.
    pub op: Op,
    /// What the eager model answered.
    pub eager: Answer,
    /// What the lazy implementation answered.
    pub lazy: Answer,
    /// Set when the answers agree but the refinement check failed: the first
    /// field where the abstracted lazy state and the eager state differ.
    pub refinement: Option<String>,
}

impl Divergence {
    /// Whether a program can see it (the answers differ), as opposed to a
    /// broken refinement relation with equal answers so far.
    pub fn is_observable(&self) -> bool {
        self.refinement.is_none()
    }
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = &self.refinement {
            writeln!(
                f,
                "refinement broken after op {} `{}` (nothing observable yet): {why}",
                self.index + 1,
                self.op
            )?;
        } else {
            writeln!(
                f,
                "first divergence at op {} `{}`:",
                self.index + 1,
                self.op
            )?;
        }
        for (side, answer) in [("eager", &self.eager), ("lazy ", &self.lazy)] {
            match answer {
                Ok(obs) if obs.is_empty() => writeln!(f, "  {side}: (nothing)")?,
                Ok(obs) => {
                    let text: Vec<String> = obs.iter().map(|o| o.to_string()).collect();
                    writeln!(f, "  {side}: {}", text.join("; "))?
                }
                Err(e) => writeln!(f, "  {side}: {e}")?,
            }
        }
        Ok(())
    }
}

/// A trace that makes the two sides differ: the counterexample of `check`
/// and of `explore` alike, with how it was found (`F`: a
/// [`crate::check::CaseFound`] or an [`crate::explore::Explored`]).
#[derive(Clone, Debug)]
pub struct Counterexample<F> {
    /// The trace, up to and including the diverging op.
    pub ops: Vec<Op>,
    /// Where and how the two sides differ.
    pub divergence: Box<Divergence>,
    /// How it was found.
    pub found_by: F,
}

/// How a [`Counterexample`] was found, as its trace's header says it.
pub trait FoundBy {
    /// The first comment line of the trace (without `# `): the command that
    /// finds it again.
    fn header(&self) -> String;
}

impl<F: FoundBy> Counterexample<F> {
    /// The trace in the text format, with a header saying how it was found
    /// and the divergence as comments on top.
    pub fn trace_text(&self) -> String {
        let mut out = format!(
            "# {}\n# {}\n",
            self.found_by.header(),
            self.divergence.to_string().trim_end().replace('\n', "\n# ")
        );
        out.push_str(&trace::print(&self.ops));
        out
    }
}

thread_local! {
    /// This thread is inside [`catch_panic`].
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// From now on, a panic that [`catch_panic`] answers is not printed (a
/// mutant that panics is a kill, not news); every other panic is printed by
/// the hook that was there before. Installed once per process.
pub fn quiet_caught_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !CATCHING.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
}

/// Run one side's `apply`, answering a panic as `OpError::Internal`: a
/// panicking implementation is a divergence, not a crash of the harness.
pub fn catch_panic(apply: impl FnOnce() -> Answer) -> Answer {
    let outer = CATCHING.with(|c| c.replace(true));
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(apply));
    CATCHING.with(|c| c.set(outer));
    caught.unwrap_or_else(|panic| {
        let why = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".to_string());
        Err(OpError::Internal(format!("the lazy side panicked: {why}")))
    })
}

/// One op run on both sides with equal answers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AgreedOp {
    /// The op.
    pub op: Op,
    /// The answer both sides gave.
    pub answer: Answer,
}

/// Both implementations, side by side: the lazy one over the pull
/// request's store, or over a mutant's ([`Mutated`]).
#[derive(Clone, Debug, Default)]
pub struct Pair<S: LazyStore = LazyStack> {
    /// The eager reference model.
    pub eager: Eager,
    /// The lazy implementation under test.
    pub lazy: Environment<S>,
}

impl Pair {
    /// Both sides at the start of the main script.
    pub fn new() -> Self {
        Self::with_store(LazyStack::default())
    }
}

impl Pair<Mutated> {
    /// Both sides, the lazy one with a deliberate mistake planted.
    pub fn mutated(mutant: Mutant) -> Self {
        Self::with_store(Mutated::new(mutant))
    }
}

impl<S: LazyStore> Pair<S> {
    /// Both sides, the lazy one over `store`.
    pub fn with_store(store: S) -> Self {
        Pair {
            eager: Eager::new(),
            lazy: Environment::with_store(store),
        }
    }

    /// Apply `op` to both; `Err` with both answers when they differ. A panic
    /// of the lazy side is caught and answered as `OpError::Internal`.
    pub fn step(&mut self, op: &Op) -> Result<Answer, (Answer, Answer)> {
        let e = self.eager.apply(op);
        let lazy = &mut self.lazy;
        let l = catch_panic(|| lazy.apply(op));
        if agree(&e, &l) {
            Ok(e)
        } else {
            Err((e, l))
        }
    }

    /// Apply `op` to both and check answers, then (if asked) the refinement
    /// relation; `index` is the op's place in its trace.
    pub fn checked_step(
        &mut self,
        index: usize,
        op: &Op,
        refinement: bool,
    ) -> Result<Answer, Box<Divergence>> {
        match self.step(op) {
            Ok(answer) => {
                if refinement {
                    if let Err(why) = crate::refinement::verify(&mut self.eager, &mut self.lazy) {
                        return Err(Box::new(Divergence {
                            index,
                            op: op.clone(),
                            eager: answer.clone(),
                            lazy: answer,
                            refinement: Some(why),
                        }));
                    }
                }
                Ok(answer)
            }
            Err((eager, lazy)) => Err(Box::new(Divergence {
                index,
                op: op.clone(),
                eager,
                lazy,
                refinement: None,
            })),
        }
    }
}

/// Run `ops` in lockstep from the start, up to the first divergence or the
/// end of the trace, checking the refinement relation after every op. Ops
/// both sides reject are kept (with their error) so the caller can report them.
pub fn run(ops: &[Op]) -> Result<Vec<AgreedOp>, Box<Divergence>> {
    run_with(ops, None, true)
}

/// [`run`] with a mutant, and with or without the refinement check.
pub fn run_with(
    ops: &[Op],
    mutant: Option<Mutant>,
    refinement: bool,
) -> Result<Vec<AgreedOp>, Box<Divergence>> {
    match mutant {
        None => run_on(Pair::new(), ops, refinement),
        Some(m) => run_on(Pair::mutated(m), ops, refinement),
    }
}

/// [`run`] on `pair`, with or without the refinement check.
pub fn run_on<S: LazyStore>(
    mut pair: Pair<S>,
    ops: &[Op],
    refinement: bool,
) -> Result<Vec<AgreedOp>, Box<Divergence>> {
    let mut steps = Vec::with_capacity(ops.len());
    for (index, op) in ops.iter().enumerate() {
        let answer = pair.checked_step(index, op, refinement)?;
        steps.push(AgreedOp {
            op: op.clone(),
            answer,
        });
    }
    Ok(steps)
}
