"""Ranked suggestions: the query-log index, the model's scores of candidates, the ranker and
the filters. A model directory's `ranking/` folder holds the index, `ranker.keras` and
`ranking.json` (threshold, features, figures); `python -m mtn_keras.rank` builds it."""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from mtn_keras.base.outputs import staged_directory
from mtn_keras.ranking.log_index import QueryLogIndex

if TYPE_CHECKING:
    import keras

FOLDER = "ranking"
Threshold = TypeVar("Threshold")  # a float; in load_ranking, ranking.json's unchecked values


@dataclass
class Ranking:
    """A model's query-log index, ranker (a Keras model; None while it is being fitted)
    and default confidence thresholds: `threshold` for a session without the user's
    history, `history_threshold` with one (None: the same), where the ranker is surer."""

    index: QueryLogIndex
    ranker: keras.Model | None = None
    threshold: float = 0.0
    info: dict[str, Any] | None = None
    history_threshold: float | None = None

    def save(self, model_dir: str) -> None:
        """Writes MODEL_DIR/ranking, replacing the previous one only once this one is whole."""
        with staged_directory(os.path.join(model_dir, FOLDER), "ranking") as folder:
            self.index.save(folder)
            assert self.ranker is not None, "a Ranking is saved once its ranker is fitted"
            self.ranker.save(os.path.join(folder, "ranker.keras"))
            with open(os.path.join(folder, "ranking.json"), "w") as handle:
                thresholds = {"threshold": self.threshold}
                if self.history_threshold is not None:
                    thresholds["history_threshold"] = self.history_threshold
                json.dump({**(self.info or {}), **thresholds}, handle, indent=2)


def thresholds(
    threshold: Threshold,
    history_threshold: Threshold | None = None,
    given: Threshold | None = None,
) -> tuple[Threshold, Threshold]:
    """The (threshold, history threshold) a ranking shows with: the `given` one
    (DecodeConfig.threshold, `--threshold`) for both when there is one, else the ranking's,
    a missing history threshold being the plain one."""
    if given is not None:
        return given, given
    return threshold, threshold if history_threshold is None else history_threshold


def load_ranking(model_dir: str) -> Ranking | None:
    """The Ranking of a model directory, or None when it has none. Raises ValueError naming
    the file when one is damaged."""
    folder = os.path.join(model_dir, FOLDER)
    if not os.path.isdir(folder):
        return None
    from mtn_keras.base.keras_file import load_keras
    from mtn_keras.ranking.features import FEATURES

    try:
        with open(os.path.join(folder, "ranking.json")) as handle:
            info = json.load(handle)
        read = info if isinstance(info, dict) else {}
        threshold, history_threshold = thresholds(
            read.get("threshold"), read.get("history_threshold")
        )
        for name, value in (("threshold", threshold), ("history_threshold", history_threshold)):
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 <= value <= 1
            ):
                raise ValueError(f"ranking.json: the {name} is {value!r}, not a number in [0, 1]")
        fitted = info.get("features")
        if fitted is not None and fitted != list(FEATURES):
            raise ValueError(
                f"the ranker was fitted on {len(fitted)} features, this version ranks with "
                f"{len(FEATURES)} (run `python -m mtn_keras.rank --model {model_dir}` again)"
            )
        index = QueryLogIndex.load(folder)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as error:
        raise ValueError(f"{folder}: unreadable ranking ({error})") from None
    ranker = load_keras(os.path.join(folder, "ranker.keras"))
    return Ranking(index, ranker, float(threshold), info, float(history_threshold))
