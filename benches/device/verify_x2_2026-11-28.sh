#!/bin/bash
# The merged code's GPU tests on two H200s (CUDA and the Vulkan adapter), then the pool cases on one and
# two GPUs and the viewer's adk potential playback through the pool on one and two GPUs.
# Carried: $DEV (test binaries named after their test file, orbitfield-bench; stripped, xz), .gl.
set -uo pipefail
cd "$(dirname "$0")/../.."
DEV=${DEV:-.device}
R=$PWD; mkdir -p /work && ln -sfn "$R" /work/main
export ORBITFIELD_TEST_ROOT="$R" NCCL_NVLS_ENABLE=0
(cd $DEV && for f in *.xz; do xz -d "$f"; done; chmod +x *)
mkdir -p target/release && ln -sf "$R/$DEV/orbitfield" target/release/orbitfield
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L; nproc; date -u
NG=$(nvidia-smi -L | wc -l)
L=/tmp/v; mkdir -p $L
for t in ${TESTS:-gpu_engine gpu_engine_fields gpu_dssp qm_esp pool_multi_gpu ils pb_cuda wgpu_engine wgpu_ils}; do
  [ -x $DEV/$t ] || { echo "== $t: not carried"; continue; }
  ORBITFIELD_REQUIRE_CUDA=1 timeout ${TEST_LIMIT:-150} $DEV/$t --test-threads ${THREADS:-1} --nocapture > $L/$t.log 2>&1
  echo "== $t rc $? $(grep -E '^test result' $L/$t.log | tail -1)"
  grep -E "FAILED|panicked" $L/$t.log | head -5
done
if [ -x $DEV/orbitfield-bench ] && [ "${BENCH:-1}" = 1 ]; then
  B=$DEV/orbitfield-bench
  timeout 200 $B --no-mo --no-dcs --rdf-atoms none --pool --repeats 9 --json $L/pool.json > $L/pool.log 2>&1
  echo "== pool rc $?"; grep -E "^pool" $L/pool.log | cut -c1-300
  DS="0"; [ "$NG" -gt 1 ] && DS="0 0-1"
  for d in $DS; do
    for n in 128 256; do
      ORBITFIELD_DEVICES=${d/-/,} timeout 60 $B --no-mo --no-dcs --rdf-atoms none --playback --playback-only adk \
        --playback-points $n --json $L/play_adk_${n}_$d.json > $L/play_adk_${n}_$d.log 2>&1
      echo "== adk playback $n points, devices $d rc $?"; grep -E "^playback" $L/play_adk_${n}_$d.log | cut -c1-300
    done
  done
fi
if [ -x $DEV/old-orbitfield ] && [ -x $DEV/orbitfield-bench ]; then
  # The molecular surface of 100k atoms, wave-2 code (4345d7a) against this code, alternated, one GPU.
  for r in 1 2 3; do
    CUDA_VISIBLE_DEVICES=0 timeout 60 $DEV/old-orbitfield bench --molsurf --molsurf-atoms 100000 --repeats 9 2>/dev/null | grep "^molsurf" | sed "s/^/old $r: /" | cut -c1-200
    CUDA_VISIBLE_DEVICES=0 timeout 60 $DEV/orbitfield-bench --molsurf --molsurf-atoms 100000 --repeats 9 2>/dev/null | grep "^molsurf" | sed "s/^/new $r: /" | cut -c1-200
  done
fi
if [ -x $DEV/orbitfield ] && [ "${ILS:-1}" = 1 ]; then
  # ILS of adk in OPLS-AA water (23,439 atoms), O2, 1 A, subres 3: CUDA on one and two GPUs (99 frames),
  # the wgpu engine on the Vulkan adapter (10 frames), the CPU engine (one frame), in this call.
  G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc; XS="$X $X $X $X $X $X $X $X $X $X"
  SEL="(protein or within 15 of protein) and not name MW"
  ils() { local tag=$1; shift; local s=$(date +%s.%N)
    timeout 150 $DEV/orbitfield grid ils $G $XS --probe o2 --sel "$SEL" --around protein --lj-elements "$@" -o $L/ils_$tag.dx > $L/ils_$tag.log 2>&1
    local rc=$? e=$(date +%s.%N); echo "== ils $tag rc $rc wall $(awk -v a=$s -v b=$e 'BEGIN{printf "%.2f", b-a}') s"; tail -1 $L/ils_$tag.log | cut -c1-400; }
  ORBITFIELD_DEVICES=0 ils cuda1 --device gpu --frames 1:100
  [ "$NG" -gt 1 ] && ORBITFIELD_DEVICES=0,1 ils cuda2 --device gpu --frames 1:100
  ils wgpu --device wgpu --frames 1:11
  ils cpu --device cpu --frames 1:2
  awk 'FNR==1{f++} /^[-0-9. eE+]+$/ && NF>0 { for(i=1;i<=NF;i++){ if(f==1) a[n1++]=$i; else b[n2++]=$i } }
    END { m=0; c=0; for(i=0;i<n1;i++){ if(a[i]+0<10){ d=a[i]-b[i]; if(d<0)d=-d; if(d>m)m=d; c++ } }
          printf "== ils two GPUs against one, PMF < 10 kT: %d of %d voxels, largest difference %.2e kT\n", c, n1, m }' $L/ils_cuda1.dx $L/ils_cuda2.dx 2>/dev/null
fi
date -u; rm -f $L/*.dx; tar czf $OUT/verify_${DEV#.}.tgz -C /tmp v
