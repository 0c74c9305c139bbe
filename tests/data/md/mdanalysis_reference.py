"""Independent reference numbers for the structure and trajectory reader tests.

Reads every file in this folder with MDAnalysis (2.11.0) and writes mdanalysis_reference.json:
atom, residue and frame counts, total charges, bond counts, the periodic box of every frame, and
the position of chosen atoms in chosen frames. Indices in the JSON are 0-based.

    python3 -m venv venv && venv/bin/pip install MDAnalysis==2.11.0 MDAnalysisTests==2.11.0
    venv/bin/python tests/data/md/mdanalysis_reference.py
"""

import json
import os
import warnings

import MDAnalysis as mda

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))


def p(name):
    return os.path.join(HERE, name)


def r(x, digits=5):
    return None if x is None else round(float(x), digits)


def box(ts):
    d = ts.dimensions
    if d is None:
        return None
    return [r(v) for v in d]


def position(u, frame, atom):
    u.trajectory[frame]
    return {"frame": frame, "atom": atom, "xyz_angstrom": [r(v, 4) for v in u.atoms.positions[atom]]}


def topology(u):
    out = {"atoms": len(u.atoms), "residues": len(u.residues)}
    try:
        out["frames"] = len(u.trajectory)
    except AttributeError:  # a topology without coordinates
        out["frames"] = 0
    if hasattr(u.atoms, "charges"):
        out["total_charge_e"] = r(u.atoms.charges.sum(), 6)
    try:
        out["bonds"] = len(u.bonds)
    except Exception:  # noqa: BLE001 - no bonds in this topology
        pass
    return out


def trajectory(u, frame=5, atom=100):
    out = topology(u)
    out["boxes"] = [box(ts) for ts in u.trajectory]
    out["position"] = position(u, frame, atom)
    return out


ref = {"mdanalysis_version": mda.__version__}

u = mda.Universe(p("adk.psf"))
ref["adk.psf"] = topology(u)
ref["adk.psf"]["segments"] = len(u.segments)
ref["adk.psf"]["first_atom"] = {
    "segid": u.atoms[0].segid,
    "resid": int(u.atoms[0].resid),
    "resname": u.atoms[0].resname,
    "name": u.atoms[0].name,
    "type": str(u.atoms[0].type),
    "mass": r(u.atoms[0].mass),
}

ref["adk.psf+adk_dims.dcd"] = trajectory(mda.Universe(p("adk.psf"), p("adk_dims.dcd")))
ref["tip125_tric_C36.psf+tip125_tric_C36.dcd"] = trajectory(
    mda.Universe(p("tip125_tric_C36.psf"), p("tip125_tric_C36.dcd"))
)
ref["tip125_tric_C36.psf"] = topology(mda.Universe(p("tip125_tric_C36.psf")))

u = mda.Universe(p("adk_oplsaa.gro"))
ref["adk_oplsaa.gro"] = topology(u)
ref["adk_oplsaa.gro"]["boxes"] = [box(u.trajectory.ts)]
ref["adk_oplsaa.gro"]["position"] = position(u, 0, 47680)
ref["adk_oplsaa.gro"]["first_atom"] = {"resid": int(u.atoms[0].resid), "resname": u.atoms[0].resname, "name": u.atoms[0].name}
ref["adk_oplsaa.gro"]["last_atom"] = {"resid": int(u.atoms[-1].resid), "resname": u.atoms[-1].resname, "name": u.atoms[-1].name}
ref["adk_oplsaa.gro+adk_oplsaa.xtc"] = trajectory(mda.Universe(p("adk_oplsaa.gro"), p("adk_oplsaa.xtc")))

u = mda.Universe(p("adk_open.pqr"))
ref["adk_open.pqr"] = topology(u)
ref["adk_open.pqr"]["position"] = position(u, 0, 100)
ref["adk_open.pqr"]["radius_of_atom_100"] = r(u.atoms[100].radius)

u = mda.Universe(p("nmr_neopetrosiamide.pdb"))
ref["nmr_neopetrosiamide.pdb"] = topology(u)
ref["nmr_neopetrosiamide.pdb"]["position"] = position(u, 23, 100)
ref["nmr_neopetrosiamide.pdb"]["chains"] = sorted(set(u.atoms.chainIDs.tolist()))

u = mda.Universe(p("2r9r-1b.psf"), p("2r9r-1b.xyz"))
ref["2r9r-1b.psf+2r9r-1b.xyz"] = trajectory(u, frame=9, atom=100)
ref["2r9r-1b.psf"] = topology(mda.Universe(p("2r9r-1b.psf")))
u = mda.Universe(p("2r9r-1b.xyz"))
ref["2r9r-1b.xyz"] = {"atoms": len(u.atoms), "frames": len(u.trajectory), "position": position(u, 9, 100)}

if os.path.exists(p("nmr_neopetrosiamide.cif")):
    u = mda.Universe(p("nmr_neopetrosiamide.pdb"))
    ref["nmr_neopetrosiamide.cif"] = {"note": "written by gemmi from the PDB; compare with the PDB's numbers"}

with open(p("mdanalysis_reference.json"), "w") as f:
    json.dump(ref, f, indent=1, sort_keys=True)
    f.write("\n")
print(json.dumps({k: v.get("atoms") if isinstance(v, dict) else v for k, v in ref.items()}, indent=1))
