"""The list measures (scorecard.list_measures) as a markdown table, for `evaluate` and
`evaluate --prefix` alike: one row per suggester that has them, then the log anchor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mtn_keras.scorecard.completion import case_rows
from mtn_keras.scorecard.list_measures import KINDS
from mtn_keras.scorecard.report import _cell

COLUMNS = (
    "Pairs repeat / related-new / unrelated-new",
    "Grounded items",
    "Filler lists",
    "SR@5 repeat",
    "SR@5 related-new",
    "SR@5 unrelated-new",
    "New-word hit@5",
)


def list_table(
    kinds: Mapping[str, tuple[Mapping[str, Mapping[str, Any]], Mapping[str, Any] | None]],
    typed: bool = False,
) -> str:
    """`kinds`: {case: (rows, log anchor figures or None)}, a row being a suggester's result
    with its `list_measures`; with `typed` (`--prefix`), each line starts with its case.
    "" when no row has the measures."""
    lead = ["Typed", "Suggester"] if typed else ["Model"]
    lines = [_line([*lead, *COLUMNS]), _line(["---"] * len(lead) + ["---:"] * len(COLUMNS))]
    for case, (rows, anchor) in kinds.items():
        first = [case] if typed else []
        for name, row in rows.items():
            if measures := row.get("list_measures"):
                lines.append(_line([*first, name, *_cells(measures)]))
        if anchor:
            lines.append(_line([*first, "log anchor (related-new pairs)", *_anchor_cells(anchor)]))
    return "\n".join(lines) + "\n" if len(lines) > 2 else ""


def prefix_list_table(report: Mapping[str, Any]) -> str:
    """list_table of a `completion_report`: one part per case, what was typed first."""
    anchors = report.get("log_anchor", {})
    cases = case_rows(report)
    return list_table({case: (rows, anchors.get(case)) for case, rows in cases.items()}, True)


def _line(cells: Sequence[str]) -> str:
    """One markdown table line."""
    return "| " + " | ".join(cells) + " |"


def _figure(entry: Mapping[str, Any], key: str) -> str:
    """The cell of figure `key` of `entry`, with its interval when it has one; "" for a
    figure over no pairs."""
    if entry.get("pairs") == 0:
        return ""
    return _cell(entry[key], entry.get(f"{key}_ci"))


def _cells(measures: Mapping[str, Any]) -> list[str]:
    """A row's cells under COLUMNS."""
    kinds = measures["pair_kinds"]
    return [
        " / ".join(f"{kinds[kind]['pairs']:,}" for kind in KINDS),
        _figure(measures, "grounded"),
        _figure(measures, "filler") if "filler" in measures else "",
        *(_figure(kinds[kind], "sr@5") for kind in KINDS),
        _figure(kinds["related-new"], "new_word_hit@5"),
    ]


def _anchor_cells(anchor: Mapping[str, Any]) -> list[str]:
    """The log anchor's cells under COLUMNS: its related-new pairs, SR@5 and new-word hit@5."""
    return [
        f"– / {anchor['pairs']:,} / –",
        "",
        "",
        "",
        _figure(anchor, "sr@5"),
        "",
        _figure(anchor, "new_word_hit@5"),
    ]
