"""Poisson-Boltzmann maps through System.grid("pb") against `orbitfield grid pb` on the same file
(human carbonic anhydrase II, tests/data/pb/hca.pqr.gz, 2,482 atoms with PQR charges and radii;
provenance in tests/data/pb/README.md), implicit ligand sampling maps through
System.grid("ils:xe") against `orbitfield grid ils` (the AMBER tz2 system in a truncated
octahedron, tests/data/md/amber, Lennard-Jones parameters from its prmtop), and the errors of
systems that cannot have them."""

import subprocess

import numpy as np
import pytest

import orbitfield

from conftest import REPO
from test_mdanalysis import read_dx

HCA = REPO / "tests" / "data" / "pb" / "hca.pqr.gz"
TZ2 = [REPO / "tests" / "data" / "md" / "amber" / n for n in ("tz2.truncoct.parm7.bz2", "tz2.truncoct.nc")]
MD = REPO / "tests" / "data" / "md"
SPACING = 1.5


@pytest.fixture(scope="module")
def cli_pb(tmp_path_factory, orbitfield_bin):
    out = tmp_path_factory.mktemp("pb") / "hca.dx"
    cli = subprocess.run(
        [orbitfield_bin, "grid", "pb", str(HCA), "--spacing", str(SPACING), "--device", "cpu", "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    return read_dx(out)


def test_pb_map_equals_the_command_line(cli_pb):
    origin, deltas, values = cli_pb
    hca = orbitfield.load(HCA)
    grid = hca.grid("pb", spacing=SPACING, device="cpu")
    assert grid.unit == "kT/e at 298.15 K"  # APBS's temperature, as the command
    assert grid.values.shape == values.shape
    np.testing.assert_allclose(grid.origin_angstrom, origin, atol=1e-4)
    np.testing.assert_allclose(np.diag(grid.axes_angstrom), np.diag(deltas), rtol=1e-6)
    # A protein of charge +1 in 0.15 M salt: tens of kT/e inside, both signs, not a blank map.
    scale = np.abs(values).max()
    assert scale > 10.0
    assert values.min() < -1.0 and values.max() > 1.0
    # The DX file holds 6 significant digits; the solves are the same.
    assert np.abs(grid.values - values).max() <= 2e-5 * scale


def test_pb_units_scale_the_same_map(cli_pb):
    _, _, values = cli_pb
    hca = orbitfield.load(HCA)
    kcal = hca.grid("pb", spacing=SPACING, device="cpu", units="kcal/mol/e")
    # The command solves at APBS's 298.15 K: kT = 0.0019872 kcal/mol/K x 298.15 K = 0.59248 kcal/mol.
    ratio = kcal.values.reshape(-1) @ values.reshape(-1) / (values.reshape(-1) @ values.reshape(-1))
    assert abs(ratio - 0.0019872 * 298.15) < 1e-4


def test_focused_pb_map_equals_the_command_line(tmp_path, orbitfield_bin):
    # A 0.8 A lattice around residues 60-70, focused from a coarse lattice around the whole protein.
    out = tmp_path / "site.dx"
    args = ["--spacing", "0.8", "--focus", "--fine-around", "resid 60 to 70", "--coarse-spacing", "2.0"]
    cli = subprocess.run(
        [orbitfield_bin, "grid", "pb", str(HCA), *args, "--device", "cpu", "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    origin, deltas, values = read_dx(out)
    hca = orbitfield.load(HCA)
    grid = hca.grid("pb", spacing=0.8, device="cpu", focus=True, fine_around="resid 60 to 70", coarse_spacing=2.0)
    assert grid.values.shape == values.shape
    np.testing.assert_allclose(grid.origin_angstrom, origin, atol=1e-4)
    np.testing.assert_allclose(np.diag(grid.axes_angstrom), [0.8] * 3, rtol=1e-6)
    scale = np.abs(values).max()
    assert np.abs(grid.values - values).max() <= 2e-5 * scale
    # Smaller than the unfocused map around everything at the same spacing: the site alone.
    assert grid.values.size < hca.grid("pb", spacing=SPACING, device="cpu").values.size * (SPACING / 0.8) ** 3
    with pytest.raises(orbitfield.OrbitfieldError, match="focus=True"):
        hca.grid("pb", spacing=0.8, fine_around="resid 60 to 70")
    with pytest.raises(orbitfield.OrbitfieldError, match="selects no atoms"):
        hca.grid("pb", spacing=0.8, focus=True, fine_around="resname XYZ")


def test_pb_without_charges_raises(tmp_path):
    xyz = tmp_path / "water.xyz"
    xyz.write_text("3\nwater\nO 0.0 0.0 0.117\nH 0.0 0.757 -0.469\nH 0.0 -0.757 -0.469\n")
    water = orbitfield.load(xyz)
    with pytest.raises(orbitfield.OrbitfieldError, match="partial charges"):
        water.grid("pb", spacing=1.0)
    hca = orbitfield.load(HCA)
    with pytest.raises(orbitfield.OrbitfieldError, match="frame 3"):
        hca.grid("pb", spacing=SPACING, frame=3)
    with pytest.raises(orbitfield.OrbitfieldError, match="spacing"):
        hca.grid("pb", spacing=-1.0)


def test_ils_map_equals_the_command_line(tmp_path, orbitfield_bin):
    out = tmp_path / "xe.dx"
    cli = subprocess.run(
        [orbitfield_bin, "grid", "ils", *map(str, TZ2), "--probe", "xe", "--frames", "0:2", "--spacing", "3",
         "--device", "cpu", "-o", str(out)],
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    origin, deltas, values = read_dx(out)
    tz2 = orbitfield.load(*TZ2)
    grid = tz2.grid("ils:xe", spacing=3.0, frames=[0, 1], device="cpu")
    assert grid.unit == "kT"
    assert grid.values.shape == values.shape
    np.testing.assert_allclose(grid.origin_angstrom, origin, atol=1e-4)
    np.testing.assert_allclose(np.diag(grid.axes_angstrom), np.diag(deltas), rtol=1e-6)
    # Occupied voxels sit at the cap, open water-filled ones near 0, a few favourable ones below.
    assert values.max() > 5.0 and values.min() < -1.0
    assert np.abs(grid.values - values).max() <= 1e-4 * max(1.0, np.abs(values).max())


def test_ils_without_lennard_jones_parameters_raises():
    adk = orbitfield.load(MD / "adk.psf", MD / "adk_dims.dcd")
    with pytest.raises(orbitfield.OrbitfieldError, match="Lennard-Jones"):
        adk.grid("ils:xe", spacing=3.0, frames=[0])
    with pytest.raises(orbitfield.OrbitfieldError, match="ils:h2"):
        adk.grid("ils:h2", spacing=3.0, frames=[0])
