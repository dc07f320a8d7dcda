"""Opening an exported SavedModel with plain TensorFlow, with errors that say what and where.

Shared by the client (`mtn_keras.load`, through which the commands and the app call a model)
and the server, so all accept the same paths: a SavedModel directory, a directory holding one
in `savedmodel/`, or `default`, the bundled model.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from mtn_keras.base.quiet import import_tensorflow

if TYPE_CHECKING:
    import numpy as np
    import tensorflow as tf
    from tensorflow.core.protobuf.meta_graph_pb2 import SignatureDef

# Those the app calls, and those `load` asks of a SavedModel unless told others.
APP_SIGNATURES = ("suggest", "complete", "session_attention")


class SuggestError(Exception):
    """Anything `mtn_keras.load` or a suggester refuses or fails at: bad input, a path that is
    no model, a SavedModel that cannot be loaded or called, an unreachable server, a failed
    call. The message says what and where.

    Example:
        >>> import mtn_keras
        >>> try:
        ...     mtn_keras.load("no/such/model")
        ... except mtn_keras.SuggestError as error:
        ...     print(error)
        No model at no/such/model: the path does not exist.
    """


DEFAULT = "default"  # the name of the bundled model, wherever it is installed


class Loaded(Protocol):
    """A SavedModel as `tf.saved_model.load` gives it, as read here: its signatures by name."""

    signatures: Mapping[str, tf.types.experimental.ConcreteFunction]


def bundled_model() -> Path:
    """The bundled model's SavedModel directory, found beside the library without naming the
    app: in a clone (installed editable or not at all) `saved_models/default/` beside
    `mtn_keras/`; installed from a wheel, the library's package data `mtn_keras/default_model/`
    (setup.py). Another model is handed in as a path."""
    package = Path(__file__).resolve().parents[1]
    clone = package.parent / "saved_models" / "default" / "savedmodel"
    installed = package / "default_model" / "savedmodel"
    return installed if installed.is_dir() and not clone.is_dir() else clone


def resolve(path: str | os.PathLike[str]) -> Path:
    """The SavedModel directory for `path`: the bundled model for the name `default` (a folder
    of that name is `./default`), `path/savedmodel` if it exists, else `path`."""
    if str(path) == DEFAULT:
        return bundled_model()
    path = Path(path).expanduser()
    return path / "savedmodel" if (path / "savedmodel").is_dir() else path


def model_name(model: str | os.PathLike[str]) -> str:
    """The name a model is shown and served by: `default` for the bundled one, else its
    folder's, or that of the folder holding its `savedmodel/`."""
    path = resolve(model).resolve()
    if path == bundled_model().resolve():
        return DEFAULT
    return path.parent.name if path.name == "savedmodel" else path.name


def kind(path: str | os.PathLike[str]) -> str:
    """ "trained" for a run folder written by `train` (it holds model.keras), "savedmodel" for an
    export; else a SuggestError that says what `path` lacks. No TensorFlow: a wrong path is
    reported at once, not after the seconds TensorFlow takes to import."""
    if str(path) != DEFAULT and (Path(path).expanduser() / "model.keras").is_file():
        return "trained"
    resolved = resolve(path)
    if not resolved.exists():
        raise SuggestError(f"No model at {path}: the path does not exist.")
    if not (resolved / "saved_model.pb").is_file():
        raise SuggestError(
            f"{path} is neither a run folder of train (no model.keras) nor a "
            "SavedModel (no saved_model.pb)."
        )
    return "savedmodel"


def export_settings(path: Path) -> dict[str, Any]:
    """The decoding settings the SavedModel at `path` (already resolved) was exported with,
    from its export.json; {} for an export without one."""
    try:
        return json.loads((path / "export.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def check(path: Path) -> None:
    """Raise a SuggestError unless `path` (already resolved) holds a SavedModel; no
    TensorFlow."""
    if not path.exists():
        raise SuggestError(f"No model at {path}: the path does not exist.")
    if not (path / "saved_model.pb").is_file():
        raise SuggestError(f"{path} is not a SavedModel: it has no saved_model.pb.")
    if (path / "saved_model.pb").stat().st_size == 0:
        raise SuggestError(f"{path}/saved_model.pb is empty (a truncated or failed copy).")


def load(path: Path, signatures: Sequence[str] = APP_SIGNATURES) -> tuple[Loaded, float]:
    """The SavedModel at `path` (already resolved) and the seconds `tf.saved_model.load` took.

    Raises a SuggestError when the path is not a SavedModel or lacks `signatures`.
    """
    check(path)
    tf = import_tensorflow()
    start = time.perf_counter()
    try:
        loaded = tf.saved_model.load(str(path))
    except Exception as error:  # a corrupt file can fail in protobuf, IO or TensorFlow
        raise SuggestError(f"Cannot load the SavedModel at {path}: {error}") from error
    missing = [name for name in signatures if name not in loaded.signatures]
    if missing:
        raise SuggestError(
            f"The SavedModel at {path} lacks the signature(s) {', '.join(missing)}; "
            f"it has {', '.join(loaded.signatures) or 'none'}."
        )
    return loaded, time.perf_counter() - start


def signature_defs(path: Path) -> dict[str, SignatureDef]:
    """The SignatureDefs of the SavedModel at `path` by name, as `saved_model_cli show` lists
    them (TensorFlow's internal `__saved_model_init_op` left out); read from saved_model.pb."""
    from tensorflow.core.protobuf import saved_model_pb2

    model = saved_model_pb2.SavedModel.FromString((Path(path) / "saved_model.pb").read_bytes())
    defs = model.meta_graphs[0].signature_def
    return {key: value for key, value in defs.items() if not key.startswith("__")}


def call(loaded: Loaded, path: Path, name: str, **inputs: tf.Tensor) -> dict[str, np.ndarray]:
    """The outputs of signature `name` as numpy arrays; any failure as a SuggestError."""
    try:
        outputs = loaded.signatures[name](**inputs)
        return {key: value.numpy() for key, value in outputs.items()}
    except Exception as error:  # TensorFlow raises many types; callers show them all alike
        raise SuggestError(f"The model at {path} failed in `{name}`: {error}") from error
