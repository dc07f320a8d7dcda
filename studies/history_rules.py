"""Where a user's history may stand in a list, measured on validation users: every untyped
pair of a dataset's validation split, with its user's earlier sessions and again without,
its candidates from the serving graph, scored by rankers fitted on the other folds of the
users (out of fold, as the thresholds are tuned), then each placement rule's lists split
into repeat and new pairs; beside them the model-free history anchor and what the best
order of the history's own candidates could reach; then the shipped rule's lists with the
log's popular next queries (DecodeConfig.popular) beside adj. How hybrid.placed and the
popular setting were chosen (docs/ranking.md).

Usage: python -m studies.history_rules [--model runs/default] [--data data/aol-90] [--every 2]
"""

import argparse

import numpy as np

SHIPPED = "unrelated where the ranker puts them, at most 1"  # DecodeConfig's default
LAST = "own best 2 kept, unrelated last, at most 2 (issue 37's)"  # unrelated_place "last"
# name: (the session's own best kept, only when at least this probable, at most this many
# unrelated earlier queries, the history's threshold: None for the ranking's)
RULES = {
    "ranker's order (no rule)": None,
    LAST: (2, 0.0, 2, None),
    "own best 1 kept, unrelated last, at most 2": (1, 0.0, 2, None),
    "own best 2 kept when p >= 0.005": (2, 0.005, 2, None),
    "none kept, unrelated last, at most 2": (0, 0.0, 2, None),
    "none kept, unrelated at most 5": (0, 0.0, 5, None),
    "none kept, history threshold 0.004": (0, 0.0, 2, 0.004),
    "none kept, history threshold 0.012": (0, 0.0, 2, 0.012),
    **{f"own best 2 kept, unrelated last, at most {c}": (2, 0.0, c, None) for c in (0, 1, 3, 5)},
    **{f"unrelated where the ranker puts them, at most {cap}": ("ranked", cap) for cap in range(6)},
}


def candidates(trained, data, every):
    """The validation pairs (every `every`-th) with and without their histories: rows,
    their candidates by `trained`'s serving graph (features, labels, groups, keys) and each
    row's user."""
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.data.pairs import session_pairs
    from mtn_keras.ranking.build import candidate_rows, pairs_as_met
    from mtn_keras.ranking.fitting_data import RankingData
    from mtn_keras.serving.service import SuggestionService

    decoding = DecodeConfig(threshold=0.0)
    service = SuggestionService(trained.model, trained.vocab.tokens, decoding, trained.ranking)
    found = RankingData.load(data)
    fitted, _, lines = pairs_as_met(found.valid_sessions, found.valid_histories)
    picked = range(0, len(session_pairs(found.valid_sessions)), every)  # the untyped rows
    with_history = [fitted[i] for i in picked]
    rows = with_history + [(context, query, "", []) for context, query, _, _ in with_history]
    users = [found.valid_users[lines[i]] for i in picked] * 2
    return rows, candidate_rows(service, rows), users


def out_of_fold(features, labels, units):
    """Each candidate's probability with its features and without the history's, by a
    ranker fitted on the other folds of the users."""
    from mtn_keras.ranking.build import FOLDS, ranker_probabilities, user_folds
    from mtn_keras.ranking.features import FEATURES, HISTORY_FEATURES
    from mtn_keras.ranking.ranker import fit_ranker

    keep = np.array([name not in HISTORY_FEATURES for name in FEATURES], np.float32)
    folds = user_folds(units)
    with_history, without = np.zeros(len(labels)), np.zeros(len(labels))
    for fold in range(FOLDS):
        held = folds == fold
        ranker = fit_ranker(features[~held], labels[~held])
        with_history[held] = ranker_probabilities(ranker, features[held])
        without[held] = ranker_probabilities(ranker, features[held] * keep)
    return with_history, without


def shown(cands, rule, thresholds):
    """The k=5 candidates (indices into `cands`' arrays) a rule shows for one row."""
    if rule is None:
        order = np.argsort(-cands["p"], kind="stable")
        return distinct(cands, [c for c in order if cands["p"][c] >= thresholds[1]])[:5]
    if rule[0] == "ranked":
        return ranked(cands, rule[1], thresholds)
    reserved, sure, cap, history_threshold = rule
    mine, loose = cands["mine"], cands["loose"]
    score = np.where(mine, cands["p"], cands["p0"])
    if history_threshold is None:
        history_threshold = thresholds[1]
    floor = np.where(mine, history_threshold, thresholds[0])
    order = distinct(cands, [c for c in np.argsort(-score, kind="stable") if score[c] >= floor[c]])
    kept = [c for c in order if not mine[c]][:reserved]
    kept = [c for c in kept if score[c] >= sure]
    chosen = kept + [c for c in order if not loose[c] and c not in kept]
    chosen = sorted(chosen[:5], key=lambda c: -score[c])
    return (chosen + [c for c in order if loose[c]][:cap])[:5]


def ranked(cands, cap, thresholds):
    """The k=5 a `ranked` rule shows: every candidate by its score (the history's with the
    history's features), none kept for the session, at most `cap` unrelated earlier queries,
    the best related one first."""
    loose = cands["loose"]
    chosen = passing(cands, cap, thresholds)[:5]
    first = [c for c in chosen if not loose[c]][:1]  # the best related one opens the list
    return first + [c for c in chosen if c not in first]


def passing(cands, cap, thresholds):
    """Every candidate a `ranked` rule may show, best first: above its threshold, distinct,
    at most `cap` unrelated earlier queries."""
    mine, loose = cands["mine"], cands["loose"]
    score = np.where(mine, cands["p"], cands["p0"])
    floor = np.where(mine, thresholds[1], thresholds[0])
    order = [c for c in np.argsort(-score, kind="stable") if score[c] >= floor[c]]
    order = distinct(cands, order)
    allowed = set([c for c in order if loose[c]][:cap])
    return [c for c in order if not loose[c] or c in allowed]


def distinct(cands, order):
    """The candidates of `order` whose word sets differ from every better one's."""
    seen, out = set(), []
    for c in order:
        if cands["keys"][c] not in seen:
            seen.add(cands["keys"][c])
            out.append(c)
    return out


def by_row(rows, table, p, p0):
    """Per row: its candidates' probabilities, keys, labels and the history's flags."""
    from mtn_keras.ranking.features import FEATURES
    from mtn_keras.ranking.hybrid import HISTORY_FOLLOWS

    log_follows = ("follow_last", "follow_earlier", "later_session")  # the study's, any count

    column = {name: FEATURES.index(name) for name in FEATURES}
    followed_columns = [column[name] for name in HISTORY_FOLLOWS + log_follows]
    features, groups = table[0], table[2]
    bounds = np.searchsorted(groups, np.arange(len(rows) + 1))  # groups ascend by row
    out = []
    for row, (context, _, _, _) in enumerate(rows):
        at = np.arange(bounds[row], bounds[row + 1])
        f = features[at]
        session_words = {word for query in context for word in query.split()}
        shares = np.array([bool(set(table[3][c].split()) & session_words) for c in at], bool)
        followed = np.any(f[:, followed_columns] > 0, axis=1)
        mine = f[:, column["history_count"]] > 0
        keys = [table[3][c] for c in at]
        out.append(
            {"p": p[at], "p0": p0[at], "keys": keys, "labels": table[1][at], "mine": mine}
            | {"loose": mine & ~shares & ~followed}
        )
    return out


def report(rows, cands, thresholds):
    """Prints each rule's SR@5 on repeat, new and all pairs, the new pairs' hits it loses
    against the lists without history, the unrelated share of shown items and the mean
    length; then the history anchor and the bounds of `history_order`."""
    from mtn_keras.scorecard.history_split import repeat_mask

    half = len(rows) // 2
    pairs = [(context, query) for context, query, _, _ in rows[:half]]
    histories = [history for _, _, _, history in rows[:half]]
    repeat = repeat_mask(pairs, histories)
    plain = lists(cands[half:], RULES[SHIPPED], thresholds)
    print(f"{half:,} pairs, {repeat.sum():,} repeat")
    print("| rule | repeat | new | all | new lost | unrelated % | length |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, rule in {"without history": "plain", **RULES}.items():
        found = plain if rule == "plain" else lists(cands[:half], rule, thresholds)
        lost = np.sum(plain["hit"] & ~found["hit"] & ~repeat)
        unrelated = 100 * found["loose"].sum() / max(found["length"].sum(), 1)
        print(
            f"| {name} | {split(found['hit'], repeat)} | {lost} | {unrelated:.1f} | "
            f"{found['length'].mean():.2f} |"
        )
    anchor, length = anchor_lists(pairs, histories)
    name = "history anchor (scorecard.anchors.History)"
    print(f"| {name} | {split(anchor, repeat)} | | | {length.mean():.2f} |")
    history_order(cands[:half], repeat, plain["hit"], anchor.mean())


def split(hit, repeat):
    """SR@5 (%) on repeat, new and all pairs, as table cells."""
    return " | ".join(f"{100 * hit[part].mean():.2f}" for part in (repeat, ~repeat, slice(None)))


def anchor_lists(pairs, histories):
    """Per pair: whether the model-free history anchor's list holds the next query, and its
    length."""
    from mtn_keras.scorecard.anchors import History, batched
    from mtn_keras.scorecard.history_split import hits

    contexts = [context for context, _ in pairs]
    shown = [[text for text, _ in found] for found in batched(History())(contexts, histories)]
    return hits(shown, pairs) > 0, np.array([len(found) for found in shown])


def history_order(cands, repeat, plain_hit, anchor):
    """Prints what ordering the history's own candidates could reach on repeat pairs (the
    ranker's five best of them; the next query anywhere among them), and the all-pairs
    SR@5 that would follow if new pairs kept their hits without history, against the
    anchor's."""
    mine = [np.flatnonzero(c["mine"]) for c in cands]
    best = [distinct(c, m[np.argsort(-c["p"][m], kind="stable")])[:5] for c, m in zip(cands, mine)]
    ranked = np.array([bool(c["labels"][b].any()) for c, b in zip(cands, best)])
    ceiling = np.array([bool(c["labels"][m].any()) for c, m in zip(cands, mine)])
    for name, hit in (("the ranker's five best", ranked), ("any order (ceiling)", ceiling)):
        bound = 100 * np.where(repeat, hit, plain_hit).mean()
        print(
            f"history's candidates, {name}: repeat {100 * hit[repeat].mean():.2f}; all pairs "
            f"at most {bound:.2f} = {bound / (100 * anchor):.2f} x the anchor"
        )


def lists(cands, rule, thresholds):
    """Per row of `cands`: whether the rule's list holds the next query, how many unrelated
    earlier queries it shows and its length."""
    found = {"hit": [], "loose": [], "length": []}
    for c in cands:
        chosen = shown(c, rule, thresholds) if len(c["p"]) else []
        found["hit"].append(bool(c["labels"][chosen].any()) if chosen else False)
        found["loose"].append(int(c["loose"][chosen].sum()) if chosen else 0)
        found["length"].append(len(chosen))
    return {name: np.array(values) for name, values in found.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m studies.history_rules", description=__doc__)
    parser.add_argument("--model", default="runs/default", help="a run folder with a ranking")
    parser.add_argument("--data", default="data/aol-90", help="its prepared dataset")
    parser.add_argument("--every", type=int, default=2, help="every n-th validation pair")
    args = parser.parse_args(argv)
    from mtn_keras.training.artifacts import load_trained

    trained = load_trained(args.model)
    rows, table, users = candidates(trained, args.data, args.every)
    p, p0 = out_of_fold(table[0], table[1], users_of(table[2], users))
    thresholds = (trained.ranking.threshold, trained.ranking.history_threshold)
    cands = by_row(rows, table, p, p0)
    report(rows, cands, thresholds)
    popular_curve(rows, cands, thresholds, trained.ranking.index, args.data)


def popular_curve(rows, cands, thresholds, index, data):
    """Prints SR@5 without and with history (repeat, new, all; new: with − without) as the
    lists take at most n of the log's popular next queries (ranking/popular.py) at their
    shares (times each history scale given with a history), beside the adj anchor."""
    from mtn_keras.base.config import FILTERS
    from mtn_keras.ranking.blocklist import blocked_phrases
    from mtn_keras.ranking.fitting_data import RankingData
    from mtn_keras.ranking.popular import WITH_HISTORY, PopularQueries
    from mtn_keras.ranking.rules import word_set
    from mtn_keras.scorecard.anchors import Adj
    from mtn_keras.scorecard.history_split import repeat_mask

    found = PopularQueries(index, 1, 0.0, blocked_phrases(), FILTERS)
    popular = list(zip(found.texts, found.shares.tolist()))
    half = len(rows) // 2
    repeat = repeat_mask([row[:2] for row in rows[:half]], [row[3] for row in rows[:half]])
    adj = Adj().fit(RankingData.load(data).train_sessions)
    hit = np.array([q in [s for s, _ in adj.suggest(c, 5)] for c, q, _, _ in rows[half:]])
    print(f"\nadj without history: {split(hit, repeat)}")
    print(
        "| popular, at most n (history scale) | without: repeat | new | all | with: repeat "
        "| new | all | new: with − without | popular shown per list (with) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for cap, scale in [(0, 0)] + [(n, WITH_HISTORY) for n in range(1, 6)] + [(3, 0.1), (3, 1.0)]:
        out = [
            with_popular(row, c, cap, scale if i < half else 1.0, popular, thresholds, word_set)
            for i, (row, c) in enumerate(zip(rows, cands))
        ]
        hits = np.array([h for h, _ in out])
        shown = np.mean([n for _, n in out[:half]])
        new = 100 * (hits[:half][~repeat].mean() - hits[half:][~repeat].mean())
        print(
            f"| {cap} ({scale}) | {split(hits[half:], repeat)} | {split(hits[:half], repeat)} "
            f"| {new:+.2f} | {shown:.2f} |"
        )


def with_popular(row, cands, cap, scale, popular, thresholds, word_set):
    """Whether the shipped rule's list with at most `cap` popular queries holds the next
    query, and how many popular ones it shows."""
    context, query, _, history = row
    order = passing(cands, RULES[SHIPPED][1], thresholds) if len(cands["p"]) else []
    score = np.where(cands["mine"], cands["p"], cands["p0"]) if len(cands["p"]) else []
    items = [(score[c], bool(cands["labels"][c]), False) for c in order]
    listed = set(cands["keys"][c] for c in order)
    last, typed = set(context[-1].split()), set(history)
    offered = [
        (share * scale, text == query, True)
        for text, share in popular
        if not set(text.split()) <= last
        and text not in typed
        and share * scale >= thresholds[0]
        and word_set(text) not in listed
    ][:cap]
    shown = sorted(items + offered, key=lambda item: -item[0])[:5]
    return any(h for _, h, _ in shown), sum(p for _, _, p in shown)


def users_of(groups, users):
    """Each candidate's user, from its row's."""
    return [users[group] for group in groups]


if __name__ == "__main__":
    main()
