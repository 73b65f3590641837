// SPDX-License-Identifier: GPL-2.0
/*
 * Build-time check of the declarations rnull/kapi/badblocks.rs makes by
 * hand (6.12's Rust bindings have none of linux/badblocks.h): compiled
 * with every `make modules` (rnull/Kbuild, always-y) and linked into
 * nothing, it fails the build if the kernel's header no longer matches
 * them. struct rnull_badblocks and the prototypes below are the C
 * spelling of badblocks.rs's `raw` module; change both together.
 */
#include <linux/badblocks.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>

/* badblocks.rs's `raw::badblocks`, field for field. */
struct rnull_badblocks {
	struct device *dev;
	int count;
	int unacked_exist;
	int shift;
	u64 *page;
	int changed;
	seqlock_t lock;
	sector_t sector;
	sector_t size;
};

#define RNULL_SAME_FIELD(f)                                                          \
	static_assert(offsetof(struct badblocks, f) == offsetof(struct rnull_badblocks, f), \
		      "struct badblocks: " #f " moved");                                     \
	static_assert(__builtin_types_compatible_p(typeof(((struct badblocks *)0)->f),      \
						   typeof(((struct rnull_badblocks *)0)->f)), \
		      "struct badblocks: " #f " changed type")

RNULL_SAME_FIELD(dev);
RNULL_SAME_FIELD(count);
RNULL_SAME_FIELD(unacked_exist);
RNULL_SAME_FIELD(shift);
RNULL_SAME_FIELD(page);
RNULL_SAME_FIELD(changed);
RNULL_SAME_FIELD(lock);
RNULL_SAME_FIELD(sector);
RNULL_SAME_FIELD(size);
static_assert(sizeof(struct badblocks) == sizeof(struct rnull_badblocks),
	      "struct badblocks: fields added");

/* badblocks.rs's `extern "C"` block. */
#define RNULL_SAME_PROTOTYPE(fn, type)                                      \
	static_assert(__builtin_types_compatible_p(typeof(&fn), type), \
		      #fn ": prototype changed")

RNULL_SAME_PROTOTYPE(badblocks_init, int (*)(struct badblocks *, int));
RNULL_SAME_PROTOTYPE(badblocks_exit, void (*)(struct badblocks *));
RNULL_SAME_PROTOTYPE(badblocks_check,
		     int (*)(struct badblocks *, sector_t, int, sector_t *, int *));
RNULL_SAME_PROTOTYPE(badblocks_set, int (*)(struct badblocks *, sector_t, int, int));
RNULL_SAME_PROTOTYPE(badblocks_clear, int (*)(struct badblocks *, sector_t, int));
RNULL_SAME_PROTOTYPE(badblocks_show, ssize_t (*)(struct badblocks *, char *, int));
