#!/bin/bash
# One H200, sixth round of the Poisson-Boltzmann solver, run on commit 7e1b73f (the code was reverted
# after it: benches/RESULTS.md, "sixth round") (the finest level's coefficients as byte
# indices into the problem's table of values, `compute::cuda::pb::codes`; the search direction's update
# fused with the operator, `pb_apply_pc`): the third round's steps (benches/device/pb_round3_2026-11-29.sh:
# adk alone with the residual trace, here with the float and the coded finest level alternating; the
# tests; the whole benchmark) on this round's build, and with ONLY=ncu6 Nsight Compute on the finest
# level's passes of the adk rows. Carried: .dev-a (xz'd binaries: pb_cuda_bench, pb_cuda, pb_cuda_maps).
# ONLY= and RUNS= as there.
set -uo pipefail
cd "$(dirname "$0")/../.."
case " ${ONLY:-} " in *" ncu6 "*)
  (cd .dev-a && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
  export ORBITFIELD_TEST_ROOT=$PWD; mkdir -p "$OUT/logs"
  PB_BENCH_ONLY=adk timeout 300 ncu --clock-control none --cache-control none \
    -k "regex:pb_apply|pb_xpby_s|pb_residual64|pb_encode|pb_to_f32|pb_pack|pb_coarsen|pb_cg_update_s" \
    --launch-count 600 --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --csv --print-units base .dev-a/pb_cuda_bench > "$OUT/logs/ncu6.csv" 2> "$OUT/logs/ncu6.err"; echo "== ncu6 rc $?"
  python3 benches/device/ncu_summary.py "$OUT/logs/ncu6.csv" | tee "$OUT/logs/ncu6_summary.txt"
  ONLY=${ONLY/ncu6/};;
esac
exec bash "$(dirname "$0")/pb_round3_2026-11-29.sh" "$@"
