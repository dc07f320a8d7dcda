"""Backup and resume of a training run: the per-epoch weights and optimizer state that
`--resume` continues from, and the CSV log trimmed to match them."""

import csv
import math
import os
import re
import sys
from typing import Any

import keras

from mtn_keras.base.outputs import staged_file


class RunBackup(keras.callbacks.Callback):
    """The state `--resume` continues from (weights and optimizer), written after each
    finished epoch N as `directory`/epoch-N.weights.h5: staged and renamed, so that a kill
    during the write leaves the previous one whole, and the newest two kept. An epoch whose
    logs are not finite (diverged) is not backed up."""

    def __init__(self, directory: str) -> None:
        super().__init__()
        self.directory = directory

    def on_epoch_end(self, epoch: int, logs: dict[str, Any] | None = None) -> None:
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


def backups(directory: str) -> list[tuple[int, str]]:
    """(epoch, path) of the backups in `directory`, newest first."""
    found = []
    if os.path.isdir(directory):
        for name in os.listdir(directory):
            match = re.fullmatch(r"epoch-(\d+)\.weights\.h5", name)
            if match:
                found.append((int(match.group(1)), os.path.join(directory, name)))
    return sorted(found, reverse=True)


def restore_backup(model: keras.Model, directory: str) -> int:
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


def trim_log(path: str, epochs: int) -> None:
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


def finished_epochs(log_path: str) -> list[dict[str, str]]:
    """The rows of the finished epochs in the CSV log of a training, across resumed runs
    (a row cut short by a kill left out)."""
    if not os.path.isfile(log_path):
        return []
    with open(log_path, newline="") as handle:
        return [row for row in csv.DictReader(handle) if _whole(row) and row.get("val_loss")]


def _whole(row: dict[str, str]) -> bool:
    """Whether a CSV log row has every column, each a number."""
    if None in row or None in row.values():
        return False
    try:
        [float(value) for value in row.values()]
    except ValueError:
        return False
    return True
