"""model.fit for the suggestion models, the work behind the `train` and `compare` commands:
the steps of a run, the written model directory and its summary (the optimiser in
training/optimizer.py, callbacks in training/callbacks.py, backup and resume in
training/backup.py)."""

import dataclasses
import json
import math
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import keras
import numpy as np

from mtn_keras.base import distribute
from mtn_keras.base.config import ModelConfig, TrainConfig
from mtn_keras.base.keras_file import load_keras
from mtn_keras.base.outputs import staged_file
from mtn_keras.base.scoped import precision_policy, seeded
from mtn_keras.data.vocab import Vocabulary
from mtn_keras.models import build_model
from mtn_keras.models.base import SuggestionModel
from mtn_keras.training.artifacts import run_config, write_run_config
from mtn_keras.training.backup import backups, finished_epochs, restore_backup, trim_log
from mtn_keras.training.callbacks import EpochTimer, ValidationBleu, fit_callbacks, selected
from mtn_keras.training.optimizer import compile_model

if TYPE_CHECKING:
    import tensorflow as tf

    from mtn_keras.training.inputs import EpochBatches


class TrainingDiverged(Exception):
    """The loss became NaN or infinite; the last good epoch's checkpoints are kept."""


def best_weights(path: str, model: keras.Model) -> tuple[list[np.ndarray], str]:
    """The weights in the checkpoint `path`; the model's own (its last epoch's), with a
    warning on stderr, when the checkpoint is missing or cannot be read."""
    if not os.path.isfile(path):
        return model.get_weights(), "last epoch"
    try:
        return load_keras(path).get_weights(), "best epoch"
    except ValueError as error:
        print(
            f"train: warning: {error}; model.keras gets the last epoch's weights", file=sys.stderr
        )
        return model.get_weights(), "last epoch (best.keras unreadable)"


def accelerator() -> str:
    """The device kind in words, "gpu" or "cpu"; on a GPU training runs in mixed precision."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        return "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
    if backend == "jax":
        import jax  # in .venv-jax only; mypy reads it as Any (pyproject)

        return "gpu" if jax.devices()[0].platform == "gpu" else "cpu"
    return "cpu"


@dataclasses.dataclass
class FitJob:
    """One training run as fit_model is asked for it: the model, its data, where it writes,
    and the tf.distribute strategy (by name, mtn_keras.base.distribute) and the worker's part;
    the strategy's object and the device are found when the job is made. `train_sessions`
    may be a split file's path: its batches then stream from disk (data/streamed_buckets.py)."""

    name: str
    model_config: ModelConfig
    train_config: TrainConfig
    vocab: Vocabulary
    train_sessions: list[list[str]] | str
    valid_sessions: list[list[str]]
    out: str
    steps_per_epoch: int | None = None
    verbose: int = 1
    data_dir: str | None = None
    extra_callbacks: Sequence[keras.callbacks.Callback] = ()
    strategy: str = "one"
    chief: bool = True
    distribution: "tf.distribute.Strategy | distribute.OneDevice" = dataclasses.field(init=False)
    device: str = dataclasses.field(init=False)
    train_count: int = dataclasses.field(init=False, default=0)  # sessions, once read

    def __post_init__(self) -> None:
        self.extra_callbacks = tuple(self.extra_callbacks)
        self.distribution = distribute.make_strategy(self.strategy)  # before other TF work
        self.device = accelerator()

    @property
    def replicas(self) -> int:
        """How many replicas the strategy trains on at once."""
        return self.distribution.num_replicas_in_sync


def fit_model(*fields: Any, **options: Any) -> dict[str, Any]:
    """Train, keep the best epoch (by validation loss, or BLEU: TrainConfig.select), and
    write the model directory; `fields` and `options` are FitJob's, in its order. Raises
    TrainingDiverged when the loss is not finite.

    A backup in `out` is always continued from (train's --resume checks that one may be
    there). A worker that is not the `chief` writes to a temporary directory instead of
    `out`, removed at the end. The global seeds and dtype policy are set for the run only."""
    job = FitJob(*fields, **options)
    mixed = "mixed_float16" if job.device == "gpu" else None
    with seeded(job.train_config.seed), precision_policy(mixed):
        return _fit(job)


def _fit(job):
    """fit_model's work, under its seeds and policy: build, restore, fit, then write the
    model directory."""
    model = _built_model(job)
    directory = distribute.write_dir(job.out, job.chief)
    os.makedirs(directory, exist_ok=True)
    config = run_config(job.name, job.model_config, job.train_config, job.data_dir, job.out)
    write_run_config(directory, config)
    # Every worker restores the chief's backup, so that all resume at the same epoch.
    initial_epoch = restore_backup(model, os.path.join(job.out, "backup"))
    log_path = os.path.join(directory, "log.csv")
    trim_log(log_path, initial_epoch)
    losses, epoch_seconds = _train(job, model, directory, initial_epoch)
    if losses and not math.isfinite(losses[-1]):
        _stop_diverged(job, directory, log_path, losses, initial_epoch)
    final, weights_from = save_best(job.name, model, job.model_config, directory)
    job.vocab.save(os.path.join(directory, "vocab.txt"))
    summary = _summary(job, final, weights_from, finished_epochs(log_path), epoch_seconds)
    with open(os.path.join(directory, "train_summary.json"), "w") as handle:
        json.dump(summary, handle, indent=2)
    # model.keras is written: the checkpoint and the backup are no longer needed.
    if os.path.isfile(os.path.join(directory, "best.keras")):
        os.remove(os.path.join(directory, "best.keras"))
    shutil.rmtree(os.path.join(directory, "backup"), ignore_errors=True)
    distribute.finish(directory, job.out)
    return summary


def _built_model(job):
    """The job's model, built and compiled with its optimizer built, under its strategy."""
    with job.distribution.scope():
        model = build_model(job.name, job.model_config)
        model.build()
        compile_model(model, job.model_config, job.train_config, job.replicas)
        model.optimizer.build(model.trainable_variables)
    return model


def _train(job, model, directory, initial_epoch):
    """Runs model.fit from `initial_epoch`; returns the epochs' losses and seconds."""
    train, valid = datasets(job, initial_epoch)
    timer = EpochTimer()
    config = job.train_config
    bleu = [ValidationBleu(job.vocab, job.valid_sessions)] if config.select == "bleu" else []
    callbacks = bleu + fit_callbacks(job.out, directory, config, timer) + list(job.extra_callbacks)
    started = time.perf_counter()
    history = model.fit(
        train,
        validation_data=valid,
        epochs=config.epochs,
        initial_epoch=initial_epoch,
        callbacks=callbacks,
        verbose=job.verbose,
        shuffle=False,
    )
    return history.history.get("loss", []), timer.seconds or [time.perf_counter() - started]


def _stop_diverged(job, directory, log_path, losses, initial_epoch):
    """Trims the log to the last backup, finishes the directory and raises TrainingDiverged."""
    kept = backups(os.path.join(directory, "backup"))
    trim_log(log_path, kept[0][0] if kept else 0)
    distribute.finish(directory, job.out)
    kept = f"epoch {kept[0][0]}'s backup" if kept else "no epoch (none finished)"
    raise TrainingDiverged(
        f"the loss became {losses[-1]} in epoch {initial_epoch + len(losses)}; training "
        f"stopped, {job.out} keeps {kept}; train anew into another --out with a lower "
        "learning_rate_scale, weight_decay or entropy_weight"
    )


def _summary(job, final, weights_from, rows, epoch_seconds):
    """train_summary.json's figures: the model, its epochs (`rows` of the log), speed, and
    the distribution it trained under."""
    config, replicas = job.train_config, job.replicas
    global_batch = config.batch_size * replicas
    sessions_seen = job.steps_per_epoch * global_batch if job.steps_per_epoch else job.train_count
    return {
        "model": job.name,
        "device": job.device,
        "parameters": int(final.count_params()),
        "size_mb": round(final.size_mb, 3),
        **epochs_summary(rows, config.select),
        "seconds_per_epoch": round(sum(epoch_seconds) / len(epoch_seconds), 2),
        "sessions_per_second": round(sessions_seen / (sum(epoch_seconds) / len(epoch_seconds)), 1),
        "train_sessions": job.train_count,
        "weights_from": weights_from,
        "strategy": job.strategy,
        "replicas": replicas,
        "batch_size_per_replica": config.batch_size,
        "global_batch_size": global_batch,
        "warmup_steps": distribute.warmup_for(config.warmup_steps, replicas),
    }


def datasets(
    job: FitJob, first_epoch: int = 0
) -> tuple["tf.data.Dataset | EpochBatches", "tf.data.Dataset | EpochBatches"]:
    """The training (in each epoch's seeded order, from `first_epoch` on, at most
    `steps_per_epoch` batches) and validation inputs of model.fit, in global batches of the
    replicas x the batch size (sharded across workers under tf.distribute); with
    `history_queries`, each session also gets its user's earlier queries from `data_dir`.
    Sets the job's `train_count`."""
    from mtn_keras.data.batches import SessionBatches
    from mtn_keras.training.inputs import fit_input

    n = job.model_config.max_query_tokens
    batch_size = job.train_config.batch_size * job.replicas
    history = {}
    if job.model_config.history_queries:
        from mtn_keras.data.history import split_histories

        if job.data_dir is None:
            raise ValueError("history_queries reads the users' histories: give the data_dir")
        history = split_histories(
            job.data_dir, ("train", "valid"), job.vocab, n, job.model_config.history_queries
        )
    train = SessionBatches(
        job.train_sessions,
        job.vocab,
        n,
        batch_size,
        shuffle=True,
        seed=job.train_config.seed,
        history=history.get("train"),
        limit=job.steps_per_epoch,
        stream=isinstance(job.train_sessions, str),
    )
    job.train_count = train.sessions
    valid = SessionBatches(
        job.valid_sessions, job.vocab, n, batch_size, history=history.get("valid")
    )
    return fit_input(train, first_epoch), fit_input(valid)


def save_best(
    name: str, model: keras.Model, model_config: ModelConfig, out: str
) -> tuple[SuggestionModel, str]:
    """Writes OUT/model.keras with the best epoch's weights (uncompiled: no optimizer
    state); returns that model and where its weights came from."""
    weights, weights_from = best_weights(os.path.join(out, "best.keras"), model)
    final = build_model(name, model_config)
    final.build()
    final.set_weights(weights)
    with staged_file(os.path.join(out, "model.keras")) as temp:
        final.save(temp)
    return final, weights_from


def epochs_summary(rows: Sequence[Mapping[str, str]], select: str = "loss") -> dict[str, Any]:
    """The summary's epoch figures from the finished epochs' log rows: how many, the best
    (from 1) by the selected column, its loss and perplexity, every validation loss (and
    BLEU, when selected by it)."""
    monitor, mode = selected(select)
    val_losses = [float(r["val_loss"]) for r in rows]
    values = [float(r[monitor]) for r in rows]
    best = (
        (min if mode == "min" else max)(range(len(values)), key=values.__getitem__)
        if values
        else None
    )
    return {
        "epochs": len(rows),
        "selected_by": monitor,
        "best_epoch": None if best is None else best + 1,
        "best_val_loss": None if best is None else val_losses[best],
        "best_val_perplexity": None if best is None else math.exp(float(rows[best]["val_nll"])),
        "val_loss": val_losses,
        **({"val_bleu": values} if monitor == "val_bleu" else {}),
    }
