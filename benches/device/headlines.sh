#!/usr/bin/env bash
# The H200 headline figures of benches/RESULTS.md, measured again in one run of about six minutes at most:
# DCS (100k charges on 256 x 256 x 64), MO HOMO at 128^3 and 256^3 (threonine, C60), MSM on the
# 1.5M-atom water box at its default (fastest) stages, RDF 1M x 1M atoms with the cell list, playback
# of orbitals on the render device (threonine HOMO 128^3, C60 HOMO 256^3), the molecular surface of
# 100k and 1M atoms, the cartoon of 100k residues, and the wavefunction potential (QM potential).
# Each step writes its JSON to $OUT/<step>.json and its log to $OUT/<step>.log; a step that runs past
# its time limit is cut (the limits keep the whole run under STEP_SCALE x 355 s) and the rest go on.
# The last line printed is a summary; `headlines_summary.json` holds the exit status of every step.
#
# Usage, from the repository root (the harness reads tests/data):
#   bash benches/device/headlines.sh ORBITFIELD_BENCH_BINARY
# ORBITFIELD_BENCH_BINARY: a release build of the developer harness
# (`cargo build --release --features bench-harness --bin orbitfield-bench`; stripped is fine).
# Vulkan (playback, molecular surface, cartoon on the render device): set VK_DRIVER_FILES (and install
# the loader) before calling. OUT defaults to /tmp/headlines.
set -uo pipefail
BIN=${1:?usage: headlines.sh ORBITFIELD_BENCH_BINARY}
OUT=${OUT:-/tmp/headlines}
SCALE=${STEP_SCALE:-1}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >"$OUT/nvsmi.txt" 2>&1
nproc >"$OUT/nproc.txt"
summary="{"
step() {
    local name=$1 limit=$2
    shift 2
    local t0=$SECONDS
    timeout "$((limit * SCALE))" "$BIN" "$@" --json "$OUT/$name.json" >"$OUT/$name.txt" 2>"$OUT/$name.log"
    local rc=$?
    echo "== $name: exit $rc, $((SECONDS - t0)) s" >&2
    summary="$summary\"$name\": {\"exit\": $rc, \"seconds\": $((SECONDS - t0))},"
}
# MO 80/128/256^3 (threonine, C60) and DCS, the default cases (run 6, issue 20's final figures).
step mo_dcs 100 --rdf-atoms none --repeats 5
# MSM at the default stages (no --msm-stages: the default must be the fastest path, the device's).
step msm 50 --no-mo --no-dcs --rdf-atoms none --msm-atoms 1500000 --repeats 5
# RDF, cell list.
step rdf 30 --no-mo --no-dcs --rdf-atoms 1000000 --rdf-r-max 12 --rdf-methods cells --repeats 5
# Playback on the render device: threonine HOMO 128^3, C60 HOMO 256^3 (both lobes).
step playback_homo128 30 --no-mo --no-dcs --rdf-atoms none --playback --orbitals-on render-device --playback-only HOMO
step playback_c60_256 40 --no-mo --no-dcs --rdf-atoms none --playback --orbitals-on render-device \
    --playback-points 256 --playback-only jittered
# Molecular surface of 100k and 1M atoms.
step molsurf 45 --molsurf --molsurf-atoms 100000,1000000 --repeats 5
# Cartoon of adk x 468 (100k residues): CUDA DSSP, inputs, mesh on the render device.
step cartoon 35 --cartoon --cartoon-on render-device --repeats 10
# The wavefunction's own potential (threonine 6-31G*, 80^3), no peer.
step qm_potential 25 --no-mo --no-dcs --rdf-atoms none --qm-esp --pyscf-python /nonexistent --repeats 5
echo "${summary%,}}" >"$OUT/headlines_summary.json"
cat "$OUT/headlines_summary.json"
