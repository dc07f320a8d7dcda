"""Scoring suggesters on pairs, the model JSON, the Table-2 markdown and the BLEU chart."""

import json
import subprocess
import sys

import pytest

from mtn_keras.data.pairs import session_pairs
from mtn_keras.scorecard import (
    Adj,
    CopyLast,
    batched,
    bleu_chart,
    evaluate_suggesters,
    markdown_table,
    model_report,
    table_rows,
    write_json,
)

TRAIN = [["cheap flights", "cheap flights to rome"], ["rome hotels", "cheap rome hotels"]]
TEST = [
    ["cheap flights", "cheap flights to rome", "rome hotels"],
    ["rome hotels", "cheap rome hotels"],
]


def toy_model(contexts):
    """A made-up model: nothing for the first pair, else a fixed list."""
    return [
        [] if len(c) == 1 and c[0] == "cheap flights" else [("x", 0.0), ("rome hotels", -1.0)]
        for c in contexts
    ]


@pytest.fixture
def results(capsys):
    adj = Adj().fit(TRAIN)
    suggesters = {"toy": toy_model, "copy-last": batched(CopyLast()), "adj": batched(adj)}
    res = evaluate_suggesters(session_pairs(TEST), suggesters, batch_size=2)
    assert "3/3 pairs" in capsys.readouterr().err
    return res


def test_scores_of_each_suggester(results):
    assert set(results) == {"toy", "copy-last", "adj"}
    toy = results["toy"]
    # Hypotheses "", "x", "x": no match at all, the empty list counts as the empty hypothesis.
    assert toy["pairs"] == 3 and toy["sys_len"] == 2 and toy["bleu"] == 0.0
    assert toy["sr@1"] == 0.0 and toy["sr@5"] == pytest.approx(100 / 3)
    adj = results["adj"]
    assert adj["sr@1"] == pytest.approx(200 / 3)  # both trained followers hit
    assert results["copy-last"]["sr@5"] == 0.0


def test_model_report_json(results, tmp_path):
    anchors = {name: results[name] for name in ("copy-last", "adj")}
    report = model_report(results["toy"], anchors, perplexity=12.5, size_mb=3.2)
    path = tmp_path / "out" / "toy.json"
    write_json(report, path)
    loaded = json.loads(path.read_text())
    for key in (
        "pairs",
        "bleu",
        "precisions",
        "bp",
        "sr@1",
        "sr@5",
        "perplexity",
        "size_mb",
        "anchors",
    ):
        assert key in loaded
    assert len(loaded["precisions"]) == 4
    assert set(loaded["anchors"]) == {"copy-last", "adj"}
    assert set(loaded["anchors"]["adj"]) >= {"bleu", "precisions", "bp", "sr@1", "sr@5"}
    with pytest.raises(ValueError):
        model_report(results["toy"], {"adj": {**anchors["adj"], "pairs": 99}}, 1.0, 1.0)


def test_markdown_table_layout():
    row = {"bleu": 12.345, "precisions": [35.71, 21.5, 14.94, 10.2], "sr@1": 1.5, "sr@5": 4.25}
    report = model_report({**row, "pairs": 7}, {"copy-last": {**row, "pairs": 7}}, 9.0, 406.97)
    table = markdown_table(table_rows({"mtn": report}))
    assert table.splitlines() == [
        "| Model | Size (MB) | 1/2/3/4-gram | BLEU | SR@1 | SR@5 |",
        "| --- | ---: | --- | ---: | ---: | ---: |",
        "| mtn | 407.0 | 35.7/21.5/14.9/10.2 | 12.35 | 1.50 | 4.25 |",
        "| copy-last |  | 35.7/21.5/14.9/10.2 | 12.35 | 1.50 | 4.25 |",
    ]


def test_bleu_chart_writes_a_png(results, tmp_path):
    path = tmp_path / "charts" / "bleu.png"
    bleu_chart(results, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    import matplotlib.image

    assert matplotlib.image.imread(path).ndim == 3


@pytest.mark.slow
def test_no_tensorflow_import():
    code = "import sys, mtn_keras.scorecard; sys.exit('tensorflow' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
