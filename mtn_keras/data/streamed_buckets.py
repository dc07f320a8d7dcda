"""A split file's buckets (encode.py's arrays, one bucket per number of queries S) encoded
once, a chunk of sessions at a time, into .npy files beside the split, then memory-mapped:
a batch reads its own rows from disk, and memory never holds the split or all its arrays.

The files lie in DIR/streamed/SPLIT-KEY/ (DIR the split's folder), KEY a hash of what changes
them: the split file's size and modification time, the vocabulary, max_tokens and this
format's version. A changed input gets a new folder; an old one is left and may be deleted.
One process builds a folder at a time (a lock beside it), under a temporary name renamed
into place when whole, so that workers starting together build it once.
"""

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator

import numpy as np

from mtn_keras.base.outputs import staged_directory
from mtn_keras.data.encode import encode_buckets
from mtn_keras.data.prepared import iter_sessions
from mtn_keras.data.vocab import Vocabulary

VERSION = 1
CHUNK = 4096  # sessions encoded at once
META = "meta.json"
DTYPES: dict[str, np.dtype] = {
    "session_tokens": np.dtype(np.int32),
    "session_ext": np.dtype(np.int32),
    "decoder_input": np.dtype(np.int32),
    "target": np.dtype(np.int32),
    "line": np.dtype(np.int64),
}

# A bucket's arrays by name, as encode_buckets makes them.
Bucket = dict[str, np.ndarray]


class StreamedBatchesError(ValueError):
    """A streamed batches folder that cannot be read as written; names the file."""


def streamed_buckets(
    path: str | os.PathLike, vocab: Vocabulary, max_tokens: int
) -> tuple[list[Bucket], int]:
    """The buckets of the split file `path`, in increasing S, memory-mapped from their
    folder (built first when it is not there), and how many sessions the file holds."""
    folder = cache_folder(path, vocab, max_tokens)
    try:
        os.makedirs(os.path.dirname(folder), exist_ok=True)
        with _held(folder + ".lock"):
            if not os.path.isfile(os.path.join(folder, META)):
                with staged_directory(folder, "write") as temp:
                    write_buckets(path, vocab, max_tokens, temp)
    except PermissionError as error:
        raise OSError(
            f"{error.filename}: cannot write the streamed batches of {path} there "
            f"({error.strerror}); train on a copy of the dataset in a folder you can write"
        ) from None
    return open_buckets(folder, max_tokens)


def cache_folder(path: str | os.PathLike, vocab: Vocabulary, max_tokens: int) -> str:
    """The folder of the split file's streamed buckets for this vocabulary and width."""
    key = hashlib.sha256()
    for part in (VERSION, *_stamp(path), max_tokens, *vocab.tokens):
        key.update(f"{part}\n".encode())
    directory, name = os.path.split(os.path.abspath(path))
    stem = os.path.splitext(name)[0]
    return os.path.join(directory, "streamed", f"{stem}-{key.hexdigest()[:16]}")


def write_buckets(path: str | os.PathLike, vocab: Vocabulary, max_tokens: int, folder: str) -> None:
    """Encodes the split file into `folder`: one .npy file per bucket and array, and
    meta.json (the buckets' sizes). Two passes: one counts each bucket's sessions (an
    .npy header holds its shape), the other encodes CHUNK sessions at a time and appends
    their rows. Raises ValueError if the file changed between the passes."""
    stamp = _stamp(path)
    counts: dict[int, int] = {}
    sessions = 0
    for queries in iter_sessions(path):
        sessions += 1
        if len(queries) >= 2:
            counts[len(queries)] = counts.get(len(queries), 0) + 1
    sizes = sorted(counts.items())
    with contextlib.ExitStack() as files:
        handles = {
            (s, key): files.enter_context(_npy_writer(folder, s, key, shape))
            for s, count in sizes
            for key, shape in shapes(s, count, max_tokens).items()
        }
        written = dict.fromkeys(counts, 0)
        for first, chunk in _chunks(path):
            for s, arrays in encode_buckets(chunk, vocab, max_tokens).items():
                if s not in written:
                    raise ValueError(f"{path} changed while its batches were written")
                arrays["line"] += first
                for key, array in arrays.items():
                    handles[s, key].write(array.astype(DTYPES[key], copy=False).tobytes())
                written[s] += len(arrays["line"])
    if written != counts or _stamp(path) != stamp:
        raise ValueError(f"{path} changed while its batches were written")
    meta = {"version": VERSION, "sessions": sessions, "buckets": sizes}
    with open(os.path.join(folder, META), "w", encoding="utf-8") as handle:
        json.dump(meta, handle)


def open_buckets(folder: str, max_tokens: int) -> tuple[list[Bucket], int]:
    """The buckets written in `folder`, memory-mapped read-only, and the split's number of
    sessions. Raises StreamedBatchesError naming a file that is missing or damaged."""
    meta_path = os.path.join(folder, META)
    try:
        with open(meta_path, encoding="utf-8") as handle:
            meta = json.load(handle)
        sizes = [(int(s), int(count)) for s, count in meta["buckets"]]
        sessions = int(meta["sessions"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise _damaged(meta_path, folder, error) from None
    buckets = []
    for s, count in sizes:
        bucket = {}
        for key, shape in shapes(s, count, max_tokens).items():
            file = _npy_path(folder, s, key)
            try:
                array = np.load(file, mmap_mode="r")
            except (OSError, ValueError) as error:
                raise _damaged(file, folder, error) from None
            if array.shape != shape or array.dtype != DTYPES[key]:
                found = f"{array.dtype} {array.shape}, not {DTYPES[key]} {shape}"
                raise _damaged(file, folder, found)
            bucket[key] = array
        buckets.append(bucket)
    return buckets, sessions


def shapes(s: int, count: int, max_tokens: int) -> dict[str, tuple[int, ...]]:
    """The shape of each array of a bucket of `count` sessions of `s` queries."""
    n = max_tokens
    return {
        "session_tokens": (count, s, n),
        "session_ext": (count, s, n),
        "decoder_input": (count, s - 1, n + 1),
        "target": (count, s - 1, n + 1),
        "line": (count,),
    }


def _damaged(file: str, folder: str, reason: object) -> StreamedBatchesError:
    return StreamedBatchesError(
        f"{file}: damaged streamed batches ({reason}); delete {folder} and train again "
        "to build them anew"
    )


def _stamp(path: str | os.PathLike) -> tuple[int, int]:
    stat = os.stat(path)
    return stat.st_size, stat.st_mtime_ns


def _npy_path(folder: str, s: int, key: str) -> str:
    return os.path.join(folder, f"s{s}-{key}.npy")


@contextlib.contextmanager
def _npy_writer(folder: str, s: int, key: str, shape: tuple[int, ...]) -> Iterator:
    """An open .npy file of this shape and key's dtype, its header written, for its rows."""
    with open(_npy_path(folder, s, key), "wb") as handle:
        header = {
            "descr": np.lib.format.dtype_to_descr(DTYPES[key]),
            "fortran_order": False,
            "shape": shape,
        }
        np.lib.format.write_array_header_1_0(handle, header)
        yield handle


def _chunks(path: str | os.PathLike) -> Iterator[tuple[int, list[list[str]]]]:
    """The split's sessions, CHUNK at a time, each chunk with its first session's index."""
    chunk: list[list[str]] = []
    first = 0
    for queries in iter_sessions(path):
        chunk.append(queries)
        if len(chunk) == CHUNK:
            yield first, chunk
            first, chunk = first + CHUNK, []
    if chunk:
        yield first, chunk


@contextlib.contextmanager
def _held(lock_path: str) -> Iterator[None]:
    """Holds an exclusive lock on `lock_path`, waiting for another holder to let it go."""
    with open(lock_path, "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
