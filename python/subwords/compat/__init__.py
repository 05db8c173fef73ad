"""Drop-in faces of other tokenizer libraries, backed by subwords' engines.

Each module offers a peer library's public API under the peer's own names, so code written
against the peer runs unchanged after one changed import:

* ``subwords.compat.tiktoken``: tiktoken's ``Encoding``, ``get_encoding``,
  ``encoding_for_model`` and the rest (``import subwords.compat.tiktoken as tiktoken``).
* ``subwords.compat.sentencepiece``: sentencepiece's ``SentencePieceProcessor`` and
  ``SentencePieceTrainer``.
* ``subwords.compat.transformers``: a backend for transformers' fast tokenizers;
  ``install()`` makes ``PreTrainedTokenizerFast`` (and what ``AutoTokenizer`` loads) encode
  through subwords, ``uninstall()`` puts transformers back.

Ids, texts and the errors the peers' own tests expect are the peers'; docs/COMPAT.md lists every
public name, how it is offered, and the speed against the original. The modules are imported on
demand: importing this package loads neither.
"""
