#!/bin/bash
cd "$(dirname "$0")/.."
R=$PWD
mkdir -p /work && ln -sfn "$R" /work/wt-pool
export ORBITFIELD_TEST_ROOT="$R"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
(cd .dev-pool && for f in *.xz; do xz -d "$f"; done; chmod +x *)
nvidia-smi -L; nvidia-smi topo -m | head -4
nvidia-smi --query-gpu=name,clocks.max.sm,pcie.link.gen.current,pcie.link.width.current --format=csv
nproc; date -u
B=.dev-pool/orbitfield-bench
if [ -x .dev-pool/pool_multi_gpu ]; then
  ORBITFIELD_REQUIRE_CUDA=1 timeout 150 .dev-pool/pool_multi_gpu --test-threads 1 --nocapture > $OUT/test.log 2>&1
  grep -E "max diff|test |result|device" $OUT/test.log | tail -20
fi
if [ "$1" != "test-only" ]; then
timeout 200 $B --no-mo --no-dcs --rdf-atoms none --pool --repeats 9 --json $OUT/pool.json > $OUT/pool.log 2>&1
grep -E "^pool|error|note" $OUT/pool.log | tail -12
for d in 0 01; do
  ORBITFIELD_DEVICES=$(echo $d | sed "s/01/0,1/") timeout 100 $B --no-mo --no-dcs --rdf-atoms none --msm-atoms 1500000 --repeats 3 --json $OUT/msm_$d.json > $OUT/msm_$d.log 2>&1
  grep -o "total_s: [0-9.]*\|map_s: [0-9.]*\|plan_s: [0-9.]*\|rel_rms_vs_direct: [0-9.e-]*\|kernel_s: Some([0-9.]*)" $OUT/msm_$d.log | tr '\n' ' '; echo " [$d]"
done
fi
date -u
