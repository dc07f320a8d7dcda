"""The serving tests' shared fixtures: the tiny model's service (no XLA) and its SavedModel."""

import pytest

K = 5


@pytest.fixture(scope="session")
def service(trained):
    from mtn_keras.config import DecodeConfig
    from mtn_keras.serving import SuggestionService

    # Without XLA, to spare the compilations; the export (XLA by default) is checked against it.
    return SuggestionService(trained.model, trained.vocab.tokens, DecodeConfig(k=K, beam=6, xla=False))


@pytest.fixture(scope="session")
def exported(trained, tmp_path_factory):
    from mtn_keras.config import DecodeConfig
    from mtn_keras.export import export

    out = tmp_path_factory.mktemp("export") / "savedmodel"
    export(trained, str(out), DecodeConfig(k=K, beam=6))
    return out
