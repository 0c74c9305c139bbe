#!/bin/bash
# Issue 40: the scaling cases on 1, 2 and 4 GPUs of one host (nvidia-h200-x4), in one call.
# Carried binaries in .device/: orbitfield (release, CUDA), orbitfield-bench (release, bench-harness),
# pool_multi_gpu (release test binary). Data from tests/data. Writes logs, JSON and maps' differences
# under $OUT; prints a summary.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD
mkdir -p /work && ln -sfn "$R" /work/main
export ORBITFIELD_TEST_ROOT="$R" NCCL_NVLS_ENABLE=0
(cd .device && for f in *.xz; do xz -d "$f"; done; chmod +x *)
OF=.device/orbitfield; B=.device/orbitfield-bench
T=/tmp/scal; mkdir -p $T
nvidia-smi -L; nvidia-smi topo -m | head -6
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv
nproc; date -u
cmp_dx() { # max |a-b| and max |a| over voxels where a < $3 (ILS) or all (esp): a=$1, b=$2
  awk -v lim="${3:-1e300}" 'FNR==1{f++} /^[-0-9. eE+]+$/ && NF>0 { for(i=1;i<=NF;i++){ if(f==1) a[n1++]=$i; else b[n2++]=$i } }
    END { m=0; ma=0; c=0; for(i=0;i<n1;i++){ if(a[i]+0<lim){ d=a[i]-b[i]; if(d<0)d=-d; if(d>m)m=d; v=a[i]<0?-a[i]:a[i]; if(v>ma)ma=v; c++ } }
          printf "values %d/%d compared %d max_abs_diff %.3e max_abs %.3e rel %.3e\n", n1, n2, c, m, ma, (ma>0?m/ma:0) }' "$1" "$2"
}
# 1. The pool test on every device (maps on all devices against one device).
ORBITFIELD_REQUIRE_CUDA=1 timeout 200 .device/pool_multi_gpu --test-threads 1 --nocapture > $OUT/pool_test.log 2>&1
echo "pool test rc $?"; grep -E "max diff|largest|tiles|test result|panicked" $OUT/pool_test.log | tail -12
# 2. Pool cases (C60 HOMO 256^3, Coulomb 1M charges 256^3, adk average 98 frames): 1 GPU against 2 and 4.
for d in 0,1 0,1,2,3; do
  ORBITFIELD_DEVICES=$d timeout 240 $B --no-mo --no-dcs --rdf-atoms none --pool --repeats 9 --json $OUT/pool_${d//,/-}.json > $OUT/pool_${d//,/-}.log 2>&1
  echo "pool [$d] rc $?"; grep -E "^pool" $OUT/pool_${d//,/-}.log | cut -c1-260
done
# 3. MSM 1.5M atoms at 0.5 A, default (device) stages, on 1, 2, 4 GPUs.
for d in 0 0,1 0,1,2,3; do
  ORBITFIELD_DEVICES=$d timeout 120 $B --no-mo --no-dcs --rdf-atoms none --msm-atoms 1500000 --repeats 3 --json $OUT/msm_${d//,/-}.json > $OUT/msm_${d//,/-}.log 2>&1
  echo "msm [$d] rc $? $(grep -o 'total_s: [0-9.]*\|map_s: [0-9.]*\|plan_s: [0-9.]*\|rel_rms_vs_direct: [0-9.e-]*' $OUT/msm_${d//,/-}.log | tr '\n' ' ')"
done
# 4. ILS of adk in OPLS-AA water (23,439 atoms), O2, 99 frames after the gro's own (xtc x10), 1/2/4 GPUs.
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc
for d in 0 0,1 0,1,2,3; do
  s=$(date +%s.%N)
  ORBITFIELD_DEVICES=$d timeout 150 $OF grid ils $G $X $X $X $X $X $X $X $X $X $X --probe o2 \
    --sel "(protein or within 15 of protein) and not name MW" --around protein --lj-elements --device gpu \
    --frames 1:100 -o $T/ils_$d.dx > $OUT/ils_${d//,/-}.log 2>&1
  rc=$?; e=$(date +%s.%N); echo "ils [$d] rc $rc wall $(awk -v a=$s -v b=$e "BEGIN{printf \"%.2f\", b-a}") s"; tail -2 $OUT/ils_${d//,/-}.log
done
for d in 0,1 0,1,2,3; do echo "ils map [$d] vs [0], PMF < 10 kT: $(cmp_dx $T/ils_0.dx $T/ils_$d.dx 10)"; done
# 5. adk's potential averaged over 980 frames (adk_dims.dcd x10), 0.5 A, direct sum, 1/2/4 GPUs.
P=tests/data/md/adk.psf; D=tests/data/md/adk_dims.dcd
for d in 0 0,1 0,1,2,3; do
  s=$(date +%s.%N)
  ORBITFIELD_DEVICES=$d timeout 150 $OF grid esp $P $D $D $D $D $D $D $D $D $D $D --frames all --combine avg \
    --spacing 0.5 --device gpu -o $T/esp_$d.dx > $OUT/esp_${d//,/-}.log 2>&1
  rc=$?; e=$(date +%s.%N); echo "esp avg [$d] rc $rc wall $(awk -v a=$s -v b=$e "BEGIN{printf \"%.2f\", b-a}") s"; tail -2 $OUT/esp_${d//,/-}.log
done
for d in 0,1 0,1,2,3; do echo "esp map [$d] vs [0]: $(cmp_dx $T/esp_0.dx $T/esp_$d.dx)"; done
date -u
