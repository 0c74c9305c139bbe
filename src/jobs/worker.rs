//! The pool's worker threads: taking the next tile or device task, computing tiles on an engine (retries, the CPU as last resort), and finishing requests (answers with their key, errors per slot).

use super::*;

pub(super) fn planes_for(job: &FieldJob, target: usize) -> usize {
    let per_plane = job.lattice.dims[0].saturating_mul(job.lattice.dims[1]).max(1);
    (target / per_plane).max(1)
}

/// Takes the next tile or device task for worker `id`, blocking until there is one or the pool shuts
/// down. Order: retries, tiles of normal requests, device tasks, look-ahead tiles.
pub(super) fn next_work<K: Clone>(id: usize, is_gpu: bool, shared: &Shared<K>) -> Option<Work<K>> {
    let mut q = shared.lock();
    loop {
        if q.shutdown {
            return None;
        }
        // Drop cancelled requests and tiles; they are answered (Cancelled) outside the lock.
        let mut stale: Vec<Arc<Request<K>>> = Vec::new();
        q.requests.retain(|r| {
            let keep = !r.is_cancelled();
            if !keep {
                stale.push(r.clone());
            }
            keep && r.next_z.load(Ordering::Relaxed) < r.job.lattice.dims[2]
        });
        let qs = &mut *q;
        for list in [&mut qs.retry_device, &mut qs.retry_cpu] {
            list.retain(|t| {
                if t.req.is_cancelled() {
                    stale.push(t.req.clone());
                    false
                } else {
                    true
                }
            });
        }
        if !stale.is_empty() {
            drop(q);
            for r in &stale {
                finish(shared, r, Err(JobError::Cancelled));
            }
            q = shared.lock();
            continue;
        }
        if is_gpu {
            if let Some(pos) = q.retry_device.iter().position(|t| !t.failed_on.contains(&id)) {
                return Some(Work::Tile(q.retry_device.remove(pos)));
            }
        } else if let Some(t) = q.retry_cpu.pop() {
            return Some(Work::Tile(t));
        }
        if is_gpu || shared.cpu_takes_main_queue {
            // Round-robin: the first normal request in line (else the first look-ahead one) gives one
            // tile and goes to the back of the line while it has tiles left.
            let normal = q.requests.iter().position(|r| !r.look_ahead.load(Ordering::Relaxed));
            if normal.is_none()
                && let Some(task) = q.tasks.pop_front()
            {
                return Some(Work::Task(task));
            }
            let pos = normal.or_else(|| (!q.requests.is_empty()).then_some(0));
            if let Some(req) = pos.and_then(|p| q.requests.remove(p)) {
                let nz = req.job.lattice.dims[2];
                let start = req.next_z.load(Ordering::Relaxed);
                let planes = if is_gpu {
                    let d = req.job.lattice.dims;
                    let rate = q.rates.get(id, tiles::job_kind(&req.job));
                    // As many requests waiting as devices (frames of a series in flight): each
                    // device takes whole requests, no tile of one is split over devices.
                    let sharing = if q.requests.len() + 1 >= shared.gpu_workers {
                        1
                    } else {
                        shared.gpu_workers
                    };
                    tiles::gpu_tile_planes(
                        nz - start,
                        nz,
                        d[0] * d[1],
                        sharing,
                        shared.config.gpu_tile_points,
                        rate,
                    )
                } else {
                    planes_for(&req.job, shared.config.cpu_tile_points)
                };
                let end = (start + planes).min(nz);
                req.next_z.store(end, Ordering::Relaxed);
                // The same planes of requests computable in the same call go with it.
                let mut batch = Vec::new();
                let batching = shared.config.batch_orbitals && (!is_gpu || shared.config.batch_orbitals_on_gpu);
                for r in q.requests.iter().filter(|_| batching) {
                    if batch.len() + 1 >= crate::compute::MAX_BATCH {
                        break;
                    }
                    if !r.is_cancelled()
                        && r.next_z.load(Ordering::Relaxed) == start
                        && crate::compute::batchable(&req.job, &r.job)
                    {
                        r.next_z.store(end, Ordering::Relaxed);
                        batch.push(r.clone());
                    }
                }
                if end < nz {
                    q.requests.push_back(req.clone());
                } else {
                    q.requests.retain(|r| !batch.iter().any(|b| Arc::ptr_eq(b, r)));
                }
                return Some(Work::Tile(Tile {
                    req,
                    z: start..end,
                    failed_on: Vec::new(),
                    batch,
                }));
            }
        }
        q = shared
            .wake
            .wait_timeout(q, Duration::from_millis(200))
            .map(|(g, _)| g)
            .unwrap_or_else(|p| p.into_inner().0);
    }
}

/// Lowers the calling thread's scheduling priority by 10 `nice` steps (Linux, this thread alone;
/// at most 19), so that the viewer's own thread and the renderer's threads get the cores whenever
/// they need them and field computations take the rest. Elsewhere a no-op.
pub(super) fn lower_thread_priority() {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: no call takes a pointer; on failure the priority simply stays as it was.
        unsafe {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            let now = libc::getpriority(libc::PRIO_PROCESS, tid);
            let _ = libc::setpriority(libc::PRIO_PROCESS, tid, (now + 10).min(19));
        }
    }
}

/// The threads CPU tiles are computed on: the CPU engine's data parallelism runs inside this pool,
/// whose threads (like the workers') run at lowered priority. `None` when it cannot be built (the
/// tiles then use the global pool).
pub(super) fn cpu_thread_pool() -> Option<Arc<rayon::ThreadPool>> {
    rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("orbitfield-cpu-par{i}"))
        .start_handler(|_| lower_thread_priority())
        .build()
        .ok()
        .map(Arc::new)
}

pub(super) fn worker_loop<K: Clone + Send + Sync + 'static>(
    id: usize,
    spec: EngineSpec,
    shared: Arc<Shared<K>>,
    status: Arc<WorkerStatus>,
    cpu_threads: Option<Arc<rayon::ThreadPool>>,
) {
    lower_thread_priority();
    let engine_name = spec.engine.name();
    while let Some(work) = next_work(id, spec.is_gpu, &shared) {
        let mut tile = match work {
            Work::Tile(t) => t,
            Work::Task(task) => {
                run_task(task, &spec, &status, cpu_threads.as_deref());
                continue;
            }
        };
        // The tile's requests (one, or a batch computed in one call); cancelled ones are answered.
        let mut members: Vec<Arc<Request<K>>> = Vec::with_capacity(1 + tile.batch.len());
        for r in std::iter::once(tile.req.clone()).chain(tile.batch.drain(..)) {
            if r.is_cancelled() {
                status.tiles_cancelled.fetch_add(1, Ordering::Relaxed);
                finish(&shared, &r, Err(JobError::Cancelled));
            } else {
                members.push(r);
            }
        }
        let Some(first) = members.first().cloned() else {
            continue;
        };
        tile.req = first;
        compute_tile(
            id,
            &spec,
            &shared,
            &status,
            cpu_threads.as_deref(),
            &engine_name,
            tile,
            members,
        );
    }
}

/// Computes `tile`'s planes of every request in `members` (the tile's own request first) in one
/// engine call, and hands the results on: planes done, the grid when complete, or the retry stacks.
#[allow(clippy::too_many_arguments)]
pub(super) fn compute_tile<K: Clone + Send + Sync + 'static>(
    id: usize,
    spec: &EngineSpec,
    shared: &Shared<K>,
    status: &WorkerStatus,
    cpu_threads: Option<&rayon::ThreadPool>,
    engine_name: &str,
    mut tile: Tile<K>,
    members: Vec<Arc<Request<K>>>,
) {
    for req in &members {
        if !req.first_start.swap(true, Ordering::AcqRel) {
            req.progress
                .queue_ns
                .store(req.submitted.elapsed().as_nanos() as u64, Ordering::Relaxed);
        }
    }
    status.busy.store(true, Ordering::Relaxed);
    status.current_generation.store(tile.req.generation, Ordering::Relaxed);
    let mut outs: Vec<&mut [f32]> = Vec::with_capacity(members.len());
    for req in &members {
        let n = slab_len(&req.job.lattice, &tile.z);
        let start = req.job.lattice.dims[0] * req.job.lattice.dims[1] * tile.z.start;
        // SAFETY: this tile's planes of each request were handed out to this worker alone
        // (`next_work`), and a buffer is taken only after every plane has been reported done,
        // which this tile's have not.
        match unsafe { req.values.tile(start..start + n) } {
            Some(out) => outs.push(out),
            None => {
                status.busy.store(false, Ordering::Relaxed);
                for r in &members {
                    finish(
                        shared,
                        r,
                        Err(JobError::Compute(ComputeError::BadOutput { got: 0, need: n })),
                    );
                }
                return;
            }
        }
    }
    // Unwritten points must not pass for values: NaN first, checked after (unless the engine
    // checks its own output, as the CUDA engine does).
    let own_check = !spec.engine.checks_output();
    if own_check {
        for out in outs.iter_mut() {
            out.fill(f32::NAN);
        }
    }
    let t0 = Instant::now();
    let jobs: Vec<&FieldJob> = members.iter().map(|r| &r.job).collect();
    let run = |outs: &mut [&mut [f32]]| match (jobs.as_slice(), outs) {
        ([job], [out]) => spec.engine.compute_slab(job, tile.z.clone(), out),
        (jobs, outs) => spec.engine.compute_slabs(jobs, tile.z.clone(), outs),
    };
    let outcome = match (cpu_threads, spec.is_gpu) {
        (Some(threads), false) => threads.install(|| run(&mut outs)),
        _ => run(&mut outs),
    };
    let outcome = match outcome {
        Ok(()) if own_check && outs.iter().any(|o| o.iter().any(|v| v.is_nan())) => Err(ComputeError::NotFinite),
        other => other,
    };
    drop(outs);
    let dt = t0.elapsed().as_nanos() as u64;
    status.busy_ns.fetch_add(dt, Ordering::Relaxed);
    for req in &members {
        req.progress.compute_ns.fetch_add(dt, Ordering::Relaxed);
    }
    status.busy.store(false, Ordering::Relaxed);
    status.current_generation.store(0, Ordering::Relaxed);
    match outcome {
        Ok(()) => {
            if spec.is_gpu && members.len() == 1 {
                let points = slab_len(&tile.req.job.lattice, &tile.z);
                let kind = tiles::job_kind(&tile.req.job);
                shared.lock().rates.record(id, kind, points, dt as f64 * 1e-9);
            }
            for req in &members {
                status.tiles_done.fetch_add(1, Ordering::Relaxed);
                if req.is_cancelled() {
                    status.tiles_cancelled.fetch_add(1, Ordering::Relaxed);
                    finish(shared, req, Err(JobError::Cancelled));
                    continue;
                }
                let t1 = Instant::now();
                if let Ok(mut e) = req.engines.lock()
                    && !e.iter().any(|n| n == engine_name)
                {
                    e.push(engine_name.to_string());
                }
                req.progress
                    .assemble_ns
                    .fetch_add(t1.elapsed().as_nanos() as u64, Ordering::Relaxed);
                req.progress.tiles_done.fetch_add(1, Ordering::Relaxed);
                let done = req.progress.planes_done.fetch_add(tile.z.len(), Ordering::AcqRel) + tile.z.len();
                if done >= req.job.lattice.dims[2] {
                    finish_success(shared, req);
                }
            }
        }
        Err(e) if members.len() > 1 => {
            // A failed batch: each request's planes again on their own (this device may take
            // them), failing or falling back as single tiles do.
            status.tiles_failed.fetch_add(1, Ordering::Relaxed);
            let msg = format!(
                "{engine_name}: planes {}..{} of a batch of {}: {e}",
                tile.z.start,
                tile.z.end,
                members.len()
            );
            set_error(&status.last_error, msg.clone());
            set_error(&shared.last_error, msg);
            let mut q = shared.lock();
            for req in members {
                req.progress.tiles_retried.fetch_add(1, Ordering::Relaxed);
                let single = Tile::single(req, tile.z.clone(), Vec::new());
                if spec.is_gpu {
                    q.retry_device.push(single);
                } else {
                    q.retry_cpu.push(single);
                }
            }
            drop(q);
            shared.wake.notify_all();
        }
        Err(ComputeError::WrongInput(..)) if spec.is_gpu && shared.has_cpu_workers => {
            // The GPU engine has no kernel for this input (cutoff and MSM plans): not a failure,
            // the CPU workers take the tile.
            tile.failed_on.push(id);
            shared.lock().retry_cpu.push(tile);
            shared.wake.notify_all();
        }
        Err(e) => {
            let req = tile.req.clone();
            status.tiles_failed.fetch_add(1, Ordering::Relaxed);
            let msg = format!("{engine_name}: planes {}..{}: {e}", tile.z.start, tile.z.end);
            set_error(&status.last_error, msg.clone());
            set_error(&shared.last_error, msg);
            let retryable = matches!(
                e,
                ComputeError::Device(_) | ComputeError::Cuda(_) | ComputeError::NotFinite
            );
            if !retryable || !spec.is_gpu {
                // Input errors repeat everywhere; a CPU failure is the last resort.
                finish(shared, &req, Err(JobError::Compute(e)));
                return;
            }
            req.progress.tiles_retried.fetch_add(1, Ordering::Relaxed);
            tile.failed_on.push(id);
            let mut q = shared.lock();
            let other_device = shared.gpu_workers > tile.failed_on.len();
            if tile.failed_on.len() == 1 && other_device {
                q.retry_device.push(tile);
            } else {
                q.retry_cpu.push(tile);
            }
            drop(q);
            shared.wake.notify_all();
        }
    }
}

/// Runs a device task on this worker (inside the low-priority thread pool on a CPU worker).
pub(super) fn run_task(
    task: DeviceTask,
    spec: &EngineSpec,
    status: &WorkerStatus,
    cpu_threads: Option<&rayon::ThreadPool>,
) {
    status.busy.store(true, Ordering::Relaxed);
    let t0 = Instant::now();
    let engines = TaskEngines {
        cuda: spec.engine.as_cuda(),
        #[cfg(feature = "gui")]
        wgpu: spec.engine.as_wgpu(),
    };
    match (cpu_threads, spec.is_gpu) {
        (Some(threads), false) => threads.install(|| task(engines)),
        _ => task(engines),
    }
    status
        .busy_ns
        .fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    status.busy.store(false, Ordering::Relaxed);
}

pub(super) fn finish_success<K: Clone>(shared: &Shared<K>, req: &Arc<Request<K>>) {
    let values = req.values.take();
    let grid = Grid3 {
        lattice: req.job.lattice,
        values,
        description: String::new(),
    };
    finish(shared, req, Ok(grid));
}

/// Sends the request's result once (later calls do nothing) and frees its slot.
pub(super) fn finish<K: Clone>(shared: &Shared<K>, req: &Arc<Request<K>>, outcome: Result<Grid3, JobError>) {
    if req.finished.swap(true, Ordering::AcqRel) {
        return;
    }
    if outcome.is_err() {
        // Stop handing out its remaining tiles.
        req.cancelled.store(true, Ordering::Release);
    }
    {
        let mut q = shared.lock();
        if q.slots.get(&req.slot).map(|r| Arc::ptr_eq(r, req)).unwrap_or(false) {
            q.slots.remove(&req.slot);
        }
    }
    req.progress
        .total_ns
        .store(req.submitted.elapsed().as_nanos() as u64, Ordering::Relaxed);
    let mut engines = req.engines.lock().map(|e| e.clone()).unwrap_or_default();
    engines.sort();
    let mut msg = JobResult {
        key: req.key.clone(),
        slot: req.slot,
        generation: req.generation,
        outcome,
        progress: req.progress.clone(),
        engines,
    };
    let target = req.reply.as_ref().unwrap_or(&shared.results);
    // Bounded channel: wait for room, but give up when the pool shuts down (drop never hangs).
    loop {
        match target.send_timeout(msg, Duration::from_millis(50)) {
            Ok(()) => return,
            Err(crossbeam::channel::SendTimeoutError::Timeout(m)) => {
                if shared.shutdown.load(Ordering::Acquire) {
                    return;
                }
                msg = m;
            }
            Err(crossbeam::channel::SendTimeoutError::Disconnected(_)) => return,
        }
    }
}
