"""The serving tests' shared fixtures: the tiny model's service (no XLA; its SavedModel,
`exported`, is in tests/conftest.py); a tiny MTN on WordPiece pieces of made-up words, its
service and its SavedModel."""

import pytest
from built_once import built_once
from tiny_training import tiny_train_args

K = 5


@pytest.fixture(scope="session")
def service(trained):
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.serving.service import SuggestionService

    # Without XLA, to spare the compilations; the export (XLA by default) is checked against it.
    return SuggestionService(
        trained.model, trained.vocab.tokens, DecodeConfig(k=K, beam=6, xla=False)
    )


@pytest.fixture(scope="session")
def pieces_model_dir(tmp_path_factory):
    """A tiny MTN trained on WordPiece pieces of the syllable log (`train`'s own code)."""
    return built_once(tmp_path_factory, "pieces", train_on_pieces)


def train_on_pieces(root):
    """The syllable log, its WordPiece dataset and the tiny MTN trained on it, in `root`."""
    from syllable_log import write_syllable_log

    from mtn_keras.data.dataset_writer import prepare
    from mtn_keras.train import main

    root.mkdir()
    log = write_syllable_log(root / "syllables.txt")
    prepare(
        [str(log)], str(root / "data"), min_count=2, split=(80, 10, 10), progress=False, subwords=60
    )
    # 40 epochs: how soon the tiny model learns to copy pieces depends on the CPU's kernels
    # (oneDNN): after 4 epochs 1 of 20 unseen words on an AVX-512 CPU; after 20, 15 there but
    # 5 on an AVX-512 + AMX one (9 after 30, 13 after 40; with oneDNN off, enough after 20).
    main(tiny_train_args(root / "data", root / "model", 40, "patience=40"))


@pytest.fixture(scope="session")
def pieces_trained(pieces_model_dir):
    from mtn_keras.training.artifacts import load_trained

    return load_trained(str(pieces_model_dir / "model"))


@pytest.fixture(scope="session")
def pieces_service(pieces_trained):
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.serving.service import SuggestionService

    return SuggestionService(
        pieces_trained.model, pieces_trained.vocab.tokens, DecodeConfig(k=K, beam=6, xla=False)
    )


@pytest.fixture(scope="session")
def pieces_exported(pieces_trained, tmp_path_factory):
    from mtn_keras.base.config import DecodeConfig
    from mtn_keras.export import export

    def build(out):
        export(pieces_trained, str(out), DecodeConfig(k=K, beam=6))

    return built_once(tmp_path_factory, "export/pieces", build)
