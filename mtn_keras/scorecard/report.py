"""Scores named suggesters on the same pairs and writes the results as JSON, a markdown table
in the layout of the paper's Table 2 and a BLEU bar chart in the spirit of its Figure 2."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Collection, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from mtn_keras.scorecard.anchors import ANCHORS, BatchSuggester, Pair, reads_history
from mtn_keras.scorecard.bootstrap import UserResamples, intervals
from mtn_keras.scorecard.history_split import (
    paired_difference,
    repeat_mask,
    split_figures,
)
from mtn_keras.scorecard.list_measures import ListLog, add_list_measures
from mtn_keras.scorecard.metrics import (
    corpus_scores,
    list_quality,
    mean_reciprocal_rank,
    success_rate,
)


def evaluate_suggesters(
    pairs: list[Pair],
    suggesters: Mapping[str, BatchSuggester],
    batch_size: int = 256,
    progress: bool = True,
    phrases: Collection[str] = (),
    groups: Sequence[str] | None = None,
    resamples: int = 0,
    seed: int = 0,
    histories: Sequence[Sequence[str]] | None = None,
    follows: AbstractSet[tuple[str, str]] = frozenset(),
    log: ListLog | None = None,
) -> dict[str, dict[str, Any]]:
    """BLEU, p1..p4, bp, SR@1, SR@5, MRR@5 and the quality of the shown lists (see
    `metrics.list_quality`; `phrases` are the blocked ones) of each suggester on
    (context, next query) pairs. With `resamples`, each suggestion figure also gets its 95%
    interval (`NAME_ci`) from that many bootstrap resamples of the units in `groups` (the
    user of each pair, see `bootstrap.intervals`); every suggester sees the same resamples.

    A suggester maps a batch of contexts to lists of (text, score), best first, at most five
    long (what is shown); its top-1 is the BLEU hypothesis ("" when it suggests nothing).
    One marked `reads_history` is also given the pairs' `histories` (one list of the
    user's earlier queries per pair). With `histories`, every suggester's figures are also
    split into repeat and new pairs (`history_split`; `follows`, the log's pairs that
    `rules.relates` reads), and "NAME + history" gets `new_difference` against "NAME".
    With `log` (list_measures.ListLog of the training sessions), every suggester also gets
    its `list_measures`, the history grounding the items of those that read it.
    """
    contexts = [context for context, _ in pairs]
    references = [reference for _, reference in pairs]
    results: dict[str, dict[str, Any]] = {}
    shown: dict[str, list[list[str]]] = {}
    for name, suggest in suggesters.items():
        lists = shown_lists(name, suggest, contexts, histories, batch_size, progress)
        hypotheses = [texts[0] if texts else "" for texts in lists]
        results[name] = {
            "pairs": len(pairs),
            **corpus_scores(hypotheses, references),
            "sr@1": success_rate(lists, references, 1),
            "sr@5": success_rate(lists, references, 5),
            "mrr@5": mean_reciprocal_rank(lists, references, 5),
            **list_quality(lists, pairs, phrases, 5),
        }
        if resamples:
            results[name] |= intervals(hypotheses, lists, pairs, groups, resamples, seed)
        shown[name] = lists
    if histories is not None:
        split_by_history(results, shown, pairs, histories, follows, groups, resamples, seed)
    if log is not None:
        readers = {name for name, s in suggesters.items() if reads_history(s)}
        add_list_measures(results, shown, pairs, log, groups, resamples, seed, histories, readers)
    return results


def shown_lists(
    name: str,
    suggest: BatchSuggester,
    contexts: list[list[str]],
    histories: Sequence[Sequence[str]] | None,
    batch_size: int,
    progress: bool,
) -> list[list[str]]:
    """The texts `suggest` shows for each of `contexts`, asked `batch_size` at a time (with
    the `histories` when it `reads_history`), saying how far it got when `progress` is on."""
    lists: list[list[str]] = []
    said = 0
    for start in range(0, len(contexts), batch_size):
        batch_contexts = contexts[start : start + batch_size]
        if reads_history(suggest):
            if histories is None:
                raise ValueError(f"suggester {name} reads histories, and the pairs have none")
            batch = suggest(batch_contexts, histories[start : start + batch_size])
        else:
            batch = suggest(batch_contexts)
        lists.extend([text for text, _ in suggestions] for suggestions in batch)
        if progress:
            said = show_progress(name, len(lists), len(contexts), said)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    return lists


def split_by_history(
    results: dict[str, dict[str, Any]],
    shown: dict[str, list[list[str]]],
    pairs: list[Pair],
    histories: Sequence[Sequence[str]],
    follows: AbstractSet[tuple[str, str]],
    groups: Sequence[str] | None,
    resamples: int,
    seed: int,
    prefixes: list[str] | None = None,
) -> None:
    """Adds `history_split` (history_split.split_figures; `prefixes`: what was typed) to
    every result and, to each "NAME + history" whose "NAME" was scored too,
    `new_difference` on new pairs."""
    repeat = repeat_mask(pairs, histories)
    resampled = UserResamples(groups or range(len(pairs)), resamples, seed)
    for name, lists in shown.items():
        results[name]["history_split"] = split_figures(
            lists, pairs, repeat, resampled, histories, follows, prefixes
        )
        base = name.removesuffix(" + history")
        if base != name and base in shown:
            results[name]["history_split"]["new_difference"] = paired_difference(
                lists, shown[base], pairs, ~repeat, resampled
            )


def show_progress(name: str, done: int, total: int, said: int) -> int:
    """Says `name: done/total pairs` on stderr: redrawn in place on a terminal, else one line
    at each tenth done (a log file reads lines, not carriage returns); returns the tenths said."""
    if sys.stderr.isatty():
        print(f"\r{name}: {done}/{total} pairs", end="", file=sys.stderr)
        return said
    tenths = done * 10 // max(total, 1)
    if tenths > said:
        print(f"{name}: {done}/{total} pairs", file=sys.stderr)
    return max(tenths, said)


def model_report(
    scores: dict[str, Any],
    anchors: dict[str, dict[str, Any]],
    perplexity: float | None,
    size_mb: float | None,
) -> dict[str, Any]:
    """The JSON of one model: its scores, perplexity, size and the anchors' scores on its pairs."""
    for name, anchor in anchors.items():
        if anchor["pairs"] != scores["pairs"]:
            raise ValueError(
                f"anchor {name} scored {anchor['pairs']} pairs, the model {scores['pairs']}"
            )
    return {**scores, "perplexity": perplexity, "size_mb": size_mb, "anchors": anchors}


def table_rows(reports: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Flattens model reports (name -> model_report) into rows: the models, then the anchors
    once."""
    rows = {
        name: {k: v for k, v in report.items() if k != "anchors"}
        for name, report in reports.items()
    }
    for report in reports.values():
        for name, anchor in report.get("anchors", {}).items():
            rows.setdefault(name, anchor)
    return rows


def write_json(results: Mapping[str, Any], path: str | os.PathLike[str]) -> None:
    """Writes results as indented JSON, creating the parent folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def markdown_table(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """Table 2 of the paper plus BLEU and SR@k: one row per model or anchor (no size), each
    figure with its 95% interval `[low, high]` when the row has one."""
    lines = [
        "| Model | Size (MB) | 1/2/3/4-gram | BLEU | SR@1 | SR@5 |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
    ]
    for name, row in rows.items():
        size = f"{row['size_mb']:.1f}" if row.get("size_mb") is not None else ""
        intervals = row.get("precisions_ci") or [None] * len(row["precisions"])
        precisions = "/".join(_cell(p, ci, 1) for p, ci in zip(row["precisions"], intervals))
        figures = " | ".join(
            _cell(row[key], row.get(f"{key}_ci")) for key in ("bleu", "sr@1", "sr@5")
        )
        lines.append(f"| {name} | {size} | {precisions} | {figures} |")
    return "\n".join(lines) + "\n"


def quality_table(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """What a searcher is shown, one row per suggester that has the figures (percentages):
    MRR@5, SR@5 on new next queries, coverage and precision, and the shares of shown
    suggestions that repeat the session, repeat a word or hold a blocked word; a figure with
    a 95% interval shows it as `[low, high]`."""
    lines = [
        "| Model | MRR@5 | SR@5 new | Coverage | Precision | Repeats session | Repeated word "
        "| Blocked | Explicit | Child-unsafe |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    keys = (
        "mrr@5",
        "sr@5_new",
        "coverage",
        "precision",
        "repeats_session",
        "repeats_word",
        "blocked",
        "explicit",
        "child_unsafe",
    )
    for name, row in rows.items():
        if all(key in row for key in keys):
            cells = (_cell(row[key], row.get(f"{key}_ci")) for key in keys)
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def history_table(rows: Mapping[str, Mapping[str, Any]]) -> str:
    """The history's two jobs, one row per suggester scored with histories (percentages):
    SR@5 on repeat pairs (the user typed the next query before) and on new pairs, SR@5 with
    history minus without on new pairs, and the share of shown items that came from the
    history yet relate to nothing in the session; "" when no row has them."""
    lines = [
        "| Model | Repeat pairs | SR@5 repeat | New pairs | SR@5 new for the user "
        "| New: with − without history | Unrelated history items |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, row in rows.items():
        if not (split := row.get("history_split")):
            continue
        repeat, new = split["repeat"], split["new"]
        difference = split.get("new_difference")
        lines.append(
            f"| {name} | {repeat['pairs']:,} | {_cell(repeat['sr@5'], repeat['sr@5_ci'])} "
            f"| {new['pairs']:,} | {_cell(new['sr@5'], new['sr@5_ci'])} | "
            + (_cell(difference["difference"], difference["ci"]) if difference else "")
            + f" | {_cell(split['unrelated_history'], split['unrelated_history_ci'])} |"
        )
    return "\n".join(lines) + "\n" if len(lines) > 2 else ""


def _cell(value: float, interval: Sequence[float] | None = None, digits: int = 2) -> str:
    """A figure, with its 95% interval when it has one: `0.82 [0.40, 1.30]`."""
    text = f"{value:.{digits}f}"
    if interval is None:
        return text
    return f"{text} [{interval[0]:.{digits}f}, {interval[1]:.{digits}f}]"


def bleu_chart(
    rows: Mapping[str, Mapping[str, Any]],
    png_path: str | os.PathLike[str],
    anchors: Collection[str] = ANCHORS,
    title: str = "BLEU on the test pairs",
) -> None:
    """Bar chart of BLEU per row, anchors in grey, each bar labelled with its value, as PNG."""
    names = list(rows)
    values = [rows[name]["bleu"] for name in names]
    colours = ["tab:gray" if name in anchors else "tab:blue" for name in names]
    fig = Figure(figsize=(max(4.0, 1.1 * len(names) + 1.5), 4.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    bars = ax.bar(names, values, color=colours)
    ax.bar_label(bars, fmt="%.2f")
    ax.set_ylabel("BLEU")
    ax.set_title(title)
    ax.set_ylim(0, max(values + [1.0]) * 1.15)
    ax.tick_params(axis="x", labelrotation=20)
    ax.legend(
        loc="best",
        handles=[Patch(color="tab:blue", label="model"), Patch(color="tab:gray", label="anchor")],
    )
    fig.tight_layout()
    path = Path(png_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=120)
