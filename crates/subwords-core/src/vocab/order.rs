//! Row-order checks (DESIGN §1, "Vocabulary"): which kinds go where, and the order in which a
//! model's learned rows were made. [`crate::tokenizer::Tokenizer::new`] runs them on every model,
//! trained or read from a file, so a hostile file and a fresh model pass the same checks.
//!
//! Order: `[UNK]`, byte-fallback rows, the bare marker, the alphabet in code-point order, then
//! learned rows in the order merges make them (or unit rows for the word model). A vocabulary
//! made elsewhere (kind `piece`) keeps its own order.

use crate::error::{Error, Result};
use crate::options::ModelKind;

use super::{Row, RowKind};

fn bad(m: String) -> Error {
    Error::ModelFile(m)
}

/// An imported vocabulary: a WordPiece one without merges, holding only piece and special rows.
pub fn check_imported(kind: ModelKind, rows: &[Row], merges: &[[u32; 3]]) -> Result<()> {
    // A vocabulary made elsewhere (kind `piece`): its own order and special rows, no merges,
    // encoded by longest match.
    if kind != ModelKind::Wordpiece || !merges.is_empty() {
        return Err(bad("`piece` rows belong to a WordPiece vocabulary without merges".into()));
    }
    if let Some(id) = rows.iter().position(|r| !matches!(r.kind, RowKind::Piece | RowKind::Special))
    {
        return Err(bad(format!(
            "row {id}: an imported vocabulary holds only piece and special rows"
        )));
    }
    Ok(())
}

/// Row order: [UNK], byte rows, the bare marker, the alphabet, learned rows (or unit rows).
pub fn check_row_order(rows: &[Row]) -> Result<()> {
    let stage = |k: RowKind| match k {
        RowKind::Special => 0,
        RowKind::Byte => 1,
        RowKind::Marker => 2,
        RowKind::Alphabet => 3,
        RowKind::Learned | RowKind::Unit | RowKind::Piece => 4,
    };
    for (id, w) in rows.windows(2).enumerate() {
        if stage(w[0].kind) > stage(w[1].kind) {
            return Err(bad(format!(
                "row {}: a {} row after a {} row; rows go [UNK], byte rows, marker, alphabet, learned",
                id + 1,
                w[1].kind.name(),
                w[0].kind.name()
            )));
        }
    }
    Ok(())
}

/// Unit rows belong to word models, and word models hold nothing else but `[UNK]`.
pub fn check_row_kinds(kind: ModelKind, rows: &[Row]) -> Result<()> {
    let wrong_kind = rows.iter().position(|r| match kind {
        ModelKind::Bpe | ModelKind::Wordpiece | ModelKind::Unigram => r.kind == RowKind::Unit,
        ModelKind::Word => !matches!(r.kind, RowKind::Special | RowKind::Unit),
    });
    if let Some(id) = wrong_kind {
        return Err(bad(format!(
            "row {id}: a {} row does not belong in a {:?} model",
            rows[id].kind.name(),
            kind
        )));
    }
    Ok(())
}

/// The alphabet in code-point order; BPE and WordPiece rows learned in the order merges make
/// them, each merge joining rows that exist by then.
pub fn check_learned_order(kind: ModelKind, rows: &[Row], merges: &[[u32; 3]]) -> Result<()> {
    if kind == ModelKind::Unigram && !merges.is_empty() {
        return Err(bad("a unigram model has no merges".into()));
    }
    if kind == ModelKind::Unigram {
        let alphabet: Vec<&Row> = rows.iter().filter(|r| r.kind == RowKind::Alphabet).collect();
        if alphabet.windows(2).any(|w| w[0].text >= w[1].text) {
            return Err(bad("alphabet rows are not in code-point order".into()));
        }
    }
    if matches!(kind, ModelKind::Bpe | ModelKind::Wordpiece) {
        // the alphabet is in code-point order; learned rows appear in the order merges make
        // them, and a merge only joins rows that exist by then
        let alphabet: Vec<&Row> = rows.iter().filter(|r| r.kind == RowKind::Alphabet).collect();
        if let Some(k) = alphabet.windows(2).position(|w| w[0].text >= w[1].text) {
            return Err(bad(format!(
                "alphabet rows are not in code-point order (at the {}th)",
                k + 1
            )));
        }
        let mut made: Vec<bool> = rows.iter().map(|r| r.kind == RowKind::Alphabet).collect();
        let mut next_learned =
            rows.iter().position(|r| r.kind == RowKind::Learned).unwrap_or(rows.len());
        for (rank, &[a, b, c]) in merges.iter().enumerate() {
            let ok = |x: u32| made.get(x as usize).copied().unwrap_or(false);
            if !ok(a) || !ok(b) {
                return Err(bad(format!("merge {rank} joins a row that no earlier merge made")));
            }
            if !ok(c) {
                if c as usize != next_learned {
                    return Err(bad(format!(
                        "merge {rank} makes row {c}, but the next learned row is {next_learned}"
                    )));
                }
                made[c as usize] = true;
                next_learned += 1;
            }
        }
        if let Some(id) =
            rows.iter().enumerate().position(|(i, r)| r.kind == RowKind::Learned && !made[i])
        {
            return Err(bad(format!("row {id}: a learned row that no merge makes")));
        }
    }
    Ok(())
}
