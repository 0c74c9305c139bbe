"""Files read by orbitfield.load against PySCF reading the same Molden files, and lattices written
as cube and DX files read back by plain parsers."""

import gzip
import shutil

import numpy as np
import pytest

import orbitfield

from conftest import REPO
from test_mdanalysis import read_dx

QM = REPO / "tests" / "data" / "qm"


@pytest.mark.parametrize("name", ["water_hf_631gs_sph", "n2_hf_ccpvqz_cart", "o2_uhf_ccpvtz_sph"])
def test_molden_orbitals_equal_pyscf_reading_the_same_file(name, tmp_path):
    """PySCF's Molden reader (and its own evaluator) is the reference for orbitfield's reader."""
    pytest.importorskip("pyscf")
    from pyscf.tools import molden

    path = tmp_path / f"{name}.molden"
    with gzip.open(QM / f"{name}.molden.gz", "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    mol, mo_energy, mo_coeff, mo_occ, _, _ = molden.load(str(path))
    ours = orbitfield.load(path)
    theirs = orbitfield.from_pyscf(mol, mo_coeff, mo_occ, mo_energy)
    rng = np.random.default_rng(3)
    pts = rng.uniform(-2.0, 2.0, size=(150, 3)) + ours.positions_angstrom.mean(axis=0)
    coeff = mo_coeff[0] if np.asarray(mo_coeff).ndim == 3 else mo_coeff
    occ = mo_occ[0] if np.asarray(mo_occ).ndim == 2 else mo_occ
    homo = int(np.flatnonzero(np.asarray(occ) > 0.5)[-1])
    expected = mol.eval_gto("GTOval", pts / orbitfield.ANGSTROM_PER_BOHR) @ coeff[:, homo]
    a = ours.points("mo:homo", pts)
    b = theirs.points("mo:homo", pts)
    # The overall sign of an orbital is arbitrary between readers.
    sign = np.sign(np.dot(a, expected)) or 1.0
    assert np.abs(sign * a - expected).max() < 1e-6
    assert np.abs(b - expected).max() < 1e-6
    assert np.abs(ours.points("density", pts) - theirs.points("density", pts)).max() < 1e-6
    # Orbital energies and occupations per spin channel, as PySCF reads them from the same file.
    energies = np.asarray(mo_energy)
    occupations = np.asarray(mo_occ)
    spins = ["alpha", "beta"] if energies.ndim == 2 else ["alpha"]
    for k, spin in enumerate(spins):
        e, o = ours.orbitals(spin)
        want_e = energies[k] if energies.ndim == 2 else energies
        want_o = occupations[k] if occupations.ndim == 2 else occupations
        assert np.abs(e - want_e).max() < 1e-8
        assert np.abs(o - want_o).max() < 1e-8
    with pytest.raises(orbitfield.OrbitfieldError):
        ours.orbitals("gamma")


def test_grid_written_as_dx_and_cube(tmp_path):
    path = tmp_path / "water.molden"
    with gzip.open(QM / "water_hf_631gs_sph.molden.gz", "rb") as src, open(path, "wb") as dst:
        shutil.copyfileobj(src, dst)
    water = orbitfield.load(path)
    assert water.n_atoms == 3 and list(water.numbers) == [8, 1, 1]
    assert water.n_frames == 1
    grid = water.grid("density", spacing=0.4, padding=2.0, device="cpu")
    nx, ny, nz = grid.dims
    assert grid.values.shape == (nx, ny, nz)
    np.testing.assert_allclose(np.diag(grid.axes_angstrom), [0.4, 0.4, 0.4], rtol=1e-12)
    # The lattice covers the atoms with the padding.
    lo = grid.origin_angstrom
    hi = lo + (np.array(grid.dims) - 1) * 0.4
    pos = water.positions_angstrom
    assert np.all(lo <= pos.min(axis=0) - 2.0 + 1e-9) and np.all(hi >= pos.max(axis=0) + 2.0 - 0.4)
    # The lattice values are the exact evaluator's at the lattice points (float32 rounding).
    pts = grid.points_angstrom().reshape(-1, 3)
    exact = water.points("density", pts)
    assert np.abs(grid.values.reshape(-1) - exact).max() <= 1e-6 * max(1.0, exact.max())
    dx = tmp_path / "density.dx"
    grid.write(dx)
    origin, deltas, values = read_dx(dx)
    np.testing.assert_allclose(origin, grid.origin_angstrom, atol=1e-6)
    np.testing.assert_allclose(values, grid.values, rtol=1e-6, atol=1e-9)
    cube = tmp_path / "density.cube"
    grid.write(cube)
    lines = cube.read_text().splitlines()
    assert int(lines[2].split()[0]) == 3
    assert [int(lines[k].split()[0]) for k in (3, 4, 5)] == [nx, ny, nz]
    with pytest.raises(orbitfield.OrbitfieldError, match="cube or .dx"):
        grid.write(tmp_path / "density.txt")


def test_a_log_with_orbitals_at_some_steps_has_all_its_frames():
    """A GAMESS optimisation printing orbitals at its first and last steps: seven frames, and the
    orbitals of frames 0 and 6 only."""
    log = orbitfield.load(REPO / "tests" / "data" / "qm-logs" / "GAMESS-US2018_dvb_gopt_a.out")
    assert log.n_frames == 7
    last = log.grid("mo:homo", frame=6, spacing=1.0)
    assert np.abs(last.values).max() > 0.01
    with pytest.raises(orbitfield.OrbitfieldError, match="frame 3 has no orbitals"):
        log.grid("mo:homo", frame=3, spacing=1.0)
    # The orbitals of the last step: divinylbenzene's 70 electrons in 35 doubly occupied orbitals,
    # energies ascending; none at a step that printed none.
    energies, occupations = log.orbitals(frame=6)
    assert occupations.sum() == pytest.approx(70.0)
    assert np.count_nonzero(occupations > 1.5) == 35
    assert np.all(np.diff(energies) >= -1e-9)
    with pytest.raises(orbitfield.OrbitfieldError, match="frame 3 has no orbitals"):
        log.orbitals(frame=3)


def test_a_log_s_step_energies_are_cclib_s():
    """Each step's SCF energy of the GAMESS optimisation equals cclib's reading of the same log
    (tests/data/qm-logs/energies.cclib.json); a trajectory has none."""
    import json

    log = orbitfield.load(REPO / "tests" / "data" / "qm-logs" / "GAMESS-US2018_dvb_gopt_a.out")
    ref = json.loads((REPO / "tests" / "data" / "qm-logs" / "energies.cclib.json").read_text())
    want = ref["logs"]["GAMESS-US2018_dvb_gopt_a.out"]["energies_hartree"]
    assert log.energies_hartree.shape == (7,)
    assert np.abs(log.energies_hartree - np.array(want)).max() < 1e-8
    md = REPO / "tests" / "data" / "md"
    assert orbitfield.load(md / "adk.psf", md / "adk_dims.dcd").energies_hartree is None


def test_solvent_excluded_surface_of_one_atom_is_its_sphere():
    """`ses`: 0.5 on the atom's van der Waals sphere (an isolated atom's excluded surface), rising
    inside and falling outside, 0 beyond the probe's reach; its points on the sphere from the
    lattice's own coordinates."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        xyz = f"{d}/ne.xyz"
        with open(xyz, "w") as f:
            f.write("1\nneon\nNe 0.0 0.0 0.0\n")
        atom = orbitfield.load(xyz)
        r = 1.54  # neon's van der Waals radius (Bondi)
        pts = np.array([[r - 0.3, 0, 0], [r, 0, 0], [0, r + 0.3, 0], [0, 0, r + 3.0]])
        v = atom.points("ses", pts)
        assert v[0] > 0.5 > v[2]
        assert abs(v[1] - 0.5) < 0.01
        assert v[3] == 0.0
