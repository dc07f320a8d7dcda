"""Unrolls sessions into (context, next query) pairs, the unit every metric is averaged over."""

from mtn_keras.data.history import PairHistories


def session_pairs(sessions: list[list[str]]) -> list[tuple[list[str], str]]:
    """Every pair of every session: context = queries 0..t, reference = query t+1."""
    return [
        (session[: t + 1], session[t + 1]) for session in sessions for t in range(len(session) - 1)
    ]


def pair_groups(sessions: list[list[str]], users: list[str] | None = None) -> list[str]:
    """The unit each pair of `session_pairs(sessions)` is resampled with: its session's user,
    or without `users` (one per session) the session itself (its index)."""
    units = users if users is not None else [str(i) for i in range(len(sessions))]
    if len(units) != len(sessions):
        raise ValueError(f"{len(units)} users for {len(sessions)} sessions")
    return [unit for unit, session in zip(units, sessions) for _ in range(len(session) - 1)]


def pair_histories(sessions: list[list[str]], histories: PairHistories) -> list[list[str]]:
    """The history of each pair of `session_pairs(sessions)`: its line's (`histories[i]`, a
    `data.history.PairHistories`), what its user typed before the session."""
    return [histories[i] for i, session in enumerate(sessions) for _ in range(len(session) - 1)]
