"""The browser tests' fixtures: the bundled model under `python -m mtn_keras.serve` (its search
page at `/`) and one headless Chromium (chromium_driver.py)."""

import pytest
from chromium_driver import ROOT, chromium


@pytest.fixture(scope="module")
def browser():
    driver = chromium()
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def origin(serve):
    """The address of a server of the bundled model, its search page at `/`."""
    url, _ = serve(ROOT / "saved_models" / "default", "default")
    return url.partition("/v1/")[0]
