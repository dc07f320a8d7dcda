"""The one padding rule of a model's string inputs: sessions and histories at one width, ""
in front. The models drop empty queries anywhere, and the last query stays next to the
query it predicts. The client pads with it, and so do the callers beneath the client that
cannot go through it: the server's batching of requests, the ranker's fitting, and the
in-process service of evaluate's run folders and of training's validation BLEU."""

from collections.abc import Iterable, Sequence


def front_padded(rows: Iterable[Sequence[str]], width: int | None = None) -> list[list[str]]:
    """`rows` (lists of strings) as lists of `width` strings, "" in front; by default the
    longest row's width, at least one (an export reads a batch of no query as one empty one)."""
    width = max([1, *map(len, rows)]) if width is None else width
    return [[""] * (width - len(row)) + list(row) for row in rows]
