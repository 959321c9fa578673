//! Tool batching (seed 并发工具批处理): consecutive concurrency-safe calls of one round
//! run together; every other call runs alone, in order.

/// Most calls of one concurrent batch running at the same time.
pub const MAX_PARALLEL_TOOLS: usize = 5;

/// A group of calls (indices into the round's calls), run one group after another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Batch {
    /// Two or more concurrency-safe calls.
    Concurrent(Vec<usize>),
    /// One call on its own.
    Serial(usize),
}

/// Splits calls into batches: `[safe, safe, unsafe, safe]` → `[[0,1], 2, 3]`.
pub fn partition(safe: &[bool]) -> Vec<Batch> {
    let mut out = Vec::new();
    let mut run: Vec<usize> = Vec::new();
    let flush = |run: &mut Vec<usize>, out: &mut Vec<Batch>| match run.len() {
        0 => {}
        1 => out.push(Batch::Serial(run[0])),
        _ => out.push(Batch::Concurrent(std::mem::take(run))),
    };
    for (i, &is_safe) in safe.iter().enumerate() {
        if is_safe {
            run.push(i);
        } else {
            flush(&mut run, &mut out);
            run.clear();
            out.push(Batch::Serial(i));
        }
    }
    flush(&mut run, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use Batch::*;

    #[test]
    fn table() {
        let cases: Vec<(Vec<bool>, Vec<Batch>)> = vec![
            (vec![], vec![]),
            (vec![true], vec![Serial(0)]),
            (vec![false], vec![Serial(0)]),
            (vec![true, true], vec![Concurrent(vec![0, 1])]),
            (
                vec![true, true, false, true],
                vec![Concurrent(vec![0, 1]), Serial(2), Serial(3)],
            ),
            (vec![false, false], vec![Serial(0), Serial(1)]),
            (
                vec![false, true, true, true, false, true, true],
                vec![
                    Serial(0),
                    Concurrent(vec![1, 2, 3]),
                    Serial(4),
                    Concurrent(vec![5, 6]),
                ],
            ),
            (vec![true; 7], vec![Concurrent((0..7).collect())]),
        ];
        for (input, want) in cases {
            assert_eq!(partition(&input), want, "{input:?}");
        }
    }
}
