//! The binding of StochasTok (`segmenters/stochastok.rs`): a table of splits built once from a
//! vocabulary's keys, then applied to the ids of one text or of a batch.

use pyo3::prelude::*;
use rayon::prelude::*;

use subwords_core::segmenters::stochastok::{text_seed, Expansions};

use crate::{pool, to_py};

#[pyclass(name = "StochasTok", module = "subwords._core", frozen)]
pub struct PyStochasTok {
    inner: Expansions,
}

#[pymethods]
impl PyStochasTok {
    /// `keys[id]`: the bytes whose joins define the splits (`None`: the id never splits and is
    /// never a part).
    #[new]
    fn new(py: Python<'_>, keys: Vec<Option<Vec<u8>>>) -> Self {
        PyStochasTok { inner: py.detach(|| Expansions::new(&keys)) }
    }

    /// The `(left, right)` splits of `id`.
    fn splits(&self, id: u32) -> Vec<(u32, u32)> {
        self.inner.splits(id).to_vec()
    }

    /// How many ids have a split.
    fn splittable(&self) -> usize {
        self.inner.splittable()
    }

    /// LiteToken: the rows of `order` (shortest first) that no split into two rows outside
    /// `gone` builds; `gone` as updated is returned too.
    fn stranded(
        &self,
        py: Python<'_>,
        order: Vec<u32>,
        mut gone: Vec<bool>,
    ) -> (Vec<u32>, Vec<bool>) {
        py.detach(|| {
            let lost = self.inner.stranded(&order, &mut gone);
            (lost, gone)
        })
    }

    /// LiteToken: the last merge under the rank rule, made alone, of each of `ids` and of the
    /// parts of those merges, indexed by id (None: not made so, or not asked).
    fn rank_last_splits(&self, py: Python<'_>, ids: Vec<u32>) -> Vec<Option<(u32, u32)>> {
        py.detach(|| self.inner.rank_last_splits(&ids))
    }

    /// `ids` expanded with `p`; the draw is that of text `index` under `seed`.
    #[pyo3(signature = (ids, p, seed, index=0))]
    fn expand(
        &self,
        py: Python<'_>,
        ids: Vec<u32>,
        p: f64,
        seed: u64,
        index: u64,
    ) -> PyResult<Vec<u32>> {
        py.detach(|| self.inner.expand(&ids, p, text_seed(seed, index))).map_err(|e| to_py(py, e))
    }

    /// Each list of `batch` expanded with `p`, list `k` drawn as text `k` under `seed`, on
    /// `threads` threads (the result does not depend on `threads`).
    fn expand_batch(
        &self,
        py: Python<'_>,
        batch: Vec<Vec<u32>>,
        p: f64,
        seed: u64,
        threads: usize,
    ) -> PyResult<Vec<Vec<u32>>> {
        let workers = pool(threads)?;
        py.detach(|| {
            workers.install(|| {
                batch
                    .par_iter()
                    .enumerate()
                    .map(|(k, ids)| self.inner.expand(ids, p, text_seed(seed, k as u64)))
                    .collect::<subwords_core::Result<Vec<_>>>()
            })
        })
        .map_err(|e| to_py(py, e))
    }
}
