"""Unrolls sessions into (context, next query) pairs, the unit every metric is averaged over."""


def session_pairs(sessions: list[list[str]]) -> list[tuple[list[str], str]]:
    """Every pair of every session: context = queries 0..t, reference = query t+1."""
    return [
        (session[: t + 1], session[t + 1]) for session in sessions for t in range(len(session) - 1)
    ]
