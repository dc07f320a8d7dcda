"""The model-free `history` anchor: the user's own earlier queries."""

from mtn_keras.scorecard.anchors import History, batched


def test_the_history_anchor_offers_followers_then_shared_words_then_frequent():
    history = ["a b", "c d", "x y", "a b", "e f", "q r", "q r", "b z"]
    found = [text for text, _ in History().suggest(["a b"], history, k=5)]
    # followers of "a b" (c d, e f), then sharing a word, latest first (b z), then frequent
    assert found[:2] == ["c d", "e f"] and found[2] == "b z" and found[3] == "q r"
    assert "a b" not in found and len(found) == 5


def test_the_history_anchor_reads_only_what_it_is_given():
    """Two users after the same session get each their own earlier queries; an empty
    session gets nothing, whatever its history."""
    anchor = batched(History(), 3)
    assert anchor.reads_history
    contexts = [["a b"], ["a b"], []]
    histories = [["a b", "c d", "x y"], ["a b", "e f"], ["a b", "c d"]]
    assert anchor(contexts, histories) == [[("c d", 3.0), ("x y", 2.0)], [("e f", 3.0)], []]
