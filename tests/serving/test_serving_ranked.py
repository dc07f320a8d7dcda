"""Ranked suggestions: the beam's and the log's candidates together, their sources, the
filters and the threshold, in Python and in the SavedModel."""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from fresh_python import printed_json

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
    from mtn_keras.base.config import DecodeConfig
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
        assert all(s in ("model", "log", "model+log", "popular") for s in source[: len(real)])
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

    from mtn_keras.data.prepared import load_split
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


def test_typing_an_earlier_query_of_the_session_again_completes_it(hybrid):
    import tensorflow as tf

    from mtn_keras.ranking.features import FEATURES

    session = tensor([["hotel deals", "used cars"]] * 3)
    typed = tf.constant(["hot", "us", ""])
    table = hybrid.candidate_table(session, typed, history_tensor([[]] * 3))
    candidates, valid = texts(table, "texts"), table["valid"].numpy()
    sources, features = texts(table, "sources"), table["features"].numpy()
    at = candidates[0].index("hotel deals")
    assert valid[0, at] and "session" in sources[0][at]
    assert features[0, at, FEATURES.index("session_return")] == pytest.approx(0.5)
    # the query just searched never; nothing typed: a session query is no suggestion
    assert not any(v for t, v in zip(candidates[1], valid[1]) if t == "used cars")
    assert not any(v for t, v in zip(candidates[2], valid[2]) if t == "hotel deals")
    assert not features[1:, :, FEATURES.index("session_return")].any()
    shown = texts(hybrid.complete(session, typed))
    assert all(t.startswith("hot") for t in shown[0] if t) and "used cars" not in shown[1]


def test_savedmodel_ranks_as_python_does(hybrid, ranked_exported):
    import tensorflow as tf

    script = textwrap.dedent(f"""
        import json, sys
        import tensorflow as tf
        assert not any(m.startswith("mtn_keras") for m in sys.modules)
        model = tf.saved_model.load({str(ranked_exported)!r})
        rows = {[s + [""] * (3 - len(s)) for s in SESSIONS]!r}
        out = model.signatures["suggest"](session=tf.constant(rows))
        done = model.signatures["complete"](session=tf.constant(rows),
                                            prefix=tf.constant(["hot"] * 4))
        value = lambda x: x.decode() if isinstance(x, bytes) else float(x)
        keys = ("suggestions", "scores", "sources")
        result = {{key: [[value(x) for x in r] for r in out[key].numpy()] for key in keys}}
        result["complete"] = [[x.decode() for x in r] for r in done["suggestions"].numpy()]
        history = tf.constant({[[""] * (6 - len(h)) + h for h in HISTORY]!r})
        mine = model.signatures["suggest_with_history"](session=tf.constant(rows), history=history)
        result["history"] = [[x.decode() for x in r] for r in mine["suggestions"].numpy()]
        result["complete_scores"] = done["scores"].numpy().tolist()
        print(json.dumps(result))
    """)
    result = printed_json(script)
    mine = hybrid.suggest(tensor(SESSIONS))
    assert result["suggestions"] == texts(mine)
    assert result["sources"] == texts(mine, "sources")
    np.testing.assert_allclose(result["scores"], mine["scores"].numpy(), atol=1e-5)
    assert all(any(row) for row in result["complete"]), result["complete"]  # empty session too
    completed = hybrid.complete(tensor(SESSIONS), tf.constant(["hot"] * 4))
    assert result["complete"] == texts(completed)
    np.testing.assert_allclose(result["complete_scores"], completed["scores"].numpy(), atol=1e-5)
    assert all(t.startswith("hot") for row in result["complete"] for t in row if t)
    padded = tensor([s + [""] * (3 - len(s)) for s in SESSIONS])
    assert result["history"] == texts(hybrid.suggest_with_history(padded, history_tensor(HISTORY)))


HISTORY = [
    ["used cars", "cheap hotels paris", "cheap flights", "flights to paris"],
    ["hotel deals", "spa weekend", "hotel deals near me", "spa weekend deals"],
    [],
    ["cheap flights"],
]


def history_tensor(histories, width=6):
    import tensorflow as tf

    return tf.constant([[""] * (width - len(h)) + h for h in histories], tf.string)


def test_an_empty_history_is_no_evidence_and_ranks_as_without_one(hybrid, ranked):
    """With an empty history no candidate is the history's and all its evidence is 0, and
    the list is the Keras ranker's order of the valid candidates, each word set once
    (worked out here from the candidate table, not by the graph's threshold and placement)."""
    import tensorflow as tf

    from mtn_keras.ranking.features import FEATURES
    from mtn_keras.ranking.history_lookup import HISTORY_EVIDENCE
    from mtn_keras.ranking.rules import word_set

    empty = history_tensor([[]] * len(SESSIONS))
    table = hybrid.candidate_table(tensor(SESSIONS), tf.fill([len(SESSIONS)], ""), empty)
    features = table["features"].numpy()
    history = [FEATURES.index(name) for name in ("from_history", *HISTORY_EVIDENCE)]
    assert not features[..., history].any()
    assert not any("history" in source for row in texts(table, "sources") for source in row)
    logits = ranked.ranking.ranker.predict(features.reshape(-1, len(FEATURES)), verbose=0)
    order = np.argsort(-logits.reshape(features.shape[:2]), axis=1, kind="stable")
    expected = []
    for session, row, valid, ranks in zip(SESSIONS, texts(table, "texts"), table["valid"], order):
        keys, shown = set(), []
        for at in ranks:
            if valid[at] and word_set(row[at]) not in keys and any(session):
                keys.add(word_set(row[at]))
                shown.append(row[at])
        expected.append(shown[:K] + [""] * (K - len(shown[:K])))
    plain = service_of(ranked, ranked.ranking, threshold=0.0, popular=0)
    assert texts(plain.suggest_with_history(tensor(SESSIONS), empty)) == expected
    # the log's popular queries too are offered as without a history
    with_popular = hybrid.suggest_with_history(tensor(SESSIONS), empty)
    assert texts(with_popular) == texts(hybrid.suggest(tensor(SESSIONS)))


def test_the_users_history_comes_back_ranked_and_filtered(hybrid):
    import tensorflow as tf

    from mtn_keras.ranking.features import FEATURES
    from mtn_keras.ranking.rules import repeats_a_word, repeats_session

    empty = tf.fill([len(SESSIONS)], "")
    table = hybrid.candidate_table(tensor(SESSIONS), empty, history_tensor(HISTORY))
    candidates, valid = texts(table, "texts"), table["valid"].numpy()
    mine = table["features"].numpy()[..., FEATURES.index("from_history")]
    # what followed "cheap flights" (the session's first query) in the first user's history
    # is a candidate, theirs
    at = candidates[0].index("flights to paris")
    assert valid[0, at] and mine[0, at] == 1 and "history" in texts(table, "sources")[0][at]
    follows = table["features"].numpy()[0, at, FEATURES.index("history_follow_session")]
    assert follows == pytest.approx(np.log1p(1))
    # the user's, but a query of the session: never valid
    assert not any(v for t, v in zip(candidates[1], valid[1]) if t == "hotel deals near me")
    out = hybrid.suggest_with_history(tensor(SESSIONS), history_tensor(HISTORY))
    for session, row in zip(SESSIONS, texts(out)):
        assert not any(t and (repeats_session(t, session) or repeats_a_word(t)) for t in row)
    kept, weights = texts(out, "history"), out["history_attention"].numpy()
    for row, names in zip(weights, kept):
        assert (row[[not n for n in names]] == 0).all()
        assert row.sum() == pytest.approx(1.0, abs=1e-5) or not row.any()


def test_history_candidates_are_completions_too(hybrid):
    import tensorflow as tf

    out = hybrid.complete_with_history(
        tensor(SESSIONS), tf.constant(["fli", "spa w", "", "cheap"]), history_tensor(HISTORY)
    )
    shown = texts(out)
    assert all(t.startswith("fli") for t in shown[0] if t) and any(shown[0])
    assert all(t.startswith("spa w") for t in shown[1] if t) and any(shown[1])


def test_suggest_command_reads_a_history_file_or_a_users_log(hybrid, ranked_exported, tmp_path):
    queries = ["cheap flights", "best cheap flights"]
    (tmp_path / "mine.txt").write_text("\n".join(HISTORY[0]) + "\n\n")
    rows = ["AnonID\tQuery\tQueryTime\tItemRank\tClickURL"] + [
        f"{user}\t{query}\t2006-03-0{day + 1} 10:00:00\t\t"
        for user, history in (("7", HISTORY[0]), ("8", HISTORY[1]))
        for day, query in enumerate(history)
    ]
    (tmp_path / "log.txt").write_text("\n".join(rows) + "\n")
    expected = texts(hybrid.suggest_with_history(tensor([queries]), history_tensor(HISTORY[:1])))
    suggest = [
        sys.executable,
        "-m",
        "mtn_keras.suggest",
        "--model",
        str(ranked_exported),
        "--history",
    ]
    for given in (["mine.txt"], ["log.txt", "--user", "7"]):
        done = subprocess.run(
            [*suggest, str(tmp_path / given[0]), *given[1:], *queries],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode in (0, 1), done.stderr[-2000:]
        shown = [line.split("\t")[1] for line in done.stdout.splitlines()]
        assert shown == [t for t in expected[0] if t]
    done = subprocess.run(
        [*suggest, str(tmp_path / "log.txt"), "--user", "9", *queries],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "no query of user 9" in done.stderr


def test_a_session_with_history_is_held_to_its_own_threshold(ranked):
    from dataclasses import replace

    assert 0 <= ranked.ranking.history_threshold <= 1  # tuned on the validation users' rows
    ranking = replace(ranked.ranking, threshold=1.0, history_threshold=0.0)
    service = service_of(ranked, ranking)
    alone = texts(service.suggest(tensor(SESSIONS[:1])))
    mine = texts(service.suggest_with_history(tensor(SESSIONS[:1]), history_tensor(HISTORY[:1])))
    assert not any(alone[0]) and any(mine[0])


def test_evaluate_prefix_with_history_scores_complete_with_history_beside_its_anchor(
    ranked_exported, prepared_data, tmp_path
):
    from mtn_keras.evaluate import main

    report = tmp_path / "prefix.json"
    args = ["--model", str(ranked_exported), "--data", str(prepared_data), "--prefix", "2"]
    assert main([*args, "--history", "--bootstrap", "0", "--json", str(report)]) == 0
    result = json.loads(report.read_text())
    for case in ("2 characters", "first query, 4 characters, empty session"):
        rows = result[case]
        assert set(rows) == {
            "ranked",
            "ranked + history",
            "MPC",
            "MPC without the session's queries",
            "history then MPC",
        }
        assert rows["ranked + history"]["pairs"] == rows["history then MPC"]["pairs"] > 0


def test_a_history_entry_is_cut_to_the_models_query_length(hybrid):
    import tensorflow as tf

    long_entry = " ".join(f"word{i}" for i in range(5000))
    history = tf.constant([["cheap flights", long_entry, "hotel deals"]])
    kept = [t.decode() for t in hybrid.kept_history(tensor(SESSIONS[:1]), history).numpy()[0]]
    assert kept[-3:] == ["cheap flights", " ".join(long_entry.split()[: hybrid.n]), "hotel deals"]


def test_the_unrelated_history_setting_caps_the_users_unrelated_queries(ranked, hybrid):
    """At most `unrelated_history` of the user's earlier queries that relate
    to nothing in the session stand in a list (the default: one, where the ranker puts it,
    never first)."""
    unrelated = ["zebra crossing", "quantum physics", "garden gnome", "violin lessons"]
    history = history_tensor([unrelated] * len(SESSIONS))
    sessions = tensor(SESSIONS[:3] + [["cheap flights"]])

    def shown(service):
        out = texts(service.suggest_with_history(sessions, history))
        return [[t for t in row if t in unrelated] for row in out[:3]], out[:3]

    none, _ = shown(service_of(ranked, ranked.ranking, threshold=0.0, unrelated_history=0))
    assert none == [[], [], []]
    found, lists = shown(hybrid)
    assert all(len(row) <= 1 for row in found) and any(found)
    assert not any(row[0] in unrelated for row in lists if row[0])


def test_the_export_warms_up_the_history_signatures_too(ranked_exported):
    from warmup_records import check_warmup

    model = json.loads((ranked_exported / "export.json").read_text())["model"]
    assert check_warmup(ranked_exported, model) == [
        "suggest",
        "complete",
        "suggest_with_history",
        "complete_with_history",
    ]
