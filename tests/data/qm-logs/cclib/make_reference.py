"""cclib's reading of the logs here and of ../ORCA6.0_dvb_gopt.out, for `tests/qm_cclib_sweep.rs`:
per log the atomic numbers, the last geometry (Angstrom), charge, multiplicity, the SCF energies in
hartree (cclib's eV converted back by cclib's own factor, one per SCF the log prints: the test
decides which belong to frames), the last set of orbital energies in hartree, the HOMO indices
(0-based) and the number of basis functions.

    python3 -m venv venv && venv/bin/pip install cclib==1.8.1
    venv/bin/python tests/data/qm-logs/cclib/make_reference.py

cclib 1.8.1 stops on ORCA 6.0's logs: run the script a second time with cclib's development version
at commit 21daa960123d28aa21eeaaacc2a1dea39e136829 (`pip install
git+https://github.com/cclib/cclib@21daa960123d28aa21eeaaacc2a1dea39e136829`); each run keeps the
entries of the first and adds the logs it could not read, recording the version that read each.
"""

import gzip
import json
import logging
import os
import tempfile

import cclib
from cclib.parser.utils import convertor

logging.disable(logging.CRITICAL)
HERE = os.path.dirname(os.path.abspath(__file__))
LOGS = [
    "ORCA5.0_dvb_td.out.gz",
    "ORCA5.0_dvb_dispersion_bp86_d3zero.out.gz",
    "GAMESS-US2018_nh3_ts_ir.out.gz",
    "Firefly8.0_dvb_raman.out.gz",
    "../ORCA6.0_dvb_gopt.out",
]
OUT = os.path.join(HERE, "reference.json")


def hartree(values):
    return [round(float(convertor(e, "eV", "hartree")), 10) for e in values]


def read(path):
    if not path.endswith(".gz"):
        return cclib.io.ccread(path)
    with tempfile.NamedTemporaryFile(suffix=".out", delete=False) as t:
        t.write(gzip.open(path).read())
    try:
        return cclib.io.ccread(t.name)
    finally:
        os.unlink(t.name)


out = json.load(open(OUT)) if os.path.exists(OUT) else {"logs": {}}
for name in LOGS:
    if name in out["logs"]:
        continue
    try:
        d = read(os.path.join(HERE, name))
    except Exception:  # noqa: BLE001 - a version that cannot read a log leaves its entry alone
        continue
    if d is None or not hasattr(d, "atomcoords"):
        continue
    out["logs"][name] = {
        "cclib": cclib.__version__,
        "atomic_numbers": [int(z) for z in d.atomnos],
        "last_positions_angstrom": [[round(float(x), 6) for x in a] for a in d.atomcoords[-1]],
        "geometries": len(d.atomcoords),
        "charge": int(d.charge),
        "multiplicity": int(d.mult),
        "scf_energies_hartree": hartree(d.scfenergies),
        "orbital_energies_hartree": [hartree(s) for s in d.moenergies],
        "homos": [int(h) for h in d.homos],
        "basis_functions": int(d.nbasis),
    }
# One line per log and field keeps the file short and its diffs readable.
with open(OUT, "w") as fh:
    fh.write('{"logs": {\n')
    for i, (name, entry) in enumerate(out["logs"].items()):
        fields = ",\n  ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in entry.items())
        fh.write(f"{json.dumps(name)}: {{\n  {fields}\n}}{',' if i + 1 < len(out['logs']) else ''}\n")
    fh.write("}}\n")
