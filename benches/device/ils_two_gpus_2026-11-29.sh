#!/bin/bash
# Two H200s of one host: ILS frames per second on AdK in its whole OPLS-AA water box (as
# ils_solvated_2026-11-29.sh, the xtc given 20 times: 199 frames) over both devices against one
# (CUDA_VISIBLE_DEVICES=0), alternating, in the same call. Carried: $DEV (xz'd stripped orbitfield).
set -uo pipefail
cd "$(dirname "$0")/../.."
DEV=${DEV:-.dev-a}
(cd $DEV && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.max.sm --format=csv,noheader; nproc; date -u
L=$OUT/logs; mkdir -p $L
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc
XS=""; for i in $(seq 20); do XS="$XS $X"; done
ils() { local tag=$1; shift; local s=$(date +%s.%N)
  env "$@" $DEV/orbitfield grid ils $G $XS --probe o2 --sel "not name MW" --around protein --lj-elements --device gpu -o $L/ils_$tag.dx > $L/ils_$tag.log 2>&1
  local rc=$? e=$(date +%s.%N); echo "== ils $tag rc $rc wall $(awk -v a=$s -v b=$e 'BEGIN{printf "%.2f", b-a}') s"
  tail -1 $L/ils_$tag.log | cut -c1-520; }
for i in ${RUNS:-1 2}; do
  ils two_$i ORBITFIELD_X=1
  ils one_$i CUDA_VISIBLE_DEVICES=0
done
date -u
