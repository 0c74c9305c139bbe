#!/bin/bash
# Issue 35: the host-bound H200 headlines of the code before the compute-layer work (commit 4345d7a, the
# end of wave 2: `orbitfield bench`) against the final code (`orbitfield-bench`), alternated in one call
# on one machine, same flags. Carried: .device/old-orbitfield, .device/orbitfield-bench (release,
# stripped, xz) and the Vulkan loader (.gl). Prints each measured line; JSON under $OUT/cmp.
set -uo pipefail
cd "$(dirname "$0")/../.."
(cd .device && for f in *.xz; do xz -d "$f"; done; chmod +x *)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json CUDA_VISIBLE_DEVICES=0
C=/tmp/cmp; mkdir -p $C
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nproc; date -u
run() { # which round case args...
  local b=$1 r=$2 c=$3; shift 3
  local bin=.device/orbitfield-bench; [ $b = old ] && bin=".device/old-orbitfield bench"
  timeout 90 $bin "$@" --json $C/${c}_${b}_$r.json > $C/${c}_${b}_$r.txt 2>/dev/null
  echo "== $c $b round $r rc $?"
}
for r in 1 2 3; do for b in old new; do
  run $b $r play128 --no-mo --no-dcs --rdf-atoms none --playback --orbitals-on render-device --playback-only HOMO
  grep "^playback" $C/play128_${b}_$r.txt | cut -c1-200
  run $b $r cartoon --cartoon --cartoon-on render-device --repeats 10
  grep "x 468" $C/cartoon_${b}_$r.txt | cut -c1-220
done; done
for r in 1 2; do for b in old new; do
  run $b $r molsurf --molsurf --molsurf-atoms 100000,1000000 --repeats 9
  grep "^molsurf" $C/molsurf_${b}_$r.txt | cut -c1-220
done; done
date -u; tar czf $OUT/cmp.tgz -C /tmp cmp
