//! Scaffold-BPE (Lian, Xiong, Niu, Mo, Su, Lin, Chen, Liu, Han and Ding, "Scaffold-BPE:
//! Enhancing Byte Pair Encoding for Large Language Models with Simple and Effective Scaffold
//! Token Removal", arXiv 2404.17808).
//!
//! The merges are plain BPE's, in plain BPE's order: what changes is which of the tokens they make
//! count as rows. Each learned token `t` has a frequency `f(t)`, how often it stands as a token
//! in the units as the merges so far left them (`+` the occurrences a merge makes, `-` those a
//! merge joins on). The candidates are the pairs *and* the scaffold tokens, in one order: the
//! larger count first (a pair's count, a scaffold token's `f`), a scaffold token before a pair
//! at an equal count, tokens by their text, pairs by the engine's tie rule. A round takes the
//! head:
//! * a pair `(a, b)` is merged into `c` as in BPE; then each of `a` and `b` that is a learned
//!   token and not scaffold becomes a *scaffold token* when `f(x)` is below the count of the
//!   new head (`f(x) < head`, the head read after the merge, scaffold tokens included);
//! * a scaffold token at the head (its `f` has not fallen while the pairs' counts have) is
//!   *unmarked*: it is an ordinary token again, and nothing is merged.
//!
//! The size counts the learned tokens that are not scaffold; training stops when they reach it
//! (or on `min_count`, which the head must reach, or when nothing is left). Encoding applies
//! every merge, the scaffold tokens' included, then *demolishes* each scaffold token left in the
//! result into the two tokens its first merge joined, again while a part is scaffold.
//!
//! A model is stated as Picky BPE's events ([`super::picky::PickyReplay`]): the merges in order,
//! then one removal per scaffold token; the replay is the definition above. The pure-Python
//! reference (`python/subwords/reference/scaffold.py`) states the same rules in the plainest form.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;

use super::picky::{Picky, PickyEvent};
use super::{Merged, Symbols};

/// A scaffold token in the queue, with the `f` it had when pushed (stale when it differs).
struct Tok {
    count: u64,
    text: Rc<[u8]>,
    id: u32,
}

impl PartialEq for Tok {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Tok {}
impl PartialOrd for Tok {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Tok {
    /// The larger count first; then the smaller text.
    fn cmp(&self, other: &Self) -> Ordering {
        self.count
            .cmp(&other.count)
            .then_with(|| other.text.cmp(&self.text))
            .then_with(|| other.id.cmp(&self.id))
    }
}

/// One change of a token's mark.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// After merge number `merge` (0-based), `token` became a scaffold token.
    Scaffold { merge: usize, token: u32 },
    /// Before merge number `merge`, `token` was unmarked.
    Unmark { merge: usize, token: u32 },
}

/// The marks the merge loop keeps beside the engine (ids from `first_learned` on).
pub struct Marks {
    first_learned: u32,
    freq: Vec<i64>,
    scaffold: Vec<bool>,
    queue: BinaryHeap<Tok>,
    /// How many learned tokens are scaffold now.
    pub marked: u64,
    merges: usize,
    /// Every mark and unmark, in order.
    pub log: Vec<Mark>,
}

impl Marks {
    pub fn new(first_learned: u32) -> Self {
        Marks {
            first_learned,
            freq: Vec::new(),
            scaffold: Vec::new(),
            queue: BinaryHeap::new(),
            marked: 0,
            merges: 0,
            log: Vec::new(),
        }
    }

    fn ix(&self, t: u32) -> Option<usize> {
        (t >= self.first_learned).then(|| (t - self.first_learned) as usize)
    }

    /// Whether `t` is a scaffold token now.
    pub fn is_scaffold(&self, t: u32) -> bool {
        self.ix(t).is_some_and(|i| self.scaffold.get(i).copied().unwrap_or(false))
    }

    /// The frequency of a learned token as a token now.
    pub fn freq(&self, t: u32) -> i64 {
        self.ix(t).and_then(|i| self.freq.get(i).copied()).unwrap_or(0)
    }

    fn push(&mut self, t: u32, symbols: &Symbols) {
        let n = self.freq(t);
        if n > 0 {
            let text = symbols.texts[(t - symbols.base) as usize].clone();
            self.queue.push(Tok { count: n as u64, text, id: t });
        }
    }

    /// The scaffold token at the head of the tokens' queue, and its `f` (stale entries dropped).
    fn top(&mut self) -> Option<(u32, u64)> {
        while let Some(e) = self.queue.peek() {
            if self.is_scaffold(e.id) && self.freq(e.id) == e.count as i64 {
                return Some((e.id, e.count));
            }
            self.queue.pop();
        }
        None
    }

    /// Before a round: when the best scaffold token reaches `min_count` and is at least the best
    /// pair's count (`pair`), unmarks it and returns true (the round merges nothing).
    pub fn unmark_head(&mut self, pair: Option<u64>, min_count: u64) -> bool {
        let Some((t, n)) = self.top() else { return false };
        if n < min_count || pair.is_some_and(|p| p > n) {
            return false;
        }
        self.queue.pop();
        let i = self.ix(t).unwrap();
        self.scaffold[i] = false;
        self.marked -= 1;
        self.log.push(Mark::Unmark { merge: self.merges, token: t });
        true
    }

    /// After the merge of `(a, b)` into `c`, which joined `sites` occurrences: updates the
    /// frequencies and marks the parts below the head (`pair_head`: the best pair's count now).
    pub fn after_merge(
        &mut self,
        [a, b, c]: [u32; 3],
        sites: i64,
        pair_head: Option<u64>,
        symbols: &Symbols,
    ) {
        let n = (symbols.next_id() - self.first_learned) as usize;
        if self.freq.len() < n {
            self.freq.resize(n, 0);
            self.scaffold.resize(n, false);
        }
        if let Some(i) = self.ix(c) {
            self.freq[i] += sites;
        }
        for x in [a, b] {
            if let Some(i) = self.ix(x) {
                self.freq[i] -= sites;
            }
        }
        // a scaffold token whose f changed is queued again (a stale entry is skipped)
        let parts: &[u32] = if a == b { &[a] } else { &[a, b] };
        for &x in [c].iter().chain(parts) {
            if self.is_scaffold(x) {
                self.push(x, symbols);
            }
        }
        let head = pair_head.unwrap_or(0).max(self.top().map_or(0, |(_, n)| n));
        for &x in parts {
            let Some(i) = self.ix(x) else { continue };
            if !self.scaffold[i] && self.freq[i] < head as i64 {
                self.scaffold[i] = true;
                self.marked += 1;
                self.log.push(Mark::Scaffold { merge: self.merges, token: x });
                self.push(x, symbols);
            }
        }
        self.merges += 1;
    }

    /// The run as Picky BPE's events: the merges, then a removal of each token scaffold at the
    /// end (by id); the tokens present are the others. Also returns how many pieces the
    /// demolition adds to the units (Σ f(t) × (pieces of t − 1)).
    pub fn into_events(self, merged: &Merged) -> (Picky, u64) {
        let first = self.first_learned;
        let made_count = self.freq.len();
        let mut made: Vec<Option<[u32; 2]>> = vec![None; made_count];
        let mut events: Vec<PickyEvent> = Vec::with_capacity(merged.merges.len());
        for &[a, b, c] in &merged.merges {
            if let Some(i) = self.ix(c) {
                if made[i].is_none() {
                    made[i] = Some([a, b]);
                }
            }
            events.push(PickyEvent::Merge([a, b, c]));
        }
        // the pieces a token demolishes into (itself, when it is not scaffold)
        fn demolish(t: u32, m: &Marks, made: &[Option<[u32; 2]>], out: &mut Vec<u32>) {
            match m.ix(t) {
                Some(i) if m.scaffold[i] => {
                    let [l, r] = made[i].expect("a scaffold token was made by a merge");
                    demolish(l, m, made, out);
                    demolish(r, m, made, out);
                }
                _ => out.push(t),
            }
        }
        let mut extra = 0u64;
        let mut present = Vec::new();
        for i in 0..made_count {
            let t = first + i as u32;
            if self.scaffold[i] {
                let mut parts = Vec::new();
                demolish(t, &self, &made, &mut parts);
                extra += self.freq[i].max(0) as u64 * (parts.len() as u64 - 1);
                events.push(PickyEvent::Remove { token: t, parts });
            } else {
                present.push(t);
            }
        }
        (Picky { events, present, stop: merged.stop, units: Vec::new() }, extra)
    }
}

// ------------------------------------------------------------------ options

/// Checks `scaffold=` against the rest of the options (called from `TrainOptions::validate`).
pub fn validate(opts: &crate::options::TrainOptions) -> crate::error::Result<()> {
    use crate::options::ModelKind;
    use crate::spelling::Scheme;
    if !opts.scaffold {
        return Ok(());
    }
    super::refuse(
        opts,
        &[
            (|o| o.model != ModelKind::Bpe,
             "scaffold applies only to model='bpe': it marks tokens that BPE merges left behind"),
            (|o| o.picky.is_some(),
             "scaffold and picky do not go together: each decides on its own which merged tokens stay rows; choose one"),
            (|o| o.length_max,
             "scaffold does not take length_max: its marks compare a token's own count with the next pair's count, and Length-MAX ranks pairs by count x length; choose one"),
            (|o| o.superword_at.is_some(),
             "scaffold does not take superword_at yet: the paper's marks are defined for one merge stage"),
            (|o| o.spelling == Scheme::Continuation,
             "scaffold does not take spelling='continuation' yet: its model file cannot mark demolished word-start pieces; use end, front or bytes"),
            (|o| o.max_piece_length.is_some(),
             "scaffold does not take max_piece_length yet: a demolished token's parts follow the merges, not the limit"),
            (|o| o.pad_to_multiple.is_some(),
             "scaffold does not take pad_to_multiple yet: the scaffold tokens' ids follow the rows"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{symbols, text};
    use super::super::{learn_scaffold, Flat, MergeParams, Stop};
    use super::*;

    /// The reference module's worked case (python/subwords/reference/scaffold.py): units
    /// `abcd` x3, `abce` x2, `ab` x1, `bx` x1, two rows, min_count 1. Merge `a+b` (6): f(ab) = 6,
    /// the head is (ab, c) at 5. Merge `ab+c` (5): f(ab) = 1, the head is 3 ((abc, d)), 1 < 3:
    /// `ab` is scaffold; one row (`abc`). Merge `abc+d` (3): f(abc) = 2, the head is (abc, e) at
    /// 2, not below: two rows (`abc`, `abcd`), the size is reached.
    #[test]
    fn worked_case() {
        let mut s = symbols(&["a", "b", "c", "d", "e", "x"]);
        let spell = |s: &Symbols, w: &str| -> Vec<u32> {
            w.chars().map(|c| s.index[c.to_string().as_bytes()]).collect()
        };
        let mut flat = Flat::default();
        for (w, n) in [("abcd", 3), ("abce", 2), ("ab", 1), ("bx", 1)] {
            flat.push(&spell(&s, w), n);
        }
        let params = MergeParams::bpe(2, 1, None);
        let first = s.next_id();
        let (merged, marks) = learn_scaffold(flat, &mut s, &params, None, first);
        let names: Vec<String> = merged.merges.iter().map(|m| text(&s, m[2])).collect();
        assert_eq!(names, ["ab", "abc", "abcd"]);
        assert_eq!(marks.log, vec![Mark::Scaffold { merge: 1, token: first }]);
        let (out, extra) = marks.into_events(&merged);
        let present: Vec<String> = out.present.iter().map(|&t| text(&s, t)).collect();
        assert_eq!(present, ["abc", "abcd"]);
        // the one `ab` left (unit `ab`) demolishes into a, b
        assert_eq!(extra, 1);
        assert_eq!(out.stop, Stop::Size);
    }
}
