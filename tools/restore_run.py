"""Rebuilds a run folder (model.keras, vocab.txt, config.json, ranking/) from an exported
SavedModel and the prepared dataset it was trained on, so that a fresh machine can refit the
ranking and re-export the bundled model without retraining it (four epochs are 46 minutes
on 2 cores). The weights are the SavedModel's own, matched by their Keras paths.

Usage: python -m tools.restore_run --savedmodel saved_models/default --data data/aol-90
           --out runs/default
"""

import argparse
import json
import os
import shutil

# The ranker's weights in the SavedModel's checkpoint, in `ranker.weights` order
# (tables.track_variables_only keeps them as `ranker_variables`).
RANKER_KEY = "hybrid/ranker_variables/%d/.ATTRIBUTES/VARIABLE_VALUE"
# The model's vocabulary in id order (serving/encoding.py's SessionEncoder.tokens).
TOKENS_KEY = "encoder/tokens/.ATTRIBUTES/VARIABLE_VALUE"


def matched(keras_variables, saved_variables):
    """Pairs each Keras variable with the saved one of the same path (less the first part,
    the model's own name, which TensorFlow made unique at export: `mtn_1/...`)."""
    saved = {v.name.split(":")[0].split("/", 1)[-1]: v for v in saved_variables}
    pairs = []
    for variable in keras_variables:
        key = variable.path.split("/", 1)[-1]
        if key not in saved:
            raise SystemExit(f"restore: the SavedModel has no variable {variable.path}")
        pairs.append((variable, saved[key]))
    return pairs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--savedmodel", required=True, help="a bundled model folder")
    parser.add_argument("--data", required=True, help="the prepared dataset it was trained on")
    parser.add_argument("--out", required=True, help="the run folder to write")
    args = parser.parse_args(argv)
    import tensorflow as tf

    import mtn_keras.models as models
    from mtn_keras.base.config import model_config_from_dict
    from mtn_keras.data.evidence import Evidence
    from mtn_keras.data.prepared import load_split, load_users
    from mtn_keras.ranking import Ranking
    from mtn_keras.ranking.blocklist import blocked_phrases
    from mtn_keras.ranking.log_index import QueryLogIndex
    from mtn_keras.ranking.ranker import build_ranker
    from mtn_keras.training.artifacts import data_entry

    with open(os.path.join(args.savedmodel, "config.json")) as handle:
        config = json.load(handle)
    with open(os.path.join(args.savedmodel, "savedmodel", "export.json")) as handle:
        exported = json.load(handle)
    loaded = tf.saved_model.load(os.path.join(args.savedmodel, "savedmodel"))
    saved = loaded.complete.concrete_functions[0].trainable_variables
    model = models.build_model(config["model"], model_config_from_dict(config["model_config"]))
    model.build()
    for variable, value in matched(model.weights, saved):
        variable.assign(value.numpy())
    info = exported["ranking"]
    ranker = build_ranker(len(info["features"]), info["hidden"])
    checkpoint = tf.train.load_checkpoint(
        os.path.join(args.savedmodel, "savedmodel", "variables", "variables")
    )
    ranker.set_weights([checkpoint.get_tensor(RANKER_KEY % i) for i in range(len(ranker.weights))])
    os.makedirs(args.out, exist_ok=True)
    model.save(os.path.join(args.out, "model.keras"))
    shutil.copy(os.path.join(args.savedmodel, "train_summary.json"), args.out)
    # The model's vocabulary, from inside the SavedModel: the prepared dataset's vocab.txt
    # holds the same words in another order once `prepare` leaves out other sessions (the
    # safety filters of issue 58 moved 4,020 ids), and read with it the model errs.
    tokens = [token.decode("utf-8") for token in checkpoint.get_tensor(TOKENS_KEY)]
    with open(os.path.join(args.out, "vocab.txt"), "w", encoding="utf-8") as handle:
        handle.writelines(f"{token}\n" for token in tokens)
    with open(os.path.join(args.out, "config.json"), "w") as handle:
        json.dump({**config, "data": data_entry(args.data, args.out)}, handle, indent=2)
    train = load_split(args.data, "train")
    users, evidence = load_users(args.data, "train"), Evidence.load(args.data)
    index = QueryLogIndex.build(train, blocked_phrases(), users=users, evidence=evidence)
    built = index.sizes()  # an older export lacks the newer tables' sizes
    if any(built.get(name) != size for name, size in info["index"].items()):
        raise SystemExit(f"restore: the index of {args.data} differs from the export's")
    threshold, history_threshold = info.pop("threshold"), info.pop("history_threshold")
    Ranking(index, ranker, threshold, info, history_threshold).save(args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
