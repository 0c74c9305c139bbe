#!/bin/bash
# The pool's copy back into registered grid buffers (issue 39): the pool test and the orbital
# sweep of `orbitfield-bench --pool` (nvidia-h200-x2 when lent, else nvidia-h200), from release builds carried in .dev-pinned:
#   cargo build --release --features bench-harness --bin orbitfield-bench
#   cargo test --release --features bench-harness --test pool_multi_gpu --no-run
# Run as a copy at .dev-pinned/run.sh (the device machine gets the main checkout plus .dev-pinned).
cd "$(dirname "$0")/.."
R=$PWD
# The harness reads tests/data under the path it was built in.
mkdir -p /work && ln -sfn "$R" /work/wt-pinned
export ORBITFIELD_TEST_ROOT="$R"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
(cd .dev-pinned && for f in *.xz; do xz -d "$f"; done; chmod +x orbitfield-bench pool_multi_gpu)
nvidia-smi -L
nvidia-smi --query-gpu=name,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv
nproc; cat /sys/kernel/mm/transparent_hugepage/enabled; date -u
B=.dev-pinned/orbitfield-bench
ORBITFIELD_REQUIRE_CUDA=1 timeout 200 .dev-pinned/pool_multi_gpu --test-threads 1 --nocapture > $OUT/test.log 2>&1
echo "test rc $?"
grep -E "max diff|against|test |result|tiles|chunks|failed|panicked" $OUT/test.log | tail -40
timeout 200 $B --no-mo --no-dcs --rdf-atoms none --pool --pool-cases orbital,orbital-sweep --repeats 9 --json $OUT/pool.json > $OUT/pool.log 2>&1
echo "bench rc $?"
grep -E "^pool|SweepRow|error|note" $OUT/pool.log | tail -30
date -u
