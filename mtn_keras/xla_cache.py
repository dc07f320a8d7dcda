"""The XLA compilations of an exported model kept on disk, shared by `mtn-tui` and `suggest`.

The first call of a SavedModel's search compiles it with XLA (seconds); with the cache a later
process reads the compiled code instead.
"""

import os
from pathlib import Path


def keep_xla_compilations() -> None:
    """Keep XLA's compilations in ~/.cache/mtn-keras/xla (XDG_CACHE_HOME honoured), unless
    TF_XLA_FLAGS is set; call it before TensorFlow compiles anything. Without a writable
    folder, nothing is kept and every start compiles."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "mtn-keras" / "xla"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    os.environ.setdefault("TF_XLA_FLAGS", f"--tf_xla_persistent_cache_directory={cache}")
