"""Reference values for the AMBER, mol2 and alternate-location readers, from MDAnalysis.

Writes `mdanalysis_md_formats.json` beside this script: per case the atom, residue and frame
counts, the total charge, the bond count, the box of every frame, the time of every frame, and the
positions of chosen atoms (first, middle, last) in chosen frames (first, middle, last). Indices are
0-based. Run with MDAnalysis 2.11.0 from the directory of this script's repository root:

    python tests/data/md/mdanalysis_md_formats.py
"""

import gzip
import json
import pathlib
import tempfile
import warnings

import MDAnalysis as mda

warnings.filterwarnings("ignore")
HERE = pathlib.Path(__file__).resolve().parent
AMBER = HERE / "amber"
QUIRKS = HERE / "pdb_dcd_quirks"

CASES = {
    # Truncated octahedron (IFBOX 2), NetCDF trajectory in float.
    "tz2_truncoct": ([AMBER / "tz2.truncoct.parm7.bz2", AMBER / "tz2.truncoct.nc"], {}),
    # Rectangular box, NetCDF with velocities and time.
    "ace_tip3p": ([AMBER / "ace_tip3p.parm7.gz", AMBER / "ace_tip3p.nc"], {}),
    # ASCII mdcrd without a box.
    "ache_mdcrd": ([AMBER / "ache.prmtop.gz", AMBER / "ache.mdcrd.bz2"], {}),
    # ASCII mdcrd with a box line after each frame.
    "capped_ala_mdcrd": ([AMBER / "capped-ala.prmtop.gz", AMBER / "capped-ala.mdcrd.bz2"], {}),
    # ASCII restart with velocities and a box.
    "ala2_rst7": (
        [AMBER / "parmed_ala2_solv.parm7.gz", AMBER / "parmed_ala2_solv.rst7.gz"],
        # MDAnalysis's INPCRD reader does not decompress: it reads the same file unpacked.
        {"format": "INPCRD", "unpacked": True},
    ),
    # mol2: several molecules of one atom count are frames.
    "mol2_molecules": ([HERE / "Molecules.mol2.gz"], {}),
    "mol2_molecule": ([HERE / "Molecule.mol2"], {}),
    "mol2_zinc": ([HERE / "zinc_856218.mol2"], {}),
    # PDB 4E43 with alternate locations (every location is an atom).
    "altloc_4e43": ([HERE / "4E43.pdb.gz"], {}),
    # A DCD whose title record's markers say 2 lines while NTITLE says 3 (MDAnalysis's old writer),
    # with a triclinic box, beside its 5-atom PDB.
    "dcd_title_markers": ([QUIRKS / "test_topology.pdb", QUIRKS / "test.dcd"], {}),
    # GROMOS residue names of four letters (LYSH) written against a one-letter chain.
    "gromos_pdb": ([QUIRKS / "gromos11_traj_vac.pdb.gz"], {}),
    # One CRYST1 in the first of three models: the box holds for all three.
    "pdb_box_in_first_model": ([QUIRKS / "varying_occ_tmp.pdb"], {}),
    # Three models, each CRYST1 after its model's ENDMDL / before its MODEL: boxes 80, 70, 60 A.
    "pdb_cryst1_after_models": ([QUIRKS / "model_then_cryst.pdb"], {}),
    "pdb_cryst1_before_models": ([QUIRKS / "cryst_then_model.pdb"], {}),
    # A CHARMM-GUI membrane system with POT and CLA ions (potassium and chloride, not P and C).
    "charmm_ions_1k5i": ([QUIRKS / "1k5i_c36.pdb.gz"], {}),
}


def r(x, nd):
    return round(float(x), nd)


def case(files, kwargs):
    kwargs = dict(kwargs)
    paths = [str(f) for f in files]
    if kwargs.pop("unpacked", False):
        tmp = pathlib.Path(tempfile.mkdtemp())
        paths = []
        for f in files:
            dest = tmp / f.name.removesuffix(".gz")
            dest.write_bytes(gzip.decompress(f.read_bytes()))
            paths.append(str(dest))
    u = mda.Universe(*paths, **kwargs)
    n = u.atoms.n_atoms
    nf = u.trajectory.n_frames
    out = {
        "files": [f.name for f in files],
        "n_atoms": n,
        "n_residues": u.residues.n_residues,
        "n_frames": nf,
    }
    if hasattr(u.atoms, "charges"):
        out["total_charge_e"] = r(u.atoms.charges.sum(), 5)
    try:
        out["n_bonds"] = len(u.bonds)
    except Exception:
        out["n_bonds"] = None
    if hasattr(u.atoms, "altLocs"):
        alt = u.atoms.altLocs
        out["altloc_counts"] = {a: int((alt == a).sum()) for a in sorted(set(alt)) if a}
    if hasattr(u.atoms, "types"):
        out["types"] = {str(i): str(u.atoms[i].type) for i in sorted({0, n // 2, n - 1})}
    out["names"] = {str(i): str(u.atoms[i].name) for i in sorted({0, n // 2, n - 1})}
    out["resnames"] = {str(i): str(u.atoms[i].resname) for i in sorted({0, n // 2, n - 1})}
    out["resids"] = {str(i): int(u.atoms[i].resid) for i in sorted({0, n // 2, n - 1})}
    out["resname_set"] = sorted(set(str(x) for x in u.atoms.resnames))
    if hasattr(u.atoms, "chainIDs"):
        out["chains"] = {str(i): str(u.atoms[i].chainID) for i in sorted({0, n // 2, n - 1})}
    # Atoms named like an ion of CHARMM's (POT, CLA, SOD, CAL) with their masses.
    ions = [a for a in u.atoms if a.name in ("POT", "CLA", "SOD", "CAL")]
    if ions and hasattr(u.atoms, "masses"):
        out["ion_masses_dalton"] = {str(a.index): r(a.mass, 3) for a in ions[:5]}
    if hasattr(u.atoms, "masses"):
        out["total_mass_dalton"] = r(u.atoms.masses.sum(), 3)
    chosen_frames = sorted({0, nf // 2, nf - 1})
    chosen_atoms = sorted({0, n // 2, n - 1})
    frames = []
    for ts in u.trajectory:
        f = {"frame": ts.frame, "time_ps": r(ts.time, 5)}
        if ts.dimensions is None:
            f["box"] = None
        else:
            d = ts.dimensions
            f["box"] = {
                "lengths_angstrom": [r(x, 5) for x in d[:3]],
                "angles_degree": [r(x, 5) for x in d[3:]],
            }
        if ts.frame in chosen_frames:
            f["positions_angstrom"] = {
                str(i): [r(x, 4) for x in ts.positions[i]] for i in chosen_atoms
            }
            if ts.has_velocities:
                f["velocities_angstrom_per_ps"] = {
                    str(i): [r(x, 4) for x in ts.velocities[i]] for i in chosen_atoms
                }
        frames.append(f)
    out["frames"] = frames
    return out


def main():
    cases = {name: case(files, kw) for name, (files, kw) in CASES.items()}
    doc = {"mdanalysis_version": mda.__version__, "cases": cases}
    (HERE / "mdanalysis_md_formats.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
