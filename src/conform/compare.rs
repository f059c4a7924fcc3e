//! Node's observations held against the model's, group by group.

use super::{observe, Mismatch, NodeObservation};
use model::vocab::{Observation, Op, ResourceView};

/// Whether node's observations are ones the model allows: the same, or
/// anything where the model says a resource is unspecified (a read of freed
/// memory in Node): a value outside the shared vocabulary, or the process
/// dying there (then nothing after it is compared).
fn admits_all(expected: &[&Observation], seen: &[NodeObservation]) -> bool {
    let died_at = seen
        .iter()
        .position(|s| matches!(s, NodeObservation::Death(_)));
    let compared = died_at.map_or(seen.len(), |d| d + 1);
    (expected.len() == seen.len() || died_at.is_some_and(|d| d < expected.len()))
        && expected
            .iter()
            .zip(&seen[..compared])
            .all(|(e, s)| match s {
                NodeObservation::Known(got) => e.admits(got),
                NodeObservation::Other(_) | NodeObservation::Death(_) => matches!(
                    e,
                    Observation::ExecutionAsyncResource(ResourceView::Unspecified)
                        | Observation::Tick {
                            resource: Some(ResourceView::Unspecified),
                            ..
                        }
                ),
            })
}

/// Every group where the two sides differ, in order.
pub(super) fn compare(
    ops: &[Op],
    model: &[Vec<Observation>],
    starts: &[usize],
    node: &observe::NodeOutput,
) -> Vec<Mismatch> {
    let mut found = Vec::new();
    if !node.before_first.is_empty() {
        found.push(Mismatch {
            ops: 0..0,
            text: Vec::new(),
            model: Vec::new(),
            node: node.before_first.clone(),
        });
    }
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(ops.len());
        let expected: Vec<&Observation> = model[start..end].iter().flatten().collect();
        let seen = node.groups.get(&start).cloned().unwrap_or_default();
        if !admits_all(&expected, &seen) {
            found.push(Mismatch {
                ops: start..end,
                text: ops[start..end].iter().map(|o| o.to_string()).collect(),
                model: model[start..end].iter().flatten().cloned().collect(),
                node: seen,
            });
        } else if seen.iter().any(NodeObservation::is_terminal) {
            // Node ended here as the model allows (at an unspecified read):
            // nothing after it ran.
            break;
        }
    }
    // A marker of an op the program does not mark, or one naming another
    // op than the trace's, would be a harness bug.
    for (&index, obs) in &node.groups {
        let text = match node.ops.get(&index) {
            _ if starts.binary_search(&index).is_err() => format!("(unexpected marker {index})"),
            Some(ran) if ops.get(index) != Some(ran) => format!("(node ran `{ran}` as op {index})"),
            _ => continue,
        };
        found.push(Mismatch {
            ops: index..index + 1,
            text: vec![text],
            model: Vec::new(),
            node: obs.clone(),
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(groups: &[(usize, Vec<Observation>)]) -> observe::NodeOutput {
        observe::NodeOutput {
            groups: groups
                .iter()
                .map(|(k, v)| (*k, v.iter().cloned().map(NodeObservation::Known).collect()))
                .collect(),
            started: true,
            ..observe::NodeOutput::default()
        }
    }

    #[test]
    fn compare_finds_each_differing_group() {
        let ops = vec![Op::ExecutionAsyncId, Op::TriggerAsyncId, Op::NewAsyncId];
        let model = vec![
            vec![Observation::ExecutionAsyncId(1)],
            vec![Observation::TriggerAsyncId(0)],
            vec![Observation::NewAsyncId(2)],
        ];
        let same = output(&[
            (0, model[0].clone()),
            (1, model[1].clone()),
            (2, model[2].clone()),
        ]);
        assert!(compare(&ops, &model, &[0, 1, 2], &same).is_empty());
        let differs = output(&[
            (0, model[0].clone()),
            (1, vec![Observation::TriggerAsyncId(5)]),
            (2, vec![]),
        ]);
        let found = compare(&ops, &model, &[0, 1, 2], &differs);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].ops, 1..2);
        assert_eq!(found[1].ops, 2..3);
        // Fused: ops 1 and 2 compared together.
        let fused = output(&[
            (0, model[0].clone()),
            (1, vec![model[1][0].clone(), model[2][0].clone()]),
        ]);
        assert!(compare(&ops, &model, &[0, 1], &fused).is_empty());
        // Node ran another op than the trace's as op 1: shown, not passed.
        let mut other = output(&[
            (0, model[0].clone()),
            (1, model[1].clone()),
            (2, model[2].clone()),
        ]);
        other.ops.insert(1, Op::ExecutionAsyncId);
        let found = compare(&ops, &model, &[0, 1, 2], &other);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].text, ["(node ran `execution-async-id` as op 1)"]);
        // A death before the last marker: that group is empty on node's side.
        let died = output(&[(0, model[0].clone())]);
        assert_eq!(compare(&ops, &model, &[0, 1, 2], &died).len(), 2);
    }
}
