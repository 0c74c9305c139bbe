"""iodata 1.0.1's reading of Gaussian's optimisation and scan summaries (fchk files without a
basis set or orbitals), for `tests/qm_references.rs`: every geometry `iodata.load_many` gives
(Angstrom), with its scan point and step.

    python3 -m venv venv && venv/bin/pip install qc-iodata==1.0.1
    venv/bin/python tests/data/qm/fchk/make_summary_reference.py
"""

import json
import os

import iodata

HERE = os.path.dirname(os.path.abspath(__file__))
ANGSTROM_PER_BOHR = 0.529177210903
out = {"iodata": iodata.__version__}
for name, folder in (("methanol_g16_opt", "../fresh"), ("methanol_g16_scan", ".")):
    path = os.path.join(HERE, folder, name + ".fchk.gz")
    import gzip
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".fchk", delete=False) as tmp:
        tmp.write(gzip.decompress(open(path, "rb").read()))
    frames = []
    for d in iodata.load_many(tmp.name):
        frames.append({
            "point": int(d.extra["ipoint"]),
            "step": int(d.extra["istep"]),
            "atnums": [int(z) for z in d.atnums],
            "xyz_angstrom": [[round(float(x) * ANGSTROM_PER_BOHR, 8) for x in a] for a in d.atcoords],
        })
    os.unlink(tmp.name)
    out[name] = frames
with open(os.path.join(HERE, "summary_reference.json"), "w") as fh:
    json.dump(out, fh, indent=1)
