"""Sums an Nsight Compute CSV (gpu__time_duration, dram__bytes_read/write) by kernel name and grid:
launches, time per launch and DRAM megabytes per launch, the slowest first. Used by the device
scripts of the Poisson-Boltzmann rounds (benches/device/pb_round*_2026-11-29.sh)."""
import collections
import csv
import sys

rows = [line for line in open(sys.argv[1]) if line.startswith('"')]
t = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
for row in csv.DictReader(rows):
    key = (row["Kernel Name"].split("(")[0], row.get("Grid Size", ""))
    metric = row["Metric Name"]
    value = float(row["Metric Value"].replace(",", "") or 0)
    if metric == "gpu__time_duration.sum":
        t[key][0] += 1
        t[key][1] += value
    elif metric == "dram__bytes_read.sum":
        t[key][2] += value
    elif metric == "dram__bytes_write.sum":
        t[key][3] += value
for (k, g), (n, ns, rd, wr) in sorted(t.items(), key=lambda x: -x[1][1]):
    n = max(n, 1)
    print(f"{k:24s} {g:16s} n {n:5d}  each {ns/n/1e3:8.2f} us  read {rd/n/1e6:7.2f} MB  write {wr/n/1e6:7.2f} MB")
