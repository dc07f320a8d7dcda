"""The Examples of the public API (`mtn_keras.load`, the Suggester's methods, Answer,
Suggestion, SuggestError, and the serving signatures' Python face, SuggestionService) run as
written, on the bundled model."""

import doctest
import functools

import pytest


@pytest.fixture(scope="module")
def one_opening_of_each_model():
    """The examples open the bundled model six times; here they share one opening of it (each
    opening compiles the signatures again, ~10 s; opening itself is tested in tests/client)."""
    import mtn_keras

    load = mtn_keras.load
    mtn_keras.load = functools.cache(load)
    yield
    mtn_keras.load = load


@pytest.mark.slow
@pytest.mark.parametrize(
    "module",
    [
        "mtn_keras.client",
        "mtn_keras.client.suggester",
        "mtn_keras.client.answer",
        "mtn_keras.serving.savedmodel",
        "mtn_keras.serving.service",
    ],
)
def test_the_public_examples_run(module, one_opening_of_each_model):
    import importlib

    found = importlib.import_module(module)
    failed, tried = doctest.testmod(found, raise_on_error=False, verbose=False)
    assert tried > 0 and failed == 0
