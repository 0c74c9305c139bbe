"""cclib 1.8.1's reading of `Gaussian03_BH3_cda.log` (an independent parser), for
`tests/qm_logs.rs`: the number of basis functions and orbitals, the HOMO index and the orbital
energies in hartree (cclib's eV divided by its 27.21138505).

    python3 -m venv venv && venv/bin/pip install cclib==1.8.1
    venv/bin/python tests/data/qm-logs/make_cclib_reference.py
"""

import json
import logging
import os

import cclib

logging.disable(logging.CRITICAL)
HERE = os.path.dirname(os.path.abspath(__file__))
d = cclib.io.ccread(os.path.join(HERE, "Gaussian03_BH3_cda.log"))
out = {
    "cclib": cclib.__version__,
    "atomnos": [int(z) for z in d.atomnos],
    "nbasis": int(d.nbasis),
    "nmo": int(len(d.mocoeffs[0])),
    "homo": int(d.homos[0]),
    "energies_hartree": [round(float(e) / 27.21138505, 6) for e in d.moenergies[0]],
}
with open(os.path.join(HERE, "Gaussian03_BH3_cda.cclib.json"), "w") as fh:
    json.dump(out, fh, indent=1)
