#!/bin/bash
# One H200, fourth round of the Poisson-Boltzmann solver (iterations that start with the preconditioner,
# the maps' kernels bound by their instructions, one-byte coefficients): the third round's steps
# (adk alone with the residual trace, Nsight Compute, the tests, the whole benchmark;
# benches/device/pb_round3_2026-11-29.sh) on this round's build. Carried: .dev-a (xz'd binaries:
# pb_cuda_bench, pb_cuda, pb_cuda_maps). ONLY= and RUNS= as there; the logs of each call are copied
# into benches/device/pb_round4_2026-11-29/.
exec bash "$(dirname "$0")/pb_round3_2026-11-29.sh" "$@"
