"""The runners on this machine: an exported SavedModel (plain TensorFlow) and a run folder of
`train` (its SuggestionService). TensorFlow is imported when one of them is opened, not before.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.client.inputs import SuggestError
from mtn_keras.client.suggester import Suggester
from mtn_keras.serving import savedmodel

if TYPE_CHECKING:
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.training.artifacts import TrainedModel


def open_local(
    model: str | os.PathLike, decoding: DecodeConfig | None = None
) -> tuple[SavedModel | RunFolder, str]:
    """(the runner of `model`, the path the messages name): a run folder, a SavedModel
    directory, a folder holding `savedmodel/`, or `default`, the bundled model."""
    try:
        if savedmodel.kind(model) == "trained":
            from mtn_keras.training.artifacts import ModelDirError, load_trained

            try:
                trained = load_trained(str(Path(model).expanduser()))
            except ModelDirError as error:
                raise SuggestError(str(error)) from error
            return RunFolder(trained, decoding), str(model)
        path = savedmodel.resolve(model)
        return SavedModel(path), str(path)
    except SuggestError:
        raise
    except (OSError, ValueError) as error:
        raise SuggestError(str(error)) from error


class SavedModel:
    """An exported SavedModel (at `path`, already resolved), called with plain TensorFlow; a
    SuggestError unless it has the signatures `required`. `settings`: its export.json."""

    def __init__(self, path: Path, required: Sequence[str] = ("complete",)) -> None:
        self.path = path
        self._loaded, self.load_seconds = savedmodel.load(path, required)
        self._tf = import_tensorflow()
        self.settings = savedmodel.export_settings(path)
        self.signatures = {
            name: set(function.structured_outputs)
            for name, function in self._loaded.signatures.items()
        }

    def run(self, name: str, inputs: dict[str, list]) -> dict:
        tensors = {key: self._tf.constant(value, self._tf.string) for key, value in inputs.items()}
        return savedmodel.call(self._loaded, self.path, name, **tensors)


def run_folder(trained: TrainedModel, decoding: DecodeConfig | None = None) -> Suggester:
    """The Suggester of a run folder already loaded (`training.artifacts.load_trained`), for
    a command that reads the folder itself too."""
    return Suggester(RunFolder(trained, decoding), str(trained.path))


class RunFolder:
    """A run folder of `train`, loaded (`trained`): its model, vocabulary and ranking behind a
    SuggestionService with `decoding` (DecodeConfig(), the defaults, when None). `settings`:
    as an export's."""

    def __init__(self, trained: TrainedModel, decoding: DecodeConfig | None = None) -> None:
        from mtn_keras.base.config import DecodeConfig
        from mtn_keras.serving.outputs import HISTORY_OUTPUTS, SUGGEST_OUTPUTS
        from mtn_keras.serving.service import SuggestionService

        self._tf = import_tensorflow()
        self.path = trained.path
        self._service = SuggestionService(
            trained.model, trained.vocab.tokens, decoding or DecodeConfig(), trained.ranking
        )
        self.settings = {
            "k": self._service.k,
            "max_query_tokens": self._service.n,
            "history_size": self._service.history.size,
        }
        self.signatures = {"complete": set(SUGGEST_OUTPUTS)}
        # as `export` gives them: the history's candidates are ranked, or a level reads it
        if self._service.hybrid is not None or trained.config.history_queries:
            self.signatures["complete_with_history"] = set(SUGGEST_OUTPUTS) | set(HISTORY_OUTPUTS)

    def run(self, name: str, inputs: dict[str, list]) -> dict:
        tensors = {key: self._tf.constant(value, self._tf.string) for key, value in inputs.items()}
        try:
            outputs = getattr(self._service, name)(**tensors)
        except Exception as error:  # TensorFlow raises many types; callers see one
            raise SuggestError(f"The model at {self.path} failed in `{name}`: {error}") from error
        return {key: value.numpy() for key, value in outputs.items()}
