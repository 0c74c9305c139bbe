"""Independent reference numbers for the GROMACS (TRR, TPR) and LAMMPS (data, dump, DCD) readers.

Reads the files under gromacs/ and lammps/ with MDAnalysis (2.11.0) and writes
mdanalysis_gromacs_lammps.json: atom, residue and frame counts, total charge and mass, bond
counts, names/types/residue names of chosen atoms, the periodic box of every frame, and the
positions of chosen atoms in chosen frames. Indices in the JSON are 0-based. Compressed inputs
(.gz/.bz2) are decompressed to a temporary file first where MDAnalysis does not read them.

    python3 -m venv venv && venv/bin/pip install MDAnalysis==2.11.0 MDAnalysisTests==2.11.0
    venv/bin/python tests/data/md/mdanalysis_gromacs_lammps.py

With `--tprs DIR` it prints the same summary for every *.tpr under DIR (used by the optional test
that checks every TPR version MDAnalysisTests ships) instead of writing the JSON.
"""

import bz2
import gzip
import json
import os
import sys
import tempfile
import warnings

import MDAnalysis as mda

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))
TMP = tempfile.mkdtemp()


def p(name):
    """Path of a data file; compressed ones are decompressed into a temporary file."""
    path = os.path.join(HERE, name)
    for ext, opener in ((".gz", gzip.open), (".bz2", bz2.open)):
        if name.endswith(ext):
            out = os.path.join(TMP, os.path.basename(name)[: -len(ext)])
            with opener(path, "rb") as src, open(out, "wb") as dst:
                dst.write(src.read())
            return out
    return path


def r(x, digits=5):
    return None if x is None else round(float(x), digits)


def summary(u, atoms=(0,), frames=(0,)):
    out = {"atoms": len(u.atoms), "residues": len(u.residues)}
    try:
        out["frames"] = len(u.trajectory)
    except AttributeError:
        out["frames"] = 0
    if hasattr(u.atoms, "charges"):
        out["total_charge_e"] = r(u.atoms.charges.sum(), 4)
    if hasattr(u.atoms, "masses"):
        out["total_mass_dalton"] = r(u.atoms.masses.sum(), 2)
    try:
        out["bonds"] = len(u.bonds)
    except Exception:  # noqa: BLE001 - no bonds in this topology
        out["bonds"] = 0
    chosen = []
    for a in atoms:
        at = u.atoms[a]
        d = {"atom": a}
        for attr in ("name", "type", "resname", "resid", "charge", "mass", "element"):
            if hasattr(at, attr):
                v = getattr(at, attr)
                d[attr] = r(v, 4) if isinstance(v, float) else (int(v) if attr == "resid" else str(v))
        chosen.append(d)
    out["chosen_atoms"] = chosen
    if out["frames"]:
        out["boxes"] = [None if ts.dimensions is None else [r(v) for v in ts.dimensions] for ts in u.trajectory]
        pos = []
        for f in frames:
            u.trajectory[f]
            for a in atoms:
                pos.append({"frame": f, "atom": a, "xyz_angstrom": [r(v, 4) for v in u.atoms.positions[a]]})
        out["positions"] = pos
    return out


def trr_only(name, atoms, frames):
    from MDAnalysis.coordinates.TRR import TRRReader

    rd = TRRReader(p(name))
    out = {"atoms": rd.n_atoms, "frames": len(rd), "boxes": [], "positions": [], "steps": [], "times_ps": []}
    has_v, has_f = [], []
    for ts in rd:
        out["boxes"].append(None if ts.dimensions is None else [r(v) for v in ts.dimensions])
        out["steps"].append(int(ts.data["step"]))
        out["times_ps"].append(r(ts.time, 4))
        has_v.append(bool(ts.has_velocities))
        has_f.append(bool(ts.has_forces))
    out["has_velocities"] = has_v
    out["has_forces"] = has_f
    for f in frames:
        ts = rd[f]
        for a in atoms:
            d = {"frame": f, "atom": a, "xyz_angstrom": [r(v, 4) for v in ts.positions[a]]}
            if ts.has_velocities:
                d["velocity_angstrom_per_ps"] = [r(v, 4) for v in ts.velocities[a]]
            if ts.has_forces:
                d["force_kj_per_mol_angstrom"] = [r(v, 4) for v in ts.forces[a]]
            out["positions"].append(d)
    return out


def build():
    cases = {}
    cases["trr_10_frames"] = trr_only("gromacs/trr_test_only_10_frame_10_atoms.trr", [0, 9], [0, 4, 9])
    cases["trr_surface"] = trr_only("gromacs/surface.trr", [0, 2], [0])
    for name in ("2lyz_gmx_2024.tpr.gz", "2lyz_gmx_4.5.tpr.gz", "2lyz_gmx_2021_double.tpr.gz",
                 "Linear_Angle.tpr", "ala_nnpot_gmx_2025_0.tpr"):
        u = mda.Universe(p("gromacs/" + name))
        n = len(u.atoms)
        cases["tpr_" + name] = summary(u, atoms=[0, n // 2, n - 1], frames=[0])
    u = mda.Universe(p("gromacs/cobrotoxin.tpr.gz"), p("gromacs/cobrotoxin_frame0.trr.gz"))
    cases["cobrotoxin"] = summary(u, atoms=[0, 1000, 19384], frames=[0])
    # LAMMPS data files (atom style as MDAnalysis needs it given where the file has no comment)
    for name, kw in (
        ("albite_triclinic.data", {"atom_style": "id type x y z"}),
        ("image_vf.data", {}),
        ("additional_columns.data", {}),
        ("mini.data", {}),
        ("chain_initial.data", {}),
        ("ifabp_apo_100mM.data.bz2", {}),
    ):
        u = mda.Universe(p("lammps/" + name), format="DATA", **kw)
        n = len(u.atoms)
        cases["data_" + name] = summary(u, atoms=[0, n // 2, n - 1], frames=[0])
    # LAMMPS dumps, with their data file where one belongs to them
    for key, topo, traj, kw in (
        ("dump_albite_triclinic", "albite_triclinic.data", "albite_triclinic.dump", {"atom_style": "id type x y z"}),
        ("dump_image_vf", "image_vf.data", "image_vf.lammpstrj", {}),
        ("dump_chain", "chain_initial.data", "chain_dump_1.lammpstrj", {}),
        ("dump_image_vf_unwrapped", "image_vf.data", "image_vf.lammpstrj", {"unwrap_images": True}),
    ):
        u = mda.Universe(p("lammps/" + topo), p("lammps/" + traj), format="LAMMPSDUMP", **kw)
        n = len(u.atoms)
        cases[key] = summary(u, atoms=[0, n // 2, n - 1], frames=sorted({0, len(u.trajectory) - 1}))
    # A dump without a data file: the dump is its own topology.
    u = mda.Universe(p("lammps/wat.lammpstrj.bz2"), format="LAMMPSDUMP", topology_format="LAMMPSDUMP")
    n = len(u.atoms)
    cases["dump_wat"] = summary(u, atoms=[0, n // 2, n - 1], frames=sorted({0, len(u.trajectory) - 1}))
    # LAMMPS DCD (lengths in Angstrom, time in fs for `units real`)
    u = mda.Universe(
        p("lammps/ifabp_apo_100mM.data.bz2"), p("lammps/ifabp_apo_100mM.dcd.gz"), format="LAMMPS", timeunit="fs"
    )
    cases["lammps_dcd"] = summary(u, atoms=[0, 5000, 12420], frames=[0, len(u.trajectory) - 1])
    return cases


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--tprs":
        out = {}
        for root, _, files in os.walk(sys.argv[2]):
            for f in sorted(files):
                if f.endswith(".tpr"):
                    path = os.path.join(root, f)
                    try:
                        u = mda.Universe(path)
                        n = len(u.atoms)
                        out[path] = summary(u, atoms=[0, n // 2, n - 1], frames=[0])
                    except Exception as e:  # noqa: BLE001 - report, the test decides
                        out[path] = {"error": str(e)}
        json.dump(out, sys.stdout, indent=1, sort_keys=True)
        return
    out = {"generator": "tests/data/md/mdanalysis_gromacs_lammps.py", "mdanalysis": mda.__version__,
           "cases": build()}
    with open(os.path.join(HERE, "mdanalysis_gromacs_lammps.json"), "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")


if __name__ == "__main__":
    main()
