"""The log's own misspellings read as slips: rare in English, one typing edit from
a word far more frequent in English and in the log; the index holds their corrections."""

import pytest

pytest.importorskip("wordfreq")

from mtn_keras.ranking.log_index import QueryLogIndex  # noqa: E402
from mtn_keras.ranking.slips import corrected, log_slips, typing_edits  # noqa: E402


def log(*counted):
    """Queries, each repeated as often as its count says."""
    return [query for query, count in counted for _ in range(count)]


def test_typing_edits_keep_the_first_and_last_letters():
    found = typing_edits("amercia")
    assert "america" in found  # two inner letters swapped
    assert "ameria" in found and "amerucia" in found  # one dropped, one added
    assert "zmercia" not in found and "amercix" not in found
    assert "amervia" in found and "amerxia" in found  # c replaced by a keyboard neighbour
    assert "amerpia" not in found  # ... never by a far key


def test_a_rare_spelling_of_a_frequent_word_is_a_slip():
    queries = log(("bank of america", 40), ("bank of amercia", 1), ("las vegas restaurant", 12))
    queries += log(("las vegas resturant", 1), ("america", 5), ("restaurant", 5))
    slips = log_slips(queries)
    assert slips == {"amercia": "america", "resturant": "restaurant"}
    assert corrected("bank of amercia online", slips) == "bank of america online"


def test_words_of_english_and_of_other_languages_are_no_slips():
    queries = log(("models", 200), ("morels", 1), ("poems", 200), ("poemas", 1))
    queries += log(("boxes", 200), ("boces", 1), ("ipod nano", 50), ("ipod nana", 1))
    slips = log_slips(queries)
    assert "poemas" not in slips  # Spanish
    assert "nana" not in slips  # a word of English, too short anyway
    # the log must type the correction ten times as often
    assert log_slips(log(("bank of america", 5), ("bank of amercia", 1))) == {}


def test_the_index_holds_the_corrections_and_saves_them(tmp_path):
    sessions = [["bank of america", "bank of america online"]] * 40 + [["bank of amercia"]]
    index = QueryLogIndex.build(sessions)
    assert index.slips == {"amercia": "america"}
    assert "bank of amercia" not in index.queries
    assert index.counts[index.queries.index("bank of america")] == 41
    index.save(tmp_path)
    assert QueryLogIndex.load(tmp_path).slips == {"amercia": "america"}
