//! The binding of Picky BPE's learner (`learners/merge/picky.rs`) on units already spelled in
//! symbols: what the differential tests run against `subwords.reference.picky`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use subwords_core::learners::merge::picky::{learn_picky, PickyEvent, PickyParams};
use subwords_core::learners::merge::Symbols;

/// One event: `("merge", left, right, result)` or `("remove", token, parts)`.
type Event = (String, Vec<String>);

/// Picky BPE on `units` (`(symbols, count)`; every symbol of a unit is an alphabet symbol):
/// `(events, present learned tokens, stop, units' final tokens)`.
#[pyfunction]
#[pyo3(signature = (units, new_rows, threshold, min_count))]
#[allow(clippy::type_complexity)]
pub fn picky_learn(
    units: Vec<(Vec<String>, u64)>,
    new_rows: u64,
    threshold: f64,
    min_count: u64,
) -> PyResult<(Vec<Event>, Vec<String>, String, Vec<Vec<String>>)> {
    if !(threshold > 0.0 && threshold <= 1.0) {
        return Err(PyValueError::new_err(format!(
            "the Picky BPE threshold is {threshold}; give a number in (0, 1]"
        )));
    }
    let mut alphabet: Vec<&String> = units.iter().flat_map(|(u, _)| u.iter()).collect();
    alphabet.sort();
    alphabet.dedup();
    let mut symbols = Symbols::new(0, b"");
    for a in &alphabet {
        symbols.push(a.as_bytes().to_vec(), 1);
    }
    let spelled: Vec<(Vec<u32>, u64)> = units
        .iter()
        .map(|(u, c)| (u.iter().map(|s| symbols.index[s.as_bytes()]).collect(), *c))
        .collect();
    let params = PickyParams { new_rows, min_count, threshold };
    let out = learn_picky(spelled, &mut symbols, &params);
    let name = |t: u32| String::from_utf8_lossy(symbols.text(t)).into_owned();
    let events = out
        .events
        .iter()
        .map(|e| match e {
            PickyEvent::Merge([a, b, c]) => {
                ("merge".to_string(), vec![name(*a), name(*b), name(*c)])
            }
            PickyEvent::Remove { token, parts } => {
                let mut v = vec![name(*token)];
                v.extend(parts.iter().map(|&p| name(p)));
                ("remove".to_string(), v)
            }
        })
        .collect();
    let present = out.present.iter().map(|&t| name(t)).collect();
    let segmented = out.units.iter().map(|u| u.iter().map(|&t| name(t)).collect()).collect();
    Ok((events, present, out.stop.name().to_string(), segmented))
}
