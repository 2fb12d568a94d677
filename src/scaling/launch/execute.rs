//! Executing a launch's parts: each device's sub-launches prepared (every check) before the
//! first is enqueued, then enqueued device by device, with the arguments each device holds.

use super::super::arg::{ColoredArg, Value};
use super::super::{MultiEvent, Placement, Spread};
use super::chunks::shift;
use super::fallback::flush;
use super::order;
use super::terms::{copy, Copies, Shape3};
use super::RootLaunch;
use crate::error::{Error, InputFault, Result};
use crate::kernel::Kernel;
use crate::launch::{Arg, Event, KernelArg, Launch, LocalSize};
use crate::plan::launch::{split_pieces, Piece};
use crate::plan::partition::Partition;
use crate::plan::rounding::Variant;

impl RootLaunch<'_> {
    /// Enqueues every device's part of the launch `s` split by `plan`, with whole copies
    /// `copies[i][d]` in place of argument `i` on device `d` where there is one.
    ///
    /// # Safety
    ///
    /// The contract of [`RootLaunch::nd_range`] for the launch, and every argument the
    /// contract does not accept for a device replaced by a whole copy there.
    pub(super) unsafe fn execute(
        &self,
        s: &Shape3,
        plan: Partition,
        copies: &Copies,
    ) -> Result<MultiEvent> {
        // SAFETY: the caller's contract.
        unsafe { self.execute_in(s, plan, copies, true, &[]) }
    }

    /// [`execute`](Self::execute), where `ordered` says whether each device's part waits for
    /// everything enqueued before it on the other queues (a launch on one device whose
    /// colored buffers are whole there needs it only for plain buffers: see
    /// [`RootLaunch::resident`]).
    ///
    /// # Safety
    ///
    /// As [`execute`](Self::execute).
    pub(super) unsafe fn execute_in(
        &self,
        s: &Shape3,
        plan: Partition,
        copies: &Copies,
        ordered: bool,
        widen: &[usize],
    ) -> Result<MultiEvent> {
        let (user, global, local, base) = (s.user, s.global, s.local, s.base);
        let kernels = &self.kernel.kernels;
        // The partitioned variant (else the kernel as written, in shared placement: no extra
        // arguments).
        let variant = self.kernel.rewrite_obstacle.is_none();
        let guarded = self.kernel.guarded.as_ref();
        let pieces = split_pieces(
            user,
            global,
            local,
            shift(global.zeros_like(), base),
            &plan,
            widen,
            guarded.is_some(),
        )
        .map_err(|why| self.kernel.refused(global, Some(local), why))?;
        // The partitioned variant's last arguments: the whole launch's size and base.
        let whole = (user.padded().into_iter().chain(base))
            .filter(|_| variant)
            .map(|v| (v as u64).to_arg());
        // Per device: its sub-launches, each prepared (every check) before the first of any
        // device is enqueued.
        let mut per_device = Vec::with_capacity(kernels.len());
        let mut checks = Vec::with_capacity(kernels.len());
        let busy: Vec<bool> = (0..kernels.len())
            .map(|d| pieces.iter().any(|p| p.device == d))
            .collect();
        let order = match ordered && self.needs_markers() {
            true => {
                let order = self.order_for(&busy)?;
                if busy.iter().all(|&b| b) {
                    self.ordered_all();
                }
                order
            }
            false => {
                if ordered {
                    log::debug!(
                        "kernel `{}`: each part waits for its own queue only (colored buffers \
                         touched by their own queues)",
                        self.kernel.name()
                    );
                }
                order::Order::none()
            }
        };
        for d in 0..kernels.len() {
            let mine: Vec<&Piece> = pieces.iter().filter(|p| p.device == d).collect();
            if mine.is_empty() {
                per_device.push(Vec::new());
                checks.push(None);
                continue;
            }
            let mut args = self.device_args(d, variant, copies)?;
            args.extend(whole.clone());
            let check = match self.kernel.checked && variant {
                true => Some(self.push_check_args(d, &mut args, copies)?),
                false => None,
            };
            let mut prepared = Vec::with_capacity(mine.len());
            let last = mine.len() - 1;
            for (j, piece) in mine.into_iter().enumerate() {
                let k = match (piece.variant, guarded) {
                    (Variant::Rounded, Some(g)) => &g[d],
                    _ => &kernels[d],
                };
                let waits = order.waits(&self.waits, d);
                // The device's last piece takes its arguments (the others a copy).
                let args = match j == last {
                    true => std::mem::take(&mut args),
                    false => args.clone(),
                };
                let launch = sub_launch(k, args, &waits).offset(piece.offset);
                let exact = LocalSize::Exact(local);
                prepared.push(launch.or_emulated(|l| l.prepare_nd(piece.global, exact))?);
            }
            per_device.push(prepared);
            checks.push(check);
        }
        // Devices that compile alone (PoCL before 4 on CPUs) run the parts of a split launch
        // one at a time: a part's first run compiles it, and two at once could crash PoCL's
        // compiler; two parts of one kernel at once aborted PoCL 3.1 in CI. A launch on one
        // device does not wait (it cost a chain there 15-30 %; `resident` orders it).
        // Compilations alone no longer need this (every first run on such a device runs alone
        // in the process: `kernel::first_run`); the order stays, with `place.rs`'s and
        // `stay.rs`'s waits that go with it, until parts at once are tried again on PoCL 3.1
        // (tried once: a wrong blur under the cost model, most likely the stale margins that
        // `stale_margins_of_whole` fixes).
        let alone = busy.iter().filter(|&&b| b).count() > 1 && self.compile_alone();
        if alone {
            log::debug!("scaling: parts run one device at a time (the devices compile alone)");
        }
        let mut events = Vec::with_capacity(kernels.len());
        for prepared in per_device {
            let mut event: Option<Event> = None;
            for (launch, p) in prepared {
                // SAFETY: each sub-launch is a part of the launch the caller vouches for, with
                // the arguments of its device (checked against the contract, or whole copies).
                let ev = unsafe { launch.execute(p)? };
                Event::push(&mut event, ev);
            }
            if let Some(ev) = event.as_ref().filter(|_| alone) {
                ev.wait()?;
            }
            events.push(event);
        }
        order.followed(|d| self.queue(d), &busy);
        // A split flushes its busy queues, so that every part starts at once (a wait flushes
        // one queue at a time). A launch on one device is left as a plain launch is: its
        // wait, or a command of another queue waiting for it, flushes its queue (a flush per
        // launch cost a chain of short launches on one GPU 0.5-1.6 us each).
        if busy.iter().filter(|&&b| b).count() > 1 {
            let flushed = (kernels.iter().zip(&busy)).filter(|&(_, &b)| b);
            flush(flushed.map(|(k, _)| k.program().queue()))?;
        }
        let launched = MultiEvent {
            partition: std::sync::Arc::new(plan),
            events,
            spread: Spread::Split,
            priced: None,
        };
        if self.kernel.checked {
            launched.wait()?;
            for (d, check) in checks.iter().enumerate() {
                if let Some(buf) = check {
                    self.report(d, buf, copies)?;
                }
            }
        }
        Ok(launched)
    }

    /// Device `d`'s arguments: chunks (partitioned placement) or whole buffers (shared) for
    /// colored buffers, then for the partitioned `variant` one byte origin per global pointer
    /// parameter.
    fn device_args(&self, d: usize, variant: bool, copies: &Copies) -> Result<Vec<Arg>> {
        let mut args = Vec::with_capacity(self.args.len() * 2 + 6);
        for (i, value) in self.args.iter().enumerate() {
            args.push(match (value, copy(copies, i, d)) {
                (Value::Plain(Arg::Buffer { elem, .. }), Some(h)) => Arg::bytes_as(&h.buf, *elem),
                (Value::Colored(c), Some(h)) => Arg::bytes_as(&h.buf, c.elem),
                (Value::Plain(a), _) => a.clone(),
                (Value::Colored(c), None) => self.colored_arg(c, i, d)?,
            });
        }
        for i in self.global_params().filter(|_| variant) {
            args.push((self.held(i, d, copies).0 * self.elem_size(i)).to_arg());
        }
        Ok(args)
    }

    /// Every colored buffer the kernel may write (no `const` from the driver): the margins
    /// other devices keep of it are stale from this launch on.
    pub(super) fn mark_written(&self) {
        self.written_colored().for_each(|c| c.written());
    }

    /// [`mark_written`](Self::mark_written) for a launch on one device holding every colored
    /// buffer whole there: only their written-since flags (one store each; the margins kept of
    /// their parts are marked stale when they move back to their parts, `resident::settle`).
    pub(super) fn mark_written_whole(&self) {
        (self.written_colored())
            .filter_map(|c| c.residence.as_deref())
            .for_each(|r| r.dirty());
    }

    /// Marks stale the margins of every colored argument held whole on one device and
    /// written there since it moved (a launch there marks only that: `mark_written_whole`),
    /// before the launch's plan reads them; moving it back to its parts (`resident::settle`)
    /// marks them too, but after the plan (a blur of 2^28 on two H200s read stale halos
    /// once a chain had run on one device and split again within a window of deep margins).
    pub(super) fn stale_margins_of_whole(&self) {
        for v in &self.args {
            let Value::Colored(c) = v else { continue };
            if let (Some(r), Some(m)) = (&c.residence, &c.margins) {
                if r.written_since() && r.holder().is_some() {
                    m.written();
                }
            }
        }
    }

    /// The colored arguments the kernel may write (no `const` from the driver).
    fn written_colored(&self) -> impl Iterator<Item = &ColoredArg> + '_ {
        let params = &self.kernel.params;
        (self.args.iter().enumerate()).filter_map(|(i, v)| match v {
            Value::Colored(c) if params.get(i).is_none_or(|p| !p.read_only) => Some(&**c),
            _ => None,
        })
    }

    /// Indices of the kernel's global pointer parameters.
    pub(super) fn global_params(&self) -> impl Iterator<Item = usize> + '_ {
        let params = &self.kernel.params;
        (0..params.len()).filter(|&i| params[i].global)
    }

    /// Element indices `[lo, hi)` device `d` holds of argument `i` (whole-array numbering).
    pub(super) fn held(&self, i: usize, d: usize, copies: &Copies) -> (u64, u64) {
        match (self.args.get(i), self.kernel.placement) {
            (Some(Value::Colored(c)), _) if copy(copies, i, d).is_some() => {
                let h = copy(copies, i, d).expect("a copy");
                let n = h.buf.len() / c.elem_size.max(1);
                (h.lo as u64, (h.lo + n) as u64)
            }
            (Some(Value::Colored(c)), Placement::Partitioned) => {
                let (lo, hi) = c.stored[d];
                (lo as u64, hi as u64)
            }
            (Some(Value::Colored(c)), Placement::Shared) => (0, c.len as u64),
            // A plain buffer written through a copy of its own on each device (`plain.rs`).
            (Some(Value::Plain(Arg::Buffer { elem, .. })), _) => {
                let es = elem.size.max(1);
                match copy(copies, i, d) {
                    Some(h) => (h.lo as u64, (h.lo + h.buf.len() / es) as u64),
                    None => (0, i64::MAX as u64 / es as u64),
                }
            }
            _ => (0, i64::MAX as u64),
        }
    }

    pub(super) fn elem_size(&self, i: usize) -> u64 {
        match self.args.get(i) {
            Some(Value::Colored(c)) => c.elem_size as u64,
            Some(Value::Plain(Arg::Buffer { elem, .. })) => elem.size.max(1) as u64,
            _ => 0,
        }
    }

    /// What device `d` receives for colored argument `i`.
    pub(super) fn colored_arg(&self, c: &ColoredArg, i: usize, d: usize) -> Result<Arg> {
        let placement = self.kernel.placement;
        let got = match placement {
            Placement::Shared => c.whole.clone(),
            Placement::Partitioned => c.part(d),
        };
        got.ok_or_else(|| {
            Error::input(InputFault::NotPassable {
                kernel: self.kernel.name().into(),
                placement: placement.to_string(),
                argument: i,
                elem: c.elem.to_string(),
                device: d,
                held_in: (c.placement != placement).then(|| c.placement.to_string()),
            })
        })
    }
}

/// A single-device launch of `k` with `args` (made and kept alive by the [`RootLaunch`]) that
/// waits for `waits`: one device's part, prepared and executed by the single-device path.
pub(in crate::scaling) fn sub_launch<'a>(
    k: &'a Kernel,
    args: Vec<Arg>,
    waits: &[&'a Event],
) -> Launch<'a> {
    (k.launch().raw_args(args)).wait_for(waits.iter().copied())
}
