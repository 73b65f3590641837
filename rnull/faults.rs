// SPDX-License-Identifier: GPL-2.0

//! null_blk's fault injection of one device, where the kernel has fault
//! injection (`CONFIG_FAULT_INJECTION` and its configfs groups): three
//! kernel fault attributes, started from the module parameters `timeout`,
//! `requeue` and `init_hctx` and shown in the device's configfs directory
//! as `timeout_inject/`, `requeue_inject/` and `init_hctx_fault_inject/`.
//! `queue_rq` leaves a request the first picks unfinished (blk-mq's
//! timeout ends it), requeues one the second picks, and `init_hctx` fails
//! with `EFAULT` when the third says so. Without fault injection in the
//! kernel a device has none of them, and each check is a constant `false`.

use crate::kapi::configfs::DefaultGroup;
#[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
use crate::{kapi::fault::FaultConfig, params::fault as param};
#[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
use kernel::c_str;
use kernel::{prelude::*, sync::Arc};

/// The fault attributes of a device, shared by its configfs directory
/// (which shows them) and every device the directory powers on.
pub(crate) struct Faults {
    /// `timeout`, `requeue` and `init_hctx`, in that order.
    #[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
    kinds: [Pin<KBox<FaultConfig>>; 3],
}

/// Which of a device's fault attributes.
#[derive(Clone, Copy)]
enum Kind {
    Timeout = 0,
    Requeue = 1,
    InitHctx = 2,
}

impl Faults {
    /// A device's faults, as the module parameters ask for.
    pub(crate) fn new() -> Result<Arc<Self>> {
        #[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
        let faults = Self {
            kinds: [
                KBox::pin_init(
                    FaultConfig::new(c_str!("timeout_inject"), &param::TIMEOUT),
                    GFP_KERNEL,
                )?,
                KBox::pin_init(
                    FaultConfig::new(c_str!("requeue_inject"), &param::REQUEUE),
                    GFP_KERNEL,
                )?,
                KBox::pin_init(
                    FaultConfig::new(c_str!("init_hctx_fault_inject"), &param::INIT_HCTX),
                    GFP_KERNEL,
                )?,
            ],
        };
        #[cfg(not(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS)))]
        let faults = Self {};
        Ok(Arc::new(faults, GFP_KERNEL)?)
    }

    /// Whether any fault may be injected: the kernel has fault injection
    /// (a configfs group may turn one on at any time), or the block
    /// layer's `io-timeout-fail` (`CONFIG_FAIL_IO_TIMEOUT`, which any disk
    /// may turn on).
    #[inline(always)]
    pub(crate) const fn may_fail(&self) -> bool {
        cfg!(any(
            all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS),
            CONFIG_FAIL_IO_TIMEOUT
        ))
    }

    /// Whether fault `kind` is injected now (`should_fail()`).
    #[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
    #[inline(always)]
    fn fails(&self, kind: Kind) -> bool {
        self.kinds[kind as usize].should_fail()
    }

    /// No fault injection in the kernel: never.
    #[cfg(not(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS)))]
    #[inline(always)]
    fn fails(&self, _kind: Kind) -> bool {
        false
    }

    /// `queue_rq`: leave this request unfinished, for blk-mq's timeout.
    #[inline(always)]
    pub(crate) fn timeout(&self) -> bool {
        self.fails(Kind::Timeout)
    }

    /// `queue_rq`: requeue this request.
    #[inline(always)]
    pub(crate) fn requeue(&self) -> bool {
        self.fails(Kind::Requeue)
    }

    /// `init_hctx`: fail this hardware queue's setup.
    pub(crate) fn init_hctx(&self) -> bool {
        self.fails(Kind::InitHctx)
    }

    /// The configfs groups of the attributes, for the one directory that
    /// shows them (a second call adds none); they live as long as `self`.
    pub(crate) fn groups<'a>(&'a self, mut _add: impl FnMut(&'a DefaultGroup)) {
        #[cfg(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS))]
        for group in self.kinds.iter().filter_map(|kind| kind.take_group()) {
            _add(group);
        }
    }
}
