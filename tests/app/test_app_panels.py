"""The panels' tables without the app: the copy panel lists only words the suggestion holds,
and the history panel lists a query read more than once in one row."""

import numpy as np

from mtn_tui.widgets.copy_panel import copied_words
from mtn_tui.widgets.history_panel import ROWS, history_table, merged


def test_the_copy_panel_lists_only_words_the_suggestion_holds():
    tokens = [["dentist", "near", "me"], ["teeth", "whitening", ""]]
    weights = np.array([[0.3, 0.21, 0.1], [0.05, 0.34, 0.0]])
    words = copied_words("dentist whitening", weights, tokens, [1, 2])
    assert words == [(0.34, 2, "whitening"), (0.3, 1, "dentist")]
    assert copied_words("cheap flights", weights, tokens, [1, 2]) == []


def test_a_query_read_three_times_is_one_row_with_its_weights_summed():
    queries = ["red sox tickets", "fenway park", "red sox tickets", "red sox tickets"]
    distinct, summed = merged(queries, np.array([0.1, 0.2, 0.3, 0.25], np.float32))
    assert distinct == ["red sox tickets", "fenway park"]
    np.testing.assert_allclose(summed, [0.65, 0.2], rtol=1e-6)
    table = history_table(queries, np.array([0.1, 0.2, 0.3, 0.25]), 60)
    assert table.row_count == 2 <= ROWS


def test_a_corrected_suggestion_is_marked_and_a_history_one_too():
    from rich.console import Console

    from mtn_keras.client import Suggestion
    from mtn_tui.widgets.suggestion_list import FIXED_GLYPH, HISTORY_GLYPH, suggestion_row

    def shown(source):
        console = Console(width=60, record=True)
        console.print(suggestion_row(1, 1.0, Suggestion("weather", 0.5, source)))
        return console.export_text()

    assert FIXED_GLYPH in shown("log+fixed") and HISTORY_GLYPH not in shown("log+fixed")
    assert FIXED_GLYPH not in shown("model+log")
    assert HISTORY_GLYPH in shown("history+fixed") and FIXED_GLYPH in shown("history+fixed")
