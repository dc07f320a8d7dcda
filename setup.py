"""Package layout that pyproject.toml cannot say with automatic discovery: the repository's
`app/` folder installs as `mtn_tui`, and the bundled model (every file of
`saved_models/default/`, its model card included) as the library's package data
`mtn_keras/default_model/`, so that `mtn_keras.load("default")`, the commands' `--model
default` and an installed `mtn-tui` find it from any directory. Every package data file is
named here: a [tool.setuptools.package-data] table in pyproject.toml would replace this one."""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["mtn_keras", "mtn_keras.*"])
    + ["mtn_tui", "mtn_tui.history", "mtn_tui.screens", "mtn_tui.widgets"]
    + ["mtn_keras.default_model"],
    package_dir={"mtn_tui": "app", "mtn_keras.default_model": "saved_models/default"},
    package_data={
        "mtn_tui": ["*.tcss"],
        "mtn_keras.data": ["*.txt"],
        "mtn_keras.scorecard": ["*.tsv"],
        "mtn_keras.serving.page": ["*.html", "*.css", "*.js"],
        "mtn_keras.default_model": ["*", "**/*"],
    },
)
