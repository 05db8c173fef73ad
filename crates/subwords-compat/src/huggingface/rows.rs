//! What `tokenizers` does to a batch after its model, for the transformers backend: each text's
//! ids (and pair's) cut by the truncation, put inside the post-processor's template, padded.
//! [`shape`] says which tokens of each sequence a row keeps; [`Rows`] lays every row out so the
//! binding can write its lists in one pass (ids, type ids, masks, offsets).

/// One item of a post-processor's template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// The first (`false`) or second (`true`) sequence, with its type id.
    Sequence(bool, u32),
    /// Special tokens with their type id.
    Special(Vec<u32>, u32),
}

/// The templates of a single text and of a pair.
#[derive(Clone, Debug, Default)]
pub struct Templates {
    pub single: Vec<Item>,
    pub pair: Vec<Item>,
}

impl Templates {
    /// The tokens the template of a single text (`pair` false) or a pair adds.
    pub fn added(&self, pair: bool) -> usize {
        let items = if pair { &self.pair } else { &self.single };
        items.iter().map(|it| if let Item::Special(ids, _) = it { ids.len() } else { 0 }).sum()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    LongestFirst,
    OnlyFirst,
    OnlySecond,
}

impl Strategy {
    /// tokenizers' name of the strategy.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "longest_first" => Some(Strategy::LongestFirst),
            "only_first" => Some(Strategy::OnlyFirst),
            "only_second" => Some(Strategy::OnlySecond),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Truncation {
    pub max_length: usize,
    pub stride: usize,
    pub strategy: Strategy,
    /// cut from the start (`direction="left"`)
    pub left: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct Padding {
    /// a fixed length, else the longest row's
    pub length: Option<usize>,
    pub multiple: Option<usize>,
    /// pad at the start (`direction="left"`)
    pub left: bool,
    pub id: u32,
    pub type_id: u32,
}

/// Which tokens of its sequences a row keeps: `a` of the first, `b` of the second (a range of
/// the sequence's tokens), and whether anything was cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub a: (usize, usize),
    pub b: Option<(usize, usize)>,
    pub cut: bool,
}

/// How many tokens of each sequence tokenizers' truncation keeps (its `truncate_encodings`),
/// `limit` being the maximum length less the template's tokens. `Err` where tokenizers raises
/// (a sequence too short for `only_first`/`only_second`), for its own error to be given.
pub fn kept(
    na: usize,
    nb: Option<usize>,
    limit: usize,
    strategy: Strategy,
) -> Result<(usize, Option<usize>), &'static str> {
    if limit == 0 {
        return Ok((0, nb.map(|_| 0)));
    }
    let total = na + nb.unwrap_or(0);
    if total <= limit {
        return Ok((na, nb));
    }
    let remove = total - limit;
    match strategy {
        Strategy::LongestFirst => {
            let Some(nb) = nb else { return Ok((total - remove, None)) };
            let swap = na > nb;
            let mut n1 = if swap { nb } else { na };
            let mut n2 = if n1 > limit { n1 } else { n1.max(limit - n1) };
            if n1 + n2 > limit {
                n1 = limit / 2;
                n2 = n1 + limit % 2;
            }
            if swap {
                std::mem::swap(&mut n1, &mut n2);
            }
            Ok((na.min(n1), Some(nb.min(n2))))
        }
        Strategy::OnlyFirst if na > remove => Ok((na - remove, nb)),
        Strategy::OnlyFirst => Err("only_first truncation of a sequence too short"),
        Strategy::OnlySecond => match nb {
            Some(nb) if nb > remove => Ok((na, Some(nb - remove))),
            _ => Err("only_second truncation without a second sequence long enough"),
        },
    }
}

/// The shape of a row of `na` tokens (and `nb` of a pair) under `trunc`, `added` being the tokens
/// the template adds. `Err` (why) where tokenizers raises or panics instead.
pub fn shape(
    na: usize,
    nb: Option<usize>,
    added: usize,
    trunc: Option<&Truncation>,
) -> Result<Shape, &'static str> {
    let Some(t) = trunc else {
        return Ok(Shape { a: (0, na), b: nb.map(|n| (0, n)), cut: false });
    };
    if added > t.max_length {
        return Err("max_length below the template's tokens");
    }
    let (ka, kb) = kept(na, nb, t.max_length - added, t.strategy)?;
    for (whole, k) in [(na, ka), (nb.unwrap_or(0), kb.unwrap_or(0))] {
        if 0 < k && k < whole && t.stride >= k {
            // tokenizers panics here (a stride as long as what is kept)
            return Err("stride not below the kept length");
        }
    }
    let range = |n: usize, k: usize| if t.left { (n - k, n) } else { (0, k) };
    let cut = ka < na || nb.zip(kb).is_some_and(|(n, k)| k < n);
    Ok(Shape { a: range(na, ka), b: nb.zip(kb).map(|(n, k)| range(n, k)), cut })
}

/// One run of a row's layout, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Run<'a> {
    /// tokens `start..stop` of the first (`false`) or second sequence, with their type id
    Sequence(bool, usize, usize, u32),
    /// a template's special tokens
    Special(&'a [u32], u32),
    /// this many pad tokens
    Pad(usize),
}

/// A row's runs: the template's items (or the sequences alone, type ids 0 and 1, without one)
/// with the shape's ranges, and `pad` pad tokens on the padding's side.
pub fn runs<'a>(
    shape: &Shape,
    template: Option<&'a [Item]>,
    pad: usize,
    pad_left: bool,
    out: &mut Vec<Run<'a>>,
) {
    out.clear();
    if pad > 0 && pad_left {
        out.push(Run::Pad(pad));
    }
    match template {
        None => {
            out.push(Run::Sequence(false, shape.a.0, shape.a.1, 0));
            if let Some((x, y)) = shape.b {
                out.push(Run::Sequence(true, x, y, 1));
            }
        }
        Some(items) => {
            for it in items {
                match it {
                    Item::Sequence(false, ty) => {
                        out.push(Run::Sequence(false, shape.a.0, shape.a.1, *ty))
                    }
                    Item::Sequence(true, ty) => {
                        if let Some((x, y)) = shape.b {
                            out.push(Run::Sequence(true, x, y, *ty));
                        }
                    }
                    Item::Special(ids, ty) => out.push(Run::Special(ids, *ty)),
                }
            }
        }
    }
    if pad > 0 && !pad_left {
        out.push(Run::Pad(pad));
    }
}

/// The length of a row's runs.
pub fn run_len(runs: &[Run<'_>]) -> usize {
    runs.iter()
        .map(|r| match *r {
            Run::Sequence(_, x, y, _) => y - x,
            Run::Special(ids, _) => ids.len(),
            Run::Pad(n) => n,
        })
        .sum()
}

/// The length every row is padded to: `pad.length`, else the longest of `lengths`, rounded up to
/// the multiple.
pub fn padded_length(pad: &Padding, lengths: impl Iterator<Item = usize>) -> usize {
    let mut n = pad.length.unwrap_or_else(|| lengths.max().unwrap_or(0));
    if let Some(m) = pad.multiple.filter(|&m| m > 0) {
        if !n.is_multiple_of(m) {
            n += m - n % m;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values worked by hand from tokenizers' `truncate_encodings` (longest_first: with
    // n the shorter sequence's length, the longer keeps max(n, limit - n) and the shorter all n;
    // when those add up past the limit, the limit is split in half, the odd token to the longer
    // one, or to the second when they are as long).

    #[test]
    fn longest_first_cuts_the_longer_sequence_first() {
        // 10 + 3 into 8: the shorter keeps 3, the longer 8 - 3 = 5
        assert_eq!(kept(10, Some(3), 8, Strategy::LongestFirst), Ok((5, Some(3))));
        assert_eq!(kept(3, Some(10), 8, Strategy::LongestFirst), Ok((3, Some(5))));
        // 10 + 9 into 7: both longer than the limit, 4 and 3 (the odd token to the longer)
        assert_eq!(kept(10, Some(9), 7, Strategy::LongestFirst), Ok((4, Some(3))));
        assert_eq!(kept(9, Some(10), 7, Strategy::LongestFirst), Ok((3, Some(4))));
        assert_eq!(kept(9, Some(9), 7, Strategy::LongestFirst), Ok((3, Some(4))));
        // a single sequence keeps the limit
        assert_eq!(kept(10, None, 4, Strategy::LongestFirst), Ok((4, None)));
        // nothing to cut
        assert_eq!(kept(2, Some(3), 5, Strategy::LongestFirst), Ok((2, Some(3))));
        assert_eq!(kept(2, Some(3), 0, Strategy::LongestFirst), Ok((0, Some(0))));
    }

    #[test]
    fn only_first_and_only_second_cut_one_sequence_or_refuse() {
        assert_eq!(kept(10, Some(3), 8, Strategy::OnlyFirst), Ok((5, Some(3))));
        assert!(kept(2, Some(10), 8, Strategy::OnlyFirst).is_err());
        assert_eq!(kept(3, Some(10), 8, Strategy::OnlySecond), Ok((3, Some(5))));
        assert!(kept(10, None, 8, Strategy::OnlySecond).is_err());
    }

    #[test]
    fn shapes_keep_the_right_end_on_the_left_and_refuse_a_long_stride() {
        let t =
            Truncation { max_length: 6, stride: 0, strategy: Strategy::LongestFirst, left: true };
        // 2 added tokens: 4 of 10 kept, the last four
        assert_eq!(shape(10, None, 2, Some(&t)), Ok(Shape { a: (6, 10), b: None, cut: true }));
        let right = Truncation { left: false, ..t };
        assert_eq!(shape(10, None, 2, Some(&right)), Ok(Shape { a: (0, 4), b: None, cut: true }));
        assert_eq!(shape(3, None, 2, Some(&right)), Ok(Shape { a: (0, 3), b: None, cut: false }));
        assert!(shape(10, None, 7, Some(&right)).is_err());
        let stride = Truncation { stride: 4, ..right };
        assert!(shape(10, None, 2, Some(&stride)).is_err());
    }

    #[test]
    fn runs_follow_the_template_and_pad_on_their_side() {
        let tpl = vec![
            Item::Special(vec![101], 0),
            Item::Sequence(false, 0),
            Item::Special(vec![102], 0),
            Item::Sequence(true, 1),
            Item::Special(vec![102], 1),
        ];
        let s = Shape { a: (0, 3), b: Some((1, 2)), cut: true };
        let mut out = Vec::new();
        runs(&s, Some(&tpl), 2, true, &mut out);
        assert_eq!(
            out,
            [
                Run::Pad(2),
                Run::Special(&[101], 0),
                Run::Sequence(false, 0, 3, 0),
                Run::Special(&[102], 0),
                Run::Sequence(true, 1, 2, 1),
                Run::Special(&[102], 1),
            ]
        );
        assert_eq!(run_len(&out), 2 + 1 + 3 + 1 + 1 + 1);
        runs(&s, None, 1, false, &mut out);
        assert_eq!(out, [Run::Sequence(false, 0, 3, 0), Run::Sequence(true, 1, 2, 1), Run::Pad(1)]);
    }

    #[test]
    fn padding_rounds_up_to_the_multiple() {
        let p = Padding { length: None, multiple: Some(8), left: false, id: 0, type_id: 0 };
        assert_eq!(padded_length(&p, [3, 9, 5].into_iter()), 16);
        assert_eq!(padded_length(&p, [8].into_iter()), 8);
        let fixed = Padding { length: Some(5), multiple: None, ..p };
        assert_eq!(padded_length(&fixed, [3, 9].into_iter()), 5);
    }
}
