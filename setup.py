"""Package layout that pyproject.toml cannot say with automatic discovery: the repository's
`app/` folder installs as `mtn_tui`, and the bundled model as its package data, so an
installed `mtn-tui` starts on it from any directory."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["mtn_keras", "mtn_keras.*"])
    + ["mtn_tui", "mtn_tui.default_model"],
    package_dir={"mtn_tui": "app", "mtn_tui.default_model": "saved_models/default"},
    package_data={"mtn_tui": ["*.tcss"], "mtn_tui.default_model": ["*", "**/*"]},
)
