"""`python -m mtn_keras.rank --model DIR [--data DIR] [--valid-data DIR]`: build the model's
ranking (the query-log index of the training split, the ranker fitted on the validation split, the
confidence threshold) into DIR/ranking/, used by suggest, evaluate, export and the app."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from mtn_keras.base.config import DecodeConfig
from mtn_keras.base.outputs import OutputError
from mtn_keras.base.parsing import non_negative_int
from mtn_keras.cli import (
    TRAINED_HELP,
    add_model_option,
    add_verbose,
    fail,
    file_name,
    needs_tensorflow,
    run,
)
from mtn_keras.data.logs import InputError
from mtn_keras.training.artifacts import ModelDirError, TrainedModel, load_trained

if TYPE_CHECKING:
    from mtn_keras.ranking import Ranking
    from mtn_keras.ranking.fitting_data import RankingData


def rank(
    trained: TrainedModel,
    data: RankingData,
    decoding: DecodeConfig,
    hidden: int = 16,
    progress: Callable[[str], object] = print,
) -> Ranking:
    """The `Ranking` of a loaded `TrainedModel` fitted on `data` (a ranking.build.RankingData),
    its candidates scored by the serving graph itself (ranking.build.fit_ranking)."""
    from mtn_keras.ranking import Ranking
    from mtn_keras.ranking.build import fit_ranking
    from mtn_keras.serving.steps import SuggestionSteps

    def steps_for(index):
        return SuggestionSteps(trained.model, trained.vocab.tokens, decoding, Ranking(index))

    return fit_ranking(steps_for, data, decoding, hidden, progress)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mtn_keras.rank", description=__doc__)
    add_model_option(parser, TRAINED_HELP)
    parser.add_argument(
        "--data",
        type=file_name,
        help="the prepared dataset (default: the one the model was trained on)",
    )
    parser.add_argument(
        "--valid-data",
        type=file_name,
        help="the prepared dataset whose validation split fits the "
        "ranker (default: --data's; its users must be unseen by the model and the index)",
    )
    parser.add_argument(
        "--hidden", type=non_negative_int, default=16, help="hidden units of the ranker (0: linear)"
    )
    add_verbose(parser)
    args = parser.parse_args(argv)
    if code := needs_tensorflow("rank", args.verbose):
        return code
    from mtn_keras.ranking.fitting_data import RankingData

    try:
        if not os.access(args.model, os.W_OK) and os.path.isdir(args.model):
            raise OutputError(f"{args.model}: not writable (the ranking is written into it)")
        trained = load_trained(args.model, ranking=False)
        data = args.data or trained.data_dir
        if not data:
            raise ValueError("the model's training data is not at hand; pass --data")
        valid_data = args.valid_data or data
        fitting = RankingData.load(data, valid_data)
    except (ModelDirError, InputError, OutputError, OSError, ValueError) as error:
        return fail("rank", error, args.verbose)
    if fitting.evidence is None:
        print(
            f"rank: {data} keeps no evidence of the log's clicks (prepare it again to hide "
            "what the clicks call explicit)"
        )
    if fitting.valid_histories is None:
        print(f"rank: {valid_data} keeps no users' histories (prepare it again to fit on them)")
    ranking = rank(trained, fitting, DecodeConfig(threshold=0.0), args.hidden)
    try:
        ranking.save(args.model)  # staged: a killed save leaves the previous ranking whole
    except OSError as error:
        return fail("rank", error, args.verbose)
    print(f"wrote {args.model}/ranking")
    return 0


if __name__ == "__main__":
    run(main, "rank")
