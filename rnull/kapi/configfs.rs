// SPDX-License-Identifier: GPL-2.0

//! configfs subsystems: `/sys/kernel/config/<name>/`, where `mkdir` makes
//! a group holding driver data and `rmdir` removes it.
//!
//! Shaped after upstream `kernel::configfs` (6.16 on): a [`Subsystem`]
//! holds the driver's data `T`; [`GroupOperations::make_group`] pin-
//! initialises a child's data `T::Child` on `mkdir`, and
//! [`GroupOperations::drop_item`] runs on `rmdir` before configfs drops its
//! reference; the item type's `release` frees the child when the last
//! reference goes. Attributes are tables ([`AttributeOperations::ATTRS`])
//! whose `show`/`store` reach the driver with the attribute's index.
//! configfs's callbacks get the item but not the attribute, so each index
//! has its own callback, a function generic over a `const ID`
//! ([`MAX_ATTRS`] of them are instantiated per data type).
//! Unlike sysfs attributes, configfs attributes have no lockdep key, so
//! none is needed for the allocated tables (configfs's own dirent locks
//! carry their classes).
//!
//! 6.12's `bindings` have no configfs: the C structures are declared in
//! [`raw`], their sizes and offsets asserted at build time, and
//! `scripts/check-configfs-layout.py` (`make test`) checks those numbers
//! against bindgen's for the kernel's `include/linux/configfs.h`.
//!
//! # Lifetimes
//!
//! * A child's storage ([`Group`]) is a `KBox` owned by the item's
//!   configfs reference count: `make_group` leaks it into configfs,
//!   `release` (the count's last put) takes it back and drops it.
//! * Attribute callbacks run under configfs's fragment lock and never
//!   after `rmdir` has marked the directory dead, so `drop_item` is the
//!   last call into the driver for that child, and the child's data is
//!   live for every callback.
//! * The item types and attribute tables live in the [`Subsystem`], which
//!   outlives every child: each directory made by `mkdir` holds a
//!   reference to this module (`ct_owner`; an open attribute file does too,
//!   `ca_owner`), so the module cannot be unloaded, and the subsystem
//!   dropped at module exit, while one exists; `rmdir` runs `release`
//!   before it drops those references. `configfs_unregister_subsystem`
//!   expects an empty subsystem ("Tried to unregister non-empty
//!   subsystem!" otherwise), which module exit guarantees. What it cannot
//!   guarantee is a failed module init: a directory made between
//!   registration and the failure would outlive the module. So
//!   [`Subsystem::new`], which registers, must be the module init's last
//!   fallible step.

use super::{disk_files::FileSpec, fmt::BufWriter, lock_class::LockClass};
use core::{
    marker::PhantomData,
    pin::Pin,
    ptr::{addr_of_mut, null_mut},
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{
    bindings, c_str, error::Error, ffi::c_char, init::PinInit, prelude::*, str::CStr, try_pin_init,
    types::Opaque,
};

/// The C side of configfs (`include/linux/configfs.h` of 6.12), which
/// 6.12's `bindings` do not cover.
#[allow(non_camel_case_types)]
pub(super) mod raw {
    use core::ffi::c_void;
    use kernel::{bindings, ffi::c_char};

    /// `CONFIGFS_ITEM_NAME_LEN`.
    pub(crate) const CONFIGFS_ITEM_NAME_LEN: usize = 20;

    #[repr(C)]
    pub(crate) struct config_item {
        pub(crate) ci_name: *mut c_char,
        pub(crate) ci_namebuf: [c_char; CONFIGFS_ITEM_NAME_LEN],
        pub(crate) ci_kref: bindings::kref,
        pub(crate) ci_entry: bindings::list_head,
        pub(crate) ci_parent: *mut config_item,
        pub(crate) ci_group: *mut config_group,
        pub(crate) ci_type: *const config_item_type,
        pub(crate) ci_dentry: *mut bindings::dentry,
    }

    #[repr(C)]
    pub(crate) struct config_item_type {
        pub(crate) ct_owner: *mut bindings::module,
        pub(crate) ct_item_ops: *mut configfs_item_operations,
        pub(crate) ct_group_ops: *mut configfs_group_operations,
        pub(crate) ct_attrs: *mut *mut configfs_attribute,
        pub(crate) ct_bin_attrs: *mut *mut c_void,
    }

    #[repr(C)]
    pub(crate) struct config_group {
        pub(crate) cg_item: config_item,
        pub(crate) cg_children: bindings::list_head,
        pub(crate) cg_subsys: *mut configfs_subsystem,
        pub(crate) default_groups: bindings::list_head,
        pub(crate) group_entry: bindings::list_head,
    }

    /// `show`: the item and a zeroed `PAGE_SIZE` page; bytes written or an errno.
    pub(crate) type ShowFn = unsafe extern "C" fn(*mut config_item, *mut c_char) -> isize;
    /// `store`: the item and `count` bytes; `count` or an errno.
    pub(crate) type StoreFn = unsafe extern "C" fn(*mut config_item, *const c_char, usize) -> isize;

    #[repr(C)]
    pub(crate) struct configfs_attribute {
        pub(crate) ca_name: *const c_char,
        pub(crate) ca_owner: *mut bindings::module,
        pub(crate) ca_mode: bindings::umode_t,
        pub(crate) show: Option<ShowFn>,
        pub(crate) store: Option<StoreFn>,
    }

    #[repr(C)]
    pub(crate) struct configfs_item_operations {
        pub(crate) release: Option<unsafe extern "C" fn(*mut config_item)>,
        pub(crate) allow_link:
            Option<unsafe extern "C" fn(*mut config_item, *mut config_item) -> core::ffi::c_int>,
        pub(crate) drop_link: Option<unsafe extern "C" fn(*mut config_item, *mut config_item)>,
    }

    #[repr(C)]
    pub(crate) struct configfs_group_operations {
        pub(crate) make_item:
            Option<unsafe extern "C" fn(*mut config_group, *const c_char) -> *mut config_item>,
        pub(crate) make_group:
            Option<unsafe extern "C" fn(*mut config_group, *const c_char) -> *mut config_group>,
        pub(crate) disconnect_notify:
            Option<unsafe extern "C" fn(*mut config_group, *mut config_item)>,
        pub(crate) drop_item: Option<unsafe extern "C" fn(*mut config_group, *mut config_item)>,
        pub(crate) is_visible: Option<
            unsafe extern "C" fn(
                *mut config_item,
                *mut configfs_attribute,
                core::ffi::c_int,
            ) -> bool,
        >,
        pub(crate) is_bin_visible:
            Option<unsafe extern "C" fn(*mut config_item, *mut c_void, core::ffi::c_int) -> bool>,
    }

    #[repr(C)]
    pub(crate) struct configfs_subsystem {
        pub(crate) su_group: config_group,
        pub(crate) su_mutex: bindings::mutex,
    }

    // The layout bindgen 0.69 computes for 6.12's configfs.h on x86_64
    // (`--allowlist-type 'config_.*|configfs_.*'` with the kernel's own
    // bindgen flags); `su_mutex` is last, so its config-dependent size
    // changes no offset.
    #[cfg(target_pointer_width = "64")]
    const _: () = {
        use core::mem::{offset_of, size_of};
        assert!(size_of::<config_item>() == 80);
        assert!(offset_of!(config_item, ci_namebuf) == 8);
        assert!(offset_of!(config_item, ci_kref) == 28);
        assert!(offset_of!(config_item, ci_entry) == 32);
        assert!(offset_of!(config_item, ci_parent) == 48);
        assert!(offset_of!(config_item, ci_group) == 56);
        assert!(offset_of!(config_item, ci_type) == 64);
        assert!(offset_of!(config_item, ci_dentry) == 72);
        assert!(size_of::<config_item_type>() == 40);
        assert!(offset_of!(config_item_type, ct_attrs) == 24);
        assert!(size_of::<config_group>() == 136);
        assert!(offset_of!(config_group, cg_children) == 80);
        assert!(offset_of!(config_group, cg_subsys) == 96);
        assert!(offset_of!(config_group, default_groups) == 104);
        assert!(offset_of!(config_group, group_entry) == 120);
        assert!(size_of::<configfs_attribute>() == 40);
        assert!(offset_of!(configfs_attribute, ca_mode) == 16);
        assert!(offset_of!(configfs_attribute, show) == 24);
        assert!(offset_of!(configfs_attribute, store) == 32);
        assert!(size_of::<configfs_item_operations>() == 24);
        assert!(size_of::<configfs_group_operations>() == 48);
        assert!(offset_of!(configfs_group_operations, drop_item) == 24);
        assert!(offset_of!(configfs_subsystem, su_mutex) == 136);
    };

    // The structures reach `struct module`, whose bindgen type holds an
    // empty arch struct the lint flags; C only receives pointers.
    #[allow(improper_ctypes)]
    extern "C" {
        pub(crate) fn config_group_init_type_name(
            group: *mut config_group,
            name: *const c_char,
            type_: *const config_item_type,
        );
        pub(crate) fn config_item_put(item: *mut config_item);
        pub(crate) fn configfs_register_subsystem(subsys: *mut configfs_subsystem) -> i32;
        pub(crate) fn configfs_unregister_subsystem(subsys: *mut configfs_subsystem);
    }
}

use raw::{
    config_group, config_item, config_item_type, configfs_attribute, configfs_group_operations,
    configfs_item_operations, configfs_subsystem, ShowFn, StoreFn,
};

/// Data with configfs attributes: file `id` is `ATTRS[id]`.
pub(crate) trait AttributeOperations: Send + Sync + 'static {
    /// The attributes' names and permissions (0444 or 0644).
    const ATTRS: &'static [FileSpec];

    /// Writes the contents of attribute `id`.
    fn show(&self, id: usize, out: &mut BufWriter<'_>) -> Result;

    /// Applies a write to attribute `id`; on error nothing may change.
    fn store(&self, _id: usize, _input: &[u8]) -> Result {
        Err(EPERM)
    }
}

/// The driver side of a subsystem: `Self` is its data, each directory
/// made in it holds a [`Self::Child`].
pub(crate) trait GroupOperations: AttributeOperations {
    /// The data of one directory.
    type Child: AttributeOperations;

    /// `mkdir <name>`: the initialiser of the new directory's data. An
    /// error fails the `mkdir` with it.
    fn make_group(&self, name: &CStr) -> Result<impl PinInit<Self::Child, Error>>;

    /// `rmdir`: the last call for `child` (no attribute callback runs
    /// after it). The data is dropped when configfs's last reference goes,
    /// normally right after this.
    fn drop_item(&self, _child: &Self::Child) {}

    /// The groups `child`'s directory shows inside it (configfs default
    /// groups), each passed to `add` once, when the directory is made.
    /// Each must be kept alive by `child` itself (a field of it, or behind
    /// an `Arc` it holds): configfs links it until `child` is released.
    fn default_groups<'a>(_child: &'a Self::Child, _add: &mut dyn FnMut(&'a DefaultGroup)) {}
}

/// A configfs group another part of the kernel set up (such as
/// `fault_config_init()`'s), which a directory shows inside it as a
/// default group (`configfs_add_default_group()`).
///
/// # Invariants
///
/// The group was initialised with an item type of its own, whose
/// reference its owner keeps, and its maker hands it out once, so that it
/// is shown by at most one directory: the one whose data holds (or keeps
/// alive) its owner, which outlives the group's links (while linked, it
/// holds a reference to that directory).
#[repr(transparent)]
pub(crate) struct DefaultGroup(Opaque<config_group>);

#[cfg_attr(
    not(all(CONFIG_FAULT_INJECTION, CONFIG_FAULT_INJECTION_CONFIGFS)),
    expect(
        dead_code,
        reason = "the fault injection groups are the only default groups"
    )
)]
impl DefaultGroup {
    /// The group at `group`.
    ///
    /// # Safety
    ///
    /// `group` must be an initialised group, live for `'a`, meeting the
    /// type invariants: no other `DefaultGroup` of it is ever made, and
    /// this one is given to [`GroupOperations::default_groups`] only for
    /// the child whose data keeps it alive.
    pub(super) unsafe fn from_raw<'a>(group: *mut config_group) -> &'a Self {
        // SAFETY: `DefaultGroup` is a transparent `Opaque<config_group>`;
        // the caller guarantees the rest.
        unsafe { &*group.cast::<Self>() }
    }
}

/// How many attributes a data type may have: one `show` and one `store`
/// callback is instantiated for each index below it.
pub(crate) const MAX_ATTRS: usize = 40;

/// An item whose attributes read a `Self::Data`.
trait Container {
    type Data: AttributeOperations;

    /// The data of the item `item`.
    ///
    /// # Safety
    ///
    /// `item` must be the item of a live `Self`.
    unsafe fn data<'a>(item: *mut config_item) -> &'a Self::Data;
}

/// The storage of one directory made by `mkdir`.
///
/// # Invariants
///
/// `raw` was set up by `config_group_init_type_name` with its subsystem's
/// child item type; it is the first field of this `#[repr(C)]` struct, so
/// an item pointer is a pointer to the `Group`. The box it lives in is
/// owned by the item's reference count and freed by `release_callback`.
#[repr(C)]
#[pin_data]
struct Group<C> {
    #[pin]
    raw: Opaque<config_group>,
    #[pin]
    data: C,
}

impl<C: AttributeOperations> Container for Group<C> {
    type Data = C;

    /// # Safety
    ///
    /// As [`Container::data`].
    unsafe fn data<'a>(item: *mut config_item) -> &'a C {
        // SAFETY: guaranteed by the caller; the item is the group's first
        // field (type invariant), so the pointers are equal.
        unsafe { &(*item.cast::<Group<C>>()).data }
    }
}

/// A registered configfs subsystem `/sys/kernel/config/<name>/` with the
/// driver's data `T`; dropping it unregisters it.
///
/// # Invariants
///
/// `raw` is registered with `configfs_register_subsystem` (while
/// `registered` is set), its group's item type is `root_type`, which
/// makes `Group<T::Child>`s of type `child_type`. Both types point to the
/// attribute tables below, which never change. `raw` is the first field of
/// this `#[repr(C)]` struct.
#[repr(C)]
#[pin_data(PinnedDrop)]
pub(crate) struct Subsystem<T: GroupOperations> {
    #[pin]
    raw: Opaque<configfs_subsystem>,
    root_type: Opaque<config_item_type>,
    child_type: Opaque<config_item_type>,
    root_attrs: AttrTable,
    child_attrs: AttrTable,
    registered: AtomicBool,
    #[pin]
    data: T,
}

// SAFETY: configfs serialises its use of the C structures (su_mutex, the
// dirent locks); `T` is `Send + Sync` (`AttributeOperations`).
unsafe impl<T: GroupOperations> Send for Subsystem<T> {}
// SAFETY: as above; shared references only hand out `&T`.
unsafe impl<T: GroupOperations> Sync for Subsystem<T> {}

impl<T: GroupOperations> Container for Subsystem<T> {
    type Data = T;

    /// # Safety
    ///
    /// As [`Container::data`].
    unsafe fn data<'a>(item: *mut config_item) -> &'a T {
        // SAFETY: guaranteed by the caller; the item is the subsystem's
        // group's, at offset 0 (type invariant).
        unsafe { &(*item.cast::<Subsystem<T>>()).data }
    }
}

static SU_MUTEX_CLASS: LockClass = LockClass::new();

impl<T: GroupOperations> Subsystem<T> {
    const ROOT_GROUP_OPS: configfs_group_operations = configfs_group_operations {
        make_item: None,
        make_group: Some(make_group_callback::<T>),
        disconnect_notify: None,
        drop_item: Some(drop_item_callback::<T>),
        is_visible: None,
        is_bin_visible: None,
    };

    const CHILD_ITEM_OPS: configfs_item_operations = configfs_item_operations {
        release: Some(release_callback::<T::Child>),
        allow_link: None,
        drop_link: None,
    };

    /// Creates and registers `/sys/kernel/config/<name>/` with the data
    /// `data`. Must be the module init's last fallible step (see the
    /// module documentation).
    #[inline(never)] // Builds kilobytes of tables: keep them off module init's frame.
    pub(crate) fn new(
        name: &'static CStr,
        data: impl PinInit<T, Error>,
    ) -> Result<Pin<KBox<Self>>> {
        // Item pointers are cast to the containers (type invariants).
        const { assert!(core::mem::offset_of!(Self, raw) == 0) };
        const { assert!(core::mem::offset_of!(Group<T::Child>, raw) == 0) };
        if name.len() >= raw::CONFIGFS_ITEM_NAME_LEN {
            return Err(EINVAL);
        }
        let root_attrs = AttrTable::new::<Self>()?;
        let child_attrs = AttrTable::new::<Group<T::Child>>()?;
        let this = KBox::pin_init(
            try_pin_init!(Self {
                raw: Opaque::uninit(),
                root_type: Opaque::uninit(),
                child_type: Opaque::uninit(),
                root_attrs,
                child_attrs,
                registered: AtomicBool::new(false),
                data <- data,
            }? Error),
            GFP_KERNEL,
        )?;
        // A static needs a constant: `THIS_MODULE.as_ptr()` is not a `const fn`.
        // SAFETY: `__this_module` is this module's `struct module`.
        let owner = unsafe { super::param::__this_module.get() };
        let sub = this.raw.get();
        // The operation tables are constants promoted to statics; configfs only reads them.
        // `name` fits the item's name buffer (checked above); `config_group_init_type_name` copies it.
        // SAFETY: the box is pinned and not shared yet: the structures are written once here,
        // before registration publishes them.
        unsafe {
            this.root_type.get().write(config_item_type {
                ct_owner: owner,
                ct_item_ops: null_mut(),
                ct_group_ops: core::ptr::from_ref(&Self::ROOT_GROUP_OPS).cast_mut(),
                ct_attrs: this.root_attrs.as_ptr(),
                ct_bin_attrs: null_mut(),
            });
            this.child_type.get().write(config_item_type {
                ct_owner: owner,
                ct_item_ops: core::ptr::from_ref(&Self::CHILD_ITEM_OPS).cast_mut(),
                ct_group_ops: null_mut(),
                ct_attrs: this.child_attrs.as_ptr(),
                ct_bin_attrs: null_mut(),
            });
            sub.write(core::mem::zeroed());
            raw::config_group_init_type_name(
                addr_of_mut!((*sub).su_group),
                name.as_char_ptr(),
                this.root_type.get(),
            );
            bindings::__mutex_init(
                addr_of_mut!((*sub).su_mutex).cast(),
                c_str!("configfs_subsystem::su_mutex").as_char_ptr(),
                SU_MUTEX_CLASS.as_ptr(),
            );
        }
        // SAFETY: `sub` is fully initialised and pinned; it stays
        // registered until `drop`.
        kernel::error::to_result(unsafe { raw::configfs_register_subsystem(sub) })?;
        // INVARIANT: registered above.
        this.registered.store(true, Ordering::Release);
        Ok(this)
    }

    /// The subsystem whose group is `group`.
    ///
    /// # Safety
    ///
    /// `group` must be the group of a live `Subsystem<T>`.
    unsafe fn from_group<'a>(group: *mut config_group) -> &'a Self {
        // SAFETY: guaranteed by the caller; the group is at offset 0 (type
        // invariant).
        unsafe { &*group.cast::<Self>() }
    }
}

#[pinned_drop]
impl<T: GroupOperations> PinnedDrop for Subsystem<T> {
    fn drop(self: Pin<&mut Self>) {
        if self.registered.load(Ordering::Acquire) {
            // Every directory pins the module, so at module exit none is
            // left and no `mkdir` can start (the module is going); after
            // this no callback runs and the tables may go (see the module
            // documentation).
            // SAFETY: registered (type invariant).
            unsafe { raw::configfs_unregister_subsystem(self.raw.get()) };
        }
    }
}

/// # Safety
///
/// Called by configfs for `mkdir` in the group of a registered
/// `Subsystem<T>`, with its `su_mutex` held and a NUL-terminated name.
unsafe extern "C" fn make_group_callback<T: GroupOperations>(
    group: *mut config_group,
    name: *const c_char,
) -> *mut config_group {
    // SAFETY: guaranteed by the caller.
    let (sub, name) = unsafe { (Subsystem::<T>::from_group(group), CStr::from_char_ptr(name)) };
    let made = T::make_group(&sub.data, name).and_then(|init| {
        KBox::pin_init(
            try_pin_init!(Group::<T::Child> {
                raw: Opaque::uninit(),
                data <- init,
            }? Error),
            GFP_KERNEL,
        )
    });
    let child = match made {
        Ok(child) => child,
        Err(e) => return e.to_ptr(),
    };
    // Ownership moves to the item's reference count; `release_callback`
    // takes it back.
    // SAFETY: the group is never moved out of the box: it is only used
    // through the raw pointer until `release_callback` rebuilds the box.
    let child = KBox::into_raw(unsafe { Pin::into_inner_unchecked(child) });
    // SAFETY: `child` is live; the item type is the subsystem's, which
    // outlives every child (module documentation). `name` is copied.
    let raw = unsafe {
        let raw = Opaque::raw_get(addr_of_mut!((*child).raw));
        raw.write(core::mem::zeroed());
        raw::config_group_init_type_name(raw, name.as_char_ptr(), sub.child_type.get());
        // INVARIANT: initialised with the child type; the box is owned by
        // the reference count `config_group_init_type_name` set to one.
        raw
    };
    // SAFETY: `child` is live until configfs's last reference goes, which
    // cannot happen during this call.
    let data = unsafe { &(*child).data };
    T::default_groups(data, &mut |g| {
        // `g` is on no list (its maker gives it out once).
        // SAFETY: `raw` is initialised, not yet published; `g` lives as
        // long as `data` (`default_groups`' contract) and is on no list.
        unsafe { add_default_group(raw, g) }
    });
    raw
}

/// `configfs_add_default_group()` (inline in C): `group` shows `new` inside
/// it once configfs creates its directory.
///
/// # Safety
///
/// `group` must be an initialised group that configfs has not linked yet,
/// and `new` the default group of the data `group`'s item holds.
unsafe fn add_default_group(group: *mut config_group, new: &DefaultGroup) {
    // SAFETY: the caller: `group` initialised and unshared; `new` is on
    // no other list (`DefaultGroup`'s invariant).
    unsafe {
        let head = addr_of_mut!((*group).default_groups);
        let entry = addr_of_mut!((*new.0.get()).group_entry);
        let prev = (*head).prev;
        (*entry).next = head;
        (*entry).prev = prev;
        (*prev).next = entry;
        (*head).prev = entry;
    }
}

/// # Safety
///
/// Called by configfs on `rmdir` of a child of a registered
/// `Subsystem<T>` made by `make_group_callback`, with its `su_mutex` held;
/// the drop of configfs's reference is ours to do.
unsafe extern "C" fn drop_item_callback<T: GroupOperations>(
    group: *mut config_group,
    item: *mut config_item,
) {
    // SAFETY: guaranteed by the caller: the child is live until the put
    // below.
    let (sub, child) = unsafe {
        (
            Subsystem::<T>::from_group(group),
            <Group<T::Child> as Container>::data(item),
        )
    };
    T::drop_item(&sub.data, child);
    // SAFETY: the reference `make_group_callback` handed to configfs.
    unsafe { raw::config_item_put(item) };
}

/// # Safety
///
/// Called by configfs when the last reference to an item made by
/// `make_group_callback` for a `Group<C>` goes.
unsafe extern "C" fn release_callback<C: AttributeOperations>(item: *mut config_item) {
    // SAFETY: the item is the first field of a `Group<C>` leaked from a box in
    // `make_group_callback` (type invariant of `Group`); nothing refers to it any more.
    drop(unsafe { KBox::from_raw(item.cast::<Group<C>>()) });
}

/// # Safety
///
/// Called by configfs for attribute `ID` of a live `K`, with `page` a
/// zeroed `PAGE_SIZE` buffer.
unsafe extern "C" fn show_callback<K: Container, const ID: usize>(
    item: *mut config_item,
    page: *mut c_char,
) -> isize {
    // SAFETY: guaranteed by the caller: configfs runs attribute callbacks under the directory's
    // fragment lock, never after `rmdir` marked it dead, so the item's data is live.
    let data = unsafe { K::data(item) };
    // SAFETY: configfs hands us `PAGE_SIZE` writable bytes for this call.
    let out = unsafe { core::slice::from_raw_parts_mut(page.cast::<u8>(), bindings::PAGE_SIZE) };
    let mut w = BufWriter::new(out);
    match data.show(ID, &mut w) {
        Ok(()) => w.len() as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// # Safety
///
/// Called by configfs for attribute `ID` of a live `K`, with `page`
/// holding `count` readable bytes.
unsafe extern "C" fn store_callback<K: Container, const ID: usize>(
    item: *mut config_item,
    page: *const c_char,
    count: usize,
) -> isize {
    // SAFETY: as in `show_callback`.
    let data = unsafe { K::data(item) };
    // SAFETY: configfs hands us `count` readable bytes for this call.
    let input = unsafe { core::slice::from_raw_parts(page.cast::<u8>(), count) };
    match data.store(ID, input) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// `[f::<K, 0>, f::<K, 1>, ...]`, one callback per attribute index.
macro_rules! per_id {
    ($f:ident, $k:ty, $t:ty, $($id:literal)*) => {
        [$($f::<$k, $id> as $t),*]
    };
}

/// The callbacks of every attribute index of `K`.
struct Callbacks<K>(PhantomData<K>);

impl<K: Container> Callbacks<K> {
    const SHOW: [ShowFn; MAX_ATTRS] = per_id!(show_callback, K, ShowFn,
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19
        20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39);
    const STORE: [StoreFn; MAX_ATTRS] = per_id!(store_callback, K, StoreFn,
        0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19
        20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39);
}

/// The attributes of an item type: `configfs_attribute`s and the
/// NULL-terminated pointer array `ct_attrs` points to.
///
/// # Invariants
///
/// `ptrs` holds a pointer to each element of `attrs`, then NULL; neither
/// buffer moves or changes after construction.
struct AttrTable {
    // Owned for the pointers into it.
    _attrs: KVec<Opaque<configfs_attribute>>,
    ptrs: KVec<*mut configfs_attribute>,
}

// SAFETY: the raw pointers point into the value's own heap buffers, which
// are only read (by configfs) after construction.
unsafe impl Send for AttrTable {}
// SAFETY: as above.
unsafe impl Sync for AttrTable {}

impl AttrTable {
    /// The table of `K::Data::ATTRS`, routed to `K`'s callbacks.
    fn new<K: Container>() -> Result<Self> {
        let specs = <K::Data as AttributeOperations>::ATTRS;
        const { assert!(<K::Data as AttributeOperations>::ATTRS.len() <= MAX_ATTRS) };
        // A static needs a constant: `THIS_MODULE.as_ptr()` is not a `const fn`.
        // SAFETY: `__this_module` is this module's `struct module`.
        let owner = unsafe { super::param::__this_module.get() };
        let mut attrs = KVec::with_capacity(specs.len(), GFP_KERNEL)?;
        for (id, spec) in specs.iter().enumerate() {
            attrs.push(
                Opaque::new(configfs_attribute {
                    ca_name: spec.name.as_char_ptr(),
                    // An open attribute file pins the module.
                    ca_owner: owner,
                    ca_mode: spec.mode,
                    show: Callbacks::<K>::SHOW.get(id).copied(),
                    store: if spec.mode & 0o222 != 0 {
                        Callbacks::<K>::STORE.get(id).copied()
                    } else {
                        None
                    },
                }),
                GFP_KERNEL,
            )?;
        }
        let mut ptrs = KVec::with_capacity(attrs.len() + 1, GFP_KERNEL)?;
        for a in attrs.iter() {
            ptrs.push(a.get(), GFP_KERNEL)?;
        }
        ptrs.push(null_mut(), GFP_KERNEL)?;
        // INVARIANT: built as described; nothing is pushed afterwards.
        Ok(Self {
            _attrs: attrs,
            ptrs,
        })
    }

    /// The NULL-terminated array for `ct_attrs`; configfs only reads
    /// through it.
    fn as_ptr(&self) -> *mut *mut configfs_attribute {
        self.ptrs.as_ptr().cast_mut()
    }
}
