"""Loading a .keras file with an error that names the file, for models and rankers alike."""

import os
import zipfile
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import keras


def load_keras(path: str | os.PathLike) -> "keras.Model":
    """The Keras model in the .keras file `path`, uncompiled. Raises ValueError naming the
    file and what is wrong (Keras says "File not found" of a file that is only truncated)."""
    import keras

    if not zipfile.is_zipfile(path):
        raise ValueError(
            f"{path}: cannot load the model (not a .keras archive: truncated or corrupt)"
        )
    try:
        return keras.saving.load_model(path, compile=False)
    except Exception as error:  # Keras raises many kinds for a damaged archive
        reason = " ".join(str(error).split())[:300]
        raise ValueError(f"{path}: cannot load the model ({reason})") from None
