"""Fragments (mtn_keras/ranking/fragments.py): where queries end is the log's to say, and
function words never end a suggestion."""

from mtn_keras.ranking.fragments import FUNCTION_WORDS, MIN_SEEN, open_words


def test_a_word_queries_rarely_end_on_leaves_a_query_open():
    queries = ["santa claus", "santa fe", "claus", "stand for", "hand stand", "signs"]
    counts = [MIN_SEEN, MIN_SEEN, 1, 1, MIN_SEEN, 3]
    found = set(open_words(queries, counts))
    assert "santa" in found  # 40 times typed, never last
    assert "stand" not in found and "claus" not in found and "signs" not in found
    assert FUNCTION_WORDS <= found  # "for", whatever a small log says


def test_the_graph_hides_what_ends_on_an_open_word():
    import tensorflow as tf

    from mtn_keras.ranking.fragments import Fragments

    fragments = Fragments(["santa claus"] * 2, [MIN_SEEN, 1])
    texts = tf.constant([["stand for", "santa", "santa claus", "signs", ""]])
    found = fragments(tf.strings.split(texts).to_tensor("")).numpy().tolist()
    assert found == [[True, True, False, False, False]]
