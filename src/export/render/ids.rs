//! The ids of a test: each observation's and op's async ids, mapped from
//! the model's numbers to Node's (`SHIFT`, `firstId`), and written as
//! JavaScript and as regular expressions.

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

/// A model id as the test writes it.
pub(super) fn id_js(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        return id.to_string();
    }
    match id - HANDED - 2 {
        0 => "firstId".to_string(),
        k => format!("firstId + {k}"),
    }
}

/// A model id as the test's regexp of a crash message matches it.
pub(super) fn id_re(id: AsyncId) -> String {
    if id >= HANDED / 2 {
        id.to_string()
    } else {
        "\\d+".to_string()
    }
}

/// The JS name of a trace resource, hook or storage.
pub(super) fn r(n: u32) -> String {
    format!("r{n}")
}
