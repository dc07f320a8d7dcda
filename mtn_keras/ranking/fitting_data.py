"""What a ranking is fitted on (`RankingData`): a prepared dataset's training and validation
splits, their users and histories, and the log's evidence on its queries."""

from __future__ import annotations

from dataclasses import dataclass

from mtn_keras.data.evidence import Evidence
from mtn_keras.data.history import PairHistories
from mtn_keras.data.prepared import load_split, load_users


@dataclass
class RankingData:
    """What a ranking is built from: the training split's sessions (the index) and the
    validation split's (the ranker and its thresholds), with each validation session's
    user's earlier queries (`valid_histories`, a `data.history.PairHistories`, when the
    dataset has them) and each session's user (`train_users`, `valid_users`, one per
    session; else each session is its own user), and what the log's clicks said of the
    training data's queries (`evidence`, data/evidence.py; None for a dataset prepared before
    it was kept)."""

    train_sessions: list[list[str]]
    valid_sessions: list[list[str]]
    valid_histories: PairHistories | None = None
    valid_users: list[str] | None = None
    train_users: list[str] | None = None
    evidence: Evidence | None = None

    @classmethod
    def load(cls, data: str, valid_data: str | None = None) -> RankingData:
        """The training split of the prepared dataset `data` and the validation split of
        `valid_data` (default: `data`'s). Raises ValueError when the validation split is
        empty (the ranker is fitted on it)."""
        valid_data = valid_data or data
        found = cls(
            load_split(data, "train"),
            load_split(valid_data, "valid"),
            PairHistories.load(valid_data, "valid"),
            load_users(valid_data, "valid"),
            load_users(data, "train"),
            Evidence.load(data),
        )
        if not found.valid_sessions:
            raise ValueError(
                f"{valid_data}: the validation split is empty; the ranker is fitted on it"
            )
        return found
