#!/bin/bash
# One H200: the solvent-excluded surface (`grid ses`, kernels/ses.cu) against the CPU engine.
# Carried: .device (xz'd release binaries: orbitfield, ses_cuda). Runs the device tests with
# ORBITFIELD_REQUIRE_CUDA=1, then times `grid ses` and `grid molsurf` on adk (3,341 atoms, PQR radii)
# at 0.5 A on the CUDA engine and on the CPU engine (16 threads), three times each, in one call.
set -uo pipefail
cd "$(dirname "$0")/../.."
(cd .device && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
mkdir -p "$OUT/logs"
export ORBITFIELD_TEST_ROOT=$PWD
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/logs/device.txt"
ORBITFIELD_REQUIRE_CUDA=1 timeout 300 .device/ses_cuda --test-threads 1 --nocapture 2>&1 | tee "$OUT/logs/ses_cuda.log"
for run in 1 2 3; do
  for field in ses molsurf; do
    for dev in cuda cpu; do
      timeout 120 .device/orbitfield grid $field tests/data/md/adk_open.pqr --spacing 0.5 --device $dev \
        -o /tmp/$field.$dev.dx 2>&1 | tee -a "$OUT/logs/grid_times.log"
    done
  done
done
# The two engines' maps agree (values in [0, 1]; the largest difference).
python3 - <<'PY' 2>&1 | tee -a "$OUT/logs/grid_times.log"
import re
def read(p):
    v = []
    for line in open(p):
        if line[:1].isdigit() or line[:1] == '-' or line[:1] == '.':
            v += [float(x) for x in line.split()]
    return v
a, b = read('/tmp/ses.cuda.dx'), read('/tmp/ses.cpu.dx')
print('ses cuda vs cpu: points', len(a), len(b), 'largest difference', max(abs(x - y) for x, y in zip(a, b)))
PY
