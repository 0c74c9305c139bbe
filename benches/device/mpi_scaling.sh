#!/usr/bin/env bash
# Scaling of the MPI batch commands on one machine: ranks x threads on the CPU, and GPU ranks beside
# CPU ranks, for `grid esp --frames --combine avg` (adk, 3341 atoms, 98 frames), `rdf` (adk_oplsaa,
# 47681 atoms, 10 frames), per-frame cubes (`grid esp --frames -o DIR/`), and the reduction of a
# large map (the transfer that ends every combined run). Writes one line per run to
# $OUT/mpi_scaling_partN.tsv and the logs beside it.
#
# Usage, from the repository root:
#   bash benches/device/mpi_scaling.sh [ORBITFIELD_BINARY]      (default .mpi/orbitfield)
# PART=1 runs the CPU ranks x threads matrix of the ESP map (and checks the maps agree), PART=2 the
# rest (GPU ranks, RDF, per-frame cubes, reduction of a large map); each stays under ten minutes on
# 16 cores. Without PART both run. QUICK=1 runs a small subset (a check of the set-up); CARRIED_MPI=1
# uses the carried Open MPI even where the machine has one. Maps and cubes go to $SCRATCH (default
# /tmp/mpi_scaling_scratch), logs and the table to $OUT.
# Uses `mpirun` from PATH when there is one, else unpacks the Open MPI packages carried in
# .mpi/debs/*.deb (Debian 12: openmpi-bin 4.1.4 and the libraries it loads) into .mpi/root with
# `dpkg -x` and runs from there (relocated with OPAL_PREFIX). If mpirun cannot start ranks at all,
# the CPU part falls back to independent processes on disjoint frame ranges (no reduction), which
# still measures the compute scaling.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
BIN=${1:-$ROOT/.mpi/orbitfield}
OUT=${OUT:-/tmp/mpi_scaling}
SCRATCH=${SCRATCH:-/tmp/mpi_scaling_scratch}
PART=${PART:-all}
mkdir -p "$OUT" "$SCRATCH"
TSV=$OUT/mpi_scaling_part$PART.tsv
LOG=$OUT/mpi_scaling_part$PART.log
: >"$LOG"
export ORBITFIELD_LOG=orbitfield::batch=debug
unset ORBITFIELD_DEVICES
export NCCL_NVLS_ENABLE=0
chmod +x "$BIN" 2>/dev/null || true

say() { echo "$*" | tee -a "$LOG"; }

# --- Open MPI: the machine's, or the carried one -------------------------------------------------
if [ "${CARRIED_MPI:-0}" = 1 ] || ! command -v mpirun >/dev/null 2>&1; then
  R=$ROOT/.mpi/root
  if [ ! -x "$R/usr/bin/orterun" ]; then
    mkdir -p "$R"
    for d in "$ROOT"/.mpi/debs/*.deb; do dpkg -x "$d" "$R" || say "cannot unpack $d"; done
  fi
  export PATH=$R/usr/bin:$PATH
  export LD_LIBRARY_PATH=$R/usr/lib/x86_64-linux-gnu:$R/lib/x86_64-linux-gnu:$R/usr/lib/x86_64-linux-gnu/openmpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export OPAL_PREFIX=$R/usr
  export OPAL_SYSCONFDIR=$R/etc/openmpi
  export OPAL_PKGDATADIR=$R/usr/share/openmpi
  export PMIX_INSTALL_PREFIX=$R/usr
  export PMIX_MCA_mca_base_component_path=$R/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
  # mpirun is a link to orterun in the package; make sure the link resolves inside $R.
  [ -e "$R/usr/bin/mpirun" ] || ln -sf orterun "$R/usr/bin/mpirun"
fi
say "mpirun: $(command -v mpirun) ($(mpirun --version 2>&1 | head -1))"
say "binary: $BIN; libraries: $(ldd "$BIN" | grep -E 'mpi|not found' | tr -s ' \t' ' ' | tr '\n' ';')"
say "cores: $(nproc); $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | tr '\n' ';')"
# Shared memory between ranks only (no network on the machine); gVisor has no cross-memory attach.
MPIFLAGS=(--allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader
  --mca btl_vader_single_copy_mechanism none --mca pml ob1 --mca mtl ^ofi,psm,psm2 --mca osc ^ucx
  -x ORBITFIELD_LOG -x LD_LIBRARY_PATH -x PATH)

MPI_OK=0
if mpirun "${MPIFLAGS[@]}" -np 2 "$BIN" --version >>"$LOG" 2>&1; then MPI_OK=1; fi
say "mpirun starts ranks: $MPI_OK"

PSF=tests/data/md/adk.psf
DCD=tests/data/md/adk_dims.dcd
GRO=tests/data/md/adk_oplsaa.gro
XTC=tests/data/md/adk_oplsaa.xtc
printf 'case\tranks\tthreads\tdevice\tseconds\tstatus\n' >"$TSV"

# run CASE RANKS THREADS DEVICES -- orbitfield arguments
run() {
  local case=$1 ranks=$2 threads=$3 devices=$4
  shift 5
  local t0 t1 status
  t0=$(date +%s.%N)
  if [ "$MPI_OK" = 1 ]; then
    local devx=()
    [ -n "$devices" ] && devx=(-x "ORBITFIELD_DEVICES=$devices")
    RAYON_NUM_THREADS=$threads mpirun "${MPIFLAGS[@]}" -x RAYON_NUM_THREADS "${devx[@]}" \
      -np "$ranks" "$BIN" "$@" >>"$LOG" 2>&1
    status=$?
  else
    status=99
  fi
  t1=$(date +%s.%N)
  local s
  s=$(awk "BEGIN { print $t1 - $t0 }")
  printf '%s\t%s\t%s\t%s\t%.2f\t%s\n' "$case" "$ranks" "$threads" "${devices:-auto}" "$s" "$status" | tee -a "$TSV"
}

# Independent processes on disjoint frame ranges (no MPI): the compute scaling alone.
run_split() {
  local case=$1 ranks=$2 threads=$3 n_frames=$4
  shift 4
  local t0 t1 pids=() i a b
  t0=$(date +%s.%N)
  for ((i = 0; i < ranks; i++)); do
    a=$((i * n_frames / ranks)); b=$(((i + 1) * n_frames / ranks))
    [ "$a" -lt "$b" ] || continue
    RAYON_NUM_THREADS=$threads "$BIN" "$@" --frames "$a:$b" -o "$SCRATCH/split_$i.dx" >>"$LOG" 2>&1 &
    pids+=($!)
  done
  local status=0
  for p in "${pids[@]}"; do wait "$p" || status=$?; done
  t1=$(date +%s.%N)
  printf '%s\t%s\t%s\tcpu\t%.2f\t%s\n' "$case-processes" "$ranks" "$threads" "$(awk "BEGIN { print $t1 - $t0 }")" "$status" | tee -a "$TSV"
}

if [ "${QUICK:-0}" = 1 ]; then
  say "== quick check: ESP avg over 14 frames, 1 and 2 ranks; RDF on 2 ranks"
  for r in 1 2; do
    run esp-quick "$r" 1 "" -- grid esp "$PSF" "$DCD" --frames 0:98:7 --combine avg --spacing 2 --padding 4 \
      --device cpu -o "$SCRATCH/esp_quick_$r.dx"
  done
  run rdf-quick 2 1 "" -- rdf "$GRO" "$XTC" --sel1 "name OW" --sel2 "name OW" --rmax 8 --bins 80 --device cpu \
    -o "$OUT/rdf_quick.txt"
  cmp "$SCRATCH/esp_quick_1.dx" "$SCRATCH/esp_quick_2.dx" | tee -a "$LOG"
  grep -h "orbitfield::batch" "$LOG" | sed -e 's/\x1b\[[0-9;]*m//g' | tail -20
  cat "$TSV"
  exit 0
fi

ESP=(grid esp "$PSF" "$DCD" --frames 0:98:2 --combine avg --spacing 1.0 --padding 6)
if [ "$PART" = all ] || [ "$PART" = 1 ]; then
say "== ESP avg over 49 adk frames (every second), CPU: ranks x threads"
for rt in 1x1 1x2 2x1 1x4 4x1 1x8 8x1 1x16 2x8 4x4 8x2 16x1; do
  r=${rt%x*}; t=${rt#*x}
  run esp-cpu "$r" "$t" "" -- "${ESP[@]}" --device cpu -o "$SCRATCH/esp_${rt}.dx"
done
if [ "$MPI_OK" != 1 ]; then
  for rt in 1x16 2x8 4x4 8x2 16x1; do
    r=${rt%x*}; t=${rt#*x}
    run_split esp-cpu "$r" "$t" 98 grid esp "$PSF" "$DCD" --combine avg --spacing 1.0 --padding 6 --device cpu
  done
fi

say "== results match: largest relative difference of each ESP map to the 1x1 one"
python3 - "$SCRATCH" <<'EOF' | tee -a "$LOG"
import glob, sys, os
def read(p):
    vals, on = [], False
    for line in open(p):
        if line.startswith('object 3'):
            on = True; continue
        if on:
            if line[:1].isalpha(): break
            vals.extend(float(x) for x in line.split())
    return vals
out = sys.argv[1]
ref = os.path.join(out, 'esp_1x1.dx')
if os.path.exists(ref):
    r = read(ref); m = max(abs(x) for x in r)
    for p in sorted(glob.glob(os.path.join(out, 'esp_*.dx'))):
        v = read(p)
        d = max(abs(a - b) for a, b in zip(r, v)) / m if len(v) == len(r) else float('inf')
        print(f'{os.path.basename(p)}: max |diff| / max |ref| = {d:.2e}')
EOF
fi

if [ "$PART" = all ] || [ "$PART" = 2 ]; then
say "== ESP avg, GPU: one GPU rank alone, and beside CPU ranks (dealt by measured cost)"
ESPG=(grid esp "$PSF" "$DCD" --frames 0:98 --combine avg --spacing 0.5 --padding 6)
run esp-gpu 1 16 "" -- "${ESPG[@]}" --device gpu -o "$SCRATCH/espg_1.dx"
run esp-cpu-fine 1 16 "" -- "${ESPG[@]}" --device cpu -o "$SCRATCH/espc_1.dx"
# Local rank 0 takes GPU 0, the others none (more ranks than GPUs): auto puts them on the CPU.
run esp-gpu+cpu 4 4 "" -- "${ESPG[@]}" --device auto -o "$SCRATCH/espg_4.dx"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$ngpu" -gt 1 ]; then
  run esp-gpus "$ngpu" 2 "" -- "${ESPG[@]}" --device gpu -o "$SCRATCH/espg_n.dx"
fi

say "== RDF OW-OW over the 10 adk_oplsaa frames"
for rt in 1x16 2x8 5x3 10x1 16x1; do
  r=${rt%x*}; t=${rt#*x}
  run rdf-cpu "$r" "$t" "" -- rdf "$GRO" "$XTC" --sel1 "name OW" --sel2 "name OW" --rmax 10 --bins 200 \
    --device cpu -o "$OUT/rdf_${rt}.txt"
done
run rdf-gpu 1 16 "" -- rdf "$GRO" "$XTC" --sel1 "name OW" --sel2 "name OW" --rmax 10 --bins 200 --device gpu \
  -o "$OUT/rdf_gpu.txt"

say "== per-frame cubes (file output): 32 frames"
for rt in 1x16 4x4 16x1; do
  r=${rt%x*}; t=${rt#*x}
  rm -rf "$SCRATCH/cubes_$rt"
  run cubes-cpu "$r" "$t" "" -- grid esp "$PSF" "$DCD" --frames 0:32 --spacing 1.0 --padding 6 --device cpu \
    -o "$SCRATCH/cubes_$rt/"
done
du -sh "$SCRATCH"/cubes_1x16 2>/dev/null | tee -a "$LOG"

say "== reduction of a large map: stdev (two f64 lattices per rank) over 16 frames, spacing 0.3 A cutoff sum"
for rt in 1x16 2x8 4x4 8x2 16x1; do
  r=${rt%x*}; t=${rt#*x}
  run reduce-stdev "$r" "$t" "" -- grid esp "$PSF" "$DCD" --frames 0:16 --combine stdev --spacing 0.3 \
    --padding 4 --method cutoff --cutoff 6 --device cpu -o "$SCRATCH/stdev_${rt}.dx"
done

fi
grep -h "orbitfield::batch" "$LOG" | sed -e 's/\x1b\[[0-9;]*m//g' | tail -200 >"$OUT/batch_timings_part$PART.txt"
say "done: $TSV"
cat "$TSV"
