"""Opening an exported SavedModel with plain TensorFlow, with errors that say what and where.

Shared by `mtn-tui` and `python -m mtn_keras.suggest`, so both accept the same paths: a
SavedModel directory, or a directory holding one in `savedmodel/`.
"""

import time
from pathlib import Path

from mtn_keras.quiet import import_tensorflow

SIGNATURES = ("suggest", "complete", "session_attention")


class SavedModelError(Exception):
    """A SavedModel that cannot be loaded or called; the message says what went wrong and where."""


def resolve(path: str | Path) -> Path:
    """The SavedModel directory for `path`: `path/savedmodel` if it exists, else `path`."""
    path = Path(path).expanduser()
    return path / "savedmodel" if (path / "savedmodel").is_dir() else path


def check(path: Path) -> None:
    """Raise a SavedModelError unless `path` (already resolved) holds a SavedModel; no TensorFlow."""
    if not path.exists():
        raise SavedModelError(f"No model at {path}: the path does not exist.")
    if not (path / "saved_model.pb").is_file():
        raise SavedModelError(f"{path} is not a SavedModel: it has no saved_model.pb.")


def load(path: Path, signatures=SIGNATURES):
    """The SavedModel at `path` (already resolved) and the seconds `tf.saved_model.load` took.

    Raises a SavedModelError when the path is not a SavedModel or lacks `signatures`.
    """
    check(path)
    tf = import_tensorflow()
    start = time.perf_counter()
    try:
        loaded = tf.saved_model.load(str(path))
    except Exception as error:  # a corrupt file can fail in protobuf, IO or TensorFlow
        raise SavedModelError(f"Cannot load the SavedModel at {path}: {error}") from error
    missing = [name for name in signatures if name not in loaded.signatures]
    if missing:
        raise SavedModelError(
            f"The SavedModel at {path} lacks the signature(s) {', '.join(missing)}; "
            f"it has {', '.join(loaded.signatures) or 'none'}."
        )
    return loaded, time.perf_counter() - start


def call(loaded, path: Path, name: str, **inputs) -> dict:
    """The outputs of signature `name` as numpy arrays; any failure as a SavedModelError."""
    try:
        outputs = loaded.signatures[name](**inputs)
        return {key: value.numpy() for key, value in outputs.items()}
    except Exception as error:  # TensorFlow raises many types; callers show them all alike
        raise SavedModelError(f"The model at {path} failed in `{name}`: {error}") from error
