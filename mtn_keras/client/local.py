"""The backends on this machine: an exported SavedModel (plain TensorFlow) and a run folder of
`train` (its SuggestionService). TensorFlow is imported when one of them is opened, not before.
"""

from pathlib import Path

from mtn_keras.base.quiet import import_tensorflow
from mtn_keras.client.suggester import SuggestError
from mtn_keras.serving import savedmodel
from mtn_keras.serving.savedmodel import SavedModelError


def open_local(model, decoding=None):
    """(the runner of `model`, the path the messages name): a run folder, a SavedModel
    directory, a folder holding `savedmodel/`, or `default`, the bundled model."""
    try:
        if savedmodel.kind(model) == "trained":
            return RunFolder(Path(model).expanduser(), decoding), str(model)
        path = savedmodel.resolve(model)
        return SavedModel(path), str(path)
    except SuggestError:
        raise
    except (SavedModelError, OSError, ValueError) as error:
        raise SuggestError(str(error)) from error


class SavedModel:
    """An exported SavedModel, called with plain TensorFlow."""

    def __init__(self, path: Path):
        self.path = path
        self._loaded, _ = savedmodel.load(path, ("complete",))
        self._tf = import_tensorflow()
        self.signatures = {
            name: set(function.structured_outputs)
            for name, function in self._loaded.signatures.items()
        }

    def run(self, name, inputs):
        # `complete` is `complete_with_history` with an empty history (docs/contracts.md):
        # calling that one graph spares a second graph's preparation and XLA compilation.
        if name == "complete" and "complete_with_history" in self.signatures:
            empty = [[]] * len(inputs["session"])
            name, inputs = "complete_with_history", {**inputs, "history": empty}
        tensors = {key: self._tf.constant(value, self._tf.string) for key, value in inputs.items()}
        return savedmodel.call(self._loaded, self.path, name, **tensors)


class RunFolder:
    """A run folder of `train`: its model, vocabulary and ranking behind a SuggestionService
    with `decoding` (DecodeConfig(), the defaults, when None)."""

    def __init__(self, path: Path, decoding=None):
        from mtn_keras.base.config import DecodeConfig
        from mtn_keras.serving.inputs import HISTORY_OUTPUTS, SUGGEST_OUTPUTS
        from mtn_keras.serving.service import SuggestionService
        from mtn_keras.training.artifacts import ModelDirError, load_trained

        try:
            trained = load_trained(str(path))
        except ModelDirError as error:
            raise SuggestError(str(error)) from error
        self._tf = import_tensorflow()
        self.path = path
        self._service = SuggestionService(
            trained.model, trained.vocab.tokens, decoding or DecodeConfig(), trained.ranking
        )
        self.signatures = {"complete": set(SUGGEST_OUTPUTS)}
        if self._service.hybrid is not None:  # the history's candidates are ranked
            self.signatures["complete_with_history"] = set(SUGGEST_OUTPUTS) | set(HISTORY_OUTPUTS)

    def run(self, name, inputs):
        tensors = {key: self._tf.constant(value, self._tf.string) for key, value in inputs.items()}
        try:
            outputs = getattr(self._service, name)(**tensors)
        except Exception as error:  # TensorFlow raises many types; callers see one
            raise SuggestError(f"The model at {self.path} failed in `{name}`: {error}") from error
        return {key: value.numpy() for key, value in outputs.items()}
