"""orbitfield.render draws through the `orbitfield render` command's offscreen renderer."""

import struct

import pytest

import orbitfield

from conftest import MD_DATA


def png_size(path):
    data = open(path, "rb").read(24)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_render_a_loaded_system(tmp_path, orbitfield_bin, monkeypatch):
    monkeypatch.setenv("ORBITFIELD_BIN", orbitfield_bin)
    adk = orbitfield.load(MD_DATA / "adk.psf", MD_DATA / "adk_dims.dcd")
    out = tmp_path / "adk.png"
    orbitfield.render(adk, out, size=(160, 120), frame=2)
    assert png_size(out) == (160, 120)
    with pytest.raises(orbitfield.OrbitfieldError, match="frame"):
        orbitfield.render(adk, tmp_path / "late.png", size=(160, 120), frame=100000)


def test_render_refuses_arrays_without_files(tmp_path, orbitfield_bin, monkeypatch):
    monkeypatch.setenv("ORBITFIELD_BIN", orbitfield_bin)
    pair = orbitfield.load(MD_DATA / "adk.psf", MD_DATA / "adk_dims.dcd")
    pair.paths = []
    with pytest.raises(orbitfield.OrbitfieldError, match="files"):
        orbitfield.render(pair, tmp_path / "x.png")
