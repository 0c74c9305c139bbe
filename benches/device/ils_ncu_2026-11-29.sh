set -uo pipefail
# ncu (Nsight Compute on the device) of the bound and point kernels, frame 2 of the whole AdK box.
DEV=.dev-a; (cd $DEV && for f in *.xz; do [ -e "$f" ] && xz -d "$f"; done; chmod +x *)
G=tests/data/md/adk_oplsaa.gro; X=tests/data/md/adk_oplsaa.xtc
for k in ${KS:-ils_bound ils_points_k13_g4}; do
echo "=== $k"
timeout 250 /usr/local/cuda/bin/ncu --kernel-name $k --launch-skip 1 --launch-count 1 ${NCUX:-} \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis \
  $DEV/orbitfield grid ils $G $X --probe o2 --sel "${SEL:-not name MW}" --around protein --lj-elements --device gpu --frames 1:4 -o /tmp/x.dx 2>&1 | grep -E "Duration|SM Frequency|Issue Slots Busy|Executed Instructions  |Registers Per|Achieved Occupancy|Spilling Requests  |Warp Cycles Per Issued|No Eligible|Est. Local Speedup|stalled|FMA is|pipeline|Compute \(SM\)|L1/TEX Hit|fused and"
done
