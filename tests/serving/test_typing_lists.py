"""The bundled model's lists while typing are true to what was typed and hold no fragment:
the sessions of the judged study (studies/typing/sessions.tsv, written before any list was
read) and probes of our own, through the `complete` signature."""

from pathlib import Path

import pytest

from mtn_keras.data.text import completes, normalise
from mtn_keras.ranking.fragments import FUNCTION_WORDS

STUDY = Path(__file__).parents[2] / "studies" / "typing" / "sessions.tsv"
# Every word of these is English or starts one: nothing may be corrected.
MORE = [
    ([], "new york wea"),
    (["cheap flights"], "cheap hote"),
    (["how to tie a tie"], "how to "),
    (["best buy"], "what is the "),
    ([], "can you get "),
    (["harry potter"], "harry potter and the "),
    ([], "fresh"),
    (["pizza hut"], "pizza "),
]
# A word known nowhere (its place given): a correction may replace it, and only it.
SLIPS = [([], "weahter", 0), ([], "bostn wea", 0), (["movie tickets"], "movie timse ", 1)]


def study():
    found = []
    for line in STUDY.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            earlier, typed = line.split("\t")
            found.append(([q.strip() for q in earlier.split("|") if q.strip()], typed))
    return found


def lists(model, probes):
    from mtn_keras.base.quiet import import_tensorflow

    tf = import_tensorflow()
    width = max(1, *(len(s) for s, _ in probes))
    out = model.signatures["complete"](
        session=tf.constant([[""] * (width - len(s)) + s for s, _ in probes]),
        prefix=tf.constant([typed for _, typed in probes]),
    )
    return [[t.decode() for t in row if t] for row in out["suggestions"].numpy()]


def chars(typed):
    return normalise(typed) + (" " if typed.endswith(" ") else "")


@pytest.mark.slow
def test_every_item_starts_with_what_was_typed_and_ends_as_a_query_ends(bundled_savedmodel):
    from mtn_keras.serving.word_starts import english_words

    english = set(english_words())
    probes = study() + MORE
    shown = lists(bundled_savedmodel, probes)
    assert sum(map(len, shown)) > 2 * len(probes)  # lists were shown
    for (_, typed), items in zip(probes, shown):
        words = normalise(typed).split()
        plain = all(w in english for w in words[:-1]) and (
            any(e.startswith(words[-1]) for e in english) if words else True
        )
        for item in items:
            assert not plain or completes(normalise(item), chars(typed)), (typed, item)
            assert normalise(item).split()[-1] not in FUNCTION_WORDS, (typed, item)


@pytest.mark.slow
def test_a_word_known_nowhere_is_the_only_one_corrected(bundled_savedmodel):
    shown = lists(bundled_savedmodel, [(session, typed) for session, typed, _ in SLIPS])
    assert any(item.startswith("weather") for item in shown[0]), shown[0]
    for (_, typed, slip), items in zip(SLIPS, shown):
        words, last_open = normalise(typed).split(), not typed.endswith(" ")
        for item in map(str.split, map(normalise, items)):
            for i, word in enumerate(words):
                if i != slip and i < len(item):
                    is_open = last_open and i == len(words) - 1
                    assert item[i].startswith(word) if is_open else item[i] == word, (typed, item)
