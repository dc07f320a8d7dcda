"""model.fit for the suggestion models, the work behind the `train` and `compare` commands:
optimizer, schedule, callbacks, the written model directory and its summary."""

import csv
import json
import math
import os
import re
import shutil
import sys
import time

import keras

from mtn_keras.base import distribute
from mtn_keras.base.keras_file import load_keras
from mtn_keras.base.outputs import staged_file
from mtn_keras.base.scoped import precision_policy, seeded
from mtn_keras.models import build_model
from mtn_keras.training.artifacts import run_config, write_run_config


@keras.saving.register_keras_serializable(package="mtn_keras")
class TransformerSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """lr = scale * d^-0.5 * min(step^-0.5, step * warmup^-1.5) (Vaswani et al. 2017)."""

    def __init__(self, d_model, warmup_steps=4000, scale=1.0):
        self.d_model = d_model
        self.warmup_steps = warmup_steps
        self.scale = scale

    def __call__(self, step):
        step = keras.ops.cast(step, "float32") + 1.0
        warm = keras.ops.minimum(step**-0.5, step * self.warmup_steps**-1.5)
        return self.scale * self.d_model**-0.5 * warm

    def get_config(self):
        return {"d_model": self.d_model, "warmup_steps": self.warmup_steps, "scale": self.scale}


class EpochTimer(keras.callbacks.Callback):
    """Wall-clock seconds of each epoch, for the training summary."""

    def __init__(self):
        super().__init__()
        self.seconds = []

    def on_epoch_begin(self, epoch, logs=None):
        self._start = time.perf_counter()

    def on_epoch_end(self, epoch, logs=None):
        self.seconds.append(time.perf_counter() - self._start)


class ValidationBleu(keras.callbacks.Callback):
    """Adds `val_bleu` to each epoch's logs: corpus BLEU of the beam's top suggestion on the
    validation pairs (unfiltered, as evaluate's Table 2). Under a split by user these are
    users the model never saw, whose BLEU the validation loss does not follow."""

    def __init__(self, vocab, sessions, batch_size=64):
        super().__init__()
        from mtn_keras.scorecard import session_pairs

        self.vocab, self.batch_size = vocab, batch_size
        self.pairs = session_pairs(sessions)

    def on_train_begin(self, logs=None):
        from mtn_keras.base.config import DecodeConfig
        from mtn_keras.scorecard.evaluation import model_suggester
        from mtn_keras.serving.service import SuggestionService

        decoding = DecodeConfig(k=1, source="beam", filters=())
        # Kept: a tf.function method holds its object only weakly.
        self.service = SuggestionService(self.model, self.vocab.tokens, decoding)
        self.suggest = model_suggester(self.service.suggest)

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["val_bleu"] = self.scores()["bleu"]

    def scores(self):
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

    def __init__(self, path, monitor="val_loss", mode="min", best=None):
        super().__init__()
        self.path, self.monitor = path, monitor
        self.sign = 1 if mode == "min" else -1
        self.best = math.inf if best is None else self.sign * best

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is not None and self.sign * value < self.best:
            self.best = self.sign * value
            with staged_file(self.path) as temp:
                self.model.save(temp)


class TrainingDiverged(Exception):
    """The loss became NaN or infinite; the last good epoch's checkpoints are kept."""


class RunBackup(keras.callbacks.Callback):
    """The state `--resume` continues from (weights and optimizer), written after each
    finished epoch N as `directory`/epoch-N.weights.h5: staged and renamed, so that a kill
    during the write leaves the previous one whole, and the newest two kept. An epoch whose
    logs are not finite (diverged) is not backed up."""

    def __init__(self, directory):
        super().__init__()
        self.directory = directory

    def on_epoch_end(self, epoch, logs=None):
        if not all(
            math.isfinite(value)
            for value in (logs or {}).values()
            if isinstance(value, (int, float))
        ):
            return
        os.makedirs(self.directory, exist_ok=True)
        path = os.path.join(self.directory, f"epoch-{epoch + 1:04d}.weights.h5")
        with staged_file(path) as temp:
            self.model.save_weights(temp)
        for _, old in backups(self.directory)[2:]:
            os.remove(old)


class BackupError(ValueError):
    """No backup of an interrupted run can be read; says which files and why."""


def backups(directory):
    """(epoch, path) of the backups in `directory`, newest first."""
    found = []
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            match = re.fullmatch(r"epoch-(\d+)\.weights\.h5", name)
            if match:
                found.append((int(match.group(1)), os.path.join(directory, name)))
    return sorted(found, reverse=True)


def restore_backup(model, directory):
    """Loads the newest readable backup in `directory` into `model` (built, with its
    optimizer built); returns its epoch count, 0 when there is none. A damaged one (a kill
    during its write by an older version, a full disk) is skipped with a warning."""
    found = backups(directory)
    for epoch, path in found:
        try:
            model.load_weights(path)
            return epoch
        except Exception as error:  # h5py and Keras raise many kinds for a damaged file
            reason = " ".join(str(error).split())[:160]
            print(
                f"train: warning: {path} cannot be read ({reason}); trying an older backup",
                file=sys.stderr,
            )
    if found:
        raise BackupError(
            f"{directory}: no backup can be read ({len(found)} damaged); "
            "the run cannot be resumed, train it again into a new --out"
        )
    return 0


def trim_log(path, epochs):
    """Keeps the rows of the first `epochs` epochs in the CSV log `path` (and drops a row
    cut short by a kill): the log then matches the backup a resumed run starts from."""
    if not os.path.isfile(path):
        return
    with open(path, newline="") as handle:
        reader = csv.DictReader(handle)
        rows = [
            row
            for row in reader
            if _whole(row) and row.get("epoch", "").isdigit() and int(row["epoch"]) < epochs
        ]
        fields = reader.fieldnames
    with staged_file(path) as temp:
        with open(temp, "w", newline="") as handle:
            if fields and rows:
                writer = csv.DictWriter(handle, fields)
                writer.writeheader()
                writer.writerows(rows)


def best_weights(path, model):
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


def accelerator():
    """The device kind in words, "gpu" or "cpu"; on a GPU training runs in mixed precision."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        return "gpu" if tf.config.list_physical_devices("GPU") else "cpu"
    if backend == "jax":
        import jax

        return "gpu" if jax.devices()[0].platform == "gpu" else "cpu"
    return "cpu"


def compile_model(model, model_config, train_config, replicas=1):
    """Adam on the Transformer schedule, with decoupled weight decay when asked; its warm-up
    counts sessions at any replica count."""
    schedule = TransformerSchedule(
        model_config.d_model,
        distribute.warmup_for(train_config.warmup_steps, replicas),
        train_config.learning_rate_scale,
    )
    optimizer = keras.optimizers.Adam(
        schedule,
        beta_1=0.9,
        beta_2=0.98,
        epsilon=1e-9,
        weight_decay=train_config.weight_decay or None,
    )
    model.compile(optimizer=optimizer)


def finished_epochs(log_path):
    """The rows of the finished epochs in the CSV log of a training, across resumed runs
    (a row cut short by a kill left out)."""
    if not os.path.isfile(log_path):
        return []
    with open(log_path, newline="") as handle:
        return [row for row in csv.DictReader(handle) if _whole(row) and row.get("val_loss")]


def _whole(row):
    """Whether a CSV log row has every column, each a number."""
    if None in row or None in row.values():
        return False
    try:
        [float(value) for value in row.values()]
    except ValueError:
        return False
    return True


def fit_model(
    name,
    model_config,
    train_config,
    vocab,
    train_sessions,
    valid_sessions,
    out,
    resume=False,
    steps_per_epoch=None,
    verbose=1,
    data_dir=None,
    extra_callbacks=(),
    strategy="one",
    chief=True,
):
    """Train, keep the best epoch (by validation loss, or BLEU: TrainConfig.select), and
    write the model directory. Raises TrainingDiverged when the loss is not finite.

    `strategy` names a tf.distribute strategy (mtn_keras.base.distribute); a worker that is not
    the `chief` writes to a temporary directory instead of `out`, removed at the end. The
    global seeds and dtype policy are set for the run only."""
    strategy_name, strategy = strategy, distribute.make_strategy(strategy)  # before other TF work
    device = accelerator()
    with seeded(train_config.seed), precision_policy("mixed_float16" if device == "gpu" else None):
        return _fit(
            name,
            model_config,
            train_config,
            vocab,
            train_sessions,
            valid_sessions,
            out,
            resume,
            steps_per_epoch,
            verbose,
            data_dir,
            extra_callbacks,
            (strategy_name, strategy),
            chief,
            device,
        )


def _fit(
    name,
    model_config,
    train_config,
    vocab,
    train_sessions,
    valid_sessions,
    out,
    resume,
    steps_per_epoch,
    verbose,
    data_dir,
    extra_callbacks,
    strategy,
    chief,
    device,
):
    """fit_model's work, under its seeds and policy."""
    strategy_name, strategy = strategy
    replicas = strategy.num_replicas_in_sync
    train, valid = datasets(
        vocab,
        model_config,
        train_config,
        train_sessions,
        valid_sessions,
        steps_per_epoch,
        replicas,
        data_dir,
    )
    with strategy.scope():
        model = build_model(name, model_config)
        model.build()
        compile_model(model, model_config, train_config, replicas)
        model.optimizer.build(model.trainable_variables)
    directory = distribute.write_dir(out, chief)
    os.makedirs(directory, exist_ok=True)
    write_run_config(directory, run_config(name, model_config, train_config, data_dir))
    # Every worker restores the chief's backup, so that all resume at the same epoch.
    initial_epoch = restore_backup(model, os.path.join(out, "backup"))
    log_path = os.path.join(directory, "log.csv")
    trim_log(log_path, initial_epoch)
    timer = EpochTimer()
    bleu = [ValidationBleu(vocab, valid_sessions)] if train_config.select == "bleu" else []
    callbacks = bleu + fit_callbacks(out, directory, train_config, timer) + list(extra_callbacks)
    started = time.perf_counter()
    history = model.fit(
        train,
        validation_data=valid,
        epochs=train_config.epochs,
        initial_epoch=initial_epoch,
        callbacks=callbacks,
        verbose=verbose,
        shuffle=False,
    )
    losses = history.history.get("loss", [])
    if losses and not math.isfinite(losses[-1]):
        kept = backups(os.path.join(directory, "backup"))
        trim_log(log_path, kept[0][0] if kept else 0)
        distribute.finish(directory, out)
        kept = f"epoch {kept[0][0]}'s backup" if kept else "no epoch (none finished)"
        raise TrainingDiverged(
            f"the loss became {losses[-1]} in epoch {initial_epoch + len(losses)}; training "
            f"stopped, {out} keeps {kept}; train anew into another --out with a lower "
            "learning_rate_scale, weight_decay or entropy_weight"
        )
    epoch_seconds = timer.seconds or [time.perf_counter() - started]

    final, weights_from = save_best(name, model, model_config, directory)
    vocab.save(os.path.join(directory, "vocab.txt"))
    global_batch = train_config.batch_size * replicas
    sessions_seen = steps_per_epoch * global_batch if steps_per_epoch else len(train_sessions)
    summary = {
        "model": name,
        "device": device,
        "parameters": int(final.count_params()),
        "size_mb": round(final.size_mb, 3),
        **epochs_summary(finished_epochs(log_path), train_config.select),
        "seconds_per_epoch": round(sum(epoch_seconds) / len(epoch_seconds), 2),
        "sessions_per_second": round(sessions_seen / (sum(epoch_seconds) / len(epoch_seconds)), 1),
        "train_sessions": len(train_sessions),
        "weights_from": weights_from,
        "strategy": strategy_name,
        "replicas": replicas,
        "batch_size_per_replica": train_config.batch_size,
        "global_batch_size": global_batch,
        "warmup_steps": distribute.warmup_for(train_config.warmup_steps, replicas),
    }
    with open(os.path.join(directory, "train_summary.json"), "w") as handle:
        json.dump(summary, handle, indent=2)
    # model.keras is written: the checkpoint and the backup are no longer needed.
    if os.path.isfile(os.path.join(directory, "best.keras")):
        os.remove(os.path.join(directory, "best.keras"))
    shutil.rmtree(os.path.join(directory, "backup"), ignore_errors=True)
    distribute.finish(directory, out)
    return summary


def datasets(
    vocab,
    model_config,
    train_config,
    train_sessions,
    valid_sessions,
    steps_per_epoch,
    replicas=1,
    data_dir=None,
):
    """The training (shuffled, at most `steps_per_epoch` batches) and validation datasets,
    in global batches of `replicas` x the batch size, sharded across workers; with
    `history_queries`, each session also gets its user's earlier queries from `data_dir`."""
    from mtn_keras.data.pipeline import make_dataset

    n, batch_size = model_config.max_query_tokens, train_config.batch_size * replicas
    history = {}
    if model_config.history_queries:
        from mtn_keras.data.history import split_histories

        history = split_histories(
            data_dir, ("train", "valid"), vocab, n, model_config.history_queries
        )
    train = make_dataset(
        train_sessions,
        vocab,
        n,
        batch_size,
        shuffle=True,
        seed=train_config.seed,
        history=history.get("train"),
    )
    valid = make_dataset(
        valid_sessions, vocab, n, batch_size, shuffle=False, history=history.get("valid")
    )
    if steps_per_epoch:
        train = train.take(steps_per_epoch)
    return distribute.shard(train), distribute.shard(valid)


def fit_callbacks(out, directory, train_config, timer):
    """The epoch's CSV log row, best checkpoint and early stopping (both on the validation
    column that TrainConfig.select names), then the backup for --resume, NaN guard,
    TensorBoard log and epoch timer, written in this worker's `directory`. The row and the
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
        keras.callbacks.TensorBoard(os.path.join(directory, "tensorboard")),
        timer,
    ]


def save_best(name, model, model_config, out):
    """Writes OUT/model.keras with the best epoch's weights (uncompiled: no optimizer
    state); returns that model and where its weights came from."""
    weights, weights_from = best_weights(os.path.join(out, "best.keras"), model)
    final = build_model(name, model_config)
    final.build()
    final.set_weights(weights)
    with staged_file(os.path.join(out, "model.keras")) as temp:
        final.save(temp)
    return final, weights_from


def selected(select):
    """The log column and direction that pick the best epoch under TrainConfig.select."""
    return ("val_bleu", "max") if select == "bleu" else ("val_loss", "min")


def epochs_summary(rows, select="loss"):
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
