"""Ranked suggestions: the beam's and the log's candidates together, their sources, the
filters and the threshold, in Python and in the SavedModel."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

K = 5
SESSIONS = [
    ["cheap flights", "best cheap flights"],
    ["hotel deals", "hotel deals near me", "hotel deals reviews"],
    ["used cars", "zzyzx gadgets"],
    ["", ""],
]


def tensor(sessions):
    import tensorflow as tf

    width = max(len(s) for s in sessions)
    return tf.constant([s + [""] * (width - len(s)) for s in sessions])


def service_of(trained, ranking=None, **decoding):
    from mtn_keras.config import DecodeConfig
    from mtn_keras.serving.service import SuggestionService

    config = DecodeConfig(**{"k": K, "beam": 6, "xla": False, **decoding})
    return SuggestionService(trained.model, trained.vocab.tokens, config, ranking)


def texts(out, key="suggestions"):
    return [[t.decode() for t in row] for row in out[key].numpy()]


@pytest.fixture(scope="module")
def hybrid(ranked):
    return service_of(ranked, ranked.ranking, threshold=0.0)


def test_ranked_lists_mix_both_sources_and_pass_every_filter(hybrid, ranked):
    from mtn_keras.ranking.rules import repeats_a_word, repeats_session

    out = hybrid.suggest(tensor(SESSIONS))
    shown, sources, scores = texts(out), texts(out, "sources"), out["scores"].numpy()
    for session, row, source, score in zip(SESSIONS[:3], shown, sources, scores):
        real = [t for t in row if t]
        assert 3 <= len(real) <= K  # threshold 0: all that pass the filters, up to k
        assert not any(repeats_session(t, session) or repeats_a_word(t) for t in real)
        assert len({tuple(sorted(t.split())) for t in real}) == len(real)
        assert all(s in ("model", "log", "model+log") for s in source[: len(real)])
        shown_scores = score[: len(real)]
        assert (np.diff(shown_scores) <= 0).all() and (
            (0 <= shown_scores) & (shown_scores <= 1)
        ).all()
        assert np.isneginf(score[len(real) :]).all()
    assert any("log" in s for row in sources for s in row)
    assert shown[3] == [""] * K and np.isneginf(scores[3]).all() and sources[3] == [""] * K


def test_the_threshold_shortens_lists(ranked, hybrid):
    strict = service_of(ranked, ranked.ranking, threshold=1.0)
    out = strict.suggest(tensor(SESSIONS))
    assert texts(out) == [[""] * K] * 4 and np.isneginf(out["scores"].numpy()).all()
    middle = float(np.median(hybrid.suggest(tensor(SESSIONS[:3]))["scores"].numpy()))
    halfway = service_of(ranked, ranked.ranking, threshold=middle)
    some = texts(halfway.suggest(tensor(SESSIONS[:3])))
    assert 0 < sum(bool(t) for row in some for t in row) < 3 * K


def test_completions_answer_whatever_the_threshold_and_need_no_shared_word(ranked):
    import tensorflow as tf

    strict = service_of(ranked, ranked.ranking, threshold=1.0)
    session = tensor(SESSIONS[:3])  # "hot..." shares no word with the first and third
    done = texts(strict.complete(session, tf.constant(["hot"] * 3)))
    assert all(any(row) for row in done)
    assert all(t.startswith("hot") for row in done for t in row if t)


def test_source_beam_keeps_the_papers_setting(ranked):
    beam = service_of(ranked, ranked.ranking, source="beam")
    plain = service_of(ranked)
    assert texts(beam.suggest(tensor(SESSIONS))) == texts(plain.suggest(tensor(SESSIONS)))
    assert {s for row in texts(beam.suggest(tensor(SESSIONS)), "sources") for s in row} <= {
        "model",
        "",
    }


def test_filters_can_be_switched_off(trained):
    from mtn_keras.ranking.rules import repeats_session

    session = [["hotel deals", "hotel deals near me", "cheap flights"]]
    unfiltered = service_of(trained, filters=(), repeat_last=True)
    shown = [t for t in texts(unfiltered.suggest(tensor(session)))[0] if t]
    default = service_of(trained)  # held: a signature keeps only a weak reference to its service
    filtered = [t for t in texts(default.suggest(tensor(session)))[0] if t]
    assert any(repeats_session(t, session[0]) for t in shown)
    assert not any(repeats_session(t, session[0]) for t in filtered)


def test_a_blocked_word_never_comes_out(ranked, prepared_data):
    import tensorflow as tf

    from mtn_keras.data.prepare import load_split
    from mtn_keras.ranking import Ranking
    from mtn_keras.ranking.blocklist import blocked_phrases
    from mtn_keras.ranking.log_index import QueryLogIndex

    sessions = (
        load_split(prepared_data, "train") + [["cheap flights", "nude cheap flights", "porn"]] * 20
    )
    index = QueryLogIndex.build(sessions, blocked_phrases())
    offered = {index.queries[i] for i in np.concatenate([index.neighbours, index.word_queries])}
    assert "cheap flights" in offered and not offered & {"nude cheap flights", "porn"}
    service = service_of(ranked, Ranking(index, ranked.ranking.ranker), threshold=0.0)
    out = texts(
        service.suggest(tensor([["cheap flights"], ["nude cheap flights"], ["porn", "nude"]]))
    )
    assert any(out[0]) and not any(
        w in ("nude", "porn") for row in out for t in row for w in t.split()
    )
    typed = service.complete(
        tensor([[""], ["cheap flights"], [""]]), tf.constant(["nu", "po", "p"])
    )
    assert not any(w in ("nude", "porn") for row in texts(typed) for t in row for w in t.split())


def test_an_empty_session_gets_the_logs_completions_once_words_are_typed(hybrid, ranked):
    import tensorflow as tf

    empty = tensor([["", ""], ["", ""], ["", ""]])
    out = hybrid.complete(empty, tf.constant(["hot", "used cars ", "zzq"]))
    shown, sources = texts(out), texts(out, "sources")
    assert any(shown[0]) and all(t.startswith("hot") for t in shown[0] if t)
    assert any(shown[1]) and all(t.startswith("used cars") for t in shown[1] if t)
    assert any("log" in source for source in sources[0])
    # nothing in the log starts with it: only the beam's, which keeps a word it cannot complete
    assert all(source == "model" for t, source in zip(shown[2], sources[2]) if t)
    logged = {q for q in ranked.ranking.index.queries if q.startswith("hot")}
    assert logged & set(shown[0])  # the log's completions are among them
    nothing = hybrid.suggest(empty)  # without typed words an empty session gets nothing
    assert not any(t for row in texts(nothing) for t in row)
    assert np.isneginf(nothing["scores"].numpy()).all()


@pytest.fixture(scope="module")
def exported(ranked, tmp_path_factory):
    from mtn_keras.config import DecodeConfig
    from mtn_keras.export import export

    out = tmp_path_factory.mktemp("export") / "ranked"
    export(ranked, str(out), DecodeConfig(k=K, beam=6, threshold=0.0))
    return out


def test_savedmodel_ranks_as_python_does(hybrid, exported):
    import tensorflow as tf

    script = textwrap.dedent(f"""
        import json, sys
        import tensorflow as tf
        assert not any(m.startswith("mtn_keras") for m in sys.modules)
        model = tf.saved_model.load({str(exported)!r})
        rows = {[s + [""] * (3 - len(s)) for s in SESSIONS]!r}
        out = model.signatures["suggest"](session=tf.constant(rows))
        done = model.signatures["complete"](session=tf.constant(rows),
                                            prefix=tf.constant(["hot"] * 4))
        value = lambda x: x.decode() if isinstance(x, bytes) else float(x)
        keys = ("suggestions", "scores", "sources")
        result = {{key: [[value(x) for x in r] for r in out[key].numpy()] for key in keys}}
        result["complete"] = [[x.decode() for x in r] for r in done["suggestions"].numpy()]
        result["complete_scores"] = done["scores"].numpy().tolist()
        print(json.dumps(result))
    """)
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    mine = hybrid.suggest(tensor(SESSIONS))
    assert result["suggestions"] == texts(mine)
    assert result["sources"] == texts(mine, "sources")
    np.testing.assert_allclose(result["scores"], mine["scores"].numpy(), atol=1e-5)
    assert all(any(row) for row in result["complete"]), result["complete"]  # empty session too
    completed = hybrid.complete(tensor(SESSIONS), tf.constant(["hot"] * 4))
    assert result["complete"] == texts(completed)
    np.testing.assert_allclose(result["complete_scores"], completed["scores"].numpy(), atol=1e-5)
    assert all(t.startswith("hot") for row in result["complete"] for t in row if t)
