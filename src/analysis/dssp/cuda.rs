//! DSSP of one frame with the coordinate passes on a CUDA device: [`CudaEngine::dssp_frame`].
//!
//! The host gathers the N, CA, C and O of every protein residue into the page-locked columns of
//! the workspace ([`ProteinBackbone::gather_columns`], on the rayon pool); the device passes of
//! `compute::cuda::dssp` (amide hydrogens, chain breaks, the CA cell sort, the hydrogen-bond
//! search, then per residue the n-turns, bends, polyproline II angles and bridge partners) fill the
//! flags and partners; the host finishes the codes from them
//! ([`ProteinBackbone::finish_from_device`]: ladders, helices, turns, bends, stretches). The codes
//! are those of [`ProteinBackbone::assign_into`] (the kernels repeat its rounding operation for
//! operation; `tests/gpu_dssp.rs` compares the flags byte for byte with
//! [`ProteinBackbone::device_passes_on_cpu`] and the codes with the CPU path's).
//!
//! Frames the device path does not take go to the CPU path, and the route says why: residues
//! lacking a backbone atom or with positions that are not finite (the CPU path drops those
//! residues and links their neighbours), hydrogens taken from the file, no protein residues.
//!
//! The engine's methods are written here, beside the passes they drive, so that the CUDA engine
//! names no analysis; this side's buffers (the residues the device takes, their words, the CPU
//! path's workspace) are kept in the workspace's host slot from one frame to the next. Called by
//! the cartoon worker (`jobs::cartoon`), the cartoon benchmark and the tests.

use super::{DeviceDssp, DevicePasses, DsspOptions, DsspPassTimes, DsspWorkspace, ProteinBackbone, SecondaryStructure};
use crate::compute::ComputeError;
use crate::compute::cuda::CudaEngine;
use crate::compute::cuda::dssp::{DeviceDsspTimes, DeviceDsspWorkspace, DsspRoute};
use std::time::Instant;

/// What the host keeps in [`DeviceDsspWorkspace::host`] between frames.
#[derive(Default)]
struct HostBuffers {
    /// The backbone the arrays below were made for ([`ProteinBackbone::fingerprint`]).
    fingerprint: Option<u64>,
    /// The residues the device passes take ([`ProteinBackbone::complete_residues`]).
    source: Vec<u32>,
    /// Their chains and prolines ([`ProteinBackbone::device_meta`]).
    meta: Vec<u32>,
    /// The CPU path's buffers (also used by the finishing passes).
    cpu: DsspWorkspace,
}

/// The host buffers of `workspace`, taken out of it (fresh ones the first time).
fn take_host(workspace: &mut DeviceDsspWorkspace) -> Box<HostBuffers> {
    workspace
        .host
        .take()
        .and_then(|b| b.downcast::<HostBuffers>().ok())
        .unwrap_or_default()
}

/// The time of each host pass of the last [`CudaEngine::dssp_frame`] with `workspace`: the
/// finishing passes on the device path, every pass on the CPU path.
pub fn host_pass_times(workspace: &DeviceDsspWorkspace) -> DsspPassTimes {
    workspace
        .host
        .as_ref()
        .and_then(|b| b.downcast_ref::<HostBuffers>())
        .map(|h| h.cpu.times())
        .unwrap_or_default()
}

impl CudaEngine {
    /// The DSSP codes of one frame (`positions_angstrom`) for the protein residues of `backbone`
    /// into `out`, on this device where the frame allows it (see the module notes), else on the
    /// CPU; the codes are the same either way. Times in `workspace.times` (device path) and
    /// [`host_pass_times`] (both).
    pub fn dssp_frame(
        &self,
        backbone: &ProteinBackbone,
        positions_angstrom: &[[f32; 3]],
        options: &DsspOptions,
        workspace: &mut DeviceDsspWorkspace,
        out: &mut Vec<SecondaryStructure>,
    ) -> Result<DsspRoute, ComputeError> {
        let mut host = take_host(workspace);
        let route = frame(self, backbone, positions_angstrom, options, workspace, &mut host, out);
        workspace.host = Some(host);
        route
    }

    /// The device passes' flags and bridge partners for one frame (the test hook that holds them to
    /// [`ProteinBackbone::device_passes_on_cpu`]): runs [`CudaEngine::dssp_frame`] and returns
    /// copies of what it downloaded, or None where the frame took the CPU path.
    pub fn dssp_device_passes(
        &self,
        backbone: &ProteinBackbone,
        positions_angstrom: &[[f32; 3]],
        workspace: &mut DeviceDsspWorkspace,
    ) -> Result<Option<DevicePasses>, ComputeError> {
        let mut out = Vec::new();
        let route = self.dssp_frame(
            backbone,
            positions_angstrom,
            &DsspOptions::default(),
            workspace,
            &mut out,
        )?;
        if route != DsspRoute::Device {
            return Ok(None);
        }
        // What the frame downloaded into the page-locked buffers.
        Ok(Some((workspace.flags()?.to_vec(), workspace.partners()?.to_vec())))
    }
}

/// [`CudaEngine::dssp_frame`] with the host buffers out of the workspace.
fn frame(
    engine: &CudaEngine,
    backbone: &ProteinBackbone,
    positions_angstrom: &[[f32; 3]],
    options: &DsspOptions,
    ws: &mut DeviceDsspWorkspace,
    host: &mut HostBuffers,
    out: &mut Vec<SecondaryStructure>,
) -> Result<DsspRoute, ComputeError> {
    ws.times = DeviceDsspTimes::default();
    let t = Instant::now();
    let fingerprint = backbone.fingerprint();
    if host.fingerprint != Some(fingerprint) {
        backbone.complete_residues(&mut host.source);
        backbone.device_meta(&host.source, &mut host.meta);
        host.fingerprint = Some(fingerprint);
        ws.meta_changed();
    }
    let m = host.source.len();
    let why = if options.file_hydrogens {
        Some("hydrogens from the file")
    } else if m == 0 {
        Some("no protein residues with N, CA, C and O")
    } else {
        None
    };
    if let Some(why) = why {
        backbone.assign_into(positions_angstrom, options, &mut host.cpu, out);
        return Ok(DsspRoute::Cpu(why));
    }
    let columns = engine.dssp_columns(ws, m)?;
    let Some(bounds) = backbone.gather_columns(positions_angstrom, &host.source, columns) else {
        backbone.assign_into(positions_angstrom, options, &mut host.cpu, out);
        return Ok(DsspRoute::Cpu("backbone positions that are not finite"));
    };
    let gather_ms = t.elapsed().as_secs_f64() * 1e3;

    let t = Instant::now();
    if !engine.dssp_passes(ws, &host.meta, bounds, ProteinBackbone::device_ranges())? {
        backbone.assign_into(positions_angstrom, options, &mut host.cpu, out);
        return Ok(DsspRoute::Cpu("backbone positions that are not finite"));
    }
    ws.times.gather_ms = gather_ms;
    ws.times.device_ms = t.elapsed().as_secs_f64() * 1e3;

    let t = Instant::now();
    let device = DeviceDssp {
        source: &host.source,
        columns: ws.columns()?,
        flags: ws.flags()?,
        hits: ws.partners()?,
    };
    backbone.finish_from_device(&device, options, &mut host.cpu, out);
    ws.times.finish_ms = t.elapsed().as_secs_f64() * 1e3;
    Ok(DsspRoute::Device)
}
