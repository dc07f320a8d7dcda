"""The scorecard of next-query suggesters, what the `evaluate` and `compare` commands score
with: BLEU, n-gram precision, SR@k, anchors and reports."""

from mtn_keras.scorecard.anchors import ANCHORS, Adj, CopyLast, History, batched
from mtn_keras.scorecard.metrics import corpus_scores, perplexity, success_rate
from mtn_keras.scorecard.report import (
    bleu_chart,
    evaluate_suggesters,
    history_table,
    markdown_table,
    model_report,
    quality_table,
    table_rows,
    write_json,
)

__all__ = [
    "ANCHORS",
    "Adj",
    "CopyLast",
    "History",
    "batched",
    "bleu_chart",
    "corpus_scores",
    "evaluate_suggesters",
    "history_table",
    "markdown_table",
    "model_report",
    "perplexity",
    "quality_table",
    "success_rate",
    "table_rows",
    "write_json",
]
