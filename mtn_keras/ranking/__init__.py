"""Ranked suggestions: the query-log index, the model's scores of candidates, the ranker and
the filters. A model directory's `ranking/` folder holds the index, `ranker.keras` and
`ranking.json` (threshold, features, figures); `python -m mtn_keras.rank` builds it."""

import json
import os
from dataclasses import dataclass

from mtn_keras.ranking.log_index import QueryLogIndex

FOLDER = "ranking"


@dataclass
class Ranking:
    """A model's query-log index, ranker (a Keras model; None while it is being fitted)
    and default confidence threshold."""

    index: QueryLogIndex
    ranker: object = None
    threshold: float = 0.0
    info: dict = None

    def save(self, model_dir):
        folder = os.path.join(model_dir, FOLDER)
        self.index.save(folder)
        self.ranker.save(os.path.join(folder, "ranker.keras"))
        with open(os.path.join(folder, "ranking.json"), "w") as handle:
            json.dump({**(self.info or {}), "threshold": self.threshold}, handle, indent=2)


def load_ranking(model_dir):
    """The Ranking of a model directory, or None when it has none. Raises ValueError naming
    the file when one is damaged."""
    folder = os.path.join(model_dir, FOLDER)
    if not os.path.isdir(folder):
        return None
    import keras

    try:
        with open(os.path.join(folder, "ranking.json")) as handle:
            info = json.load(handle)
        index = QueryLogIndex.load(folder)
        ranker = keras.saving.load_model(os.path.join(folder, "ranker.keras"), compile=False)
    except (OSError, ValueError, KeyError) as error:
        raise ValueError(f"{folder}: unreadable ranking ({error})") from None
    return Ranking(index, ranker, float(info["threshold"]), info)
