//! Where each token of a tokenizer.json pipeline came from, as `tokenizers` reports it.
//!
//! `tokenizers` keeps, for every byte of the normalized text, the byte span of the original text
//! it stands for (its `NormalizedString` alignments). Every normalizer is a rewrite of the text
//! into a list of `(char, change)`: change 0 replaces the next old character (the new one takes
//! its span), `+1` inserts (the new one takes the span of the old byte just before, or an empty
//! span at the start), `-n` replaces the next old character and removes `n` more. A token's
//! span is the first of its bytes' start to the last of its bytes' end. [`Aligned`] is that
//! text with its spans, and each normalizer below writes the same `(char, change)` lists that
//! `tokenizers` writes, so the spans agree, oddities included:
//!
//! * NFC composition takes the span of the first character composed ("e" + U+0301 becomes "é"
//!   spanning only the "e"), and a character that decomposes or expands (`ﬁ` under NFKC) gives
//!   every piece of it its whole span;
//! * `Replace` gives every character of the replacement the span of the last character matched;
//! * `Prepend` and a prefix space or `▁` take the span of the first character.
//!
//! The byte spans are turned into code points as tokenizers' Python binding does
//! ([`char_offsets`]).

use unicode_normalization_alignments::char::{
    canonical_combining_class, compose, decompose_canonical, decompose_compatible,
};

/// Text with, for each of its bytes, the byte span of the original text it came from.
#[derive(Clone, Debug, Default)]
pub struct Aligned {
    pub text: String,
    pub spans: Vec<(u32, u32)>,
    /// where this text starts in the original (the span of a character inserted at the start)
    pub base: u32,
}

impl Aligned {
    /// `s` unchanged: each byte spans its own character; `base` is where `s` starts.
    pub fn new(s: &str, base: usize) -> Self {
        let mut al = Aligned::default();
        al.reset(s, base);
        al
    }

    /// [`Aligned::new`] in this one's buffers.
    pub fn reset(&mut self, s: &str, base: usize) {
        self.text.clear();
        self.text.push_str(s);
        self.spans.clear();
        self.spans.reserve(s.len());
        if s.is_ascii() {
            self.spans.extend((base..base + s.len()).map(|i| (i as u32, i as u32 + 1)));
        } else {
            for (i, c) in s.char_indices() {
                let span = ((base + i) as u32, (base + i + c.len_utf8()) as u32);
                self.spans.extend(std::iter::repeat_n(span, c.len_utf8()));
            }
        }
        self.base = base as u32;
    }

    /// The text rewritten by `dest` (see the module header), after `removed` characters are
    /// dropped from its start.
    pub fn transform(&mut self, dest: &[(char, isize)], removed: usize) {
        let old = std::mem::take(&mut self.text);
        let old_spans = std::mem::take(&mut self.spans);
        let mut chars = old.chars();
        let mut offset: usize = (&mut chars).take(removed).map(char::len_utf8).sum();
        let mut text = String::with_capacity(old.len());
        let mut spans = Vec::with_capacity(old_spans.len());
        let start = (self.base, self.base);
        for &(c, change) in dest {
            let span = if change > 0 {
                if offset == 0 {
                    start
                } else {
                    old_spans[offset - 1]
                }
            } else {
                old_spans.get(offset).or(old_spans.last()).copied().unwrap_or(start)
            };
            if change <= 0 {
                let take = 1 + (-change) as usize;
                for _ in 0..take {
                    if let Some(r) = chars.next() {
                        offset += r.len_utf8();
                    }
                }
            }
            text.push(c);
            spans.extend(std::iter::repeat_n(span, c.len_utf8()));
        }
        self.text = text;
        self.spans = spans;
    }

    /// Each character kept or dropped (`keep`): tokenizers' `filter`, a dropped character
    /// counted on the kept one before it.
    pub fn filter(&mut self, keep: impl Fn(char) -> bool) {
        if self.text.chars().all(&keep) {
            return;
        }
        let mut dest: Vec<(char, isize)> = Vec::with_capacity(self.text.len());
        let mut removed = 0;
        for c in self.text.chars() {
            if keep(c) {
                dest.push((c, 0));
            } else {
                match dest.last_mut() {
                    Some(last) => last.1 -= 1,
                    None => removed += 1,
                }
            }
        }
        self.transform(&dest, removed);
    }

    /// Each character replaced by one or more (`f` pushes them): the first replaces it, the
    /// rest are inserted after it (tokenizers' `map` and `lowercase`).
    pub fn map_chars(&mut self, mut f: impl FnMut(char, &mut Vec<char>)) {
        // while every character becomes one of its own UTF-8 length, each byte keeps its span
        // (a character's bytes share one): only the text is rewritten
        let mut buf = Vec::new();
        let mut same = String::with_capacity(self.text.len());
        let mut changed = false;
        let whole = self.text.chars().all(|c| {
            buf.clear();
            f(c, &mut buf);
            let one = buf.len() == 1 && buf[0].len_utf8() == c.len_utf8();
            if one {
                changed |= buf[0] != c;
                same.push(buf[0]);
            }
            one
        });
        if whole {
            if changed {
                self.text = same;
            }
            return;
        }
        let mut dest: Vec<(char, isize)> = Vec::with_capacity(self.text.len());
        let mut changed = false;
        for c in self.text.chars() {
            buf.clear();
            f(c, &mut buf);
            changed |= buf.len() != 1 || buf[0] != c;
            for (k, &o) in buf.iter().enumerate() {
                dest.push((o, if k == 0 { 0 } else { 1 }));
            }
        }
        if changed {
            self.transform(&dest, 0);
        }
    }

    /// `prefix` before the text (nothing on an empty text): every character of it spans the
    /// first character (tokenizers' `prepend`).
    pub fn prepend(&mut self, prefix: &str) {
        let Some(first) = self.text.chars().next() else { return };
        if prefix.is_empty() {
            return;
        }
        let mut dest: Vec<(char, isize)> = Vec::with_capacity(self.text.len() + prefix.len());
        for (k, c) in prefix.chars().enumerate() {
            dest.push((c, if k == 0 { 0 } else { 1 }));
        }
        dest.push((first, 1));
        dest.extend(self.text.chars().skip(1).map(|c| (c, 0)));
        self.transform(&dest, 0);
    }

    /// Each byte range of `matches` (sorted, apart) replaced by `content`, every character of
    /// which spans the last byte matched (tokenizers' `replace`).
    pub fn replace_ranges(&mut self, matches: &[(usize, usize)], content: &str) {
        if matches.is_empty() {
            return;
        }
        let mut text = String::with_capacity(self.text.len());
        let mut spans = Vec::with_capacity(self.spans.len());
        let mut last = 0;
        for &(a, b) in matches {
            text.push_str(&self.text[last..a]);
            spans.extend_from_slice(&self.spans[last..a]);
            let span = self.spans[b - 1];
            text.push_str(content);
            spans.extend(std::iter::repeat_n(span, content.len()));
            last = b;
        }
        text.push_str(&self.text[last..]);
        spans.extend_from_slice(&self.spans[last..]);
        self.text = text;
        self.spans = spans;
    }

    /// Unicode normalization with tokenizers' changes: decomposition gives each character's
    /// parts change 0 then `+1` (canonical reordering moves them with their changes), and
    /// composition counts every character it absorbs on the one it composes into.
    pub fn unicode(&mut self, compat: bool, composed: bool) {
        let mut dest: Vec<(char, isize)> = Vec::with_capacity(self.text.len());
        for c in self.text.chars() {
            let at = dest.len();
            let mut push = |d: char| {
                let change = if dest.len() == at { 0 } else { 1 };
                dest.push((d, change));
            };
            if compat {
                decompose_compatible(c, &mut push);
            } else {
                decompose_canonical(c, &mut push);
            }
        }
        // canonical ordering: each run of non-starters sorted by class, stably
        let mut i = 0;
        while i < dest.len() {
            if canonical_combining_class(dest[i].0) == 0 {
                i += 1;
                continue;
            }
            let mut j = i;
            while j < dest.len() && canonical_combining_class(dest[j].0) != 0 {
                j += 1;
            }
            dest[i..j].sort_by_key(|&(c, _)| canonical_combining_class(c));
            i = j;
        }
        if composed {
            let mut out: Vec<(char, isize)> = Vec::with_capacity(dest.len());
            let mut starter: Option<usize> = None;
            let mut last_ccc: Option<u8> = None;
            for (c, change) in dest {
                let ccc = canonical_combining_class(c);
                if let Some(s) = starter {
                    let blocked = matches!(last_ccc, Some(l) if l == 0 || l >= ccc);
                    if !blocked {
                        if let Some(p) = compose(out[s].0, c) {
                            out[s].0 = p;
                            out[s].1 += change - 1;
                            continue;
                        }
                    }
                }
                if ccc == 0 {
                    starter = Some(out.len());
                    last_ccc = None;
                } else {
                    last_ccc = Some(ccc);
                }
                out.push((c, change));
            }
            dest = out;
        }
        self.transform(&dest, 0);
    }
}

/// tokenizers' byte offsets into `text` as code points, the way its Python binding turns them:
/// the start is the character holding byte `start`, the end the character holding byte `end`
/// (so an end inside a character leaves that character out), or one past the last character
/// when `end` is the text's length; a start at the end of the text stays as it is.
pub fn char_offsets(text: &str, offsets: &mut [(u32, u32)]) {
    char_offsets_with(text, offsets, &mut Vec::new())
}

/// [`char_offsets`] with `map` a buffer kept from text to text.
pub fn char_offsets_with(text: &str, offsets: &mut [(u32, u32)], map: &mut Vec<u32>) {
    if text.is_ascii() {
        // a byte is a code point: what the map below gives, without it
        let n = text.len();
        for o in offsets.iter_mut() {
            let (s, e) = (o.0 as usize, o.1 as usize);
            if s >= n {
                continue;
            }
            let end = if e < n || (e >= 1 && e - 1 < n) { e } else { s + 1 };
            *o = (s as u32, end as u32);
        }
        return;
    }
    map.clear();
    map.reserve(text.len());
    for (i, c) in text.chars().enumerate() {
        map.extend(std::iter::repeat_n(i as u32, c.len_utf8()));
    }
    for o in offsets.iter_mut() {
        let (s, e) = (o.0 as usize, o.1 as usize);
        let Some(&start) = map.get(s) else { continue };
        let end = match map.get(e) {
            Some(&end) => end,
            None => e.checked_sub(1).and_then(|b| map.get(b).copied()).unwrap_or(start) + 1,
        };
        *o = (start, end);
    }
}

/// tokenizers' `trim_offsets` (ByteLevel and Roberta post-processors), on code-point offsets
/// (its Python binding converts them first): `ends[i]` counts the `Ġ` or whitespace characters
/// token `i` begins and ends with, and each is taken off its span as one code point, except the one leading space the pre-tokenizer added
/// (`add_prefix_space`) on a token at the start.
pub fn trim_offsets(ends: &[(u32, u32)], offsets: &mut [(u32, u32)], add_prefix_space: bool) {
    for (i, (&(lead, trail), o)) in ends.iter().zip(offsets.iter_mut()).enumerate() {
        let mut lead = lead;
        if lead > 0 {
            if (i == 0 || o.0 == 0) && add_prefix_space && lead == 1 {
                lead = 0;
            }
            o.0 = (o.0 + lead).min(o.1);
        }
        if trail > 0 && o.1 >= trail {
            o.1 = (o.1 - trail).max(o.0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfc_composition_spans_the_first_character() {
        // "e" + U+0301 (3 bytes) composes to "é", whose bytes span only the "e"
        let mut a = Aligned::new("xe\u{301}", 0);
        a.unicode(false, true);
        assert_eq!(a.text, "x\u{e9}");
        assert_eq!(a.spans, vec![(0, 1), (1, 2), (1, 2)]);
    }

    #[test]
    fn nfkc_expansion_spans_the_whole_ligature() {
        let mut a = Aligned::new("\u{FB01}x", 0);
        a.unicode(true, true);
        assert_eq!(a.text, "fix");
        assert_eq!(a.spans, vec![(0, 3), (0, 3), (3, 4)]);
    }

    /// `map_chars` keeping the spans (every character to one of its own length) gives what the
    /// general rewrite gives, on text whose spans an earlier step changed; characters that
    /// lower-case to two (`İ`) or to another length (`ẞ` to `ß`) take the general way.
    #[test]
    fn map_chars_keeping_spans_is_the_general_rewrite() {
        fn general(a: &mut Aligned, f: impl Fn(char, &mut Vec<char>)) {
            let (mut dest, mut buf) = (Vec::new(), Vec::new());
            for c in a.text.clone().chars() {
                buf.clear();
                f(c, &mut buf);
                for (k, &o) in buf.iter().enumerate() {
                    dest.push((o, if k == 0 { 0 } else { 1 }));
                }
            }
            a.transform(&dest, 0);
        }
        let lower = |c: char, o: &mut Vec<char>| o.extend(c.to_lowercase());
        let space = |c: char, o: &mut Vec<char>| o.push(if c.is_whitespace() { ' ' } else { c });
        for t in ["Ünïcödé ΑΒΓ\tx", "ﬁne İx", "ẞtraße", "plain", ""] {
            for f in [&lower as &dyn Fn(char, &mut Vec<char>), &space] {
                let mut fast = Aligned::new(t, 3);
                fast.unicode(true, true);
                let mut slow = fast.clone();
                fast.map_chars(f);
                general(&mut slow, f);
                assert_eq!((&fast.text, &fast.spans), (&slow.text, &slow.spans), "{t:?}");
            }
        }
    }

    #[test]
    fn char_offsets_follow_the_binding() {
        // "é" is bytes 0..2: an end at byte 1 (inside it) leaves it out
        let mut o = vec![(0, 1), (0, 2), (2, 3), (3, 3)];
        char_offsets("éa", &mut o);
        assert_eq!(o, vec![(0, 0), (0, 1), (1, 2), (3, 3)]);
    }
}
