"""MD frames from MDAnalysis: adk's electrostatic potential per frame equals what
`orbitfield grid esp` writes for the same files, and the atoms and frames are MDAnalysis's."""

import subprocess

import numpy as np
import pytest

mda = pytest.importorskip("MDAnalysis")

import orbitfield  # noqa: E402

from conftest import MD_DATA  # noqa: E402

PSF = MD_DATA / "adk.psf"
DCD = MD_DATA / "adk_dims.dcd"
SPACING = 4.0
FRAMES = (0, 4, 9)


def read_dx(path):
    """A plain OpenDX reader: origin and deltas (Angstrom), counts, values as [nx, ny, nz]
    (z fastest in the file)."""
    counts, origin, deltas, values = None, None, [], []
    in_data = False
    for line in open(path):
        words = line.split()
        if not words or words[0] == "#":
            continue
        if words[0] == "object" and "gridpositions" in words:
            counts = [int(x) for x in words[-3:]]
        elif words[0] == "origin":
            origin = np.array([float(x) for x in words[1:4]])
        elif words[0] == "delta":
            deltas.append([float(x) for x in words[1:4]])
        elif words[0] == "object" and "array" in words:
            in_data = True
        elif in_data and words[0] in ("attribute", "object", "component"):
            in_data = False
        elif in_data:
            values.extend(float(x) for x in words)
    return origin, np.array(deltas), np.array(values).reshape(counts)


@pytest.fixture(scope="module")
def universe():
    return mda.Universe(str(PSF), str(DCD))


def test_atoms_and_frames_are_mdanalysis(universe):
    adk = orbitfield.from_mdanalysis(universe.atoms)
    assert adk.n_atoms == len(universe.atoms) == 3341
    assert adk.n_frames == len(universe.trajectory)
    np.testing.assert_array_equal(adk.charges, universe.atoms.charges.astype(np.float32).astype(np.float64))
    universe.trajectory[7]
    np.testing.assert_array_equal(adk.frame(7).positions_angstrom, universe.atoms.positions.astype(np.float64))
    universe.trajectory[0]
    # A subset of frames keeps MDAnalysis's order.
    some = orbitfield.from_mdanalysis(universe.select_atoms("name CA"), frames=[3, 1])
    assert some.n_frames == 2 and some.n_atoms == 214
    universe.trajectory[1]
    np.testing.assert_array_equal(some.frame(1).positions_angstrom, universe.select_atoms("name CA").positions)
    universe.trajectory[0]


def test_adk_potential_per_frame_equals_command_line(universe, orbitfield_bin, tmp_path):
    adk = orbitfield.from_mdanalysis(universe.atoms)
    for frame in FRAMES:
        grid = adk.grid("esp", frame=frame, spacing=SPACING)
        out = tmp_path / f"esp_{frame}.dx"
        subprocess.run(
            [orbitfield_bin, "grid", "esp", str(PSF), str(DCD), "--frame", str(frame),
             "--spacing", str(SPACING), "-o", str(out)],
            check=True, capture_output=True,
        )
        origin, deltas, values = read_dx(out)
        assert grid.unit.startswith("kT/e")
        assert values.shape == grid.values.shape
        np.testing.assert_allclose(grid.origin_angstrom, origin, rtol=0, atol=1e-6)
        np.testing.assert_allclose(grid.axes_angstrom, deltas, rtol=0, atol=1e-6)
        # DX holds 8 significant digits of the float32 map: equal within that rounding.
        scale = np.abs(values).max()
        assert scale > 1.0
        np.testing.assert_allclose(grid.values, values, rtol=1e-6, atol=1e-6 * scale)
    # Frames differ (the lattice follows each frame), so the comparison is per frame.
    assert not np.array_equal(adk.frame(0).positions_angstrom, adk.frame(9).positions_angstrom)


def test_loaded_files_equal_mdanalysis_system(universe):
    """The same files read by orbitfield give the same potential at points as MDAnalysis's arrays."""
    from_files = orbitfield.load(PSF, DCD)
    from_mda = orbitfield.from_mdanalysis(universe.atoms)
    assert from_files.n_frames == from_mda.n_frames
    pts = from_files.frame(4).positions_angstrom[:50] + np.array([0.7, 0.0, 0.0])
    a = from_files.points("esp", pts, frame=4)
    b = from_mda.points("esp", pts, frame=4)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_dssp_of_adk(universe):
    adk = orbitfield.from_mdanalysis(universe.atoms)
    codes = adk.dssp(0)
    assert len(codes) == 214
    assert codes.count("H") > 50 and codes.count("E") > 10


@pytest.mark.parametrize(
    "files",
    [
        ("adk.psf", "adk_dims.dcd"),
        ("adk_open.pqr",),
        ("gromacs/2lyz_gmx_2024.tpr.gz",),
        ("4E43.pdb.gz",),
    ],
)
def test_per_atom_columns_are_mdanalysis(files):
    """Residues, chains or segments, masses, radii, B-factors, bonds and a TPR file's own
    coordinates as MDAnalysis reads the same files."""
    paths = [str(MD_DATA / f) for f in files]
    u = mda.Universe(*paths)
    s = orbitfield.load(*paths)
    assert s.n_atoms == len(u.atoms)
    assert s.resnames == list(u.atoms.resnames)
    np.testing.assert_array_equal(s.resids, u.atoms.resids)
    if files[0].endswith(".psf"):
        assert s.segids == list(u.atoms.segids)
        assert s.types == list(u.atoms.types)
        np.testing.assert_allclose(s.masses, u.atoms.masses, atol=1e-4)
        theirs = np.sort(np.sort(u.bonds.indices, axis=1), axis=0)
        assert len(s.bonds) == len(u.bonds)
        assert set(map(tuple, s.bonds)) == set(map(tuple, np.sort(u.bonds.indices, axis=1))), theirs[:3]
    if files[0].endswith(".pqr"):
        np.testing.assert_allclose(s.radii, u.atoms.radii, atol=1e-4)
        assert s.bfactors is None and s.occupancies is None
    if ".tpr" in files[0]:
        # MDAnalysis's chain is the molecule block's name; orbitfield takes pdb2gmx's chain letter
        # from it (Protein_A, DNA_chain_B) and keeps other names to 8 characters.
        def chain_of(name):
            if "_chain_" in name and name.rsplit("_chain_", 1)[1]:
                return name.rsplit("_chain_", 1)[1]
            for cls in ("Protein_", "DNA_", "RNA_", "Other_", "Ion_"):
                if name.startswith(cls) and 1 <= len(name) - len(cls) <= 4:
                    return name[len(cls):]
            return name[:8]

        assert s.chains == [chain_of(c) for c in u.atoms.chainIDs]
        assert set(s.chains) != {"Protein_"}
        np.testing.assert_allclose(s.masses, u.atoms.masses, atol=1e-4)
        np.testing.assert_allclose(s.positions_angstrom, u.atoms.positions, atol=1e-3)
        lengths, angles = s.frame(0).cell
        np.testing.assert_allclose(list(lengths) + list(angles), u.dimensions, atol=1e-3)
    if files[0].startswith("4E43"):
        assert s.chains == list(u.atoms.chainIDs)
        np.testing.assert_allclose(s.bfactors, u.atoms.tempfactors, atol=1e-3)
        np.testing.assert_allclose(s.occupancies, u.atoms.occupancies, atol=1e-3)
