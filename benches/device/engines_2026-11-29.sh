#!/bin/bash
# One H200: (1) the GPU tests of this round (device PB maps, PB solver, wgpu tests on the Vulkan adapter);
# (2) the PB benchmark (device maps, adk 161^3, 321^3, 100k atoms); (3) the viewer's playback scenes through
# the pool with CUDA, with CUDA hidden (the wgpu pool on the Vulkan adapter) and with neither (CPU engine).
# Carried: $DEV folders (xz'd binaries: test binaries named after their test file, pb_cuda bench,
# orbitfield-bench), .gl (Vulkan loader). ONLY= selects parts: tests pb play.
set -uo pipefail
cd "$(dirname "$0")/../.."
R=$PWD; mkdir -p /work && ln -sfn "$R" /work/main
export ORBITFIELD_TEST_ROOT="$R"
for d in ${DEV:-.dev-a}; do (cd $d && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x * 2>/dev/null); done
X() { for d in ${DEV:-.dev-a}; do [ -x $d/$1 ] && { echo $d/$1; return; }; done; }
# Tests that run the command find it where cargo built it.
[ -n "$(X orbitfield)" ] && mkdir -p target/release && ln -sf "$R/$(X orbitfield)" target/release/orbitfield
for f in .gl/*.deb; do dpkg -x $f / >/dev/null 2>&1; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u
ONLY=${ONLY:-tests pb play}
L=$OUT/logs; mkdir -p $L
case " $ONLY " in *" tests "*)
for t in ${TESTS:-pb_cuda_maps pb_cuda pb_focus wgpu_qm_esp wgpu_rdf_pool}; do
  b=$(X $t); [ -n "$b" ] || { echo "== $t: not carried"; continue; }
  ORBITFIELD_REQUIRE_CUDA=1 ORBITFIELD_REQUIRE_WGPU=1 timeout ${TEST_LIMIT:-200} $b --test-threads 1 --nocapture > $L/$t.log 2>&1
  echo "== $t rc $? $(grep -E '^test result' $L/$t.log | tail -1)"
  grep -E "FAILED|panicked|differ;|max \|cuda" $L/$t.log | head -14 | cut -c1-260
done;; esac
case " $ONLY " in *" wgdiag "*)
# The wgpu test binaries one test at a time, with and without WGPU_BACKEND, to place a crash.
which gdb || true
for t in wgpu_qm_esp wgpu_rdf_pool; do
  b=$(X $t); [ -n "$b" ] || continue
  for name in $($b --list 2>/dev/null | sed -n 's/: test$//p'); do
    ORBITFIELD_REQUIRE_WGPU=1 timeout 120 $b --exact "$name" --test-threads 1 > $L/diag_${t}_$name.log 2>&1
    echo "== $t $name rc $? $(grep -E '^test result' $L/diag_${t}_$name.log | cut -c1-60)"
  done
done;;
esac
case " $ONLY " in *" thru "*)
# Each kernel's throughput on the wgpu engine beside CUDA on the same GPU (examples/wgpu_throughput.rs).
b=$(X wgpu_throughput); [ -n "$b" ] && { timeout ${THRU_LIMIT:-300} $b ${THRU_ARGS:---no-cpu} > $L/wgpu_throughput.log 2>&1; echo "== wgpu_throughput rc $?"; cut -c1-240 $L/wgpu_throughput.log | tail -40; };;
esac
case " $ONLY " in *" pb "*)
b=$(X pb_cuda_bench); [ -n "$b" ] && { timeout 240 $b > $L/pb_bench.log 2>&1; echo "== pb bench rc $?"; cat $L/pb_bench.log | cut -c1-260; };;
esac
case " $ONLY " in *" play "*)
B=$(X orbitfield-bench)
if [ -n "$B" ]; then
  for cfg in ${PLAY_CFGS:-cuda wgpu cpu}; do
    case $cfg in cuda) E="";; wgpu) E="CUDA_VISIBLE_DEVICES=";; cpu) E="CUDA_VISIBLE_DEVICES= ORBITFIELD_WGPU=off";; esac
    env $E timeout ${PLAY_LIMIT:-170} $B --no-mo --no-dcs --rdf-atoms none --playback --orbitals-on pool \
      --playback-points 128 ${PLAY_ONLY:+--playback-only "$PLAY_ONLY"} --json $L/play_$cfg.json > $L/play_$cfg.log 2>&1
    echo "== playback [$cfg] rc $?"; grep -E "PlaybackResult|note:" $L/play_$cfg.log | sed -E 's/(frames_in_series|image_px|device_[a-z_]+|batched|orbitals_on|surface_ms)[^,]*,//g' | cut -c1-330
  done
fi;; esac
date -u
