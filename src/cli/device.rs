//! `--device` and `--verbose` of every command that computes, and `orbitfield info --devices`: the
//! command line's side of `compute::placement` (the policy itself is there).

use anyhow::Result;
use orbitfield::compute::placement::{self, DeviceChoice, Engine, Facts, JobKind, JobSize, Placement};
use orbitfield::model::field::FieldSpec;

// Where the command computes (a plain comment: a doc comment here would replace the about text of
// every command that flattens it).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct DeviceArgs {
    /// Where to compute: cpu, cuda (a CUDA device or a failure), wgpu (the wgpu adapter or a
    /// failure), gpu (any GPU engine that has the job, or a failure) or auto (the fastest engine
    /// present, else the CPU, saying why).
    #[arg(long, value_enum, default_value_t = DeviceChoice::Auto)]
    pub device: DeviceChoice,
    /// Print where each computation runs and why.
    #[arg(long)]
    pub verbose: bool,
}

impl DeviceArgs {
    /// Where `kind` runs (`detail` says what the job is, for `--verbose`); a forced engine that
    /// lacks the kind or is missing is an error naming both.
    pub fn place(&self, kind: JobKind, size: JobSize, detail: &str) -> Result<Placement> {
        let mut facts = if self.device == DeviceChoice::Cpu {
            Facts::default()
        } else {
            Facts::probe_cuda()
        };
        // `--device wgpu` sees the adapters (a hardware one first; software ones take pool work when
        // the engine is forced). `gpu` and `auto` look for a hardware adapter where CUDA has no device
        // (an AMD, Intel or Apple GPU); software rasterisers never take their work.
        let no_cuda = facts.cuda_devices.is_empty();
        match self.device {
            DeviceChoice::Wgpu => {
                let all = adapters();
                facts.adapter = all
                    .iter()
                    .find(|a| a.runs_passes && !a.software)
                    .or(all.iter().find(|a| a.runs_passes))
                    .or(all.first())
                    .cloned();
            }
            DeviceChoice::Gpu | DeviceChoice::Auto if no_cuda && !quiet_adapter_search() => {
                facts.adapter_missing =
                    Some("wgpu adapters not searched: XDG_RUNTIME_DIR is unset (--device wgpu searches anyway)".into());
            }
            DeviceChoice::Gpu | DeviceChoice::Auto
                if no_cuda && placement::supports(Engine::Wgpu, kind) && quiet_adapter_search() =>
            {
                let all = adapters();
                facts.adapter = all.iter().find(|a| a.runs_passes && !a.software).cloned();
                if facts.adapter.is_none() {
                    facts.adapter_missing = Some(match all.iter().find(|a| a.software) {
                        Some(soft) => format!("no hardware wgpu adapter (only {}, a software rasteriser)", soft.name),
                        None => "no wgpu adapter".into(),
                    });
                }
            }
            _ => {}
        }
        let p = placement::place(kind, size, self.device, &facts)?;
        if self.verbose {
            eprintln!("{}", p.reason_with(detail));
        } else if p.fell_back && p.engine == Engine::Cpu {
            eprintln!("note: {}", p.reason());
        }
        Ok(p)
    }
}

impl DeviceArgs {
    /// The preference of a jobs pool that runs `kind` where [`DeviceArgs::place`] puts it: no CUDA
    /// worker when the CPU takes it, else the user's choice (forced or `auto`).
    pub fn pool_preference(&self, kind: JobKind) -> Result<DeviceChoice> {
        Ok(match self.place(kind, JobSize::default(), "")?.engine {
            Engine::Cpu => DeviceChoice::Cpu,
            _ => self.device,
        })
    }
}

/// The job kind of a field as the user names it.
pub fn kind_of_spec(spec: &FieldSpec) -> JobKind {
    match spec {
        FieldSpec::Orbital { .. } | FieldSpec::Density | FieldSpec::SpinDensity => JobKind::Orbital,
        FieldSpec::Potential => JobKind::Potential,
        FieldSpec::MolSurf => JobKind::MolSurf,
        FieldSpec::ExcludedSurface => JobKind::ExcludedSurface,
    }
}

/// The CUDA devices and the wgpu adapters of this machine, and where each job kind would run under
/// `auto`: `orbitfield info --devices`.
pub fn report_devices(json: bool) -> Result<()> {
    let mut facts = Facts::probe_cuda();
    let adapters = adapters();
    facts.adapter = adapters
        .iter()
        .find(|a| a.runs_passes && !a.software)
        .or(adapters.first())
        .cloned();
    if facts.adapter.is_none() {
        facts.adapter_missing = Some(if cfg!(feature = "gui") {
            "no wgpu adapter found".into()
        } else {
            "built without the wgpu engine (feature gui)".into()
        });
    }
    let table = placement::table(DeviceChoice::Auto, &facts);
    if json {
        let kinds: Vec<serde_json::Value> = table
            .iter()
            .map(|(k, p)| {
                let supported: Vec<&str> = Engine::ALL
                    .iter()
                    .filter(|&&e| placement::supports(e, *k))
                    .map(|e| e.name())
                    .collect();
                match p {
                    Ok(p) => serde_json::json!({"kind": k.name(), "engines": supported,
                        "auto": p.engine.name(), "reason": p.reason()}),
                    Err(e) => serde_json::json!({"kind": k.name(), "engines": supported, "error": e.to_string()}),
                }
            })
            .collect();
        let value = serde_json::json!({
            "engines": Engine::ALL.iter().map(|e| e.name()).collect::<Vec<_>>(),
            "cuda_devices": facts.cuda_devices,
            "cuda_missing": facts.cuda_missing,
            "adapters": adapters.iter().map(|a| serde_json::json!({
                "name": a.name, "software": a.software, "runs_passes": a.runs_passes})).collect::<Vec<_>>(),
            "job_kinds": kinds,
        });
        println!("{}", serde_json::to_string_pretty(&value)?);
        return Ok(());
    }
    println!("engines: {}", Engine::ALL.map(|e| e.name()).join(", "));
    println!("CUDA devices:");
    if facts.cuda_devices.is_empty() {
        println!(
            "  none: {}",
            facts.cuda_missing.as_deref().unwrap_or("the driver reports no device")
        );
    }
    for (i, name) in facts.cuda_devices.iter().enumerate() {
        println!("  cuda:{i} {name}");
    }
    println!("wgpu adapters:");
    if adapters.is_empty() {
        println!("  none: {}", facts.adapter_missing.as_deref().unwrap_or("none found"));
    }
    for a in &adapters {
        let mut marks = Vec::new();
        if a.software {
            marks.push("software");
        }
        if !a.runs_passes {
            marks.push("no compute passes");
        }
        let marks = if marks.is_empty() {
            String::new()
        } else {
            format!(" [{}]", marks.join(", "))
        };
        println!("  {}{marks}", a.name);
    }
    println!("job kinds (engines that have them; where --device auto puts them):");
    for (k, p) in &table {
        let have: Vec<&str> = Engine::ALL
            .iter()
            .filter(|&&e| placement::supports(e, *k))
            .map(|e| e.name())
            .collect();
        let at = match p {
            Ok(p) => format!("{} ({})", p.on, p.why),
            Err(e) => e.to_string(),
        };
        println!("  {:<24} [{}] -> {at}", k.name(), have.join(", "));
    }
    Ok(())
}

/// Whether `auto` may look for adapters without noise: on Linux the Vulkan loader's Wayland support
/// prints an error line per instance where `XDG_RUNTIME_DIR` is unset (headless servers, CI), so
/// there `auto` and `gpu` stay with CUDA (or the CPU, or a failure naming why) and `--device wgpu`
/// asks for the adapters.
fn quiet_adapter_search() -> bool {
    !cfg!(target_os = "linux") || std::env::var_os("XDG_RUNTIME_DIR").is_some()
}

/// Every wgpu adapter of the machine, as placement sees it (none without the `gui` feature).
#[cfg(feature = "gui")]
fn adapters() -> Vec<placement::AdapterFacts> {
    // Vulkan, Metal and DirectX 12 (or `WGPU_BACKEND`): the compute engine's backends. The GL
    // backend would open a display connection (and print its complaints) for nothing.
    let backends = wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY);
    let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
    desc.backends = backends;
    let instance = wgpu::Instance::new(desc);
    pollster::block_on(instance.enumerate_adapters(backends))
        .into_iter()
        .map(|a| {
            let info = a.get_info();
            let compute = a
                .get_downlevel_capabilities()
                .flags
                .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS);
            let runs_passes =
                compute && orbitfield::compute::wgpu::orbital::device_supports(&a.limits(), compute).is_ok();
            placement::AdapterFacts {
                name: format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type),
                software: info.device_type == wgpu::DeviceType::Cpu,
                runs_passes,
            }
        })
        .collect()
}

#[cfg(not(feature = "gui"))]
fn adapters() -> Vec<placement::AdapterFacts> {
    Vec::new()
}
