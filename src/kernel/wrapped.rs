//! A kernel's wrapper for rounded launches where its declaration cannot be rewritten
//! (`crate::transform::wrapper_source`), made on the first launch that needs it.

use super::Kernel;
use crate::ffi::Owned;
use crate::transform::{
    wrapper_source, DriverArg, DriverCall, Obstacle, VariantKind, EXTRA_PARAM_COUNT,
};
use opencl3::kernel::Kernel as ClKernel;
use std::sync::Mutex;

impl Kernel {
    /// Makes (once) the kernel's wrapper, which [`Kernel::raw_variant`] then gives for
    /// [`Variant::Rounded`](crate::plan::rounding::Variant::Rounded) pieces; or why there is
    /// none.
    pub(crate) fn wrapped(&self) -> std::result::Result<(), Obstacle> {
        self.inner
            .wrapped
            .get_or_init(|| {
                let made = self.make_wrapped();
                match &made {
                    Ok(_) => log::debug!("kernel `{}`: wrapper ready", self.name()),
                    Err(why) => log::debug!("kernel `{}`: no wrapper: {why}", self.name()),
                }
                made
            })
            .as_ref()
            .map(|_| ())
            .map_err(Clone::clone)
    }

    /// The wrapper, if [`Kernel::wrapped`] made one.
    pub(super) fn wrapper(&self) -> Option<&Mutex<Owned<ClKernel>>> {
        self.inner.wrapped.get()?.as_ref().ok()
    }

    fn make_wrapped(&self) -> std::result::Result<Mutex<Owned<ClKernel>>, Obstacle> {
        let name = self.name();
        self.program().wrap_support(name)?;
        if self.checked_pointers().is_ok() {
            return Err(Obstacle::CheckedRuns);
        }
        let required = self
            .constraints()
            .required
            .ok_or(Obstacle::NoRequiredSize)?
            .padded();
        let (args, n) = {
            let raw = self.raw();
            // PoCL 3.x renames kernels named like built-in functions: a call by the user's
            // name would reach the built-in.
            let function = raw.function_name().unwrap_or_default();
            if function.trim_end_matches('\0') != name {
                return Err(Obstacle::DriverRenamed(function));
            }
            let n = raw.num_args().map_err(|e| Obstacle::Driver {
                call: DriverCall::NumArgs,
                code: Some(e.0),
            })?;
            let args: Vec<DriverArg> = (0..n).map(|i| driver_arg(&raw, i)).collect();
            (args, n as usize)
        };
        let text = wrapper_source(name, &args, required)?;
        let program = self.program().wrapper_program(name, &text)?;
        let wrapped = VariantKind::Wrapped.name(name);
        let k = ClKernel::create(&program, &wrapped)
            .map(Owned::new)
            .map_err(|e| Obstacle::Driver {
                call: DriverCall::Wrapper(wrapped.clone()),
                code: Some(e.0),
            })?;
        match k.num_args() {
            Ok(m) if m as usize == n + EXTRA_PARAM_COUNT => {}
            got => {
                return Err(Obstacle::Driver {
                    call: DriverCall::WrapperArgs {
                        wrapper: wrapped,
                        got: got.as_ref().ok().copied(),
                        want: n + EXTRA_PARAM_COUNT,
                    },
                    code: got.err().map(|e| e.0),
                })
            }
        }
        // The same types where the arguments are set (a macro defined after the kernel could
        // change what a type name means at the end of the text).
        for (i, a) in args.iter().enumerate() {
            let w = driver_arg(&k, i as u32);
            if (&w.type_name, w.address) != (&a.type_name, a.address) {
                return Err(Obstacle::WrapperArgument {
                    index: i,
                    wrapper: wrapped,
                    got: format!("{w:?}"),
                    want: format!("{a:?}"),
                });
            }
        }
        Ok(Mutex::new(k))
    }
}

/// What the driver says about argument `i` of `raw`.
fn driver_arg(raw: &ClKernel, i: u32) -> DriverArg {
    DriverArg {
        type_name: raw.get_arg_type_name(i).ok(),
        address: raw.get_arg_address_qualifier(i).ok(),
        access: raw.get_arg_access_qualifier(i).ok(),
        type_qualifier: raw.get_arg_type_qualifier(i).ok(),
    }
}
