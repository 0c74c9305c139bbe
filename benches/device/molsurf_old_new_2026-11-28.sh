#!/bin/bash
# Issue 35: the molecular surface of 100k atoms, wave-2 code (commit 4345d7a, `orbitfield bench`) against
# the current code (`orbitfield-bench`), alternated ROUNDS times in one call on one GPU, each run the
# median of 9 repeats. Carried: $DEV with old-orbitfield and orbitfield-bench (stripped, xz), .gl.
set -uo pipefail
cd "$(dirname "$0")/../.."
DEV=${DEV:-.device}
(cd $DEV && for f in *.xz; do xz -d "$f"; done; chmod +x *)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u
for r in $(seq 1 ${ROUNDS:-20}); do
  for b in old new; do
    if [ $b = old ]; then bin="$DEV/old-orbitfield bench"; else bin=$DEV/orbitfield-bench; fi
    timeout 60 $bin --molsurf --molsurf-atoms 100000 --repeats 9 2>/dev/null | grep "^molsurf" \
      | sed -E "s/.*field on host ([0-9.]+) ms \+ surface ([0-9.]+) ms.* = ([0-9.]+) ms;.*/$b $r field \1 surface \2 total \3/"
  done
done
date -u
