//! A Unigram model's side of encoding and analysis: the runs of a spelled unit cut by the mode's
//! segmenter (Viterbi from the trie, or the lattice's fewest/sampling), the lattice of one unit
//! for the analysis methods, and the pruning losses on a corpus.

use crate::error::{Error, Result};
use crate::hash::Map;
use crate::segmenters::unigram::lattice::{logaddexp, Lattice, SplitMix64, NEG_INF};
use crate::vocab::RowKind;

use super::{Mode, Tokenizer, Work};

impl Tokenizer {
    fn has_prob(&self, sym: u32) -> bool {
        self.log_probs.get(sym as usize).is_some_and(|p| p.is_some())
    }

    /// The lattice of a run of symbols (every one with a probability), arcs in arc order.
    fn run_lattice(&self, run: &[u32], lat: &mut Lattice) {
        let trie = self.unigram.as_ref().unwrap();
        let mut codes = Vec::with_capacity(run.len());
        trie.codes_into(run, &mut codes);
        lat.reset(run.len());
        for i in 0..run.len() {
            // the trie holds comparison keys; the lattice carries the log-probability itself
            trie.pieces_from(&codes, i, |end, piece, _| {
                let lp = self.log_probs[piece as usize].unwrap_or(NEG_INF);
                lat.push(i as u32, end as u32, piece, lp)
            });
        }
        lat.finish();
    }

    /// Cuts a spelled unit: runs of symbols with probabilities go through the lattice (by the
    /// mode's segmenter), everything else stays as it is.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn cut_lattice(
        &self,
        syms: &[u32],
        sym_spans: Option<&Vec<(u32, u32)>>,
        piece_spans: &mut Vec<(u32, u32)>,
        opaque: &[usize],
        out: &mut Vec<u32>,
        mode: &mut Mode,
        work: &mut Work,
    ) {
        let Work { viterbi, lattice: lat, .. } = work;
        let mut i = 0;
        let mut k = 0;
        while i < syms.len() {
            let cut = |j: usize, k: &mut usize| {
                while *k < opaque.len() && opaque[*k] < j {
                    *k += 1;
                }
                (*k < opaque.len() && opaque[*k] == j) || !self.has_prob(syms[j])
            };
            if cut(i, &mut k) {
                out.push(syms[i]);
                if let Some(sp) = sym_spans {
                    piece_spans.push(sp[i]);
                }
                i += 1;
                continue;
            }
            let mut j = i + 1;
            let mut k2 = k;
            while j < syms.len() && !cut(j, &mut k2) {
                j += 1;
            }
            let run = &syms[i..j];
            if matches!(mode, Mode::Plain | Mode::Dropout(..)) {
                // Viterbi straight from the trie, without storing the lattice
                if viterbi.run(self.unigram.as_ref().unwrap(), run) {
                    viterbi.walk(run.len(), |piece, at, end| {
                        out.push(piece);
                        if let Some(sp) = sym_spans {
                            piece_spans.push((sp[i + at].0, sp[i + end - 1].1));
                        }
                    });
                }
                i = j;
                continue;
            }
            self.run_lattice(run, lat);
            let arcs: Vec<u32> = match mode {
                Mode::Fewest => lat.fewest().unwrap_or_default(),
                Mode::Sample { alpha, nbest: None, rng } => {
                    lat.sample(*alpha, rng).unwrap_or_default()
                }
                Mode::Sample { alpha, nbest: Some(n), rng } => {
                    lat.sample_nbest(*alpha, *n, rng).map(|s| s.arcs).unwrap_or_default()
                }
                _ => lat.viterbi().map(|s| s.arcs).unwrap_or_default(),
            };
            for &a in &arcs {
                let arc = lat.arcs()[a as usize];
                out.push(arc.piece);
                if let Some(sp) = sym_spans {
                    piece_spans
                        .push((sp[i + arc.start as usize].0, sp[i + arc.end as usize - 1].1));
                }
            }
            i = j;
        }
    }

    /// The lattice of a text that spells to exactly one unit whose every symbol has a
    /// probability (the analysis methods' input).
    pub fn unit_lattice(&self, text: &str) -> Result<Lattice> {
        if self.unigram.is_none() {
            return Err(Error::Option("lattices belong to unigram models".into()));
        }
        let mut units: Vec<String> = Vec::new();
        self.spelling.for_each_unit(text, |u, _| units.push(u.to_string()));
        if units.len() != 1 {
            return Err(Error::Option(format!(
                "{text:?} spells to {} units; give the text of exactly one unit",
                units.len()
            )));
        }
        self.spelling.check_unit(&units[0])?;
        let (mut syms, mut opaque) = (Vec::new(), Vec::new());
        self.symbols.spell(&units[0], true, true, &mut syms, None, &mut opaque);
        if !opaque.is_empty() || syms.iter().any(|&x| !self.has_prob(x)) {
            return Err(Error::Option(format!(
                "{text:?} holds a symbol with no probability in this model"
            )));
        }
        let mut lat = Lattice::default();
        self.run_lattice(&syms, &mut lat);
        Ok(lat)
    }

    /// Every spelling of the `k` best (`usize::MAX`: all) with its score.
    pub fn nbest_of(&self, text: &str, k: usize) -> Result<Vec<(Vec<u32>, f64)>> {
        let lat = self.unit_lattice(text)?;
        Ok(lat
            .nbest(k)
            .into_iter()
            .map(|s| (s.arcs.iter().map(|&a| lat.arcs()[a as usize].piece).collect(), s.score))
            .collect())
    }

    /// Every spelling with its share of the unit's probability (docs/API.md: the fold of the
    /// listed scores in list order).
    pub fn spellings_of(&self, text: &str) -> Result<Vec<(Vec<u32>, f64)>> {
        let all = self.nbest_of(text, usize::MAX)?;
        let z = all.iter().fold(NEG_INF, |z, (_, s)| logaddexp(z, *s));
        Ok(all
            .into_iter()
            .map(|(p, s)| (p, if s == NEG_INF { 0.0 } else { (s - z).exp() }))
            .collect())
    }

    /// One spelling of a unit drawn with a fresh generator seeded with `seed`.
    pub fn sample_of(
        &self,
        text: &str,
        seed: u64,
        alpha: f64,
        nbest: Option<usize>,
    ) -> Result<Vec<u32>> {
        let lat = self.unit_lattice(text)?;
        let mut rng = SplitMix64::new(seed);
        let arcs = match nbest {
            None => lat.sample(alpha, &mut rng).unwrap_or_default(),
            Some(k) => lat.sample_nbest(alpha, k, &mut rng).map(|s| s.arcs).unwrap_or_default(),
        };
        Ok(arcs.iter().map(|&a| lat.arcs()[a as usize].piece).collect())
    }

    /// The pruning losses of the learned rows on a corpus of (text, count), in row order.
    pub fn losses(&self, corpus: &[(String, u64)]) -> Result<Vec<f64>> {
        if self.unigram.is_none() {
            return Err(Error::Option("losses belong to unigram models".into()));
        }
        let base = self.rows.iter().position(|r| r.kind == RowKind::Alphabet).unwrap_or(0) as u32;
        let alphabet_end =
            base + self.rows.iter().filter(|r| r.kind == RowKind::Alphabet).count() as u32;
        let mut counts: Map<String, u64> = Map::default();
        for (text, c) in corpus {
            let mut err = Ok(());
            self.spelling.for_each_unit(text, |u, _| {
                if err.is_ok() {
                    err = self.spelling.check_unit(u);
                }
                *counts.entry(u.to_string()).or_insert(0) += c;
            });
            err?;
        }
        let mut keys: Vec<&String> = counts.keys().collect();
        keys.sort();
        let mut flat = crate::learners::merge::Flat::default();
        let (mut syms, mut opaque) = (Vec::new(), Vec::new());
        for k in keys {
            syms.clear();
            opaque.clear();
            self.symbols.spell(k, true, true, &mut syms, None, &mut opaque);
            let local: Vec<u32> = syms
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    if opaque.contains(&i) || x < base || x >= alphabet_end {
                        u32::MAX
                    } else {
                        x - base
                    }
                })
                .collect();
            flat.push(&local, counts[k]);
        }
        let texts: Vec<Vec<u8>> =
            (base..alphabet_end).map(|i| self.rows[i as usize].text.to_vec()).collect();
        let alphabet: Vec<Option<f64>> =
            (base..alphabet_end).map(|i| self.log_probs[i as usize]).collect();
        let mut pieces = Vec::new();
        for (id, row) in self.rows.iter().enumerate() {
            if row.kind == RowKind::Learned {
                let s: Vec<u32> = self
                    .symbols
                    .symbols_of_row(&self.rows, id as u32)?
                    .into_iter()
                    .map(|x| x - base)
                    .collect();
                pieces.push((s, self.log_probs[id].unwrap_or(NEG_INF)));
            }
        }
        crate::learners::unigram::losses_on(&flat, &texts, &alphabet, &pieces)
    }
}
