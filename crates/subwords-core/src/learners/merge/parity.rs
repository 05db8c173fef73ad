//! Parity-aware BPE (Foroutan, Meister, Paul, Niklaus, Ahmadi, Bosselut and Sennrich,
//! "Parity-aware Byte Pair Encoding: Improving Cross-lingual Fairness in Tokenization",
//! arXiv 2508.04796).
//!
//! Plain BPE on a corpus whose units each belong to one language, with one change: at each step
//! the merge is the pair counted most often *in the language compressed worst so far*, not over
//! the whole corpus. Every merge is then applied to every language's units, as in plain BPE, so
//! the result is an ordinary merge list.
//!
//! * *Compressed worst*: the largest `tokens(l) / d(l)`, where `tokens(l)` is language `l`'s
//!   units' current pieces (each times its count) and `d(l)` is, by [`Measure`], its bytes of
//!   text (tokens per byte, the default), 1 (total tokens: the paper's rule on a parallel
//!   development set) or its pieces before the first merge (tokens per symbol, the inverse of
//!   the paper's compression rate). Compared exactly as fractions; ties go to the language
//!   given first.
//! * *Most often in that language*: the largest count over that language's units; ties go to
//!   the smaller `(left, right)` by the pieces' bytes, the library's rule.
//! * A language whose best pair is counted below `min_count` (or that has no pair left) is
//!   *exhausted*: no later merge can make one of its pairs count more (a pair a merge makes
//!   occurs only where a pair it replaced did), so it is skipped from then on. When every
//!   language is exhausted the run stops.
//! * Variants: the first `global_merges` merges are plain BPE's (the largest count over all
//!   languages: the paper's hybrid); with a moving window of `w` steps, a language that took more
//!   than `alpha / L` of the last `w` parity steps is passed over for the next worse one (all
//!   passed over: the worst).
//!
//! Shape: the BPE merge engine's structures (`engine.rs`): the flat units, one pair index over
//! all languages with the units holding each pair, the rewrite that changes only the pairs at a
//! merge's sites; beside them each language's pair counts and heap (an entry is pushed when a
//! pair's count rises; one that over-states its pair goes back with the true count when it
//! reaches the top). A merge rewrites each language's units into that language's changes, which
//! update both the index and the language's counts.
//!
//! The pure-Python reference (`python/subwords/reference/parity.py`) states the same rules in
//! the plainest form; the tests run both on random corpora and compare the merges.

use std::collections::VecDeque;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::engine::{compaction_growth, PARALLEL_UNITS};
use super::heap::{key_head, Cand, Order, PairHeap};
use super::index::{build_index, PairIndex};
use super::units::{rewrite, Arena, Delta, Flat, SharedMeta, SharedSyms};
use super::{pack, unpack, Stop, Symbols, NO_SYMBOL};
use crate::hash::Map;

/// What "compressed worst" divides a language's pieces by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// Pieces per byte of the language's text (comparable on text that is not parallel).
    #[default]
    TokensPerByte,
    /// Pieces (the paper's rule on a parallel development set, where every language says the
    /// same).
    Tokens,
    /// Pieces per piece before the first merge (the inverse of the paper's compression rate).
    TokensPerSymbol,
}

impl Measure {
    pub fn name(self) -> &'static str {
        match self {
            Measure::TokensPerByte => "tokens_per_byte",
            Measure::Tokens => "tokens",
            Measure::TokensPerSymbol => "tokens_per_symbol",
        }
    }
}

/// The saved option `parity`: the languages, in the order given, and the rule's settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParityOptions {
    pub languages: Vec<String>,
    #[serde(default)]
    pub measure: Measure,
    /// The merges made by plain BPE's rule before the parity rule starts.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub global_merges: u64,
    /// The moving window's length in steps; None: no window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u32>,
    /// The window's share: a language may take `alpha / L` of the window's steps (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha: Option<f64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The learner's settings.
#[derive(Clone, Debug)]
pub struct ParityParams {
    /// How many new rows may be added.
    pub new_rows: u64,
    pub min_count: u64,
    pub measure: Measure,
    pub global_merges: u64,
    /// `(length, alpha)` of the moving window.
    pub window: Option<(usize, f64)>,
}

impl ParityParams {
    pub fn from_options(p: &ParityOptions, new_rows: u64, min_count: u64) -> Self {
        ParityParams {
            new_rows,
            min_count,
            measure: p.measure,
            global_merges: p.global_merges,
            window: p.window.map(|w| (w as usize, p.alpha.unwrap_or(2.0))),
        }
    }
}

/// Which language each unit of a corpus belongs to (units in the order training reads them).
#[derive(Clone, Debug, Default)]
pub struct UnitLanguages {
    pub names: Vec<String>,
    pub of_unit: Vec<u16>,
    /// Each language's bytes of unit text, each unit times its count.
    pub bytes: Vec<u64>,
}

impl UnitLanguages {
    /// The units of every language in one list (a language's units after the previous one's;
    /// units of count 0 or no text left out), with each one's language.
    pub fn join(
        languages: Vec<(String, Vec<super::super::UnitCount>)>,
    ) -> crate::error::Result<(Vec<super::super::UnitCount>, UnitLanguages)> {
        use crate::error::Error;
        if languages.len() < 2 {
            return Err(Error::Option(format!(
                "parity-aware BPE balances languages against each other: give two or more, got {}",
                languages.len()
            )));
        }
        if languages.len() > u16::MAX as usize {
            return Err(Error::Option("parity-aware BPE takes at most 65535 languages".into()));
        }
        let mut out = UnitLanguages::default();
        let mut units = Vec::new();
        for (k, (name, us)) in languages.into_iter().enumerate() {
            let mut bytes = 0u64;
            for u in us {
                if u.count == 0 || u.text.is_empty() {
                    continue;
                }
                bytes += u.count * u.text.len() as u64;
                out.of_unit.push(k as u16);
                units.push(u);
            }
            if bytes == 0 {
                return Err(Error::Option(format!(
                    "the language {name:?} has no text to learn from: give it a non-empty input, or leave it out"
                )));
            }
            out.names.push(name);
            out.bytes.push(bytes);
        }
        Ok((units, out))
    }
}

/// What a run learned.
pub struct Parity {
    /// `(left, right, result)` in rank order.
    pub merges: Vec<[u32; 3]>,
    /// Which language chose each merge (None: a global merge).
    pub chosen_by: Vec<Option<u16>>,
    pub new_rows: u64,
    pub stop: Stop,
    /// Each language's pieces before the first merge and after the last.
    pub tokens_before: Vec<u64>,
    pub tokens_after: Vec<u64>,
}

/// A run's state: the merge engine's structures (the flat units, the pair index over all
/// languages with its place lists, the rewrite at the merge sites) with each language's pair
/// counts and heap beside them.
struct State<'a> {
    symbols: &'a mut Symbols,
    flat: Flat,
    /// Each unit's language.
    lang: Vec<u16>,
    /// Every language's pairs: their counts and the units holding them.
    index: PairIndex,
    arena: Arena,
    /// The arena's size after it was last built or compacted.
    arena_mark: usize,
    /// Tie keys (the pieces' texts) by symbol, and their heads ([`key_head`]).
    keys: Vec<Box<[u8]>>,
    heads: Vec<u64>,
    /// Each language's pair counts, and a heap over them (an entry is pushed when a count rises;
    /// one that over-states its pair goes back with the true count when it reaches the top).
    counts: Vec<Map<u64, i64>>,
    heaps: Vec<PairHeap>,
    /// A heap over the index's counts while global merges remain.
    global: Option<PairHeap>,
    /// Each language's rewrite of a merge, kept from merge to merge, and its units.
    deltas: Vec<Delta>,
    by_lang: Vec<Vec<u32>>,
    tokens: Vec<u64>,
    threads: usize,
}

impl State<'_> {
    fn order(&self) -> Order<'_> {
        Order { keys: &self.keys, heads: &self.heads, base: self.symbols.base, joined_first: false }
    }

    /// A heap of `pairs` (pair, count), in pair order (hash order must not reach the layout).
    fn heap_of(&self, mut pairs: Vec<(u64, i64)>) -> PairHeap {
        pairs.retain(|&(_, n)| n > 0);
        pairs.sort_unstable();
        let cands =
            pairs.into_iter().map(|(pair, n)| Cand { num: n as u64, den: 1, pair }).collect();
        let mut heap = PairHeap::new(false);
        heap.rebuild(cands, &self.order());
        heap
    }

    /// The best pair of language `l` (or, `None`, over all) and its count; the heap keeps it.
    fn best(&mut self, l: Option<usize>) -> Option<(u64, u64)> {
        let mut heap = std::mem::take(match l {
            Some(l) => &mut self.heaps[l],
            None => self.global.as_mut().expect("a global heap under global_merges"),
        });
        let mut found = None;
        {
            let order = self.order();
            while let Some(top) = heap.peek() {
                let live = match l {
                    Some(l) => self.counts[l].get(&top.pair).copied(),
                    None => self.index.get(&top.pair).map(|v| v.count),
                }
                .unwrap_or(0);
                if live > 0 && live as u64 == top.num {
                    found = Some((top.pair, top.num));
                    break;
                }
                if live > 0 && (live as u64) < top.num {
                    heap.replace_top(Cand { num: live as u64, den: 1, pair: top.pair }, &order);
                } else {
                    heap.pop(&order);
                }
            }
        }
        match l {
            Some(l) => self.heaps[l] = heap,
            None => self.global = Some(heap),
        }
        found
    }

    /// Joins `(a, b)` into `c` in every unit holding it: each language's units rewritten at the
    /// merge sites (on the threads, a language each, for a large merge), then the index, the
    /// languages' counts and heaps updated from the changes.
    fn merge(&mut self, a: u32, b: u32, c: u32) {
        let pair = pack(a, b);
        let mut list = match self.index.get_mut(&pair) {
            Some(v) => self.arena.take(v),
            None => Vec::new(),
        };
        list.sort();
        list.dedup();
        for l in self.by_lang.iter_mut() {
            l.clear();
        }
        for &u in &list {
            self.by_lang[self.lang[u as usize] as usize].push(u);
        }
        let mut work: Vec<(usize, Delta)> = (0..self.by_lang.len())
            .filter(|&l| !self.by_lang[l].is_empty())
            .map(|l| (l, std::mem::take(&mut self.deltas[l])))
            .collect();
        {
            let ptr = SharedSyms(self.flat.syms.as_mut_ptr());
            let meta = SharedMeta::new(&mut self.flat.meta);
            let by_lang = &self.by_lang;
            if list.len() < PARALLEL_UNITS || self.threads == 1 || work.len() == 1 {
                for (l, d) in work.iter_mut() {
                    rewrite(ptr, meta, &by_lang[*l], a, b, c, d);
                }
            } else {
                work.par_iter_mut().for_each(|(l, d)| rewrite(ptr, meta, &by_lang[*l], a, b, c, d));
            }
        }
        let mut raised_all = Vec::new();
        for (l, mut d) in work {
            self.tokens[l] -= d.sites as u64;
            let mut heap = std::mem::take(&mut self.heaps[l]);
            {
                let order = Order {
                    keys: &self.keys,
                    heads: &self.heads,
                    base: self.symbols.base,
                    joined_first: false,
                };
                let counts = &mut self.counts[l];
                for (q, v, places) in d.changes() {
                    let (q, v) = (*q, *v);
                    let e = self.index.entry(q).or_default();
                    e.count += v;
                    if e.count <= 0 {
                        self.index.remove(&q);
                    } else {
                        self.arena.extend(e, places, 0);
                        if v > 0 && self.global.is_some() {
                            raised_all.push(q);
                        }
                    }
                    let n = counts.entry(q).or_insert(0);
                    *n += v;
                    if *n <= 0 {
                        counts.remove(&q);
                    } else if v > 0 {
                        heap.push(Cand { num: *n as u64, den: 1, pair: q }, &order);
                    }
                }
            }
            d.clear();
            self.deltas[l] = d;
            // stale entries pile up: the heap from the live pairs once they match them in number
            if heap.len() > 2 * self.counts[l].len() + (1 << 12) {
                heap = self.heap_of(self.counts[l].iter().map(|(&k, &v)| (k, v)).collect());
            }
            self.heaps[l] = heap;
        }
        self.index.remove(&pair);
        if let Some(mut g) = self.global.take() {
            raised_all.sort_unstable();
            raised_all.dedup();
            {
                let order = self.order();
                for q in raised_all {
                    if let Some(v) = self.index.get(&q) {
                        g.push(Cand { num: v.count as u64, den: 1, pair: q }, &order);
                    }
                }
            }
            self.global = Some(g);
        }
        if compaction_growth(self.arena.words.len(), self.arena_mark) {
            self.arena.compact(&mut self.index, &self.flat, 1);
            self.arena_mark = self.arena.words.len();
        }
    }
}

/// The languages from worst compressed to best (ties: the language given first), leaving out
/// the exhausted ones.
fn by_cost(tokens: &[u64], denom: &[u64], exhausted: &[bool]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..tokens.len()).filter(|&l| !exhausted[l]).collect();
    // tokens[a] / denom[a] > tokens[b] / denom[b], exactly
    order.sort_by(|&a, &b| {
        let x = tokens[a] as u128 * denom[b] as u128;
        let y = tokens[b] as u128 * denom[a] as u128;
        y.cmp(&x).then(a.cmp(&b))
    });
    order
}

/// Parity-aware BPE on `units` (`(symbols, count, language)`; every symbol an alphabet symbol
/// of `symbols`), for `bytes.len()` languages with these bytes of text; `fixed`: each
/// language's pieces outside `units` (symbols outside the alphabet, say), which count in its
/// tokens and no merge changes.
pub fn learn_parity(
    units: Vec<(Vec<u32>, u64, u16)>,
    bytes: &[u64],
    fixed: &[u64],
    symbols: &mut Symbols,
    params: &ParityParams,
) -> Parity {
    let mut flat = Flat::default();
    let mut lang = Vec::with_capacity(units.len());
    for (syms, c, l) in &units {
        // a unit counted 0 takes part in nothing
        flat.push(if *c == 0 { &[] } else { syms.as_slice() }, *c);
        lang.push(*l);
    }
    run(flat, lang, bytes, fixed, symbols, params)
}

fn run(
    flat: Flat,
    lang: Vec<u16>,
    bytes: &[u64],
    fixed: &[u64],
    symbols: &mut Symbols,
    params: &ParityParams,
) -> Parity {
    let n_lang = bytes.len();
    let threads = rayon::current_num_threads().max(1);
    let mut tokens = fixed.to_vec();
    let mut counts: Vec<Map<u64, i64>> = (0..n_lang).map(|_| Map::default()).collect();
    for (m, &l) in flat.meta.iter().zip(&lang) {
        let l = l as usize;
        tokens[l] += m.count * m.len() as u64;
        if m.count == 0 {
            continue;
        }
        for w in flat.syms[m.start()..m.start() + m.len()].windows(2) {
            if w[0] != NO_SYMBOL && w[1] != NO_SYMBOL {
                *counts[l].entry(pack(w[0], w[1])).or_insert(0) += m.count as i64;
            }
        }
    }
    let (index, arena) = build_index(&flat, threads, None, symbols.base..symbols.next_id());
    let keys: Vec<Box<[u8]>> = symbols.texts.iter().map(|t| Box::from(&t[..])).collect();
    let heads = keys.iter().map(|k| key_head(k)).collect();
    let mut st = State {
        symbols,
        flat,
        lang,
        arena_mark: arena.words.len(),
        index,
        arena,
        keys,
        heads,
        counts,
        heaps: Vec::new(),
        global: None,
        deltas: (0..n_lang).map(|_| Delta::default()).collect(),
        by_lang: vec![Vec::new(); n_lang],
        tokens,
        threads,
    };
    st.heaps = (0..n_lang)
        .map(|l| st.heap_of(st.counts[l].iter().map(|(&k, &v)| (k, v)).collect()))
        .collect();
    if params.global_merges > 0 {
        st.global = Some(st.heap_of(st.index.iter().map(|(&k, v)| (k, v.count)).collect()));
    }
    let tokens_before = st.tokens.clone();
    let denom: Vec<u64> = match params.measure {
        Measure::TokensPerByte => bytes.to_vec(),
        Measure::Tokens => vec![1; n_lang],
        Measure::TokensPerSymbol => tokens_before.iter().map(|&t| t.max(1)).collect(),
    };
    let mut exhausted = vec![false; n_lang];
    let mut window: VecDeque<u16> = VecDeque::new();
    let mut merges = Vec::new();
    let mut chosen_by = Vec::new();
    let mut new_rows = 0u64;
    let stop = loop {
        if new_rows >= params.new_rows {
            break Stop::Size;
        }
        let pick: Option<(u64, Option<u16>)> = if (merges.len() as u64) < params.global_merges {
            st.best(None).filter(|&(_, c)| c >= params.min_count).map(|(p, _)| (p, None))
        } else {
            // the global merges are over: their heap is no longer kept
            st.global = None;
            let mut found = None;
            loop {
                let order = by_cost(&st.tokens, &denom, &exhausted);
                let Some(&worst) = order.first() else { break };
                let l = match params.window {
                    None => worst,
                    Some((w, alpha)) => {
                        let limit = alpha / n_lang as f64;
                        let share =
                            |l: usize| window.iter().filter(|&&x| x as usize == l).count() as f64;
                        order
                            .iter()
                            .copied()
                            .find(|&l| share(l) / w as f64 <= limit)
                            .unwrap_or(worst)
                    }
                };
                match st.best(Some(l)) {
                    Some((p, c)) if c >= params.min_count => {
                        found = Some((p, Some(l as u16)));
                        break;
                    }
                    _ => exhausted[l] = true,
                }
            }
            found
        };
        let Some((p, lang)) = pick else {
            let any_left = st.index.values().any(|v| v.count > 0);
            break if any_left { Stop::MinCount } else { Stop::NoPairs };
        };
        if let (Some(l), Some((w, _))) = (lang, params.window) {
            window.push_back(l);
            if window.len() > w {
                window.pop_front();
            }
        }
        let (a, b) = unpack(p);
        let text = st.symbols.join(a, b);
        let c = match st.symbols.index.get(text.as_slice()) {
            Some(&c) => c,
            None => {
                let len = st.symbols.len(a) + st.symbols.len(b);
                new_rows += 1;
                st.heads.push(key_head(&text));
                st.keys.push(Box::from(&text[..]));
                st.symbols.push(text, len)
            }
        };
        st.merge(a, b, c);
        merges.push([a, b, c]);
        chosen_by.push(lang);
    };
    Parity { merges, chosen_by, new_rows, stop, tokens_before, tokens_after: st.tokens }
}

/// Parity-aware BPE on the engine's flat units (a symbol outside the alphabet takes part in no
/// pair). Also returns Σ count × pieces of the units afterwards.
pub fn learn_flat(
    flat: Flat,
    languages: &UnitLanguages,
    symbols: &mut Symbols,
    params: &ParityParams,
) -> crate::error::Result<(Parity, u64)> {
    if languages.of_unit.len() != flat.meta.len() {
        return Err(crate::error::Error::Input(format!(
            "parity-aware BPE: {} units have a language, but {} were spelled",
            languages.of_unit.len(),
            flat.meta.len()
        )));
    }
    let fixed = vec![0; languages.names.len()];
    let out = run(flat, languages.of_unit.clone(), &languages.bytes, &fixed, symbols, params);
    let after = out.tokens_after.iter().sum();
    Ok((out, after))
}

/// The training report's part for parity-aware BPE.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParityReport {
    pub measure: String,
    pub languages: Vec<LanguageReport>,
    /// The Gini coefficient of the languages' tokens per byte after training
    /// (`Σ_i Σ_j |c_i − c_j| / (2 n² mean)`, as `subwords.measure.metrics.gini`).
    pub gini: Option<f64>,
    /// The same before the first merge.
    pub gini_before: Option<f64>,
    /// The largest tokens per byte over the smallest, after training.
    pub parity_ratio: Option<f64>,
    /// Merges made by plain BPE's rule (the hybrid's first ones).
    pub global_merges: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LanguageReport {
    pub name: String,
    pub bytes: u64,
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub tokens_per_byte: f64,
    /// Merges this language chose.
    pub merges_chosen: u64,
}

/// `Σ_i Σ_j |x_i − x_j| / (2 n² mean)`; None for no values or a mean of 0.
pub fn gini(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.is_empty() || mean <= 0.0 {
        return None;
    }
    let s: f64 = xs.iter().flat_map(|a| xs.iter().map(move |b| (a - b).abs())).sum();
    Some(s / (2.0 * n * n * mean))
}

impl ParityReport {
    pub fn new(out: &Parity, languages: &UnitLanguages, measure: Measure) -> Self {
        let tpb = |t: &[u64]| -> Vec<f64> {
            t.iter().zip(&languages.bytes).map(|(&t, &b)| t as f64 / b as f64).collect()
        };
        let after = tpb(&out.tokens_after);
        let before = tpb(&out.tokens_before);
        let langs = languages
            .names
            .iter()
            .enumerate()
            .map(|(l, name)| LanguageReport {
                name: name.clone(),
                bytes: languages.bytes[l],
                tokens_before: out.tokens_before[l],
                tokens_after: out.tokens_after[l],
                tokens_per_byte: after[l],
                merges_chosen: out.chosen_by.iter().filter(|&&c| c == Some(l as u16)).count()
                    as u64,
            })
            .collect();
        let lo = after.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = after.iter().copied().fold(0.0, f64::max);
        ParityReport {
            measure: measure.name().into(),
            languages: langs,
            gini: gini(&after),
            gini_before: gini(&before),
            parity_ratio: (lo > 0.0).then(|| hi / lo),
            global_merges: out.chosen_by.iter().filter(|c| c.is_none()).count() as u64,
        }
    }
}

/// Checks `parity=` against the rest of the options (called from `TrainOptions::validate`).
pub fn validate(opts: &crate::options::TrainOptions) -> crate::error::Result<()> {
    use crate::error::Error;
    use crate::options::ModelKind;
    let Some(p) = &opts.parity else { return Ok(()) };
    let bad = |m: String| Err(Error::Option(m));
    if opts.model != ModelKind::Bpe {
        return bad(format!(
            "parity applies only to model='bpe' (got {:?}): it chooses which language's most frequent pair \
             BPE merges next; WordPiece and Unigram choose by other scores",
            opts.model
        ));
    }
    if p.languages.len() < 2 {
        return bad(format!(
            "parity-aware BPE balances languages against each other: give two or more (got {})",
            p.languages.len()
        ));
    }
    let mut seen = std::collections::HashSet::new();
    for name in &p.languages {
        if name.is_empty() || name.trim() != name {
            return bad(format!(
                "a language name is a non-empty name without surrounding spaces, got {name:?}"
            ));
        }
        if !seen.insert(name.as_str()) {
            return bad(format!("the language {name:?} is given twice: give each language once"));
        }
    }
    if let Some(w) = p.window {
        if w == 0 {
            return bad("parity window must be 1 or more steps".into());
        }
    }
    if let Some(a) = p.alpha {
        if p.window.is_none() {
            return bad("parity alpha applies to the moving window: give the window too".into());
        }
        if !(a.is_finite() && a > 0.0) {
            return bad(format!("parity alpha is a positive number (the paper's 2), got {a}"));
        }
    }
    super::refuse(
        opts,
        &[
            (|o| o.picky.is_some(),
             "parity and picky do not combine: Picky BPE removes tokens, and the parity rule's counts per language are defined for merges only"),
            (|o| o.length_max || o.scaffold,
             "parity combines with neither length_max nor scaffold: each is its own rule for which merge comes next and which rows stay"),
            (|o| o.superword_at.is_some(),
             "parity does not take superword_at: the rule is defined for one merge stage within units"),
            (|o| o.max_piece_length.is_some(),
             "parity does not take max_piece_length yet: its learner has no length limit"),
            (|o| o.joints,
             "parity does not take joints yet: they cut the units after counting, outside the languages' tables"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::{spell, symbols};
    use super::*;

    /// Language 0 holds `ab` ×5 (10 bytes), language 1 `cd` ×2 and `ab` ×1 (6 bytes). Tokens per
    /// byte: 10/10 = 1 and 6/6 = 1, a tie: language 0 (given first) takes `a b` (5 there).
    /// Then 0: 5/10, 1: 5/6 (ab merged once): language 1 takes `c d` (2 > 0 there).
    #[test]
    fn the_worst_language_chooses() {
        let mut s = symbols(&["a", "b", "c", "d"]);
        let units = vec![(spell(&s, "ab"), 5, 0), (spell(&s, "cd"), 2, 1), (spell(&s, "ab"), 1, 1)];
        let params = ParityParams {
            new_rows: 2,
            min_count: 1,
            measure: Measure::TokensPerByte,
            global_merges: 0,
            window: None,
        };
        let out = learn_parity(units, &[10, 6], &[0, 0], &mut s, &params);
        let texts: Vec<&[u8]> = out.merges.iter().map(|m| s.text(m[2])).collect();
        assert_eq!(texts, [b"ab".as_slice(), b"cd"]);
        assert_eq!(out.chosen_by, [Some(0), Some(1)]);
        assert_eq!(out.tokens_before, [10, 6]);
        assert_eq!(out.tokens_after, [5, 3]);
        assert_eq!(gini(&[1.0, 1.0]), Some(0.0));
        assert_eq!(gini(&[0.0, 0.0, 3.0]), Some(2.0 / 3.0));
    }
}
