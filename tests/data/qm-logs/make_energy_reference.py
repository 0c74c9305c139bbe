"""cclib's reading of each step's SCF energy and geometry in the optimisation, scan and dynamics
logs here (an independent parser), for `tests/qm_log_energies.rs`: per log, the SCF energies in
hartree (cclib's eV converted back by cclib's own factor) and the geometry of each (Angstrom).

    python3 -m venv venv && venv/bin/pip install cclib==1.8.1
    venv/bin/python tests/data/qm-logs/make_energy_reference.py

cclib 1.8.1 stops on ORCA 6.0's logs and on the RUNTYP=SURFACE log, and reads the Gaussian BOMD
log's bohr coordinates as Angstrom (with the step summaries' EPot); the test checks those logs
against their own energy lines instead.
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
    "GAMESS-US2018_dvb_gopt_a.out",
    "gms/c1opt.gms.gz",
    "gms/symopt.gms.gz",
    "Gaussian16_dvb_sp.out",
]
out = {"cclib": cclib.__version__, "logs": {}}
for name in LOGS:
    path = os.path.join(HERE, name)
    if name.endswith(".gz"):
        with tempfile.NamedTemporaryFile(suffix=".out", delete=False) as t:
            t.write(gzip.open(path).read())
        d = cclib.io.ccread(t.name)
        os.unlink(t.name)
    else:
        d = cclib.io.ccread(path)
    n = min(len(d.scfenergies), len(d.atomcoords))
    out["logs"][name] = {
        "energies_hartree": [float(convertor(e, "eV", "hartree")) for e in d.scfenergies[:n]],
        "positions_angstrom": [[[round(float(x), 6) for x in a] for a in step] for step in d.atomcoords[:n]],
    }
with open(os.path.join(HERE, "energies.cclib.json"), "w") as fh:
    json.dump(out, fh)
