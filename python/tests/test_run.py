"""orbitfield.run carries out the command language headless; render draws through it in-process."""

import struct

import MDAnalysis as mda
import numpy as np
import pytest

import orbitfield

from conftest import MD_DATA


def png_size(path):
    data = open(path, "rb").read(24)
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_selection_counts_match_mdanalysis():
    u = mda.Universe(str(MD_DATA / "adk.psf"), str(MD_DATA / "adk_dims.dcd"))
    expected = len(u.select_atoms("name CA"))
    out = orbitfield.run([f'open "{MD_DATA / "adk.psf"}" "{MD_DATA / "adk_dims.dcd"}"', "select name CA"])
    assert any(f"selects {expected} atoms" in line for line in out), out


def test_commands_write_coordinates_of_the_chosen_frame(tmp_path):
    u = mda.Universe(str(MD_DATA / "adk.psf"), str(MD_DATA / "adk_dims.dcd"))
    u.trajectory[7]
    out = orbitfield.run(
        f'open "{MD_DATA / "adk.psf"}" "{MD_DATA / "adk_dims.dcd"}"; save coordinates frame7.pdb frames 7:8',
        base_dir=tmp_path,
    )
    assert any("frame7.pdb" in line for line in out), out
    xyz = np.array(
        [[float(l[30:38]), float(l[38:46]), float(l[46:54])]
         for l in open(tmp_path / "frame7.pdb") if l.startswith(("ATOM", "HETATM"))]
    )
    assert xyz.shape == u.atoms.positions.shape
    assert np.abs(xyz - u.atoms.positions).max() < 1.5e-3


def test_a_bad_command_raises_with_its_column():
    with pytest.raises(orbitfield.OrbitfieldError, match=r"1:1.*frmae|frmae.*frame"):
        orbitfield.run("frmae 3")
    with pytest.raises(orbitfield.OrbitfieldError, match="no such file"):
        orbitfield.run("open /nonexistent/adk.psf")


def test_render_in_process_without_the_command(tmp_path, monkeypatch):
    monkeypatch.delenv("ORBITFIELD_BIN", raising=False)
    monkeypatch.setenv("PATH", "")
    adk = orbitfield.load(MD_DATA / "adk.psf", MD_DATA / "adk_dims.dcd")
    out = tmp_path / "adk.png"
    orbitfield.render(adk, out, size=(160, 120), frame=2)
    assert png_size(out) == (160, 120)
