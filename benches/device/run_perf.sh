#!/usr/bin/env bash
# Coulomb kernel variants and RDF methods on one CUDA GPU (H100/H200), in one run of about 3 minutes:
#   1. the GPU tests of these kernels (every Coulomb variant below against float64 at 1e-5, the RDF
#      cell list against all pairs count for count), with ORBITFIELD_REQUIRE_CUDA=1;
#   2. `orbitfield-bench` over the Coulomb variants (100k charges on 256 x 256 x 64, median of 9
#      CUDA-event timings per variant, each checked against a float64 sum at 509 points);
#   3. `orbitfield-bench` over the RDF methods (1M x 1M atoms at water density in a 311 A box, r_max
#      12 A and 0.49 of the box; 100k x 100k at 12 A beside the CPU engine), median of 5 frames, each
#      method's histogram compared with the all-pairs kernel's;
# and prints a table last. Raw output (JSON lines, logs) goes to $OUT (default /tmp/run_perf).
#
# Usage, from anywhere:
#   bash benches/device/run_perf.sh ORBITFIELD_BENCH_BINARY [GPU_ENGINE_TEST_BINARY]
# ORBITFIELD_BENCH_BINARY: a release build of the developer harness `orbitfield-bench`
# (`cargo build --release --features bench-harness --bin orbitfield-bench`; stripped is fine). GPU_ENGINE_TEST_BINARY: the
# `tests/gpu_engine.rs` test executable (`cargo test --release --test gpu_engine --no-run` prints its
# path); without it step 1 is skipped. ORBITFIELD_TEST_ROOT: the repository copy the tests read data
# from (default: this repository). DCS_VARIANTS overrides the list of Coulomb variants.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:?usage: run_perf.sh ORBITFIELD_BENCH_BINARY [GPU_ENGINE_TEST_BINARY]}
TESTS=${2:-}
OUT=${OUT:-/tmp/run_perf}
mkdir -p "$OUT"
export ORBITFIELD_TEST_ROOT=${ORBITFIELD_TEST_ROOT:-$PWD}
# 8:0 and 8:1: the earlier kernel's shapes (8:1 the default); 8x4 and 8x8: more rows per thread, so
# dx and dy^2 + dz^2 are shared, with 0 to a third of 1/sqrt on the FMA pipe.
DCS_VARIANTS=${DCS_VARIANTS:-8:0,8:1,8x2:0,8x4:0,8x8:0,8x2:4:newton2,8x4:8:newton2,8x4:9:newton2,8x4:10:newton2,8x4:9,8x8:18:newton2,8x8:20:newton2,8x8:22:newton2}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$OUT/nvsmi.txt" 2>&1

status=0
if [ -n "$TESTS" ]; then
    echo "== GPU tests" >&2
    ORBITFIELD_REQUIRE_CUDA=1 "$TESTS" --test-threads 1 \
        every_kernel_source_compiles_with_nvrtc coulomb_sum_matches_float64 \
        rdf_cell_list_equals_all_pairs_on_the_device rdf_kernel_equals_its_f32_emulation_and_the_cpu_engine \
        --nocapture >"$OUT/gpu_tests.txt" 2>&1 || status=1
    grep -E "^test result|rel err|FAILED|panicked" "$OUT/gpu_tests.txt" | tail -20 >&2
fi

echo "== Coulomb variants" >&2
"$BIN" --no-mo --rdf-atoms none --repeats 9 --dcs-variants "$DCS_VARIANTS" \
    --json "$OUT/dcs_bench.json" >"$OUT/dcs_bench.txt" 2>"$OUT/dcs_bench.log" || status=1

echo "== RDF methods" >&2
"$BIN" --no-mo --no-dcs --rdf-atoms 1000000 --rdf-r-max 12,half --rdf-methods cells,all-pairs \
    --repeats 5 --json "$OUT/rdf_bench_1m.json" >"$OUT/rdf_bench_1m.txt" 2>"$OUT/rdf_bench_1m.log" || status=1
"$BIN" --no-mo --no-dcs --rdf-atoms 100000 --rdf-r-max 12 --rdf-methods cells,all-pairs \
    --repeats 5 --json "$OUT/rdf_bench_100k.json" >"$OUT/rdf_bench_100k.txt" 2>"$OUT/rdf_bench_100k.log" || status=1

# One JSON line per variant or method on stdout; fields by name (serde_json writes them sorted).
field() { grep -o "\"$1\":[^,}]*" | head -1 | cut -d: -f2- | tr -d '"'; }
echo
echo "Coulomb summation, 100000 charges x 256x256x64 points (median of 9)"
printf '%-18s %8s %12s %10s %13s\n' variant soft gpu_ms evals/s max_rel_f64
grep -h '"bench":"dcs_variant"' "$OUT/dcs_bench.txt" | while read -r l; do
    printf '%-18s %8.3f %12.3f %10.3e %13.2e\n' "$(field variant <<<"$l")" "$(field soft_fraction <<<"$l")" \
        "$(field gpu_ms <<<"$l")" "$(field evals_per_s <<<"$l")" "$(field max_rel_err_vs_f64 <<<"$l")"
done
echo
echo "RDF, N x N atoms at water density, 120 bins (median of 5 frames, upload and download included)"
printf '%-9s %8s %8s %-10s %-10s %10s %11s %10s\n' atoms box_A r_max_A method used gpu_ms pairs/s identical
grep -h '"bench":"rdf_method"' "$OUT"/rdf_bench_1m.txt "$OUT"/rdf_bench_100k.txt | while read -r l; do
    printf '%-9s %8.1f %8.1f %-10s %-10s %10.2f %11.3e %10s\n' "$(field atoms <<<"$l")" "$(field box_angstrom <<<"$l")" \
        "$(field r_max_angstrom <<<"$l")" "$(field method <<<"$l")" "$(field used <<<"$l")" "$(field gpu_ms <<<"$l")" \
        "$(field pairs_per_s <<<"$l")" "$(field identical_to_all_pairs <<<"$l")"
done
[ "$status" -eq 0 ] || echo "some step failed: see $OUT" >&2
exit "$status"
