#!/bin/bash
# One H200, seventh round of the Poisson-Boltzmann solver, run on commit 9854305 (reverted after it:
# benches/RESULTS.md, "seventh round"; the V-cycle's finest level in half precision: `set_half_vcycle`,
# `kernels/pb_half.cu`): the third round's steps
# (benches/device/pb_round3_2026-11-29.sh: adk alone with the residual trace, here with the float32
# and the half-precision finest level alternating; the tests; the whole benchmark) on this round's
# build, and with ONLY=ncu7 Nsight Compute on the half-precision passes of the adk rows
# (time and DRAM bytes: whether the half level's sweeps stay in the L2 cache).
# Carried: .dev-a (xz'd binaries: pb_cuda_bench, pb_cuda, pb_cuda_maps). ONLY= and RUNS= as there.
set -uo pipefail
cd "$(dirname "$0")/../.."
case " ${ONLY:-} " in *" ncu7 "*)
  (cd .dev-a && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
  export ORBITFIELD_TEST_ROOT=$PWD; mkdir -p "$OUT/logs"
  PB_BENCH_ONLY=adk timeout 300 ncu --clock-control none --cache-control none \
    -k "regex:pb_smooth_h16|pb_smooth_h_zero16|pb_smooth_h_dot16|pb_mg_residual_h16|pb_prolong_add16|pb_xpby_s16" \
    --launch-count 400 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
    --csv --print-units base .dev-a/pb_cuda_bench > "$OUT/logs/ncu7.csv" 2> "$OUT/logs/ncu7.err"; echo "== ncu7 rc $?"
  python3 benches/device/ncu_summary.py "$OUT/logs/ncu7.csv" | tee "$OUT/logs/ncu7_summary.txt"
  ONLY=${ONLY/ncu7/};;
esac
exec bash "$(dirname "$0")/pb_round3_2026-11-29.sh" "$@"
