"""Shared paths: the repository's test data and the built `orbitfield` command."""

import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
MD_DATA = REPO / "tests" / "data" / "md"


@pytest.fixture(scope="session")
def orbitfield_bin():
    """The command-line binary: ORBITFIELD_BIN, else target/debug/orbitfield of this repository."""
    path = pathlib.Path(os.environ.get("ORBITFIELD_BIN", REPO / "target" / "debug" / "orbitfield"))
    if not path.is_file():
        pytest.fail(f"the orbitfield command is not built at {path} (cargo build, or set ORBITFIELD_BIN)")
    return str(path)
