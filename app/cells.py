"""Small text helpers shared by the panels: cut labels, weights as printed, bars."""

BLOCKS = " ▏▎▍▌▋▊▉█"  # eighths of a cell


def short(text: str, width: int) -> str:
    """`text` cut to `width` characters, with an ellipsis where it was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def weight_label(weight: float) -> str:
    """A weight as printed in a cell: ".42", "1.00"."""
    label = f"{weight:.2f}"
    return label[1:] if label.startswith("0") else label


def bar(share: float, width: int) -> str:
    """A bar `width` cells long when `share` is 1, in eighths of a cell, padded to `width`."""
    eighths = round(max(0.0, min(share, 1.0)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (BLOCKS[part] if part else "")).ljust(width)
