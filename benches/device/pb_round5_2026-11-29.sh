#!/bin/bash
# One H200, fifth round of the Poisson-Boltzmann solver (the V-cycle's small levels in one launch,
# `pb_tail`; each level's first half sweep from zero, `pb_smooth_h_zero`): the third round's steps
# (benches/device/pb_round3_2026-11-29.sh: adk alone with the residual trace, here with the tail off,
# from 11^3 and from 21^3, and one sweep below the finest level; the tests; the whole benchmark) on this
# round's build, and with ONLY=ncu5 Nsight Compute on the V-cycle's coarse kernels alone (the first
# 400 launches of them). Carried: .dev-a (xz'd binaries: pb_cuda_bench, pb_cuda, pb_cuda_maps).
# ONLY= and RUNS= as there.
set -uo pipefail
cd "$(dirname "$0")/../.."
case " ${ONLY:-} " in *" ncu5 "*)
  (cd .dev-a && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
  export ORBITFIELD_TEST_ROOT=$PWD; mkdir -p "$OUT/logs"
  PB_BENCH_ONLY=adk timeout 300 ncu --clock-control none --cache-control none \
    -k "regex:pb_tail|pb_coarse_solve|pb_smooth_h_zero|pb_smooth_h$|pb_restrict|pb_prolong_add|pb_mg_residual_h" \
    --launch-count 400 --metrics gpu__time_duration.sum --csv --print-units base .dev-a/pb_cuda_bench \
    > "$OUT/logs/ncu5.csv" 2> "$OUT/logs/ncu5.err"; echo "== ncu5 rc $?"
  python3 - "$OUT/logs/ncu5.csv" <<'PY' | tee "$OUT/logs/ncu5_summary.txt"
import csv, sys, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
t = collections.defaultdict(lambda: [0, 0.0])
for row in csv.DictReader(rows):
    if row["Metric Name"] != "gpu__time_duration.sum": continue
    key = (row["Kernel Name"].split("(")[0], row.get("Grid Size", ""))
    t[key][0] += 1; t[key][1] += float(row["Metric Value"].replace(",", "") or 0)
for (k, g), (n, ns) in sorted(t.items(), key=lambda x: -x[1][1]):
    print(f"{k:24s} {g:16s} n {n:5d}  each {ns/n/1e3:8.2f} us")
PY
  ONLY=${ONLY/ncu5/};;
esac
exec bash "$(dirname "$0")/pb_round3_2026-11-29.sh" "$@"
