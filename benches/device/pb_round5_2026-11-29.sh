#!/bin/bash
# One H200, fifth round of the Poisson-Boltzmann solver (the V-cycle's levels of 21^3 points and below
# in one launch, `pb_tail`; the first half sweep of each level from zero, `pb_smooth_h_zero`): the
# third round's steps (benches/device/pb_round3_2026-11-29.sh: adk alone with the residual trace, now
# with the tail off, from 11^3 and from 21^3, and one sweep below the finest level; Nsight Compute; the
# tests; the whole benchmark) on this round's build. Carried: .dev-a (xz'd binaries: pb_cuda_bench,
# pb_cuda, pb_cuda_maps). ONLY= and RUNS= as there.
exec bash "$(dirname "$0")/pb_round3_2026-11-29.sh" "$@"
