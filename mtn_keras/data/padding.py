"""The one padding rule of a model's string inputs: sessions and histories at one width, ""
in front. The models drop empty queries anywhere, and the last query stays next to the
query it predicts. The client pads with it; so do the callers that cannot go through the
client: the server's batching, the ranker's fitting and scoring in training."""


def front_padded(rows, width=None):
    """`rows` (lists of strings) as lists of `width` strings, "" in front; by default the
    longest row's width, at least one (an export reads a batch of no query as one empty one)."""
    width = max([1, *map(len, rows)]) if width is None else width
    return [[""] * (width - len(row)) + list(row) for row in rows]
