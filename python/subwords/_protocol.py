"""``subwords.Tokenizer``: the one face every tokenizer subwords gives answers to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Optional, Protocol, runtime_checkable

from ._specials import AllowedSpecial


class _Face(type(Protocol)):  # type: ignore[misc]  # typing's protocol metaclass is private
    """Keeps ``subwords.Tokenizer.from_json`` working: before the protocol took the name, it was
    the class of subwords' own models. Lookups go here only for names the class lacks, so the
    protocol's members (what ``isinstance`` checks) are unchanged."""

    def __getattr__(cls, name: str) -> Any:
        if name == "from_json":
            from ._api import SubwordsTokenizer

            return SubwordsTokenizer.from_json
        raise AttributeError(f"type object 'Tokenizer' has no attribute {name!r}")


@runtime_checkable
class Tokenizer(Protocol, metaclass=_Face):
    """What every tokenizer answers, whether subwords trained it (:class:`subwords.SubwordsTokenizer`,
    :class:`subwords.UnigramTokenizer`) or read it from another library's file
    (:func:`subwords.load`: ``tokenizer.json``, vocab.json + merges.txt, a SentencePiece
    ``.model``, a tiktoken rank file, subword-nmt codes, a BERT ``vocab.txt``).

    Text is always ``str``; anything else is a :class:`~subwords.errors.TextTypeError` (an
    ``InputError`` and a ``TypeError``) from every family. Ids are the file's own ids.

    **Special tokens**, the same three arguments everywhere:

    ``allowed_special``
        Which special surfaces in the text become their ids. By default none: ``"<|endoftext|>"``
        or ``"[CLS]"`` in the text is spelled as ordinary text (tiktoken's safe default, applied
        to every format). ``"all"`` allows every special token, or pass a collection of surfaces;
        a surface that is not a special token of the vocabulary is an ``InputError``.
    ``add_special_tokens``
        Whether the tokenizer's template goes around the ids: a BERT vocabulary's ``[CLS] ...
        [SEP]``, a ``tokenizer.json``'s post-processor, a SentencePiece model's ``<s> ...
        </s>``. A tokenizer without a template ignores it. The default, ``None``, is what the
        file's own library does when not told: ``True`` for subwords' own models and a BERT
        ``vocab.txt`` (transformers' ``BertTokenizer``) and for a ``tokenizer.json`` (tokenizers'
        and transformers' ``encode``); ``False`` for a SentencePiece ``.model`` (sentencepiece's
        ``encode`` adds neither ``<s>`` nor ``</s>`` unless asked). tiktoken and subword-nmt files
        have no template. The command line follows the same rule.
    ``pair``
        A second text, encoded after the first (inside the pair template when
        ``add_special_tokens`` and the tokenizer has one; plainly appended otherwise).

    Old spellings are kept as aliases: SentencePiece's ``add_bos``/``add_eos`` (one side of its
    template each) and Hugging Face's ``skip_special_tokens`` on ``decode``.

    **Pieces** are the original library's: ``encode_pieces`` gives what it prints for the same
    text (sentencepiece's ``out_type=str``, with an unknown character's own surface; tokenizers'
    ``Encoding.tokens``; tiktoken's tokens spelled with GPT-2's byte table; subword-nmt's
    ``@@`` pieces), and ``decode_pieces`` reads them back.

    **Offsets**: ``encode_with_offsets(text)`` gives ``(id, start, end)`` with ``start``/``end``
    in code points of ``text``, one triple per id of ``encode(text, add_special_tokens=False)``.
    A character split into several byte pieces is covered by the last of them (the others are
    empty) in every loaded format; each class's method says how it finds the spans.
    """

    def encode(self, text: str, *, allowed_special: AllowedSpecial = ..., add_special_tokens: Optional[bool] = ...,
               pair: Optional[str] = ...) -> list[int]:
        """The ids of ``text``."""
        ...

    def encode_batch(self, texts: Iterable[str], *, threads: Optional[int] = ...,
                     allowed_special: AllowedSpecial = ..., add_special_tokens: Optional[bool] = ...) -> list[list[int]]:
        """The ids of every text (``threads``: None for every core); the same as ``encode`` on
        each, whatever the thread count."""
        ...

    def encode_pieces(self, text: str, *, allowed_special: AllowedSpecial = ...,
                      add_special_tokens: Optional[bool] = ...) -> list[str]:
        """The pieces the original library prints for ``text``."""
        ...

    def encode_with_offsets(self, text: str) -> list[tuple[int, int, int]]:
        """``(id, start, end)`` per id, offsets in code points of ``text``."""
        ...

    def decode(self, ids: Iterable[int]) -> str:
        """The text of ``ids``."""
        ...

    def decode_pieces(self, pieces: Iterable[str]) -> str:
        """The text of pieces as ``encode_pieces`` gives them."""
        ...

    def id_to_piece(self, id: int) -> str:
        """The vocabulary entry of ``id`` (``UnknownPieceError`` when there is none)."""
        ...

    def piece_to_id(self, piece: str) -> int:
        """The id of a vocabulary entry (``UnknownPieceError`` when there is none)."""
        ...

    @property
    def vocab_size(self) -> int:
        """How many ids the vocabulary has (tiktoken: one more than the largest)."""
        ...

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special surface -> id: what ``allowed_special`` chooses from."""
        ...


__all__ = ["Tokenizer", "AllowedSpecial"]
