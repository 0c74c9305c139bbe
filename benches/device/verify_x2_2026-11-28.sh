#!/bin/bash
# The merged code's GPU tests on two H200s (CUDA and the Vulkan adapter), then the pool cases on one and
# two GPUs and the viewer's adk potential playback through the pool on one and two GPUs.
# Carried: .device (test binaries named after their test file, orbitfield-bench; stripped, xz), .gl.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD; mkdir -p /work && ln -sfn "$R" /work/main
export ORBITFIELD_TEST_ROOT="$R" NCCL_NVLS_ENABLE=0
(cd .device && for f in *.xz; do xz -d "$f"; done; chmod +x *)
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L; nproc; date -u
L=/tmp/v; mkdir -p $L
for t in ${TESTS:-gpu_engine gpu_dssp qm_esp pool_multi_gpu ils pb_cuda wgpu_engine wgpu_ils}; do
  [ -x .device/$t ] || { echo "== $t: not carried"; continue; }
  ORBITFIELD_REQUIRE_CUDA=1 timeout ${TEST_LIMIT:-150} .device/$t --test-threads ${THREADS:-1} --nocapture > $L/$t.log 2>&1
  echo "== $t rc $? $(grep -E '^test result' $L/$t.log | tail -1)"
  grep -E "FAILED|panicked" $L/$t.log | head -5
done
if [ -x .device/orbitfield-bench ] && [ "${BENCH:-1}" = 1 ]; then
  B=.device/orbitfield-bench
  timeout 200 $B --no-mo --no-dcs --rdf-atoms none --pool --repeats 9 --json $L/pool.json > $L/pool.log 2>&1
  echo "== pool rc $?"; grep -E "^pool" $L/pool.log | cut -c1-300
  for d in 0 0-1; do
    for n in 128 256; do
      ORBITFIELD_DEVICES=${d/-/,} timeout 60 $B --no-mo --no-dcs --rdf-atoms none --playback --playback-only adk \
        --playback-points $n --json $L/play_adk_${n}_$d.json > $L/play_adk_${n}_$d.log 2>&1
      echo "== adk playback $n points, devices $d rc $?"; grep -E "^playback" $L/play_adk_${n}_$d.log | cut -c1-300
    done
  done
fi
date -u; tar czf $OUT/verify.tgz -C /tmp v
