"""g(r) of water oxygens in a triclinic box against MDAnalysis's InterRDF on the same files."""

import numpy as np
import pytest

mda = pytest.importorskip("MDAnalysis")
from MDAnalysis.analysis.rdf import InterRDF  # noqa: E402

import orbitfield  # noqa: E402

from conftest import MD_DATA  # noqa: E402


def test_water_rdf_equals_mdanalysis():
    psf, dcd = MD_DATA / "tip125_tric_C36.psf", MD_DATA / "tip125_tric_C36.dcd"
    u = mda.Universe(str(psf), str(dcd))
    oxygens = u.select_atoms("name OH2")
    r_max, bins = 4.0, 40
    reference = InterRDF(oxygens, oxygens, nbins=bins, range=(0.0, r_max), exclusion_block=(1, 1)).run()
    water = orbitfield.load(psf, dcd)
    r, g, n = water.rdf("name OH2", "name OH2", r_max=r_max, bins=bins, exclude_same_residue=True)
    np.testing.assert_allclose(r, reference.results.bins, atol=1e-9)
    assert np.abs(g - reference.results.rdf).max() < 0.02
    peak = r[np.argmax(g)]
    assert 2.5 < peak < 3.1
    assert np.all(np.diff(n) >= 0)
    with pytest.raises(orbitfield.OrbitfieldError, match="sel1"):
        water.rdf("name (", "name OH2")
