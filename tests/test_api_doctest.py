"""The Examples of the client's public API (`mtn_keras.load`, the Suggester's methods, Answer,
Suggestion, SuggestError) run as written, on the bundled model."""

import doctest

import pytest


@pytest.mark.slow
@pytest.mark.parametrize("module", ["__init__", "suggester", "answer", "inputs"])
def test_the_client_examples_run(module):
    import importlib

    found = importlib.import_module(
        "mtn_keras.client" + ("" if module == "__init__" else f".{module}")
    )
    failed, tried = doctest.testmod(found, raise_on_error=False, verbose=False)
    assert tried > 0 and failed == 0
