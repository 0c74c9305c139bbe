#!/bin/bash
# One H200, fourth round of the Poisson-Boltzmann solver (conjugate-gradient iterations that start with
# the preconditioner, so the converging one applies none it does not use): adk at 161^3
# (benches/pb_cuda.rs with PB_BENCH_ONLY=adk and the residual trace), the same under Nsight Compute
# (clocks and caches left alone), the tests, and the whole benchmark. Carried: .dev-a (xz'd binaries:
# pb_cuda_bench, pb_cuda, pb_cuda_maps).
# ONLY= selects parts: bench ncu tests full.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD; export ORBITFIELD_TEST_ROOT="$R"
(cd .dev-a && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null)
nvidia-smi -L; date -u
ONLY=${ONLY:-bench ncu}
L=$OUT/logs; mkdir -p $L
B=.dev-a/pb_cuda_bench
case " $ONLY " in *" bench "*)
for r in ${RUNS:-1}; do
  PB_BENCH_ONLY=adk PB_BENCH_TRACE=1 timeout 120 $B > $L/bench_adk_$r.log 2>&1; echo "== bench adk $r rc $?"
  cut -c1-300 $L/bench_adk_$r.log
done;; esac
case " $ONLY " in *" ncu "*)
PB_BENCH_ONLY=adk timeout 400 ncu --clock-control none --cache-control none \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum --csv --print-units base \
  $B > $L/ncu_adk.csv 2> $L/ncu_adk.err; echo "== ncu rc $?"; tail -3 $L/ncu_adk.err
python3 - "$L/ncu_adk.csv" <<'PY' | tee $L/ncu_summary.txt
import csv, sys, collections
rows = [l for l in open(sys.argv[1]) if l.startswith('"')]
r = csv.DictReader(rows)
t = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0]); grid = {}
for row in r:
    k = row["Kernel Name"].split("(")[0]; g = row.get("Grid Size", "")
    m = row["Metric Name"]; v = float(row["Metric Value"].replace(",", "") or 0)
    key = (k, g)
    if m == "gpu__time_duration.sum": t[key][0] += 1; t[key][1] += v
    elif m == "dram__bytes_read.sum": t[key][2] += v
    elif m == "dram__bytes_write.sum": t[key][3] += v
tot = sum(v[1] for v in t.values())
print(f"total {tot/1e6:.2f} ms over {sum(v[0] for v in t.values())} launches")
for (k, g), (n, ns, rd, wr) in sorted(t.items(), key=lambda x: -x[1][1]):
    print(f"{k:28s} {g:18s} n {n:6d}  total {ns/1e6:8.3f} ms  each {ns/n/1e3:8.2f} us  read {rd/n/1e6:7.2f} MB  write {wr/n/1e6:7.2f} MB  {(rd+wr)/max(ns,1):6.0f} GB/s")
PY
;; esac
case " $ONLY " in *" tests "*)
for t in pb_cuda pb_cuda_maps pb_focus; do
  [ -x .dev-a/$t ] || continue
  ORBITFIELD_REQUIRE_CUDA=1 timeout 300 .dev-a/$t --test-threads 1 > $L/$t.log 2>&1
  echo "== $t rc $? $(grep -E '^test result' $L/$t.log | tail -1)"; grep -E "FAILED|panicked" $L/$t.log | head
done;; esac
case " $ONLY " in *" full "*)
timeout 300 $B > $L/bench_full.log 2>&1; echo "== bench full rc $?"; cut -c1-300 $L/bench_full.log;;
esac
date -u
