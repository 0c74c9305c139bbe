"""Hydrogen bonds and RMSD over a trajectory against MDAnalysis on the same files: the bonds of
adk's frames (HydrogenBondAnalysis, its default criteria, donors and acceptors N and O), and the
backbone's RMSD from frame 0 after superposition (rms.RMSD) and the C-alphas' as the frames stand."""

import numpy as np
import pytest

mda = pytest.importorskip("MDAnalysis")
from MDAnalysis.analysis import rms  # noqa: E402
from MDAnalysis.analysis.hydrogenbonds import HydrogenBondAnalysis  # noqa: E402

import orbitfield  # noqa: E402

from conftest import MD_DATA  # noqa: E402

PSF, DCD = MD_DATA / "adk.psf", MD_DATA / "adk_dims.dcd"


def test_hydrogen_bonds_equal_mdanalysis():
    u = mda.Universe(str(PSF), str(DCD))
    frames = [0, 33, 71]
    polar = "name N* O*"
    h = HydrogenBondAnalysis(u, donors_sel=polar, hydrogens_sel="name H*", acceptors_sel=polar,
                             d_a_cutoff=3.0, d_h_a_angle_cutoff=150.0, d_h_cutoff=1.2)
    h.run(frames=frames)
    adk = orbitfield.load(PSF, DCD)
    for f in frames:
        rows = h.results.hbonds[h.results.hbonds[:, 0] == f]
        want = sorted((int(r[1]), int(r[2]), int(r[3])) for r in rows)
        got = sorted(tuple(int(x) for x in row) for row in adk.hbonds("all", frame=f))
        assert got == want, f"frame {f}"
        assert len(got) > 50
    with pytest.raises(orbitfield.OrbitfieldError, match="angle"):
        adk.hbonds("all", angle=200.0)
    with pytest.raises(orbitfield.OrbitfieldError, match="picks no atoms"):
        adk.hbonds("resname XYZ")


def test_rmsd_over_the_frames_equals_mdanalysis():
    u = mda.Universe(str(PSF), str(DCD))
    adk = orbitfield.load(PSF, DCD)
    fitted = rms.RMSD(u, select="backbone", ref_frame=0).run().results.rmsd[:, 2]
    got = adk.rmsd("protein and name N CA C O")
    assert got.shape == fitted.shape
    assert np.abs(got - fitted).max() < 1e-3
    ca = u.select_atoms("name CA")
    u.trajectory[10]
    ref = ca.positions.copy()
    frames = [0, 10, 50, 97]
    want = []
    for f in frames:
        u.trajectory[f]
        want.append(rms.rmsd(ca.positions, ref, superposition=False))
    got = adk.rmsd("name CA", reference=10, fit=False, frames=frames)
    assert np.abs(got - np.array(want)).max() < 1e-3
    with pytest.raises(orbitfield.OrbitfieldError, match="at least three"):
        adk.rmsd("index 0")


def test_selections_equal_mdanalysis():
    """The selection language picks MDAnalysis's atoms (VMD's `within` includes the selection
    itself, MDAnalysis's `around` does not)."""
    u = mda.Universe(str(PSF), str(DCD))
    adk = orbitfield.load(PSF, DCD)
    rng = np.random.default_rng()
    resid = int(rng.integers(2, 200))
    frame = int(rng.integers(0, 98))
    u.trajectory[frame]
    for ours, theirs in [
        ("protein and name CA", "protein and name CA"),
        ("resname LYS ARG and not hydrogen", "resname LYS ARG and not name H*"),
        ("backbone", "backbone"),
        (f"resid {resid} to {resid + 5}", f"resid {resid}:{resid + 5}"),
        (f"within 5 of resid {resid}", f"(around 5 resid {resid}) or resid {resid}"),
        ("x > 10", "prop x > 10"),
    ]:
        want = u.select_atoms(theirs).indices
        got = adk.select(ours, frame=frame)
        assert got.tolist() == want.tolist(), (ours, frame)
    with pytest.raises(orbitfield.OrbitfieldError, match="sel"):
        adk.select("resid to")


def test_radius_of_gyration_equals_mdanalysis():
    u = mda.Universe(str(PSF), str(DCD))
    adk = orbitfield.load(PSF, DCD)
    frames = sorted(np.random.default_rng().choice(98, size=5, replace=False).tolist())
    for sel in ("protein", "name CA"):
        group = u.select_atoms(sel)
        want = []
        for f in frames:
            u.trajectory[f]
            want.append(group.radius_of_gyration())
        got = adk.rgyr(sel, frames=frames)
        assert np.abs(got - np.array(want)).max() < 1e-4, sel
    assert adk.rgyr("protein").shape == (98,)
    with pytest.raises(orbitfield.OrbitfieldError, match="picks no atoms"):
        adk.rgyr("resname XYZ")


def test_sasa_equals_mdtraj():
    """Shrake-Rupley SASA against MDTraj's own implementation (tests/data/measure/adk_sasa.json,
    written by make_sasa.py): the protein's total and per-atom areas, and residues 1-50 alone."""
    import json

    ref = json.loads((MD_DATA.parent / "measure" / "adk_sasa.json").read_text())
    adk = orbitfield.load(PSF, DCD)
    frames = ref["protein_frames"]
    total = adk.sasa("protein", frames=frames)
    # MDTraj computes in float32: a point at a sphere's edge may fall either way (0.13 A^2 each).
    assert np.abs(total - np.array(ref["protein_total_angstrom2"])).max() < 1e-4 * total.max()
    atoms = adk.sasa("protein", frames=[0], per_atom=True)[0]
    want = np.array(ref["protein_atoms_frame0_angstrom2"])
    assert atoms.shape == want.shape
    diff = np.abs(atoms - want)
    assert diff.max() < 0.2 and (diff > 1e-3).sum() < 0.01 * len(want), (diff.max(), (diff > 1e-3).sum())
    nterm = adk.sasa("resid 1 to 50", frames=frames)
    assert np.abs(nterm - np.array(ref["n_terminal_total_angstrom2"])).max() < 1e-4 * nterm.max()
    with pytest.raises(orbitfield.OrbitfieldError, match="probe"):
        adk.sasa("protein", probe=-1.0)


def test_periodic_molecules_are_made_whole_as_in_the_viewer():
    """adk_oplsaa's protein lies across its box in the file: made whole by default, the radius of
    gyration and RMSD equal MDAnalysis's after its unwrap transformation; whole=False gives
    MDAnalysis's reading of the frames as written."""
    from MDAnalysis import transformations

    gro, xtc = MD_DATA / "adk_oplsaa.gro", MD_DATA / "adk_oplsaa.xtc"
    u = mda.Universe(str(gro), str(xtc))
    protein = u.select_atoms("protein")
    frames = [0, 5, 9]
    as_written = [protein.radius_of_gyration() for _ in u.trajectory[frames]]
    # The GRO file has no bonds: MDAnalysis guesses the protein's to unwrap it.
    protein.guess_bonds()
    u.trajectory.add_transformations(transformations.unwrap(protein))
    unwrapped = [protein.radius_of_gyration() for _ in u.trajectory[frames]]
    assert max(as_written) - min(unwrapped) > 2.0, "the file's protein should lie across its box"

    whole = orbitfield.load(gro, xtc)
    assert any("made whole" in w for w in whole.warnings)
    np.testing.assert_allclose(whole.rgyr("protein", frames=frames), unwrapped, atol=2e-3)
    raw = orbitfield.load(gro, xtc, whole=False)
    assert not any("made whole" in w for w in raw.warnings)
    np.testing.assert_allclose(raw.rgyr("protein", frames=frames), as_written, atol=2e-3)
