"""Small text helpers shared by the panels: cut labels, weights as printed, bars."""

from collections.abc import Sequence

BLOCKS = " ▏▎▍▌▋▊▉█"  # eighths of a cell


def short(text: str, width: int) -> str:
    """`text` cut to `width` characters, with an ellipsis where it was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def distinct_labels(queries: Sequence[str], width: int) -> list[str]:
    """`queries` cut to `width` characters each, so that queries that differ read differently:
    where cutting makes two alike ("paris we…" twice), the words they begin with in common
    give way to an ellipsis ("…weather in…", "…west bank").

    Why: at 80 columns the attention panel has about 10 characters per label, and a session
    often repeats its first words.
    """
    cut = [short(query, width) for query in queries]
    labels = []
    for query, label in zip(queries, cut):
        words = query.split()
        alike = [
            other
            for other, other_label in zip(queries, cut)
            if other_label == label and other != query
        ]
        shared = max((common_words(words, other.split()) for other in alike), default=0)
        if 0 < shared < len(words):
            label = short("…" + " ".join(words[shared:]), width)
        labels.append(label)
    return labels


def common_words(first: list[str], second: list[str]) -> int:
    """How many words `first` and `second` begin with in common."""
    count = 0
    while count < min(len(first), len(second)) and first[count] == second[count]:
        count += 1
    return count


def weight_label(weight: float) -> str:
    """A weight as printed in a cell: ".42", "1.00"."""
    label = f"{weight:.2f}"
    return label[1:] if label.startswith("0") else label


def bar(share: float, width: int) -> str:
    """A bar `width` cells long when `share` is 1, in eighths of a cell, padded to `width`."""
    eighths = round(max(0.0, min(share, 1.0)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[part] if part else "")).ljust(width)
