"""XLA set up for answering, shared by `mtn-tui` and `suggest`: compilations kept on disk,
compiled at LLVM's optimisation level 1, and the SavedModel's graphs run as exported.

The first call of a SavedModel's search compiles it with XLA (seconds); with the cache a later
process reads the compiled code instead. Level 1 (of 0 to 3, XLA's default 2) compiles the
bundled model's search sooner for the same calls' latency and the same suggestions; the
figures and their command are in docs/performance.md ("XLA").
"""

import hashlib
import os
import re
from pathlib import Path
from types import ModuleType

LEVEL = "--xla_backend_optimization_level=1"
CACHE_FLAG = "--tf_xla_persistent_cache_directory"  # TF_XLA_FLAGS's: where compilations stay


def cache_home() -> Path:
    """The project's folder in the user's cache (~/.cache/mtn-keras, XDG_CACHE_HOME honoured):
    XLA's compilations go to its `xla` folder, the app's native log beside it."""
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mtn-keras"


def set_up_xla() -> None:
    """Keep XLA's compilations in ~/.cache/mtn-keras/xla (XDG_CACHE_HOME honoured) unless
    TF_XLA_FLAGS is set, and compile at level 1 unless XLA_FLAGS sets a level; call it before
    TensorFlow compiles anything. Without a writable folder, every start compiles."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "--xla_backend_optimization_level" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} {LEVEL}".strip()
    cache = cache_home() / "xla"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    os.environ.setdefault("TF_XLA_FLAGS", f"{CACHE_FLAG}={cache}")


def cache_folder() -> Path | None:
    """The folder XLA keeps its compilations in (TF_XLA_FLAGS), or None when it keeps none."""
    found = re.search(rf"{CACHE_FLAG}=(\S+)", os.environ.get("TF_XLA_FLAGS", ""))
    return Path(found.group(1)) if found else None


def _marker(model: Path, signature: str) -> Path | None:
    """The file that says `signature` of the SavedModel at `model` was compiled into the
    cache: named by the model's fingerprint, the signature and the XLA flags."""
    folder = cache_folder()
    try:
        fingerprint = (model / "fingerprint.pb").read_bytes()
    except OSError:
        return None
    if folder is None:
        return None
    key = b"\0".join([fingerprint, signature.encode(), os.environ.get("XLA_FLAGS", "").encode()])
    return folder / f"mtn-keras-compiled-{hashlib.sha256(key).hexdigest()[:32]}"


def compiled_before(model: Path, signature: str) -> bool:
    """Whether an earlier process compiled `signature` of the SavedModel at `model` into the
    cache, so that its first call reads the compiled code instead of compiling."""
    marker = _marker(model, signature)
    return marker is not None and marker.exists()


def mark_compiled(model: Path, signature: str) -> None:
    """Note that `signature` of the SavedModel at `model` is now in the cache."""
    marker = _marker(model, signature)
    if marker is not None:
        try:
            marker.touch()
        except OSError:
            pass  # an unwritable cache: the next start compiles, and says so


def skip_graph_rewrites(tf: ModuleType) -> None:
    """Run graphs as they were exported, without Grappler's rewriting; call it before the first
    call. Grappler's rewriting of the bundled model's signature made every process's first call
    slower, cache or not, and later calls no faster within the noise: a person waits on the
    start (figures and their commands: docs/performance.md, "Start-up")."""
    tf.config.optimizer.set_experimental_options({"disable_meta_optimizer": True})
