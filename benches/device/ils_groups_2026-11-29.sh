#!/bin/bash
# One H200: the ILS point kernel with each point's orientations split over four threads (16 points per
# block) against one thread per point (64 points per block), and shared tiles of 2048 and 1024 atoms.
# Carried: $DEV (xz'd stripped binaries: orbitfield, the test binaries ils and ils_large_map).
# The measured builds read ORBITFIELD_ILS_GROUPS / _TILE / _SYM (and, in call 5, _JOINT, the bound's pieces)
# to pick the configuration; the committed
# code has none of them (four threads per point from 32 orientations, a tile of 1024 atoms), so with it
# every configuration below runs that one.
# ONLY= selects parts: tests bench.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD; mkdir -p /work && ln -sfn "$R" /work/main
export ORBITFIELD_TEST_ROOT="$R"
DEV=${DEV:-.dev-a}
(cd $DEV && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
mkdir -p target/release && ln -sf "$R/$DEV/orbitfield" target/release/orbitfield
nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; nproc; date -u
L=$OUT/logs; mkdir -p $L
ONLY=${ONLY:-tests bench}
case " $ONLY " in *" tests "*)
for t in ${TESTS:-ils ils_large_map}; do
  [ -x $DEV/$t ] || { echo "== $t: not carried"; continue; }
  ORBITFIELD_REQUIRE_CUDA=1 timeout ${TEST_LIMIT:-200} $DEV/$t --test-threads 1 --nocapture > $L/$t.log 2>&1
  echo "== $t rc $? $(grep -E '^test result' $L/$t.log | tail -1)"
  grep -E "FAILED|panicked|largest|max" $L/$t.log | head -12 | cut -c1-260
done;; esac
case " $ONLY " in *" bench "*)
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc; XS="$X $X $X $X $X $X $X $X $X $X"
SEL="(protein or within 15 of protein) and not name MW"
ils() { local tag=$1; shift; local s=$(date +%s.%N)
  ORBITFIELD_LOG=orbitfield::timing=debug timeout 150 $DEV/orbitfield grid ils $G $XS --probe o2 --sel "$SEL" --around protein --lj-elements "$@" -o $L/ils_$tag.dx > $L/ils_$tag.log 2>&1
  local rc=$? e=$(date +%s.%N); echo "== ils $tag rc $rc wall $(awk -v a=$s -v b=$e 'BEGIN{printf "%.2f", b-a}') s"
  grep "ILS frame" $L/ils_$tag.log | sed -n '3p' | sed 's/.*ILS frame/ILS frame/' | cut -c1-300
  grep "ILS frame" $L/ils_$tag.log | awk '{for(i=1;i<=NF;i++) if($i=="total"){v=$(i+1)+0; if(NR>1){s+=v; n++; if(min==""||v<min)min=v; if(v>max)max=v}}} END{printf "   GPU frames 2..: mean %.2f ms (min %.2f, max %.2f) over %d\n", s/n, min, max, n}'
  tail -1 $L/ils_$tag.log | cut -c1-420; }
# A configuration: g<threads per point>_t<tile atoms>[_s] (_s: one reciprocal for both atoms of O2).
for cfg in ${CFGS:-g4_t2048 g4_t1024 g1_t2048 g4_t1536}; do
  IFS=_ read -r g t sym <<< "$cfg"
  ORBITFIELD_ILS_GROUPS=${g#g} ORBITFIELD_ILS_TILE=${t#t} ORBITFIELD_ILS_SYM=$([ "$sym" = s ] && echo 1 || echo 0) \
    ils $cfg --device gpu --frames ${FRAMES:-1:100}
done
# The maps of the configurations against the first (PMF < 10 kT).
set -- ${CFGS:-g4_t2048 g4_t1024 g1_t2048 g4_t1536}; first=$1; shift
for c in "$@"; do
awk 'FNR==1{f++} /^[-0-9. eE+]+$/ && NF>0 { for(i=1;i<=NF;i++){ if(f==1) a[n1++]=$i; else b[n2++]=$i } }
  END { m=0; c=0; for(i=0;i<n1;i++){ if(a[i]+0<10){ d=a[i]-b[i]; if(d<0)d=-d; if(d>m)m=d; c++ } }
        printf "== ils map '"$c"' against '"$first"', PMF < 10 kT: %d of %d voxels, largest difference %.2e kT\n", c, n1, m }' $L/ils_$first.dx $L/ils_$c.dx
done
rm -f $L/*.dx;;
esac
date -u
