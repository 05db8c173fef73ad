//! Extending one of our BPE models on new text (`subwords.extend`): the new text's
//! units are counted and spelled under the model's own spelling, then
//! [`learners::extend`](crate::learners::extend) replays the model's merges on them and learns
//! new ones. The new model keeps every row, id and merge of the old one; the new rows are
//! `learned` rows after the last one. Characters outside the alphabet add no rows (our row order
//! puts the alphabet before every learned row, and moving the learned rows would change their
//! ids): they stay `[UNK]` (or their byte rows) and no new pair crosses them.

use crate::error::{Error, Result};
use crate::hash::Map;
use crate::learners::extend::{extend_with, Extension};
use crate::learners::merge::NO_SYMBOL;
use crate::options::ModelKind;
use crate::spelling::Scheme;
use crate::vocab::{Row, RowKind};

use super::{Parts, Tokenizer};

impl Tokenizer {
    /// The counted units of `texts` under this model's spelling, each spelled in row ids before
    /// any merge (a symbol with no row of its own is [`NO_SYMBOL`]), in the units' text order.
    pub fn spelled_units(&self, texts: &[&str]) -> Result<Vec<(Vec<u32>, u64)>> {
        let mut counts: Map<String, u64> = Map::default();
        let mut err = None;
        for text in texts {
            self.spelling.for_each_unit(text, |unit, _| {
                if err.is_none() {
                    match self.spelling.check_unit(unit) {
                        Ok(()) => *counts.entry(unit.to_owned()).or_default() += 1,
                        Err(e) => err = Some(e),
                    }
                }
            });
        }
        if let Some(e) = err {
            return Err(e);
        }
        let mut units: Vec<(String, u64)> = counts.into_iter().collect();
        units.sort_unstable();
        let mut out = Vec::with_capacity(units.len());
        let mut opaque = Vec::new();
        for (unit, count) in units {
            let mut syms = Vec::with_capacity(unit.len() + 1);
            opaque.clear();
            self.symbols.spell(&unit, true, true, &mut syms, None, &mut opaque);
            for &k in &opaque {
                syms[k] = NO_SYMBOL;
            }
            out.push((syms, count));
        }
        Ok(out)
    }

    /// This model with up to `new_rows` more rows learned on `texts` (see the module's text),
    /// and what the extension learned. The new model has no training report (the old one
    /// described fewer rows); its options are the original training's.
    pub fn extended(
        &self,
        texts: &[&str],
        new_rows: u64,
        min_count: u64,
    ) -> Result<(Tokenizer, Extension)> {
        if self.kind != ModelKind::Bpe {
            return Err(Error::Option(format!(
                "extend continues BPE training; this is a {} model, which has no merges to continue",
                match self.kind {
                    ModelKind::Bpe => "bpe",
                    ModelKind::Word => "word",
                    ModelKind::Wordpiece => "wordpiece",
                    ModelKind::Unigram => "unigram",
                }
            )));
        }
        if self.stream_from.is_some() {
            return Err(Error::Option(
                "extend does not continue a two-stage (superword) BPE model".into(),
            ));
        }
        if self.superwords.is_some() || self.options.as_ref().is_some_and(|o| o.boundless.is_some())
        {
            return Err(Error::Option(
                "extend does not continue a BoundlessBPE model: its deletions could take old ids away (docs/METHODS.md, BoundlessBPE)".into(),
            ));
        }
        if self.joints.is_some() {
            return Err(Error::Option(
                "extend does not continue a model trained with pre-split joints".into(),
            ));
        }
        let units = self.spelled_units(texts)?;
        // only alphabet and learned rows are symbols a merge can make or use: the others (the
        // specials, byte-fallback rows, the bare marker) keep their ids as holes, so that a byte
        // row's one byte or a special's text is never taken for a merge's result
        let texts: Vec<Vec<u8>> = self
            .rows
            .iter()
            .map(|r| {
                if matches!(r.kind, RowKind::Alphabet | RowKind::Learned) {
                    r.text.to_vec()
                } else {
                    Vec::new()
                }
            })
            .collect();
        let strip: &[u8] = if self.spelling.scheme == Scheme::Continuation {
            self.spelling.mark.as_bytes()
        } else {
            b""
        };
        // a SuperBPE model keeps its limit on the words a piece spans
        let allow = self.options.as_ref().filter(|o| o.superword_pattern.is_some()).map(|o| {
            crate::learners::superword::WordLimit::rule(crate::learners::superword::words_limit(o))
        });
        let ext = extend_with(&texts, &self.merges, units, new_rows, min_count, strip, allow)?;
        let mut rows: Vec<Row> = self.rows.clone();
        rows.extend(ext.new_texts.iter().map(|t| Row::new(t.as_slice(), RowKind::Learned)));
        let mut merges = self.merges.clone();
        merges.extend_from_slice(&ext.merges);
        let mut model = Tokenizer::new(Parts {
            merges,
            options: self.options.clone(),
            ..Parts::new(self.kind, self.spelling.clone(), rows)
        })?;
        model.template = self.template;
        Ok((model, ext))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(kind: &str) -> Tokenizer {
        // rows: [UNK], a, b, c</w>, b</w>, ab (a+b); the `end` spelling
        let doc = format!(
            r#"{{"format": "subwords", "version": 1, "model": "{kind}",
            "spelling": {{"scheme": "end", "mark": "</w>", "split_at_marks": true, "pre_split": null,
                "byte_fallback": false, "clean_text": false, "strip_accents": false, "lowercase": false}},
            "stream_merges_from": null, "joints": null, "options": null, "report": null,
            "rows": [["[UNK]", "special"], ["a", "alphabet"], ["b", "alphabet"], ["b</w>", "alphabet"],
                     ["c</w>", "alphabet"], ["ab", "learned"]],
            "merges": [["a", "b"]]}}"#
        );
        Tokenizer::from_json(&doc).unwrap()
    }

    #[test]
    fn extends_after_the_last_row_keeping_every_id() {
        let m = model("bpe");
        // "abc" x3: a b c</w> -> (a+b) ab c</w>; "abb" x1: a b b</w> -> ab b</w>; "xab" x2: x is
        // unknown (a barrier), a b</w> has no merge. Pairs: (ab, c</w>) 3, (a, b</w>) 2,
        // (ab, b</w>) 1 -> abc</w> (id 6), then ab</w> (id 7).
        let texts = ["abc abc abc abb", "xab xab"];
        let (ext, e) = m.extended(&texts, 2, 2).unwrap();
        assert_eq!(e.merges, vec![[5, 4, 6], [1, 3, 7]]);
        assert_eq!(ext.rows.len(), 8);
        assert_eq!(&ext.rows[..6], &m.rows[..]);
        assert_eq!(ext.rows[6].text.as_slice(), b"abc</w>");
        assert_eq!(ext.rows[7].text.as_slice(), b"ab</w>");
        assert_eq!(ext.merges[0], m.merges[0]);
        assert_eq!(ext.encode("abc").unwrap(), vec![6]);
        assert_eq!(m.encode("abc").unwrap(), vec![5, 4]);
    }

    #[test]
    fn refuses_an_empty_corpus() {
        let m = model("bpe");
        assert!(m.extended(&["   ", ""], 2, 2).is_err());
    }
}
