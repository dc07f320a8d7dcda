"""The Keras callbacks of a training run: epoch timer, validation BLEU, best checkpoint, and
the list fit_model passes to model.fit."""

import importlib.util
import math
import os
import time
from typing import Any

import keras

from mtn_keras.base.config import TrainConfig
from mtn_keras.base.outputs import staged_file
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.training.backup import RunBackup, finished_epochs


class EpochTimer(keras.callbacks.Callback):
    """Wall-clock seconds of each epoch, for the training summary."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds: list[float] = []

    def on_epoch_begin(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self._start = time.perf_counter()

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        self.seconds.append(time.perf_counter() - self._start)


class ValidationBleu(keras.callbacks.Callback):
    """Adds `val_bleu` to each epoch's logs: corpus BLEU of the beam's top suggestion on the
    validation pairs (unfiltered, as evaluate's Table 2). Under a split by user these are
    users the model never saw, whose BLEU the validation loss does not follow."""

    def __init__(self, vocab: Vocabulary, sessions: list[list[str]], batch_size: int = 64) -> None:
        super().__init__()
        from mtn_keras.data.pairs import session_pairs

        self.vocab, self.batch_size = vocab, batch_size
        self.pairs = session_pairs(sessions)

    def on_train_begin(self, logs: dict[str, Any] | None = None) -> None:
        from mtn_keras.base.config import DecodeConfig
        from mtn_keras.scorecard.evaluation import model_suggester
        from mtn_keras.serving.service import SuggestionService

        decoding = DecodeConfig(k=1, source="beam", filters=())
        # Kept: a tf.function method holds its object only weakly.
        self.service = SuggestionService(self.model, self.vocab.tokens, decoding)
        self.suggest = model_suggester(self.service.suggest)

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        if logs is not None:
            logs["val_bleu"] = self.scores()["bleu"]

    def scores(self) -> dict[str, Any]:
        """The model's corpus scores now (BLEU, n-gram precisions: scorecard.metrics)."""
        from mtn_keras.scorecard.metrics import corpus_scores

        tops = []
        for start in range(0, len(self.pairs), self.batch_size):
            lists = self.suggest(
                [context for context, _ in self.pairs[start : start + self.batch_size]]
            )
            tops += [texts[0][0] if texts else "" for texts in lists]
        return corpus_scores(tops, [reference for _, reference in self.pairs])


class BestCheckpoint(keras.callbacks.Callback):
    """Saves the model to `path` after each epoch whose `monitor` (a validation column of the
    logs) is the best so far, the lowest or with `mode="max"` the highest; written beside it
    and renamed, so a kill during the write never truncates `path`."""

    def __init__(
        self, path: str, monitor: str = "val_loss", mode: str = "min", best: float | None = None
    ) -> None:
        super().__init__()
        self.path, self.monitor = path, monitor
        self.sign = 1 if mode == "min" else -1
        self.best = math.inf if best is None else self.sign * best

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
        value = (logs or {}).get(self.monitor)
        if value is not None and self.sign * value < self.best:
            self.best = self.sign * value
            with staged_file(self.path) as temp:
                self.model.save(temp)


def selected(select: str) -> tuple[str, str]:
    """The log column and direction that pick the best epoch under TrainConfig.select."""
    return ("val_bleu", "max") if select == "bleu" else ("val_loss", "min")


def fit_callbacks(
    out: str, directory: str, train_config: TrainConfig, timer: EpochTimer
) -> list[keras.callbacks.Callback]:
    """The epoch's CSV log row, best checkpoint and early stopping (both on the validation
    column that TrainConfig.select names), then the backup for --resume, NaN guard,
    epoch timer and TensorBoard log, written in this worker's `directory`. The row and the
    checkpoint come before the backup, so a kill between them never loses a backed-up
    epoch's row (resume drops the rows after its backup). A resumed run's best checkpoint
    starts at the best of the chief's log in `out`."""
    monitor, mode = selected(train_config.select)
    rows = finished_epochs(os.path.join(out, "log.csv"))
    values = [float(r[monitor]) for r in rows if r.get(monitor)]
    best = (min if mode == "min" else max)(values, default=None)
    return [
        keras.callbacks.CSVLogger(os.path.join(directory, "log.csv"), append=True),
        BestCheckpoint(os.path.join(directory, "best.keras"), monitor, mode, best),
        keras.callbacks.EarlyStopping(monitor=monitor, mode=mode, patience=train_config.patience),
        RunBackup(os.path.join(directory, "backup")),
        keras.callbacks.TerminateOnNaN(),
        timer,
    ] + tensorboard(directory)


def tensorboard(directory: str) -> list[keras.callbacks.Callback]:
    """The TensorBoard log callback, when TensorFlow is there: Keras writes it with
    tf.summary, so a run under JAX without TensorFlow has no TensorBoard log."""
    if importlib.util.find_spec("tensorflow") is None:
        return []
    return [keras.callbacks.TensorBoard(os.path.join(directory, "tensorboard"))]
