#!/bin/bash
# Issues 39 and 34 on two H200s (nvidia-h200-x2): the pool cases on one and two GPUs (C60 HOMO 256^3,
# Coulomb 1M charges, adk averaged over 98 frames), MSM 1.5M atoms, the viewer's adk potential playback
# through the pool on one and two GPUs, ILS (O2, 23,439 atoms) on one and two GPUs.
# Carried: .dev-a/orbitfield.xz (release), .dev-b/orbitfield-bench.xz (release, bench-harness).
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD
mkdir -p /work && ln -sfn "$R" /work/main
export ORBITFIELD_TEST_ROOT="$R" NCCL_NVLS_ENABLE=0
for d in .dev-a .dev-b; do (cd $d && for f in *.xz; do xz -d "$f"; done; chmod +x *); done
OF=.dev-a/orbitfield; B=.dev-b/orbitfield-bench
T=/tmp/x2; mkdir -p $T
nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; date -u
cmp_dx() {
  awk -v lim="${3:-1e300}" 'FNR==1{f++} /^[-0-9. eE+]+$/ && NF>0 { for(i=1;i<=NF;i++){ if(f==1) a[n1++]=$i; else b[n2++]=$i } }
    END { m=0; ma=0; c=0; for(i=0;i<n1;i++){ if(a[i]+0<lim){ d=a[i]-b[i]; if(d<0)d=-d; if(d>m)m=d; v=a[i]<0?-a[i]:a[i]; if(v>ma)ma=v; c++ } }
          printf "values %d/%d compared %d max_abs_diff %.3e max_abs %.3e rel %.3e\n", n1, n2, c, m, ma, (ma>0?m/ma:0) }' "$1" "$2"
}
ONLY=${ONLY:-pool msm play ils}
case " $ONLY " in *" pool "*)
for d in 0,1; do
  ORBITFIELD_DEVICES=$d timeout 240 $B --no-mo --no-dcs --rdf-atoms none --pool --repeats 9 --json $OUT/pool_${d//,/-}.json > $OUT/pool_${d//,/-}.log 2>&1
  echo "pool [$d] rc $?"; grep -E "^pool" $OUT/pool_${d//,/-}.log | cut -c1-300
done;; esac
case " $ONLY " in *" msm "*)
for d in 0 0,1; do
  ORBITFIELD_DEVICES=$d timeout 120 $B --no-mo --no-dcs --rdf-atoms none --msm-atoms 1500000 --repeats 3 --json $OUT/msm_${d//,/-}.json > $OUT/msm_${d//,/-}.log 2>&1
  echo "msm [$d] rc $? $(grep -o 'total_s: [0-9.]*\|map_s: [0-9.]*\|plan_s: [0-9.]*\|rel_rms_vs_direct: [0-9.e-]*' $OUT/msm_${d//,/-}.log | tr '\n' ' ')"
done;; esac
case " $ONLY " in *" play "*)
for d in 0 0,1; do
  for n in 128 256; do
    ORBITFIELD_DEVICES=$d timeout 90 $B --no-mo --no-dcs --rdf-atoms none --playback --orbitals-on pool --playback-only adk \
      --playback-points $n --json $OUT/play_adk_${n}_${d//,/-}.json > $OUT/play_adk_${n}_${d//,/-}.log 2>&1
    echo "adk playback $n points, devices [$d] rc $?"; grep -E "^playback|fps" $OUT/play_adk_${n}_${d//,/-}.log | cut -c1-300 | head -4
  done
done;; esac
case " $ONLY " in *" ils "*)
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc
for d in 0 0,1; do
  s=$(date +%s.%N)
  ORBITFIELD_DEVICES=$d timeout 150 $OF grid ils $G $X $X $X $X $X $X $X $X $X $X --probe o2 \
    --sel "(protein or within 15 of protein) and not name MW" --around protein --lj-elements --device gpu \
    --frames 1:100 -o $T/ils_$d.dx > $OUT/ils_${d//,/-}.log 2>&1
  rc=$?; e=$(date +%s.%N); echo "ils [$d] rc $rc wall $(awk -v a=$s -v b=$e "BEGIN{printf \"%.2f\", b-a}") s"; tail -2 $OUT/ils_${d//,/-}.log
done
echo "ils map [0,1] vs [0], PMF < 10 kT: $(cmp_dx $T/ils_0.dx $T/ils_0,1.dx 10)";; esac
date -u
