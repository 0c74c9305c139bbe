#!/bin/bash
# One H200: ILS frames per second on AdK in its whole OPLS-AA water box (as
# ils_solvated_2026-11-29.sh), with each frame's host timeline logged (layout, enqueue, the caller's
# read and placement) to find where the device waits between frames. Carried: $DEV (xz'd stripped
# orbitfield and, for ONLY=tests, the test binaries ils and ils_large_map).
# WORKERS lists worker counts per device to compare; the measured builds read ORBITFIELD_ILS_WORKERS
# (the committed code has the constant `jobs::ils::ILS_WORKERS_PER_GPU` only, so with it every
# WORKERS value runs four). Logs of the three calls: ils_pipeline_2026-11-29/call1..3.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD; mkdir -p /work && ln -sfn "$R" /work/main
export ORBITFIELD_TEST_ROOT="$R"
DEV=${DEV:-.dev-a}
(cd $DEV && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
mkdir -p target/release && ln -sf "$R/$DEV/orbitfield" target/release/orbitfield
nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; nproc; date -u
L=$OUT/logs; mkdir -p $L
ONLY=${ONLY:-bench}
case " $ONLY " in *" tests "*)
for t in ${TESTS:-ils ils_large_map}; do
  [ -x $DEV/$t ] || { echo "== $t: not carried"; continue; }
  ORBITFIELD_REQUIRE_CUDA=1 timeout ${TEST_LIMIT:-200} $DEV/$t --test-threads 1 --nocapture > $L/$t.log 2>&1
  echo "== $t rc $? $(grep -E '^test result' $L/$t.log | tail -1)"
  grep -E "FAILED|panicked|largest|max" $L/$t.log | head -12 | cut -c1-260
done;; esac
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc; XS="$X $X $X $X $X $X $X $X $X $X"
ils() { local tag=$1 sel=$2; shift 2; local s=$(date +%s.%N)
  ORBITFIELD_LOG=orbitfield::timing=debug timeout 150 $DEV/orbitfield grid ils $G $XS --probe o2 --sel "$sel" --around protein --lj-elements "$@" -o $L/ils_$tag.dx > $L/ils_$tag.log 2>&1
  local rc=$? e=$(date +%s.%N); echo "== ils $tag rc $rc wall $(awk -v a=$s -v b=$e 'BEGIN{printf "%.2f", b-a}') s"
  grep "ILS frame on" $L/ils_$tag.log | sed -n '12p' | sed 's/.*ILS frame/ILS frame/' | cut -c1-420
  grep "ILS frame .* read in" $L/ils_$tag.log | sed -n '12p' | sed 's/.*ILS frame/ILS frame/'
  tail -1 $L/ils_$tag.log | cut -c1-420; }
case " $ONLY " in *" bench "*)
for i in ${RUNS:-1 2}; do
  for w in ${WORKERS:-2 3}; do
    ORBITFIELD_ILS_WORKERS=$w ils box_w${w}_$i "not name MW" --device gpu --frames ${FRAMES:-1:100}
  done
done
[ -n "${SHELL_RUN:-}" ] && ORBITFIELD_ILS_WORKERS=${SHELL_RUN} ils shell "(protein or within 15 of protein) and not name MW" --device gpu --frames 1:100
;; esac
date -u
