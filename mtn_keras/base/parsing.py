"""Values read from the command line: each turns a string into a value or raises ValueError,
as argparse's `type=` expects. The configs' options name them (config.py, decode_config.py)."""

import math


def positive_int(text: str) -> int:
    """An integer of at least 1."""
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def non_negative_int(text: str) -> int:
    """An integer of at least 0."""
    value = int(text)
    if value < 0:
        raise ValueError(text)
    return value


def non_negative_float(text: str) -> float:
    """A finite number of at least 0 (not nan)."""
    value = float(text)
    if not 0 <= value < math.inf:
        raise ValueError(text)
    return value


def probability(text: str) -> float:
    """A number in [0, 1] (not nan)."""
    value = float(text)
    if not 0 <= value <= 1:
        raise ValueError(text)
    return value
