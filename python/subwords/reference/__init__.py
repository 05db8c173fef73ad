"""A readable, pure-Python implementation of ``subwords.train`` and ``Tokenizer``.

It is the differential oracle for the Rust engine: the same signature and, on every input, the
same rows, kinds, merges, report and pieces. It is slow on purpose -- every rule of DESIGN
section 2 and docs/API.md is written out once, in the plainest code that states it:

* :mod:`.spelling` -- text -> units of symbols and back (``end``, ``continuation``, ``front``,
  ``bytes``, joints, byte fallback, decoding);
* :mod:`.bpe` -- the merge learner (``learn``) and the merge-replay segmenter (``replay``);
* :mod:`.wordpiece` -- the same merge loop scored by ``count(a,b)/(count(a)count(b))``, and
  the longest-match segmenter;
* :mod:`.unigram` -- the Unigram language model: the seed, EM, pruning by loss, and the
  Viterbi / n-best / fewest-pieces / sampling segmenters with their own ``Tokenizer``;
* :mod:`.training` -- options, input, the alphabet, size accounting, two-stage BPE, the word
  model;
* :mod:`.tokenizer` -- the ``Tokenizer``.

    >>> import subwords.reference as ref
    >>> tok = ref.train({"low": 5, "lower": 2, "newest": 6, "widest": 3}, vocab_size=22)
    >>> tok.merges[:2]
    [('e', 's'), ('es', 't</w>')]
    >>> tok.encode_pieces("lowest")
    ['lo', 'w', 'est</w>']
"""

from __future__ import annotations

from .tokenizer import Tokenizer
from .training import train

__all__ = ["train", "Tokenizer"]
