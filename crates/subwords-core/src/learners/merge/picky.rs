//! Picky BPE (Chizhov, Arnett, Korotkova and Yamshchikov, "BPE Gets Picky: Efficient Vocabulary
//! Refinement During Tokenizer Training", EMNLP 2024, arXiv 2409.04599).
//!
//! Plain BPE with one step after every merge of `x1 + x2`: each of the two tokens that is not a
//! symbol of the alphabet gets its *intersection over self*, `IoS(x) = f_p(x1, x2) / f_t(x)`,
//! the pair's merged count over `x`'s count as a token just before the merge. When it reaches the
//! threshold (`IoS >= T`) `x` is *removed*: every occurrence left is split into the tokens it was
//! first made of (a removed part into its own parts, down to present tokens or symbols). The left
//! token is checked first, then the right one (once for `x + x`); `f_t` is read when the check is
//! made, so a removal that splits into the other token raises it. A later merge that makes a
//! removed token's text again restores it. The size counts the learned tokens present.
//!
//! The model is a sequence of events, merges and removals; encoding replays them in order. The
//! pure-Python reference (`python/subwords/reference/picky.py`) states the same rules in the
//! plainest form and works a case by hand; the tests run both on random corpora.
//!
//! Shape: the BPE merge engine (`engine.rs`): its flat units, pair index with place lists,
//! count updates at the merge sites only, and heap, with the BPE tie rule. A removal is a
//! rewrite on the same structures ([`super::Engine::split`]): the units that may hold the token
//! are listed per learned token (stale ids skipped), and each unit holding it is rewritten from
//! its first occurrence, counting out the pairs that hold the token and in those that hold a
//! part. A unit never outgrows the symbols it started with, so it is split in place.

use super::engine::Engine;
use super::{pack, unpack, Flat, MergeParams, Stop, Symbols};
use crate::hash::Map;

/// One step of a Picky BPE run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PickyEvent {
    /// `(left, right, result)`: every occurrence of the pair joined.
    Merge([u32; 3]),
    /// A token removed; every occurrence split into `parts`.
    Remove { token: u32, parts: Vec<u32> },
}

pub struct PickyParams {
    /// How many learned tokens may be present at the end.
    pub new_rows: u64,
    pub min_count: u64,
    /// The IoS threshold, in (0, 1].
    pub threshold: f64,
}

pub struct Picky {
    pub events: Vec<PickyEvent>,
    /// The learned tokens present at the end, in the order they were last made.
    pub present: Vec<u32>,
    pub stop: Stop,
    /// The units as training left them (from [`learn_picky`]; [`learn_flat`] leaves it empty).
    pub units: Vec<Vec<u32>>,
}

/// Picky BPE on `units` (symbol ids of `symbols`, with counts; ids below `symbols.next_id()` at
/// the start are the alphabet and never removed). New tokens are added to `symbols`, removed ones
/// included (a removed token keeps its symbol id: a restore reuses it).
pub fn learn_picky(
    units: Vec<(Vec<u32>, u64)>,
    symbols: &mut Symbols,
    params: &PickyParams,
) -> Picky {
    let mut flat = Flat::default();
    for (u, c) in &units {
        // a unit counted 0 takes part in nothing: it is left empty
        flat.push(if *c == 0 { &[] } else { u.as_slice() }, *c);
    }
    let (mut out, flat) = run(flat, symbols, params);
    out.units = (0..flat.units()).map(|i| flat.unit(i).to_vec()).collect();
    out
}

/// Picky BPE on the engine's flat units (a symbol outside the alphabet takes part in no pair).
/// Also returns Σ count × pieces of the units afterwards. [`Picky::units`] is left empty.
pub fn learn_flat(flat: Flat, symbols: &mut Symbols, params: &PickyParams) -> (Picky, u64) {
    let (out, flat) = run(flat, symbols, params);
    (out, flat.pieces())
}

/// The run on the merge engine: its pair index, place lists and heap, with the removals as
/// splits on the same lists ([`Engine::split`]). The engine keeps every pair in its index (a
/// split raises counts, which its dropped-pair bound does not allow for).
fn run(flat: Flat, symbols: &mut Symbols, params: &PickyParams) -> (Picky, Flat) {
    let first_learned = symbols.next_id();
    let mp = MergeParams::bpe(params.new_rows, params.min_count, None);
    let mut e = Engine::new(flat, symbols, &mp, true);
    e.touched = Some(Vec::new());
    // per learned token (by `id - first_learned`): present, the parts it was first made of,
    // its count as a token, the units that may hold it (stale ids allowed), and when it was
    // last made present (the order of [`Picky::present`], built at the end: removing a token
    // from an ordered list at each removal was 7.5% of a run's instructions, English at 32k)
    let mut present: Vec<bool> = Vec::new();
    let mut made: Vec<[u32; 2]> = Vec::new();
    let mut freq: Vec<i64> = Vec::new();
    let mut holders: Vec<Vec<u32>> = Vec::new();
    let mut made_at: Vec<u64> = Vec::new();
    let mut n_present = 0u64;
    let mut events = Vec::new();
    let learned = |t: u32| t.checked_sub(first_learned).map(|k| k as usize);
    let stop = loop {
        if n_present >= params.new_rows {
            break Stop::Size;
        }
        let Some((p, count)) = e.best() else {
            break Stop::NoPairs;
        };
        if count < params.min_count {
            break Stop::MinCount;
        }
        let (a, b) = unpack(p);
        let (c, is_new) = e.piece(a, b);
        if is_new {
            present.push(false);
            made.push([a, b]);
            freq.push(0);
            holders.push(Vec::new());
            made_at.push(0);
        }
        let kc = learned(c).expect("a merge makes a learned token");
        if !present[kc] {
            present[kc] = true;
            n_present += 1;
            made_at[kc] = events.len() as u64;
        }
        let sites = e.apply(p, c, !is_new);
        let touched = e.touched.as_mut().expect("set above");
        holders[kc].append(touched);
        // each site turns one a and one b into one c
        for t in [a, b] {
            if let Some(k) = learned(t) {
                freq[k] -= sites;
            }
        }
        freq[kc] += sites;
        events.push(PickyEvent::Merge([a, b, c]));
        let f_p = sites;
        let checks: &[u32] = if a == b { &[a] } else { &[a, b] };
        for &x in checks {
            let Some(kx) = learned(x).filter(|&k| present[k]) else { continue };
            let times = (a == x) as i64 + (b == x) as i64;
            let f_t = freq[kx] + f_p * times;
            if f_t == 0 || (f_p as f64) / (f_t as f64) < params.threshold {
                continue;
            }
            present[kx] = false;
            n_present -= 1;
            let parts = walk(x, first_learned, &present, &made);
            let (occurrences, changed) = e.split(x, &parts, std::mem::take(&mut holders[kx]));
            freq[kx] -= occurrences;
            for (i, &t) in parts.iter().enumerate() {
                if let Some(k) = learned(t) {
                    freq[k] += occurrences;
                    if !parts[..i].contains(&t) {
                        holders[k].extend_from_slice(&changed);
                    }
                }
            }
            events.push(PickyEvent::Remove { token: x, parts });
        }
    };
    let flat = e.into_flat();
    let mut order: Vec<u32> = (0..present.len() as u32).filter(|&k| present[k as usize]).collect();
    order.sort_unstable_by_key(|&k| made_at[k as usize]);
    let order = order.into_iter().map(|k| first_learned + k).collect();
    (Picky { events, present: order, stop, units: Vec::new() }, flat)
}

/// The tokens a removed `x` splits into: its parts, a removed part split in turn.
fn walk(x: u32, first_learned: u32, present: &[bool], made: &[[u32; 2]]) -> Vec<u32> {
    let mut out = Vec::new();
    for &p in &made[(x - first_learned) as usize] {
        if p < first_learned || present[(p - first_learned) as usize] {
            out.push(p);
        } else {
            out.extend(walk(p, first_learned, present, made));
        }
    }
    out
}

/// A unit's tokens: `syms`, then every event in order (the definition; O(events × length)).
pub fn replay_events(syms: &[u32], events: &[PickyEvent]) -> Vec<u32> {
    let mut toks = syms.to_vec();
    for e in events {
        match e {
            PickyEvent::Merge([a, b, c]) => {
                let mut out = Vec::with_capacity(toks.len());
                let mut i = 0;
                while i < toks.len() {
                    if i + 1 < toks.len() && toks[i] == *a && toks[i + 1] == *b {
                        out.push(*c);
                        i += 2;
                    } else {
                        out.push(toks[i]);
                        i += 1;
                    }
                }
                toks = out;
            }
            PickyEvent::Remove { token, parts } => {
                let mut out = Vec::with_capacity(toks.len() + parts.len());
                for &t in &toks {
                    if t == *token {
                        out.extend_from_slice(parts);
                    } else {
                        out.push(t);
                    }
                }
                toks = out;
            }
        }
    }
    toks
}

#[cfg(test)]
mod tests {
    use super::super::testing::{spell, symbols, text};
    use super::*;

    /// The reference module's worked case: units `abc` x5, `ab` x1, `bd` x2, two learned
    /// tokens, min_count 1. After `ab + c`, IoS(ab) = 5/6 (merged 5 times, a token 6 times before).
    #[test]
    fn worked_case() {
        for (threshold, vocab, events) in [
            (0.8, vec!["abc", "bd"], "+ab +abc -ab +bd"),
            (5.0 / 6.0, vec!["abc", "bd"], "+ab +abc -ab +bd"),
            (0.9, vec!["ab", "abc"], "+ab +abc"),
        ] {
            let mut s = symbols(&["a", "b", "c", "d"]);
            let units = vec![(spell(&s, "abc"), 5), (spell(&s, "ab"), 1), (spell(&s, "bd"), 2)];
            let params = PickyParams { new_rows: 2, min_count: 1, threshold };
            let out = learn_picky(units, &mut s, &params);
            let got: Vec<String> = out.present.iter().map(|&t| text(&s, t)).collect();
            assert_eq!(got, vocab, "threshold {threshold}");
            let ev: Vec<String> = out
                .events
                .iter()
                .map(|e| match e {
                    PickyEvent::Merge([_, _, c]) => format!("+{}", text(&s, *c)),
                    PickyEvent::Remove { token, .. } => format!("-{}", text(&s, *token)),
                })
                .collect();
            assert_eq!(ev.join(" "), events);
            assert_eq!(out.stop, Stop::Size);
            // training's segmentation is the replay of the events
            for (word, unit) in ["abc", "ab", "bd"].iter().zip(&out.units) {
                assert_eq!(&replay_events(&spell(&s, word), &out.events), unit);
            }
        }
        // encoding "abd": ab d -> (remove ab) a b d -> a bd
        let mut s = symbols(&["a", "b", "c", "d"]);
        let units = vec![(spell(&s, "abc"), 5), (spell(&s, "ab"), 1), (spell(&s, "bd"), 2)];
        let params = PickyParams { new_rows: 2, min_count: 1, threshold: 0.8 };
        let out = learn_picky(units, &mut s, &params);
        let enc: Vec<String> =
            replay_events(&spell(&s, "abd"), &out.events).iter().map(|&t| text(&s, t)).collect();
        assert_eq!(enc, ["a", "bd"]);
    }
}

// ------------------------------------------------------------------ options, model, encoding

/// Checks `picky=` against the rest of the options (called from [`TrainOptions::validate`]).
pub fn validate(opts: &crate::options::TrainOptions) -> crate::error::Result<()> {
    use crate::error::Error;
    use crate::options::ModelKind;
    use crate::spelling::Scheme;
    let Some(t) = opts.picky else { return Ok(()) };
    if !(t > 0.0 && t <= 1.0) {
        return Err(Error::Option(format!(
            "picky={t}: the IoS threshold is a share of a token's uses, in (0, 1] (the paper uses 0.6 to 0.9)"
        )));
    }
    super::refuse(
        opts,
        &[
            (|o| o.model != ModelKind::Bpe,
             "picky applies only to model='bpe': it removes tokens a BPE merge left behind"),
            (|o| o.superword_at.is_some(),
             "picky does not take superword_at: the paper's removals are defined for one merge stage within units"),
            (|o| o.spelling == Scheme::Continuation,
             "picky does not take spelling='continuation' yet: its model file cannot mark removed word-start pieces; use end, front or bytes"),
            (|o| o.max_piece_length.is_some(),
             "picky does not take max_piece_length yet: its learner has no length limit"),
            (|o| o.pad_to_multiple.is_some(),
             "picky does not take pad_to_multiple yet: the removed tokens' ids follow the rows"),
        ],
    )
}

/// A trained Picky model's events as an encoder replays them. Ids below `rows` are the model's
/// rows; ids from `rows` on are removed tokens (`hidden`), which exist only inside a replay.
#[derive(Clone, Debug)]
pub struct PickyReplay {
    pub events: Vec<PickyEvent>,
    pub rows: u32,
    /// The texts of the removed tokens, id `rows + k`.
    pub hidden: Vec<Vec<u8>>,
    merge_at: Map<u64, Vec<(u32, u32)>>,
    remove_at: Map<u32, Vec<u32>>,
    /// Each id's length in alphabet symbols (1 for ids no merge makes).
    lengths: Map<u32, u32>,
}

/// One step as a model file or the pipeline states it: a merge `(left, right, result)` or a
/// removal of a token (its parts follow from the steps before).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Merge(u32, u32, u32),
    Remove(u32),
}

impl PickyReplay {
    /// Checks the steps and derives each removal's parts: a merge joins tokens present at that
    /// point; a removal removes a present learned token; at the end every learned row is
    /// present and every hidden id is not. `learned(id)`: whether a row is a learned row.
    pub fn new(
        steps: &[Step],
        rows: u32,
        hidden: Vec<Vec<u8>>,
        learned: impl Fn(u32) -> bool,
    ) -> std::result::Result<Self, String> {
        Self::with_given(steps, rows, hidden, learned, |_| false)
    }

    /// [`PickyReplay::new`] where the learned rows `given(id)` may be present at the end
    /// without a merge making them (BoundlessBPE's superwords, joined outside the replay).
    pub fn with_given(
        steps: &[Step],
        rows: u32,
        hidden: Vec<Vec<u8>>,
        learned: impl Fn(u32) -> bool,
        given: impl Fn(u32) -> bool,
    ) -> std::result::Result<Self, String> {
        let total = rows as usize + hidden.len();
        let is_learned = |x: u32| (x as usize) < total && (x >= rows || learned(x));
        let mut present = vec![false; total];
        for (x, p) in present.iter_mut().enumerate() {
            *p = !is_learned(x as u32);
        }
        let mut made: Map<u32, [u32; 2]> = Map::default();
        let mut lengths: Map<u32, u32> = Map::default();
        let len_of = |l: &Map<u32, u32>, x: u32| l.get(&x).copied().unwrap_or(1);
        let mut events = Vec::with_capacity(steps.len());
        let mut merge_at: Map<u64, Vec<(u32, u32)>> = Map::default();
        let mut remove_at: Map<u32, Vec<u32>> = Map::default();
        for (i, &s) in steps.iter().enumerate() {
            match s {
                Step::Merge(a, b, c) => {
                    for x in [a, b] {
                        if x as usize >= total || !present[x as usize] {
                            return Err(format!("event {i}: merge of a token not present then"));
                        }
                    }
                    if !is_learned(c) {
                        return Err(format!(
                            "event {i}: a merge must make a learned or removed token"
                        ));
                    }
                    let joined = len_of(&lengths, a) + len_of(&lengths, b);
                    match made.get(&c) {
                        Some(_) if lengths[&c] != joined => {
                            return Err(format!(
                                "event {i}: the merge does not make its token's length"
                            ));
                        }
                        Some(_) => {}
                        None => {
                            made.insert(c, [a, b]);
                            lengths.insert(c, joined);
                        }
                    }
                    present[c as usize] = true;
                    merge_at.entry(pack(a, b)).or_default().push((i as u32, c));
                    events.push(PickyEvent::Merge([a, b, c]));
                }
                Step::Remove(x) => {
                    if !is_learned(x) || !present[x as usize] || !made.contains_key(&x) {
                        return Err(format!("event {i}: removal of a token not present then"));
                    }
                    present[x as usize] = false;
                    let parts = walk_ids(x, &made, &present);
                    remove_at.entry(x).or_default().push(i as u32);
                    events.push(PickyEvent::Remove { token: x, parts });
                }
            }
        }
        for x in 0..total as u32 {
            if is_learned(x) && !given(x) && present[x as usize] != (x < rows) {
                return Err(if x < rows {
                    format!("learned row {x} is not present after the events")
                } else {
                    format!("removed token {} is still present after the events", x - rows)
                });
            }
        }
        Ok(PickyReplay { events, rows, hidden, merge_at, remove_at, lengths })
    }

    /// The steps back (for the model file).
    pub fn steps(&self) -> Vec<Step> {
        self.events
            .iter()
            .map(|e| match e {
                PickyEvent::Merge([a, b, c]) => Step::Merge(*a, *b, *c),
                PickyEvent::Remove { token, .. } => Step::Remove(*token),
            })
            .collect()
    }

    /// How many merge events there are.
    pub fn merges(&self) -> usize {
        self.events.iter().filter(|e| matches!(e, PickyEvent::Merge(_))).count()
    }

    fn next_at(list: &[u32], cur: u32) -> Option<u32> {
        list.get(list.partition_point(|&e| e < cur)).copied()
    }

    /// Replays the events on one run of symbols (`spans`, if given, are merged alongside).
    /// O(n² log e) for a run of n symbols: each applied event rescans the run.
    pub fn replay(&self, syms: &mut Vec<u32>, spans: Option<&mut Vec<(u32, u32)>>) {
        // each token's count of alphabet symbols, to cut a split token's span
        let mut cover: Vec<u32> = vec![1; syms.len()];
        let base: Option<Vec<(u32, u32)>> = spans.as_deref().cloned();
        let mut cur = 0u32;
        loop {
            let mut best = u32::MAX;
            for w in syms.windows(2) {
                if let Some(list) = self.merge_at.get(&pack(w[0], w[1])) {
                    let at = list.partition_point(|&(e, _)| e < cur);
                    if let Some(&(e, _)) = list.get(at) {
                        best = best.min(e);
                    }
                }
            }
            for &t in syms.iter() {
                if let Some(e) = self.remove_at.get(&t).and_then(|l| Self::next_at(l, cur)) {
                    best = best.min(e);
                }
            }
            if best == u32::MAX {
                break;
            }
            match &self.events[best as usize] {
                PickyEvent::Merge([a, b, c]) => {
                    let (mut w, mut i) = (0, 0);
                    while i < syms.len() {
                        if i + 1 < syms.len() && syms[i] == *a && syms[i + 1] == *b {
                            syms[w] = *c;
                            cover[w] = cover[i] + cover[i + 1];
                            i += 2;
                        } else {
                            syms[w] = syms[i];
                            cover[w] = cover[i];
                            i += 1;
                        }
                        w += 1;
                    }
                    syms.truncate(w);
                    cover.truncate(w);
                }
                PickyEvent::Remove { token, parts } => {
                    let mut out = Vec::with_capacity(syms.len() + parts.len());
                    let mut out_cover = Vec::with_capacity(out.capacity());
                    for (k, &t) in syms.iter().enumerate() {
                        if t == *token {
                            out.extend_from_slice(parts);
                            out_cover.extend(parts.iter().map(|p| self.length(*p)));
                        } else {
                            out.push(t);
                            out_cover.push(cover[k]);
                        }
                    }
                    *syms = out;
                    cover = out_cover;
                }
            }
            cur = best + 1;
        }
        if let (Some(sp), Some(base)) = (spans, base) {
            sp.clear();
            let mut at = 0usize;
            for &c in &cover {
                sp.push((base[at].0, base[at + c as usize - 1].1));
                at += c as usize;
            }
        }
    }

    /// An id's length in alphabet symbols.
    pub fn length(&self, x: u32) -> u32 {
        self.lengths.get(&x).copied().unwrap_or(1)
    }

    /// [`PickyReplay::replay`] on the runs between opaque pieces (which stay as they are);
    /// returns where the opaque pieces are afterwards.
    pub fn replay_around(
        &self,
        syms: &mut Vec<u32>,
        spans: Option<&mut Vec<(u32, u32)>>,
        opaque: &[usize],
    ) -> Vec<usize> {
        let mut out = Vec::with_capacity(syms.len());
        let mut out_spans = Vec::new();
        let mut kept = Vec::with_capacity(opaque.len());
        let (mut k, mut i) = (0, 0);
        while i <= syms.len() {
            let end = if k < opaque.len() { opaque[k] } else { syms.len() };
            let mut run = syms[i..end].to_vec();
            let mut run_sp = spans.as_deref().map(|sp| sp[i..end].to_vec());
            self.replay(&mut run, run_sp.as_mut());
            out.extend_from_slice(&run);
            if let Some(rs) = run_sp {
                out_spans.extend(rs);
            }
            if end < syms.len() {
                kept.push(out.len());
                out.push(syms[end]);
                if let Some(sp) = spans.as_deref() {
                    out_spans.push(sp[end]);
                }
            }
            i = end + 1;
            k += 1;
        }
        *syms = out;
        if let Some(sp) = spans {
            *sp = out_spans;
        }
        kept
    }
}

fn walk_ids(x: u32, made: &Map<u32, [u32; 2]>, present: &[bool]) -> Vec<u32> {
    let mut out = Vec::new();
    for &p in &made[&x] {
        if present[p as usize] {
            out.push(p);
        } else {
            out.extend(walk_ids(p, made, present));
        }
    }
    out
}

/// A run's events in the model's id space: the alphabet's ids (below `first_learned`) stay, the
/// learned tokens present at the end become the rows that follow the alphabet, in the order
/// they were made, and the removed ones the hidden ids after all rows (`rows_after`: the row
/// count). Returns the present tokens' texts in row order, the steps, and the hidden texts.
#[allow(clippy::type_complexity)]
pub fn settle(
    out: &Picky,
    symbols: &Symbols,
    first_learned: u32,
    rows_after: u32,
) -> (Vec<u32>, Vec<Step>, Vec<Vec<u8>>) {
    let n = symbols.next_id();
    let mut present: Vec<u32> = out.present.clone();
    present.sort_unstable();
    let mut map: Map<u32, u32> = Map::default();
    for (k, &t) in present.iter().enumerate() {
        map.insert(t, first_learned + k as u32);
    }
    let mut hidden = Vec::new();
    for t in first_learned..n {
        if let std::collections::hash_map::Entry::Vacant(e) = map.entry(t) {
            e.insert(rows_after + hidden.len() as u32);
            hidden.push(symbols.text(t).to_vec());
        }
    }
    let id = |x: u32| if x < first_learned { x } else { map[&x] };
    let steps = out
        .events
        .iter()
        .map(|e| match e {
            PickyEvent::Merge([a, b, c]) => Step::Merge(id(*a), id(*b), id(*c)),
            PickyEvent::Remove { token, .. } => Step::Remove(id(*token)),
        })
        .collect();
    (present, steps, hidden)
}
