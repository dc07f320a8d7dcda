"""Reading a trained model directory (model.keras, vocab.txt, config.json) with clear errors."""

import json
import os
import zipfile
from dataclasses import dataclass

from mtn_keras.config import ModelConfig, model_config_from_dict
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.quiet import import_tensorflow


class ModelDirError(Exception):
    """A model directory that is missing, incomplete or corrupt; says what and where."""


@dataclass
class TrainedModel:
    name: str
    model: object
    vocab: Vocabulary
    config: ModelConfig
    path: str
    data_dir: str | None = None
    ranking: object = None  # a mtn_keras.ranking.Ranking, when the directory has one


def load_trained(path, ranking=True):
    """The Keras model, vocabulary and config saved by `python -m mtn_keras.train`, and
    its ranking (`python -m mtn_keras.rank`) when it has one and `ranking` is on."""
    if not os.path.isdir(path):
        raise ModelDirError(f"{path}: no such model directory")
    files = {name: os.path.join(path, name) for name in ("model.keras", "vocab.txt", "config.json")}
    for name, file in files.items():
        if not os.path.isfile(file):
            raise ModelDirError(f"{path}: {name} is missing (not a directory written by mtn_keras.train)")
    try:
        with open(files["config.json"], encoding="utf-8") as handle:
            saved = json.load(handle)
        config = model_config_from_dict(saved["model_config"])
    except (ValueError, KeyError) as error:
        raise ModelDirError(f"{files['config.json']}: unreadable config ({error})") from None
    try:
        vocab = Vocabulary.load(files["vocab.txt"])
    except ValueError as error:
        raise ModelDirError(str(error)) from None
    if len(vocab) != config.vocab_size:
        raise ModelDirError(
            f"{path}: vocab.txt has {len(vocab)} tokens but the model was built for {config.vocab_size}"
        )
    import_tensorflow()  # silently, unless the command was asked for TensorFlow's logs
    import keras

    import mtn_keras.models  # noqa: F401  (registers the layers and models)

    if not zipfile.is_zipfile(files["model.keras"]):
        raise ModelDirError(
            f"{files['model.keras']}: cannot load the model (not a .keras archive: truncated or corrupt)"
        )
    try:
        model = keras.saving.load_model(files["model.keras"], compile=False)
    except Exception as error:  # Keras raises many kinds for a damaged archive
        reason = " ".join(str(error).split())[:300]
        raise ModelDirError(f"{files['model.keras']}: cannot load the model ({reason})") from None
    data_dir = saved.get("data")
    if data_dir and not os.path.isfile(os.path.join(data_dir, "train.tsv")):
        data_dir = None
    found = None
    if ranking:
        from mtn_keras.ranking import load_ranking

        try:
            found = load_ranking(path)
        except ValueError as error:
            raise ModelDirError(str(error)) from None
    return TrainedModel(saved.get("model", "mtn"), model, vocab, config, path, data_dir, found)
