"""studies/source_hits.py counts, per source, the items a completion list shows and the next
queries they find."""

from types import SimpleNamespace

from studies.source_hits import source_hits


class Lists:
    """A suggester that answers each typed prefix with fixed (text, source) items."""

    def __init__(self, items):
        self.items = items

    def complete(self, sessions, typed):
        return [[SimpleNamespace(text=t, source=s) for t, s in self.items[p]] for p in typed]


def test_items_and_hits_are_counted_by_source_the_beams_by_length():
    items = {
        "weat": [("weather", "model+log"), ("weatherby", "model"), ("weather in boston", "model")],
        "bost": [("boston globe", "log+fixed"), ("bostn", "model")],
    }
    pairs = [(["a"], "Weather"), (["b"], "boston globe"), (["c"], "boston red sox")]
    rate, sources = source_hits(Lists(items), pairs, ["weat", "bost", "bost"], batch=2)
    assert round(rate, 2) == 66.67
    assert sources == {
        "model (one word)": (3, 0),
        "log+fixed": (2, 1),
        "model+log": (1, 1),
        "model (more)": (1, 0),
    }
