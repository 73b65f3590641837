// SPDX-License-Identifier: GPL-2.0

//! sysfs directories and attributes with per-file private data.
//!
//! Attributes are `bin_attribute`s because those carry a `private` pointer
//! and their own read and write callbacks: that lets rnull add writable
//! files to kobjects whose type it does not own, such as blk-mq's hardware
//! context directories (`/sys/block/<disk>/mq/<n>/`), whose `kobj_type`
//! has no store hook for foreign attributes.

use super::fmt::BufWriter;
#[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
use super::lock_class::LockClass;
use core::{marker::PhantomData, ptr::NonNull};
use kernel::{bindings, ffi::c_char, prelude::*, str::CStr, types::Opaque};

/// A borrowed kobject.
///
/// # Invariants
///
/// `ptr` is a live kobject for `'a`.
pub(crate) struct KobjRef<'a> {
    ptr: NonNull<bindings::kobject>,
    _p: PhantomData<&'a bindings::kobject>,
}

impl KobjRef<'_> {
    /// Wraps a raw kobject.
    ///
    /// # Safety
    ///
    /// `ptr` must be non-null and live for the returned lifetime.
    pub(crate) unsafe fn from_raw<'a>(ptr: *mut bindings::kobject) -> KobjRef<'a> {
        // INVARIANT: guaranteed by the caller.
        KobjRef {
            // SAFETY: the caller guarantees `ptr` is non-null.
            ptr: unsafe { NonNull::new_unchecked(ptr) },
            _p: PhantomData,
        }
    }
}

/// The module's own kobject, `/sys/module/<module>`.
pub(crate) fn module_kobject() -> KobjRef<'static> {
    // SAFETY: `__this_module` is live while the module is loaded, and code
    // of this module only runs while it is loaded.
    unsafe {
        KobjRef::from_raw(core::ptr::addr_of_mut!(
            (*super::param::__this_module.get()).mkobj.kobj
        ))
    }
}

/// A directory of our own under a parent's kobject, and the files in it.
///
/// The directory owns its files and removes them before its kobject, so a
/// file can never outlive the kobject it is on.
///
/// # Invariants
///
/// `kobj` came from `kobject_create_and_add`; we hold its only reference.
/// Every element of `files` is registered on `kobj`.
pub(crate) struct Dir<A: AttrOps> {
    files: KVec<Attr<A>>,
    kobj: NonNull<bindings::kobject>,
}

// SAFETY: kobjects are reference counted and internally synchronised; the
// files are `Send + Sync` (`Attr`).
unsafe impl<A: AttrOps> Send for Dir<A> {}
// SAFETY: as above.
unsafe impl<A: AttrOps> Sync for Dir<A> {}

impl<A: AttrOps> Dir<A> {
    /// Creates `<parent>/<name>/`, empty.
    pub(crate) fn new(parent: &KobjRef<'_>, name: &'static CStr) -> Result<Self> {
        // SAFETY: `parent` is live (type invariant) and `name` NUL-terminated.
        let kobj =
            unsafe { bindings::kobject_create_and_add(name.as_char_ptr(), parent.ptr.as_ptr()) };
        // INVARIANT: a non-null result is a new kobject we hold a reference
        // to; there are no files yet.
        NonNull::new(kobj)
            .map(|kobj| Self {
                files: KVec::new(),
                kobj,
            })
            .ok_or(ENOMEM)
    }

    /// Adds the file `<name>` with permissions `mode` (0444 or 0644).
    pub(crate) fn add(&mut self, name: &'static CStr, mode: u16, ops: A) -> Result {
        self.files.reserve(1, GFP_KERNEL)?;
        // SAFETY: `self.kobj` is live until `drop`, which removes the file
        // first (the files drop before the reference is put).
        let file = unsafe { Attr::new(self.kobj, name, mode, ops) }?;
        // INVARIANT: the file is registered on `kobj`; the push cannot fail
        // after the reservation, and would only drop (remove) it if it did.
        self.files.push(file, GFP_KERNEL)?;
        Ok(())
    }
}

impl<A: AttrOps> Drop for Dir<A> {
    fn drop(&mut self) {
        // Files go first, while their kobject is still there.
        drop(core::mem::take(&mut self.files));
        // SAFETY: we hold a reference (type invariant); dropping it removes
        // the directory.
        unsafe { bindings::kobject_put(self.kobj.as_ptr()) };
    }
}

/// What a sysfs file does when read or written.
pub(crate) trait AttrOps: Send + Sync + 'static {
    /// Writes the file's contents.
    fn show(&self, out: &mut BufWriter<'_>) -> Result;
    /// Applies a write; on error nothing may change.
    fn store(&self, _input: &[u8]) -> Result {
        Err(EPERM)
    }
}

#[repr(C)]
struct Entry<A: AttrOps> {
    raw: Opaque<bindings::bin_attribute>,
    ops: A,
}

/// The lockdep class of every attribute rnull allocates (what C's
/// `sysfs_attr_init` gives a dynamically allocated attribute).
#[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
pub(super) static ATTR_LOCK_CLASS: LockClass = LockClass::new();

/// A file on a kobject, removed on drop. Only kapi makes them, for a
/// kobject that it can show outlives the file ([`Dir`], the hardware queue
/// directories of a [`super::disk::Disk`]).
///
/// # Invariants
///
/// `entry.raw` is registered with `sysfs_create_bin_file` on `kobj`, and its
/// `private` points to `entry`; `kobj` outlives `self`.
pub(crate) struct Attr<A: AttrOps> {
    entry: KBox<Entry<A>>,
    kobj: NonNull<bindings::kobject>,
}

// SAFETY: `A` is `Send + Sync`; the raw parts are only used for removal.
unsafe impl<A: AttrOps> Send for Attr<A> {}
// SAFETY: as above.
unsafe impl<A: AttrOps> Sync for Attr<A> {}

impl<A: AttrOps> Attr<A> {
    /// Creates `<kobj>/<name>` with permissions `mode` (0444 or 0644).
    ///
    /// # Safety
    ///
    /// `kobj` must be live and stay live until the returned value is dropped.
    pub(super) unsafe fn new(
        kobj: NonNull<bindings::kobject>,
        name: &'static CStr,
        mode: u16,
        ops: A,
    ) -> Result<Self> {
        let entry = KBox::new(
            Entry {
                raw: Opaque::uninit(),
                ops,
            },
            GFP_KERNEL,
        )?;
        let raw = entry.raw.get();
        // SAFETY: `raw` is valid for writes and zero is the default of every
        // field; the box does not move while the file exists.
        unsafe {
            raw.write(core::mem::zeroed());
            (*raw).attr.name = name.as_char_ptr();
            (*raw).attr.mode = mode;
            #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
            {
                (*raw).attr.key = ATTR_LOCK_CLASS.as_ptr();
            }
            (*raw).private = core::ptr::addr_of!(*entry).cast_mut().cast();
            (*raw).read = Some(read_callback::<A>);
            if mode & 0o222 != 0 {
                (*raw).write = Some(write_callback::<A>);
            }
        }
        // SAFETY: `kobj` is live (guaranteed by the caller) and `raw` fully
        // initialised.
        kernel::error::to_result(unsafe { bindings::sysfs_create_bin_file(kobj.as_ptr(), raw) })?;
        // INVARIANT: registered above with `private` pointing at the entry;
        // the caller guarantees `kobj` outlives `self`.
        Ok(Self { entry, kobj })
    }
}

impl<A: AttrOps> Drop for Attr<A> {
    fn drop(&mut self) {
        // SAFETY: registered on `kobj` (type invariant); removal waits for
        // running callbacks, after which the entry can be freed.
        unsafe { bindings::sysfs_remove_bin_file(self.kobj.as_ptr(), self.entry.raw.get()) };
    }
}

/// The entry of a callback's attribute.
///
/// # Safety
///
/// `attr` must be the `raw` field of a live `Entry<A>`.
unsafe fn entry_of<'a, A: AttrOps>(attr: *mut bindings::bin_attribute) -> &'a Entry<A> {
    // SAFETY: `private` points to the entry (type invariant of `Attr`), which
    // lives until the file is removed, i.e. past this callback.
    unsafe { &*(*attr).private.cast::<Entry<A>>() }
}

/// # Safety
///
/// Called by sysfs for a file made by [`Attr::new`], with `buf` holding
/// `count` writable bytes.
unsafe extern "C" fn read_callback<A: AttrOps>(
    _file: *mut bindings::file,
    _kobj: *mut bindings::kobject,
    attr: *mut bindings::bin_attribute,
    buf: *mut c_char,
    off: bindings::loff_t,
    count: usize,
) -> isize {
    // SAFETY: guaranteed by the caller.
    let entry = unsafe { entry_of::<A>(attr) };
    // SAFETY: sysfs hands us `count` writable bytes for this call.
    let out = unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), count) };
    let done = if off == 0 && count >= PAGE {
        // The usual read (`cat`): the page sysfs gives holds any file.
        let mut w = BufWriter::new(out);
        entry.ops.show(&mut w).map(|()| w.len())
    } else {
        read_part(&entry.ops, out, off)
    };
    match done {
        Ok(n) => n as isize,
        Err(e) => e.to_errno() as isize,
    }
}

/// Bytes a file's contents may take, as a `show` of a sysfs attribute.
const PAGE: usize = 4096;

/// A read at an offset or into less than a page (a shell's `read`, which
/// takes a byte at a time, or `dd bs=1`): renders the whole contents into a
/// page, then copies the part from `off`. Returns the bytes copied (0 past
/// the end).
fn read_part<A: AttrOps>(ops: &A, out: &mut [u8], off: bindings::loff_t) -> Result<usize> {
    let mut page = KVec::from_elem(0u8, PAGE, GFP_KERNEL)?;
    let mut w = BufWriter::new(&mut page);
    ops.show(&mut w)?;
    let len = w.len();
    let start = usize::try_from(off).map_err(|_| EINVAL)?.min(len);
    let n = out.len().min(len - start);
    out[..n].copy_from_slice(&page[start..start + n]);
    Ok(n)
}

/// # Safety
///
/// Called by sysfs for a file made by [`Attr::new`], with `buf` holding
/// `count` readable bytes.
unsafe extern "C" fn write_callback<A: AttrOps>(
    _file: *mut bindings::file,
    _kobj: *mut bindings::kobject,
    attr: *mut bindings::bin_attribute,
    buf: *mut c_char,
    off: bindings::loff_t,
    count: usize,
) -> isize {
    if off != 0 {
        return EINVAL.to_errno() as isize;
    }
    // SAFETY: guaranteed by the caller.
    let entry = unsafe { entry_of::<A>(attr) };
    // SAFETY: sysfs hands us `count` readable bytes for this call.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    match entry.ops.store(input) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}
