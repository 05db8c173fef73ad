"""Counting and encoding on a Dask cluster.

Counting is the part of training that reads the corpus, so it is the part that spreads: each
partition is counted by the Rust counter on a worker (no Python object per word; the worker
returns one binary table), and the partial tables are summed in a tree of merges. Merging is
associative and commutative down to the bytes (:mod:`subwords.counts`), so the table -- and the
model trained on it -- is the same for 1, 2 or 800 workers, whatever the partitioning and
whatever order the merges finish in. Training then runs on one machine from the table: the
merge loop's memory grows with distinct units, not with the corpus.

    import subwords, subwords.dask
    table = subwords.dask.count(["s3://bucket/corpus/*.txt.gz"], spelling="front",
                                scheduler="tcp://scheduler:8786")
    tok = subwords.train(table, model="bpe", spelling="front", vocab_size=32000)

Without ``scheduler`` (or ``client``) a :class:`distributed.LocalCluster` with ``workers``
processes is started for the call and closed after it. Inputs are read through fsspec, so local
paths, globs and -- with ``s3fs`` or ``gcsfs`` installed -- ``s3://`` and ``gs://`` URLs work;
``.gz``/``.bz2``/``.xz``/``.zst`` files are decompressed by fsspec (one partition per
compressed file). JSON lines and Parquet (and Arrow) files, the other formats ``train`` reads,
are read on the workers by subwords' own readers, one partition per file (``text_field`` and
``text_column`` name the text as in :func:`subwords.inputs.texts`); they must be paths the
workers can open (local, or on a shared filesystem). A Dask bag of strings is taken as it is.
See ``docs/SCALE.md`` for running on a real cluster.

Needs the ``dask`` extra: ``pip install "subwords[dask]"``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Sequence
from typing import Any, Optional, Union

from . import _core
from .counts import CountTable
from .errors import InputError, OptionError

__all__ = ["count", "encode"]

#: Bytes per partition when reading uncompressed text files.
BLOCKSIZE = 64 << 20


def _need_dask() -> Any:
    # imported by name, so that type checkers do not walk into Dask's own sources (which need a
    # newer Python than subwords supports)
    try:
        bag = importlib.import_module("dask.bag")
        distributed = importlib.import_module("distributed")
    except ImportError as e:
        raise OptionError(
            f"subwords.dask needs Dask and dask.distributed, which are not installed ({e.name}): "
            'pip install "subwords[dask]"'
        ) from None
    return bag, distributed


def _line_text(line: str) -> str:
    # a file line as the file reader sees it: the newline (and a CR before it) is a separator
    if line.endswith("\n"):
        line = line[:-1]
    if line.endswith("\r"):
        line = line[:-1]
    return line


def _count_partition(lines: Iterable[str], options: dict[str, Any]) -> list[bytes]:
    c = _core.Counter(options["count"], 1)
    batch: list[str] = []
    size = 0
    for line in lines:
        if not isinstance(line, str):
            raise InputError(f"a Dask partition holds a {type(line).__name__}, not a str; give a bag of texts")
        batch.append(_line_text(line) if options["lines"] else line)
        size += len(line)
        if size >= 1 << 22:
            c.feed_texts(batch)
            batch, size = [], 0
    if batch:
        c.feed_texts(batch)
    return [c.finish().to_bytes()]


#: The suffixes (after an optional .gz/.zst) of the record formats read by subwords' own readers.
_RECORD_SUFFIXES = (".jsonl", ".ndjson", ".parquet", ".pq", ".arrow", ".feather", ".ipc")


def _is_record_file(name: str) -> bool:
    low = name.lower()
    for z in (".gz", ".gzip", ".zst", ".zstd"):
        if low.endswith(z):
            low = low[: -len(z)]
            break
    return low.endswith(_RECORD_SUFFIXES)


def _record_files(inputs: Any) -> Optional[list[str]]:
    """The files ``inputs`` name when one of them is JSON lines, Parquet or Arrow (all are then
    read by subwords' readers, one partition per file, in the order local reading takes), else
    None (text through fsspec, as before)."""
    if hasattr(inputs, "map_partitions"):
        return None
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if not isinstance(inputs, Sequence) or not inputs:
        return None
    names: list[Any] = [os.fspath(p) for p in inputs]
    if any(not isinstance(n, str) or "://" in n for n in names) or not any(_is_record_file(n) for n in names):
        return None
    from .inputs._detect import expand

    files = expand(names)
    return files if any(_is_record_file(f) for f in files) else None


def _count_files(paths: Iterable[str], options: dict[str, Any]) -> list[bytes]:
    # the same feeding as subwords.count on these paths: the same texts, the same text count
    from . import _api, inputs

    c = _core.Counter(options["count"], 1)
    for path in paths:
        inputs.texts(path, text_field=options["text_field"], text_column=options["text_column"]).feed(
            c, "strict", _api._feed_batch)
    return [c.finish().to_bytes()]


def _merge_bytes(parts: Iterable[Any]) -> bytes:
    out = None
    for p in parts:
        for blob in (p if isinstance(p, list) else [p]):
            t = _core.CountTable.from_bytes(blob)
            out = t if out is None else out.merge(t)
    if out is None:
        raise InputError("there was nothing to count: the inputs matched no file or held no partition")
    return out.to_bytes()


def _client(distributed: Any, scheduler: Optional[str], workers: Optional[int], client: Any) -> tuple[Any, Any]:
    if client is not None:
        return client, None
    if scheduler is not None:
        return distributed.Client(scheduler), None
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= 1024):
        raise OptionError(f"workers must be a whole number from 1 to 1024, got {workers!r}")
    # on this machine only, with no dashboards: nothing listens beyond 127.0.0.1
    cluster = distributed.LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       scheduler_port=0, dashboard_address=None, worker_dashboard_address=None)
    return distributed.Client(cluster), cluster


def _bag(bag_mod: Any, inputs: Any, blocksize: int) -> tuple[Any, bool]:
    if hasattr(inputs, "map_partitions") and hasattr(inputs, "npartitions"):
        return inputs, False
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    if not isinstance(inputs, Sequence) or not inputs:
        raise InputError("give subwords.dask.count paths, globs or URLs of text files, or a Dask bag of texts")
    urls = [os.fspath(p) for p in inputs]
    compressed = any(u.endswith((".gz", ".bz2", ".xz", ".zst", ".lzma")) for u in urls)
    try:
        bag = bag_mod.read_text(urls, blocksize=None if compressed else blocksize, compression="infer",
                                encoding="utf-8", errors="strict")
    except (FileNotFoundError, OSError) as e:
        raise InputError(f"cannot read the inputs {urls!r}: {e}") from None
    return bag, True


def count(inputs: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]], Any], *,
          scheduler: Optional[str] = None, workers: Optional[int] = None, client: Any = None,
          blocksize: int = BLOCKSIZE, split_every: int = 8, spelling: Optional[str] = None, mark: Optional[str] = None,
          split_at_marks: bool = True, pre_split: Optional[str] = None, lowercase: bool = False,
          strip_accents: bool = False, clean_text: bool = False, text_field: Optional[str] = None,
          text_column: Optional[str] = None, normalize: Optional[str] = None,
          split_digits: Optional[int] = None, superword_pattern: Optional[str] = None,
          preset: Optional[str] = None, superword_pieces: Optional[str] = None,
          count_on: Optional[str] = None) -> CountTable:
    """Counts ``inputs`` (paths, globs or URLs of UTF-8 text files, one text per line; paths of
    JSON lines or Parquet files; or a Dask bag of texts) on a Dask cluster and returns the summed
    :class:`~subwords.counts.CountTable`.

    The spelling options are :func:`subwords.count`'s (``pre_split`` a name or a pattern,
    ``normalize``, ``split_digits`` among them); ``text_field`` (JSON lines) and
    ``text_column`` (Parquet, Arrow) are :func:`subwords.inputs.texts`'. The result is
    byte-identical to ``subwords.count`` on the same inputs. ``superword_pattern``, ``preset``,
    ``superword_pieces`` and ``count_on`` are :func:`subwords.count`'s too: with
    ``preset="superbpe"`` the workers count SuperBPE's spans beside the units, with
    ``preset="boundless"`` BoundlessBPE's span runs (or pairs), and the merge sums them.
    """
    from . import _api

    bag_mod, distributed = _need_dask()
    if isinstance(split_every, bool) or not isinstance(split_every, int) or split_every < 2:
        raise OptionError(f"split_every must be a whole number from 2, got {split_every!r}")
    if isinstance(blocksize, bool) or not isinstance(blocksize, int) or blocksize < 1 << 12:
        raise OptionError(f"blocksize must be a number of bytes from 4096, got {blocksize!r}")
    # checked here, before any worker starts, so a bad option fails fast and plainly
    o = _api._count_preset(preset, dict(spelling=spelling, mark=mark, split_at_marks=split_at_marks,
                                        pre_split=pre_split, lowercase=lowercase, strip_accents=strip_accents,
                                        clean_text=clean_text, normalize=normalize, split_digits=split_digits,
                                        superword_pattern=superword_pattern))
    count_options = _api._count_options(o["spelling"], o["mark"], o["split_at_marks"], o["pre_split"], o["lowercase"],
                                       o["strip_accents"], o["clean_text"], "strict", o["normalize"],
                                       o["split_digits"], o["superword_pattern"],
                                       _api._count_boundless(preset, superword_pieces, count_on))
    _core.Counter(count_options, 1)
    files = _record_files(inputs)
    if files is not None:
        from . import inputs as inputs_mod

        inputs_mod.texts(files, text_field=text_field, text_column=text_column)  # the options, checked here
    elif text_field is not None or text_column is not None:
        raise OptionError("text_field and text_column name the text in JSON lines and Parquet/Arrow files; "
                          "these inputs hold none")
    c, cluster = _client(distributed, scheduler, workers, client)
    try:
        if files is not None:
            options: dict[str, Any] = {"count": count_options, "text_field": text_field, "text_column": text_column}
            partial = bag_mod.from_sequence(files, npartitions=len(files)).map_partitions(_count_files, options)
        else:
            bag, lines = _bag(bag_mod, inputs, blocksize)
            options = {"count": count_options, "lines": lines}
            partial = bag.map_partitions(_count_partition, options)
        total = partial.reduction(_merge_bytes, _merge_bytes, split_every=split_every)
        try:
            blob = c.compute(total).result()
        except UnicodeDecodeError as e:
            raise InputError(f"an input file is not valid UTF-8 ({e}); convert it to UTF-8") from None
        except FileNotFoundError as e:
            raise InputError(f"cannot read an input: {e}") from None
    finally:
        if client is None:
            c.close()
        if cluster is not None:
            cluster.close()
    return CountTable.from_bytes(blob)


def _encode_partition(texts: Iterable[str], tokenizer: Any, folder: str, lines: bool, index: int) -> list[str]:
    np: Any = importlib.import_module("numpy")

    batch = [_line_text(t) if lines else t for t in texts]
    ids = tokenizer.encode_batch(batch, threads=1)
    lengths = np.fromiter((len(x) for x in ids), dtype=np.uint64, count=len(ids))
    offsets = np.zeros(len(ids) + 1, dtype=np.uint64)
    np.cumsum(lengths, out=offsets[1:])
    dtype = np.uint16 if tokenizer.vocab_size <= 1 << 16 else np.uint32
    flat = np.fromiter((i for x in ids for i in x), dtype=dtype, count=int(offsets[-1]))
    base = os.path.join(folder, f"part-{index:05d}")
    np.save(base + ".ids.npy", flat)
    np.save(base + ".offsets.npy", offsets)
    return [base + ".ids.npy"]


def encode(inputs: Any, tokenizer: Any, folder: Union[str, "os.PathLike[str]"], *, scheduler: Optional[str] = None,
           workers: Optional[int] = None, client: Any = None, blocksize: int = BLOCKSIZE) -> list[str]:
    """Encodes ``inputs`` (as :func:`count` takes them) with ``tokenizer`` on a Dask cluster and
    writes one shard per partition into ``folder``: ``part-NNNNN.ids.npy`` (every text's ids, one
    after another; uint16 when the vocabulary fits, else uint32) and ``part-NNNNN.offsets.npy``
    (uint64, text ``k`` is ``ids[offsets[k]:offsets[k + 1]]``). Returns the ids files in order.
    The tokenizer is sent to every worker once; ids equal local ``encode_batch``'s."""
    bag_mod, distributed = _need_dask()
    try:
        importlib.import_module("numpy")
    except ImportError:
        raise OptionError('subwords.dask.encode writes numpy shards and needs numpy: pip install "subwords[dask]"') from None
    folder = os.fspath(folder)
    os.makedirs(folder, exist_ok=True)
    c, cluster = _client(distributed, scheduler, workers, client)
    try:
        bag, lines = _bag(bag_mod, inputs, blocksize)
        tok = c.scatter(tokenizer, broadcast=True)
        parts = bag.to_delayed()
        delayed = importlib.import_module("dask").delayed
        jobs = [delayed(_encode_partition)(p, tok, folder, lines, i) for i, p in enumerate(parts)]
        out = c.compute(jobs, sync=True)
    finally:
        if client is None:
            c.close()
        if cluster is not None:
            cluster.close()
    return [path for shard in out for path in shard]
