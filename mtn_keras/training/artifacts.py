"""A trained model directory (model.keras, vocab.txt, config.json): config.json's one
definition, and reading the directory with clear errors."""

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mtn_keras.base.config import ModelConfig, TrainConfig, model_config_from_dict
from mtn_keras.base.keras_file import load_keras
from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.serving.savedmodel import DEFAULT, bundled_model

if TYPE_CHECKING:
    import keras

    from mtn_keras.ranking import Ranking

CONFIG = "config.json"


class ModelDirError(Exception):
    """A model directory that is missing, incomplete or corrupt; says what and where."""


def run_config(
    name: str,
    model_config: ModelConfig,
    train_config: TrainConfig,
    data_dir: str | None = None,
    run_dir: str = ".",
) -> dict[str, Any]:
    """config.json: the model's name and configs, and the prepared dataset it learns from
    (its path relative to the run folder `run_dir`: data_entry). Written once, when
    training starts; `--resume` must match it."""
    return {
        "model": name,
        "data": data_entry(data_dir, run_dir),
        "model_config": dataclasses.asdict(model_config),
        "train_config": dataclasses.asdict(train_config),
    }


def data_entry(data_dir: str | None, run_dir: str) -> str | None:
    """config.json's "data": the prepared dataset's path relative to the run folder, so that
    the file names no machine path and the two folders move together."""
    return data_dir and os.path.relpath(data_dir, run_dir)


def data_path(entry: str | None, run_dir: str) -> str | None:
    """The prepared dataset that config.json's "data" `entry` names, resolved against the run
    folder (an absolute path, written by an older run, as it is); None without one."""
    return entry and os.path.normpath(os.path.join(run_dir, entry))


def write_run_config(directory: str, config: Mapping[str, Any]) -> None:
    """Writes DIRECTORY/config.json (staged: a kill never leaves half of it)."""
    from mtn_keras.base.outputs import staged_file

    with staged_file(os.path.join(directory, CONFIG)) as temp:
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)


@dataclass
class TrainedModel:
    name: str
    model: "keras.Model"
    vocab: Vocabulary
    config: ModelConfig
    path: str
    data_dir: str | None = None
    ranking: "Ranking | None" = None  # when the directory has one


def load_trained(path: str, ranking: bool = True) -> TrainedModel:
    """The Keras model, vocabulary and config saved by `python -m mtn_keras.train`, and
    its ranking (`python -m mtn_keras.rank`) when it has one and `ranking` is on. The name
    `default` is refused in one line: the bundled model is an export already, without the
    Keras model that export and rank start from."""
    files = run_files(path)
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
            f"{path}: vocab.txt has {len(vocab)} tokens "
            f"but the model was built for {config.vocab_size}"
        )
    import_tensorflow()  # silently, unless the command was asked for TensorFlow's logs
    import mtn_keras.models  # noqa: F401  (registers the layers and models)

    try:
        model = load_keras(files["model.keras"])
    except ValueError as error:
        raise ModelDirError(str(error)) from None
    data_dir = data_path(saved.get("data"), path)
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


def run_files(path: str) -> dict[str, str]:
    """The paths of model.keras, vocab.txt and config.json in the run folder `path`, checked
    first so that each way a folder is no finished run gets its own one-line ModelDirError."""
    if str(path) == DEFAULT:
        raise ModelDirError(
            f"default is the bundled model, already exported ({bundled_model()}) and without "
            "the model.keras of a run folder: use it as it is (suggest, evaluate, serve and "
            "mtn-tui take --model default), or give a run folder of train (./default for a "
            "folder of that name)"
        )
    if not os.path.isdir(path):
        raise ModelDirError(f"{path}: no such model directory")
    files = {name: os.path.join(path, name) for name in ("model.keras", "vocab.txt", "config.json")}
    for name, file in files.items():
        if (
            name == "model.keras"
            and not os.path.isfile(file)
            and os.path.isdir(os.path.join(path, "backup"))
        ):
            raise ModelDirError(
                f"{path}: its training did not finish (no model.keras); continue "
                f"it with `python -m mtn_keras.train ... --out {path} --resume`"
            )
        if not os.path.isfile(file):
            raise ModelDirError(
                f"{path}: {name} is missing (not a directory written by mtn_keras.train)"
            )
    return files
