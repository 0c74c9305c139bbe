"""Wavefunctions from PySCF: orbitals and densities evaluated by orbitfield against PySCF's own
evaluation (`cubegen`, `mol.eval_gto`, `numint.eval_rho`) on identical points."""

import numpy as np
import pytest

pytest.importorskip("pyscf")
from pyscf import dft, gto, scf  # noqa: E402
from pyscf.tools import cubegen  # noqa: E402

import orbitfield  # noqa: E402

WATER = "O 0 0 0.1173; H 0 0.7572 -0.4692; H 0 -0.7572 -0.4692"


@pytest.fixture(scope="module")
def water_rhf():
    mol = gto.M(atom=WATER, basis="6-31g*", verbose=0)
    mf = scf.RHF(mol).run()
    return mol, mf


def test_water_homo_equals_cubegen_on_its_lattice(water_rhf, tmp_path):
    mol, mf = water_rhf
    homo = int(np.flatnonzero(mf.mo_occ > 0)[-1])
    coeff = mf.mo_coeff[:, homo]
    nx, ny, nz = 24, 26, 28
    cube = tmp_path / "homo.cube"
    reference = cubegen.orbital(mol, str(cube), coeff, nx=nx, ny=ny, nz=nz)
    coords_bohr = cubegen.Cube(mol, nx, ny, nz).get_coords()
    water = orbitfield.from_pyscf(mol, mf.mo_coeff, mf.mo_occ, mf.mo_energy)

    # The exact evaluator on cubegen's own points (no header rounding in between).
    at_points = water.points("mo:homo", coords_bohr * orbitfield.ANGSTROM_PER_BOHR)
    assert np.abs(reference).max() > 0.1
    assert np.abs(at_points - reference.ravel()).max() < 1e-6

    # The lattice engine on the lattice of the cube PySCF wrote, against PySCF on those points.
    grid = water.grid("mo:homo", like=cube, device="cpu")
    assert grid.dims == (nx, ny, nz)
    pts = grid.points_bohr().reshape(-1, 3)
    expected = mol.eval_gto("GTOval", pts) @ coeff
    assert np.abs(grid.values.reshape(-1) - expected).max() < 1e-6
    # ... which is cubegen's lattice up to the 6 decimals of the cube header.
    assert np.abs(grid.values - reference).max() < 1e-4

    # The default lattice (auto device) agrees with PySCF on its own points too.
    auto = water.grid("mo:homo", spacing=0.3, padding=3.0)
    pts = auto.points_bohr().reshape(-1, 3)
    expected = mol.eval_gto("GTOval", pts) @ coeff
    assert np.abs(auto.values.reshape(-1) - expected).max() < 1e-6


def test_water_density_equals_pyscf(water_rhf):
    mol, mf = water_rhf
    water = orbitfield.from_pyscf(mol, mf.mo_coeff, mf.mo_occ, mf.mo_energy)
    rng = np.random.default_rng(7)
    pts_angstrom = rng.uniform(-2.5, 2.5, size=(400, 3))
    ao = mol.eval_gto("GTOval", pts_angstrom / orbitfield.ANGSTROM_PER_BOHR)
    rho = dft.numint.eval_rho(mol, ao, mf.make_rdm1())
    ours = water.points("density", pts_angstrom)
    assert np.abs(ours - rho).max() < 1e-6 * max(1.0, rho.max())


@pytest.mark.parametrize("basis,cart", [("cc-pvqz", False), ("cc-pvqz", True), ("def2-svp", False)])
def test_basis_conventions_up_to_g(basis, cart):
    """Random orbitals over every function of a basis with d, f and g shells, spherical and
    Cartesian: orbitfield's values equal PySCF's AO values times the coefficients."""
    mol = gto.M(atom=WATER, basis=basis, cart=cart, verbose=0)
    nao = mol.nao
    rng = np.random.default_rng(11)
    n_orb = 6
    coeff = rng.normal(size=(nao, n_orb))
    occ = np.zeros(n_orb)
    water = orbitfield.from_pyscf(mol, coeff, occ)
    pts_angstrom = rng.uniform(-2.0, 2.0, size=(200, 3))
    expected = mol.eval_gto("GTOval", pts_angstrom / orbitfield.ANGSTROM_PER_BOHR) @ coeff
    for k in range(n_orb):
        ours = water.points(f"mo:{k + 1}", pts_angstrom)
        assert np.abs(ours - expected[:, k]).max() < 1e-6 * max(1.0, np.abs(expected[:, k]).max()), (basis, cart, k)


def test_unrestricted_beta_homo():
    mol = gto.M(atom=WATER, basis="6-31g", charge=1, spin=1, verbose=0)
    mf = scf.UHF(mol).run()
    cation = orbitfield.from_pyscf(mol, mf.mo_coeff, mf.mo_occ, mf.mo_energy)
    homo_beta = int(np.flatnonzero(mf.mo_occ[1] > 0)[-1])
    pts = np.array([[0.3, 0.2, 0.1], [0.0, 0.5, -0.4], [-0.6, 0.1, 0.9]])
    expected = mol.eval_gto("GTOval", pts / orbitfield.ANGSTROM_PER_BOHR) @ mf.mo_coeff[1][:, homo_beta]
    assert np.abs(cation.points("mo:beta:homo", pts) - expected).max() < 1e-6
    spin = dft.numint.eval_rho(mol, mol.eval_gto("GTOval", pts / orbitfield.ANGSTROM_PER_BOHR), mf.make_rdm1()[0] - mf.make_rdm1()[1])
    assert np.abs(cation.points("spin", pts) - spin).max() < 1e-6


def test_mismatched_coefficients_raise():
    mol = gto.M(atom=WATER, basis="sto-3g", verbose=0)
    with pytest.raises(orbitfield.OrbitfieldError, match="rows"):
        orbitfield.from_pyscf(mol, np.zeros((3, 3)), np.zeros(3))
