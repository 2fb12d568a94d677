//! [`RootProgram`]: one source built for every device of a root device, with the partitioned
//! variants of the kernels the scanner can rewrite.

use super::contract::{driver_params, uses_atomics, ParamFacts};
use super::kernel::Policy;
use super::{Placement, RootDevice, RootKernel};
use crate::error::Result;
use crate::obstacle::Obstacle;
use crate::program::{Program, ProgramBuilder};
use crate::transform::{self, is_global_pointer, RootDecl, VariantKind};
use opencl3::kernel::CL_KERNEL_ARG_TYPE_CONST;
use std::fmt;
use std::sync::Arc;

/// One source built for every device of a [`RootDevice`].
///
/// ```
/// let root = clgroups::RootDevice::from_env()?;
/// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
/// let k = program.kernel("k")?;
/// assert!(program.kernel("missing").is_err());
/// println!("{program:?}"); // RootProgram { programs: [Program { .. }, ..], .. }
/// # Ok::<(), clgroups::Error>(())
/// ```
#[derive(Clone)]
pub struct RootProgram {
    programs: Vec<Program>,
    placement: Placement,
    policy: Policy,
    /// The scanned kernels, with what the contract reads in each.
    decls: Vec<RootDecl>,
    /// Per declaration of `decls`: its parameters or body name an atomic (`uses_atomics`).
    atomic_bodies: Vec<bool>,
    /// Why no kernel has a partitioned variant (the source as written was built).
    obstacle: Option<Obstacle>,
    checked: bool,
}

impl RootDevice {
    /// `source` built for every device with default settings: [`RootDevice::build`] of
    /// [`Program::builder`]`(source)`.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// assert_eq!(program.programs().len(), root.len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn program(&self, source: &str) -> Result<RootProgram> {
        self.build(Program::builder(source))
    }

    /// The builder's source built for every device with its settings (options, file name,
    /// sub-group size, rounding: as [`ProgramBuilder::build`] for one device), with the
    /// `__clg_part` variant of every kernel the scanner can rewrite after it (it sees the whole
    /// launch, see [the module docs](super#what-a-kernel-sees)); checked variants in [checked
    /// mode](super::checked_mode).
    ///
    /// Every source the compiler builds builds here: a source the scanner cannot read, or
    /// variants that do not compile, leave the source as written, and a kernel without its
    /// variant (see [`RootKernel::rewrite_obstacle`](super::RootKernel::rewrite_obstacle)) runs as written, per device or on
    /// device 0 (`plan::root_fallback`).
    ///
    /// ```
    /// use clgroups::{scaling::RootDevice, Program};
    /// let root = RootDevice::from_env()?;
    /// let src = "kernel void k(global int *x) { x[get_global_id(0)] *= SCALE; }";
    /// let p = root.build(Program::builder(src).options("-DSCALE=3"))?;
    /// let k = p.kernel("k")?;
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn build(&self, builder: ProgramBuilder) -> Result<RootProgram> {
        RootProgram::build(self, builder)
    }
}

impl RootProgram {
    /// The builder's source built for every device of `root` (see [`RootDevice::build`]).
    pub(super) fn build(root: &RootDevice, builder: ProgramBuilder) -> Result<RootProgram> {
        let source = builder.source();
        let checked = super::checked_mode();
        // One scan: the kernels, their contract facts and the partitioned variants.
        let (decls, variants) = transform::scan_root(source, checked.clone().unwrap_or(false))?;
        let variants = match transform::option_query(builder.options_text()) {
            Some(why) => Err(why),
            None => variants,
        };
        let checked = checked?;
        let build_all = |b: &ProgramBuilder| {
            let built = root.queues().iter().map(|q| b.clone().build(q));
            built.collect::<Result<Vec<_>>>()
        };
        let (programs, obstacle) = match variants {
            Err(why) => (build_all(&builder)?, Some(why)),
            Ok(text) => match build_all(&builder.clone().with_source(text)) {
                Ok(programs) => (programs, None),
                Err(e) => {
                    let why = Obstacle::VariantsFailed {
                        checked: false,
                        error: Box::new(e),
                    };
                    (build_all(&builder)?, Some(why))
                }
            },
        };
        // A header the scanner did not read may hold atomics, launch values or changes of
        // what the footprints read: every kernel runs as written (on one device).
        let unseen = programs.first().and_then(Program::unseen_code);
        let obstacle = obstacle.or(unseen);
        if let Some(why) = &obstacle {
            log::debug!("root program built as written, without partitioned variants: {why}");
        }
        Ok(RootProgram {
            programs,
            placement: root.placement(),
            policy: Policy {
                strict: root.is_strict(),
                weights: root.weights().map(<[f64]>::to_vec),
                // Outside kernel bodies (helpers, macros): every kernel may use them.
                atomics: uses_atomics(&outside_bodies(source, &decls)),
                spread: root.spread(),
                halo_depth: root.halo_depth(),
                link: root.link_cell(),
            },
            atomic_bodies: (decls.iter())
                .map(|d| {
                    let (params, body) = (d.decl.params_span.clone(), d.decl.body.clone());
                    let own = |r: std::ops::Range<usize>| source.get(r).unwrap_or(source);
                    uses_atomics(own(params)) || uses_atomics(own(body))
                })
                .collect(),
            decls,
            obstacle,
            checked,
        })
    }

    /// The kernel called `name`, on every device: its `__clg_part` variant, or the kernel as
    /// written where it has none (launches then fall back, see
    /// [`RootKernel::rewrite_obstacle`]).
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// assert_eq!(program.kernel("k")?.kernels().len(), root.len());
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn kernel(&self, name: &str) -> Result<RootKernel> {
        let at = self.decls.iter().position(|k| k.decl.name == name);
        let root_decl = at.map(|i| &self.decls[i]);
        let policy = Policy {
            atomics: self.policy.atomics || at.is_none_or(|i| self.atomic_bodies[i]),
            ..self.policy.clone()
        };
        let decl = root_decl.map(|r| &r.decl);
        let obstacle = match (&self.obstacle, decl) {
            (Some(why), _) => Some(why.clone()),
            (None, Some(d)) => d.rewrite_obstacle.clone(),
            (None, None) => Some(Obstacle::NotDeclared),
        };
        let (Some(decl), None) = (decl, &obstacle) else {
            let why = Arc::new(obstacle.unwrap_or(Obstacle::NotDeclared));
            log::debug!("root kernel `{name}`: no partitioned variant: {why}");
            let kernels = self.programs.iter().map(|p| p.kernel(name));
            let kernels = kernels.collect::<Result<Vec<_>>>()?;
            let mut params = driver_params(&kernels[0]);
            let dropped = root_decl.map_or(&[][..], |r| &r.const_dropped[..]);
            for (p, dropped) in params.iter_mut().zip(dropped) {
                p.read_only &= !dropped;
            }
            return Ok(RootKernel {
                params,
                as_written: kernels.clone(),
                kernels,
                guarded: None,
                name: name.to_string(),
                whole_obstacle: None,
                rewrite_obstacle: Some(why),
                checked: self.checked,
                placement: self.placement,
                policy,
                halo_staging: Default::default(),
                footprint: None,
                fetched: Default::default(),
                staged_reads: Default::default(),
                reaches: Default::default(),
                figures: Default::default(),
                depths: Default::default(),
                memo: Default::default(),
                decided: Default::default(),
            });
        };
        let kernels = self
            .programs
            .iter()
            .map(|p| p.kernel(&VariantKind::Partitioned.name(name)))
            .collect::<Result<Vec<_>>>()?;
        let guarded = self
            .programs
            .iter()
            .map(|p| p.kernel(&VariantKind::Guarded.name(name)).ok())
            .collect::<Option<Vec<_>>>();
        let facts = root_decl.expect("a declaration");
        let params = decl
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let driver = kernels[0].raw().get_arg_type_qualifier(i as u32).ok();
                // `const` where the source shows no way to write through it.
                let read_only = match driver {
                    Some(q) => q & u64::from(CL_KERNEL_ARG_TYPE_CONST) != 0,
                    None => p.const_pointee,
                } && !facts.const_dropped[i];
                ParamFacts {
                    name: p.name.clone(),
                    global: is_global_pointer(p),
                    read_only,
                    own_id: facts.own_ids[i],
                }
            })
            .collect();
        let whole_obstacle = facts.whole_obstacle.clone().map(Arc::new);
        log::debug!(
            "root kernel `{name}`: {params:?}, whole-launch obstacle {:?}",
            whole_obstacle.as_ref().map(ToString::to_string)
        );
        let as_written = self.programs.iter().map(|p| p.kernel(name));
        Ok(RootKernel {
            kernels,
            as_written: as_written.collect::<Result<Vec<_>>>()?,
            guarded,
            name: name.to_string(),
            params,
            whole_obstacle,
            rewrite_obstacle: None,
            checked: self.checked,
            placement: self.placement,
            policy,
            halo_staging: Default::default(),
            footprint: Some(std::sync::Arc::new(facts.footprint.clone())),
            fetched: Default::default(),
            staged_reads: Default::default(),
            reaches: Default::default(),
            figures: Default::default(),
            depths: Default::default(),
            memo: Default::default(),
            decided: Default::default(),
        })
    }

    /// The per-device programs, in device order.
    ///
    /// ```
    /// let root = clgroups::RootDevice::from_env()?;
    /// let program = root.program("kernel void k(global int *x) { x[get_global_id(0)] = 0; }")?;
    /// for p in program.programs() {
    ///     println!("built for {}", p.device());
    /// }
    /// # Ok::<(), clgroups::Error>(())
    /// ```
    pub fn programs(&self) -> &[Program] {
        &self.programs
    }

    /// The placement the program was built for.
    pub fn placement(&self) -> Placement {
        self.placement
    }
}

impl fmt::Debug for RootProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RootProgram")
            .field("programs", &self.programs)
            .field("placement", &self.placement)
            .field("checked", &self.checked)
            .finish_non_exhaustive()
    }
}

/// `source` with the kernels of `decls` (declarations and bodies) blanked.
fn outside_bodies(source: &str, decls: &[RootDecl]) -> String {
    let mut out = source.as_bytes().to_vec();
    for d in decls {
        let body = d.decl.decl_start.min(out.len())..d.decl.body.end.min(out.len());
        out[body].fill(b' ');
    }
    String::from_utf8_lossy(&out).into_owned()
}
