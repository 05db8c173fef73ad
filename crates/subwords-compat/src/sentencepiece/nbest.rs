//! The n best segmentations of a normalized text on the Unigram lattice (sentencepiece's
//! `NBestEncode`): the same lattice as the Viterbi (the pieces matching at each character, an
//! unknown node scored `min_score − 10` where no one-character piece matches), searched by a
//! k-best table over end positions. Scores are `f32` sums like the Viterbi's.
//!
//! At each end position the candidates are every arc ending there (start ascending) followed by
//! each of the k best segmentations of the text before it, sorted by score, stably: on a tie the
//! arc that starts earlier wins, as in the Viterbi, then the better segmentation before it.

use std::time::Instant;

use super::{char_len, Cut, Kind, SpModel, UNK_PENALTY};

#[derive(Clone, Copy)]
struct Entry {
    score: f32,
    start: u32,
    id: u32,
    /// the rank of the segmentation of `..start` this one extends
    rank: u32,
}

impl SpModel {
    /// The `k` best segmentations of `normalized` (a Unigram model; empty for BPE), best first,
    /// each as its cuts and its score. Past `deadline` each remaining position keeps only its
    /// best candidate, so the search ends with one segmentation (sentencepiece's n-best timeout).
    pub fn nbest_cuts(
        &self,
        normalized: &[u8],
        k: usize,
        deadline: Option<Instant>,
    ) -> Vec<(Vec<Cut>, f32)> {
        if self.kind != Kind::Unigram || k == 0 {
            return Vec::new();
        }
        let n = normalized.len();
        if n == 0 {
            return vec![(Vec::new(), 0.0)];
        }
        let unk_score = self.min_score - UNK_PENALTY;
        let mut ends: Vec<Vec<(u32, u32, f32)>> = vec![Vec::new(); n + 1];
        let mut start = 0usize;
        while start < n {
            let mblen = char_len(normalized[start]).min(n - start);
            let mut single = false;
            self.trie.pieces_from(normalized, start, |end, id, score| {
                ends[end].push((start as u32, id, score));
                single |= end - start == mblen;
            });
            if !single {
                ends[start + mblen].push((start as u32, self.unk, unk_score));
            }
            start += mblen;
        }
        let mut best: Vec<Vec<Entry>> = vec![Vec::new(); n + 1];
        best[0].push(Entry { score: 0.0, start: u32::MAX, id: 0, rank: 0 });
        let mut width = k;
        let mut cands: Vec<Entry> = Vec::new();
        for j in 1..=n {
            if ends[j].is_empty() {
                continue;
            }
            if width > 1 && deadline.is_some_and(|d| Instant::now() > d) {
                width = 1;
            }
            cands.clear();
            for &(s, id, score) in &ends[j] {
                for (r, e) in best[s as usize].iter().enumerate() {
                    cands.push(Entry { score: e.score + score, start: s, id, rank: r as u32 });
                }
            }
            cands.sort_by(|a, b| b.score.total_cmp(&a.score));
            cands.truncate(width);
            best[j] = cands.clone();
        }
        best[n]
            .iter()
            .map(|top| {
                let mut cuts = Vec::new();
                let (mut pos, mut e) = (n, *top);
                loop {
                    cuts.push((e.start, pos as u32, e.id));
                    pos = e.start as usize;
                    if pos == 0 {
                        break;
                    }
                    e = best[pos][e.rank as usize];
                }
                cuts.reverse();
                (cuts, top.score)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{proto, Build, Kind, SpModel};
    use std::time::Instant;

    /// `ab` has two segmentations, [ab] scoring -1.5 and [a, b] scoring -1 + -1 = -2; `c` is no
    /// piece, so it is an unknown node scoring min_score - 10 = -1.5 - 10 = -11.5.
    fn model() -> SpModel {
        let build = Build {
            kind: Kind::Unigram,
            pieces: vec![
                ("<unk>", 0.0, proto::UNKNOWN),
                ("a", -1.0, proto::NORMAL),
                ("b", -1.0, proto::NORMAL),
                ("ab", -1.5, proto::NORMAL),
            ],
            byte_fallback: false,
            unk_surface: "?",
            rules: Vec::new(),
            add_dummy_prefix: false,
            remove_extra_whitespaces: true,
            split_by_whitespace: true,
        };
        SpModel::from_bytes(build.to_bytes().unwrap()).unwrap()
    }

    #[test]
    fn every_segmentation_best_first_worked_by_hand() {
        let m = model();
        assert_eq!(
            m.nbest_cuts(b"ab", 5, None),
            vec![(vec![(0, 2, 3)], -1.5), (vec![(0, 1, 1), (1, 2, 2)], -2.0)]
        );
        assert_eq!(m.nbest_cuts(b"ab", 1, None), vec![(vec![(0, 2, 3)], -1.5)]);
        assert_eq!(m.nbest_cuts(b"ac", 3, None), vec![(vec![(0, 1, 1), (1, 2, 0)], -12.5)]);
        assert_eq!(m.nbest_cuts(b"", 3, None), vec![(Vec::new(), 0.0)]);
    }

    #[test]
    fn past_the_deadline_one_segmentation_is_left() {
        assert_eq!(model().nbest_cuts(b"abab", 10, Some(Instant::now())).len(), 1);
        assert_eq!(model().nbest_cuts(b"abab", 10, None).len(), 4);
    }
}
