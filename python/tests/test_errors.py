"""Errors reach Python as orbitfield.OrbitfieldError with the reader's message (the line the
command line prints), never as a crash."""

import subprocess

import numpy as np
import pytest

import orbitfield


def test_bad_file_raises_with_the_readers_message(tmp_path, orbitfield_bin):
    bad = tmp_path / "broken.xyz"
    bad.write_text("3\nwater\nO 0.0 0.0 0.0\nH 0.0 0.757 zero\nH 0.0 -0.757 0.587\n")
    with pytest.raises(orbitfield.OrbitfieldError) as caught:
        orbitfield.load(bad)
    message = str(caught.value)
    assert "broken.xyz" in message
    assert isinstance(caught.value, ValueError)
    cli = subprocess.run([orbitfield_bin, "info", str(bad)], capture_output=True, text=True)
    assert cli.returncode != 0
    assert message in cli.stderr


def test_missing_file_and_bad_field(tmp_path):
    with pytest.raises(orbitfield.OrbitfieldError, match="nothing.pdb"):
        orbitfield.load(tmp_path / "nothing.pdb")
    good = tmp_path / "two.xyz"
    good.write_text("2\npair\nNa 0 0 0\nCl 0 0 2.4\n")
    pair = orbitfield.load(good)
    with pytest.raises(orbitfield.OrbitfieldError, match="mo:frontier"):
        pair.grid("mo:frontier")
    with pytest.raises(orbitfield.OrbitfieldError, match="needs a wavefunction"):
        pair.grid("mo:homo")
    with pytest.raises(orbitfield.OrbitfieldError, match="frame 5"):
        pair.frame(5)
    with pytest.raises(orbitfield.OrbitfieldError, match="shape"):
        pair.points("molsurf", np.zeros((4, 2)))
    with pytest.raises(orbitfield.OrbitfieldError, match="device"):
        pair.grid("molsurf", device="tpu")
