// SPDX-License-Identifier: GPL-2.0
/*
 * hostile-input: hostile input generated from a setting's range, written to
 * a sysfs or configfs file or given to a module load, each outcome checked
 * against an oracle: C's kstrtoll(s, 0) (ported below from lib/kstrtox.c,
 * the reading null_blk's numbers get), the range, and how sysfs and configfs
 * hand a write to the driver (in pieces of a page).
 *
 * usage: hostile-input cases SPEC IFACE [CLASS...]
 *            print the inputs: class, input (escaped), expected outcome;
 *            IFACE is attr, bin, configfs or param
 *        hostile-input file PATH LABEL SPEC [CLASS...]
 *            write each input to PATH, and as user nobody
 *        hostile-input param KO NAME SPEC ARGS [CLASS...]
 *            load KO with ARGS NAME="input" for each input
 *        hostile-input flood PATH LABEL COUNT INPUT
 *            write the invalid INPUT COUNT times
 *
 * SPEC is a range as modinfo's parameter descriptions say it: "MIN..=MAX",
 * "MIN..=MAX, power of two", "MIN..=MAX, decimal" (read as kstrtoll(s, 10),
 * null_blk's queue_mode and irqmode), names "a, b, c", or "badblocks MIN..=MAX"
 * (null_blk's "+first-last"/"-first-last", sectors in MIN..=MAX).
 * CLASS selects inputs: bounds overflow base0 space sign garbage nul long
 * nobody (default: all).
 *
 * What `file` and `param` check, for every input:
 *   verdict  accepted or refused as the oracle says;
 *   errno    a refusal is EINVAL;
 *   value    the file (or /sys/module/rnull/parameters/NAME) then reads as
 *            the oracle says: the new value, or the old one if refused;
 *   log      a refusal logs at most one kernel line naming LABEL (for
 *            `param`: "parameter NAME:"), and each such line names the
 *            range; the first refusal logs exactly one (later ones may be
 *            rate-limited);
 *   nobody   (file) user nobody cannot open PATH for writing.
 * `param` also checks that a refused load leaves no module behind.
 * `flood` checks that COUNT refusals log at most BURST lines per INTERVAL
 * (the kernel's default printk rate limit, DEFAULT_RATELIMIT_*).
 * Each failed check prints "WRONG <check> ..."; the last line is a summary.
 * Exit status: 0 if every check passed, 1 if one failed, 2 on bad usage or
 * a failure to run.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CONFIGFS_MAGIC 0x62656570
#define BURST 10
#define INTERVAL_S 5.0
#define NOBODY 65534

/* --- The oracle: lib/kstrtox.c's kstrtoll(s, 0), on a C string. --- */

#define KSTRTOX_OVERFLOW (1U << 31)

static const char *parse_integer_fixup_radix(const char *s, unsigned int *base)
{
	if (*base == 0) {
		if (s[0] == '0') {
			if ((s[1] | 0x20) == 'x' && isxdigit((unsigned char)s[2]))
				*base = 16;
			else
				*base = 8;
		} else {
			*base = 10;
		}
	}
	if (*base == 16 && s[0] == '0' && (s[1] | 0x20) == 'x')
		s += 2;
	return s;
}

static unsigned int parse_integer(const char *s, unsigned int base, unsigned long long *p)
{
	unsigned long long res = 0;
	unsigned int rv = 0;

	for (;; s++) {
		unsigned int c = (unsigned char)*s, lc = c | 0x20, val;

		if ('0' <= c && c <= '9')
			val = c - '0';
		else if ('a' <= lc && lc <= 'f')
			val = lc - 'a' + 10;
		else
			break;
		if (val >= base)
			break;
		if ((res & (~0ULL << 60)) && res > (ULLONG_MAX - val) / base)
			rv |= KSTRTOX_OVERFLOW;
		res = res * base + val;
		rv++;
	}
	*p = res;
	return rv;
}

static int kstrtoull_(const char *s, unsigned int base, unsigned long long *res)
{
	unsigned long long r;
	unsigned int rv;

	s = parse_integer_fixup_radix(s, &base);
	rv = parse_integer(s, base, &r);
	if (rv & KSTRTOX_OVERFLOW)
		return -ERANGE;
	if (rv == 0)
		return -EINVAL;
	s += rv;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = r;
	return 0;
}

static int kstrtoull(const char *s, unsigned int base, unsigned long long *res)
{
	if (s[0] == '+')
		s++;
	return kstrtoull_(s, base, res);
}

static int kstrtoll(const char *s, unsigned int base, long long *res)
{
	unsigned long long tmp;
	int rv;

	if (s[0] == '-') {
		rv = kstrtoull_(s + 1, base, &tmp);
		if (rv < 0)
			return rv;
		if ((long long)-tmp > 0)
			return -ERANGE;
		*res = -tmp;
	} else {
		rv = kstrtoull(s, base, &tmp);
		if (rv < 0)
			return rv;
		if ((long long)tmp < 0)
			return -ERANGE;
		*res = tmp;
	}
	return 0;
}

/* --- Settings and their ranges. --- */

enum kind { INT, CHOICE, BADBLOCKS };

struct spec {
	enum kind kind;
	long long min, max;
	int pow2;
	int decimal;	/* ", decimal": kstrtoll(s, 10), as null_param_store_val() */
	const char *names[16];
	int nnames;
	/* What a log line of a refusal must contain, besides the label. */
	char range_text[64];
};

static void parse_spec(const char *text, struct spec *sp)
{
	char *copy = strdup(text), *tok, *save;

	memset(sp, 0, sizeof(*sp));
	if (!strncmp(text, "badblocks ", 10)) {
		sp->kind = BADBLOCKS;
		text += 10;
	} else if (strstr(text, "..=")) {
		sp->kind = INT;
		sp->pow2 = strstr(text, ", power of two") != NULL;
		sp->decimal = strstr(text, ", decimal") != NULL;
	} else {
		sp->kind = CHOICE;
		for (tok = strtok_r(copy, ", ", &save); tok && sp->nnames < 16;
		     tok = strtok_r(NULL, ", ", &save))
			sp->names[sp->nnames++] = tok;
		if (sp->nnames == 0) {
			fprintf(stderr, "hostile-input: bad range '%s'\n", text);
			exit(2);
		}
		return;
	}
	if (sscanf(text, "%lld..=%lld", &sp->min, &sp->max) != 2 || sp->min > sp->max) {
		fprintf(stderr, "hostile-input: bad range '%s'\n", text);
		exit(2);
	}
	snprintf(sp->range_text, sizeof(sp->range_text), "%lld..=%lld", sp->min, sp->max);
	free(copy);
}

/* An oracle's answer for one piece of input the driver is handed. */
struct verdict {
	int ok;
	long long v;		/* INT: the value; BADBLOCKS: first sector */
	long long last;		/* BADBLOCKS: last sector */
	int set;		/* BADBLOCKS: '+' */
	int choice;		/* CHOICE: index of the name */
};

static int int_accepts(const struct spec *sp, const char *buf, size_t len, long long *v)
{
	char *s;
	int rv;

	if (memchr(buf, 0, len))
		return 0;
	s = strndup(buf, len);
	rv = kstrtoll(s, sp->decimal ? 10 : 0, v);
	free(s);
	if (rv || *v < sp->min || *v > sp->max)
		return 0;
	return !sp->pow2 || (*v > 0 && !(*v & (*v - 1)));
}

/* null_blk's badblocks_store: strstrip(), a sign, kstrtoull(s, 0) twice. */
static int badblocks_accepts(const struct spec *sp, const char *buf, size_t len,
			     struct verdict *out)
{
	char *s, *b, *e, *dash;
	unsigned long long first, last;
	int ok = 0;

	if (memchr(buf, 0, len))
		return 0;
	s = strndup(buf, len);
	for (b = s; *b && isspace((unsigned char)*b); b++)
		;
	for (e = b + strlen(b); e > b && isspace((unsigned char)e[-1]); e--)
		;
	*e = 0;
	if ((b[0] == '+' || b[0] == '-') && (dash = strchr(b + 1, '-'))) {
		*dash = 0;
		if (!kstrtoull(b + 1, 0, &first) && !kstrtoull(dash + 1, 0, &last) &&
		    first <= last && first >= (unsigned long long)sp->min &&
		    last <= (unsigned long long)sp->max) {
			out->set = b[0] == '+';
			out->v = first;
			out->last = last;
			ok = 1;
		}
	}
	free(s);
	return ok;
}

static struct verdict judge(const struct spec *sp, const char *buf, size_t len)
{
	struct verdict r = { 0 };
	size_t n = len;
	int i;

	switch (sp->kind) {
	case INT:
		r.ok = int_accepts(sp, buf, len, &r.v);
		break;
	case BADBLOCKS:
		r.ok = badblocks_accepts(sp, buf, len, &r);
		break;
	case CHOICE:
		if (n && buf[n - 1] == '\n')
			n--;
		for (i = 0; i < sp->nnames; i++) {
			if (strlen(sp->names[i]) == n && !memcmp(sp->names[i], buf, n)) {
				r.ok = 1;
				r.choice = i;
			}
		}
		break;
	}
	return r;
}

/* How a write reaches the driver. */
enum iface { ATTR, BIN, CONFIGFS, PARAM };

/*
 * What the whole write does: sysfs hands the driver at most a page per
 * write(2) (kernfs_fop_write_iter), configfs a page less one byte
 * (fill_write_buffer), and a writer goes on with the rest while each piece
 * is accepted; rnull's bin files refuse a piece past offset 0 without a
 * log line. A module parameter arrives whole.
 */
struct outcome {
	int ok;
	int logged;		/* the refusal is the driver's parser's */
	int changed;		/* a piece was accepted */
	struct verdict last;	/* the last accepted piece */
};

static struct outcome simulate(const struct spec *sp, enum iface iface, const char *buf,
			       size_t len)
{
	size_t page = sysconf(_SC_PAGESIZE), chunk, off = 0;
	struct outcome o = { .ok = 1 };

	chunk = iface == CONFIGFS ? page - 1 : iface == PARAM ? len + 1 : page;
	do {
		size_t n = len - off < chunk ? len - off : chunk;
		struct verdict r;

		if (iface == BIN && off > 0) {
			o.ok = 0;
			return o;
		}
		r = judge(sp, buf + off, n);
		if (!r.ok) {
			o.ok = 0;
			o.logged = 1;
			return o;
		}
		o.changed = 1;
		o.last = r;
		off += n;
	} while (off < len);
	return o;
}

/* --- The inputs. --- */

struct input {
	const char *cls;
	char *buf;
	size_t len;
	/* Spelled from the range (its ends, wrapping to them, ...), not a
	 * fixed string that tests only the parser. */
	int specific;
};

static struct input *inputs;
static int ninputs, cap;
/* What add() and add_bytes() give their inputs as `specific`. */
static int specific;

static void add_bytes(const char *cls, const char *buf, size_t len)
{
	int i;

	/* Spellings of different values may coincide (0x1 and 0X1 for 1). */
	for (i = 0; i < ninputs; i++)
		if (inputs[i].len == len && !memcmp(inputs[i].buf, buf, len))
			return;
	if (ninputs == cap) {
		cap = cap ? 2 * cap : 256;
		inputs = realloc(inputs, cap * sizeof(*inputs));
	}
	inputs[ninputs].cls = cls;
	inputs[ninputs].buf = malloc(len + 1);
	memcpy(inputs[ninputs].buf, buf, len);
	inputs[ninputs].buf[len] = 0;
	inputs[ninputs].len = len;
	inputs[ninputs].specific = specific;
	ninputs++;
}

static void add(const char *cls, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	add_bytes(cls, buf, n);
}

/* A literal with NULs: its length is given. */
#define ADD_LIT(cls, lit) add_bytes(cls, lit, sizeof(lit) - 1)

/* v + k * 2^bits, for the spellings that wrap to v in a narrower type. */
static void add_wrapped(const char *cls, long long v, int bits, int k)
{
	__int128 x = (__int128)v + (__int128)k * ((__int128)1 << bits);
	char digits[48];
	int i = sizeof(digits) - 1, neg = x < 0;
	unsigned __int128 u = neg ? -(unsigned __int128)x : (unsigned __int128)x;

	digits[i] = 0;
	do {
		digits[--i] = '0' + (int)(u % 10);
		u /= 10;
	} while (u);
	add(cls, "%s%s", neg ? "-" : "", digits + i);
}

/* A number spelled `v` with zeros in front up to `len` bytes (octal, as
 * kstrtoll reads a leading 0), then `tail`. */
static void add_padded(const char *cls, long long v, size_t len, const char *tail)
{
	char digits[32], *buf = malloc(len + 8);
	size_t n, t = strlen(tail), sign = v < 0;

	n = snprintf(digits, sizeof(digits), "%llo", (unsigned long long)(v < 0 ? -v : v));
	if (len < n + sign + t + 1)
		len = n + sign + t + 1;
	memset(buf, '0', len);
	if (sign)
		buf[0] = '-';
	memcpy(buf + len - t - n, digits, n);
	memcpy(buf + len - t, tail, t);
	add_bytes(cls, buf, len);
	free(buf);
}

static void add_run(const char *cls, const char *head, char c, size_t len)
{
	size_t h = strlen(head);
	char *buf = malloc(h + len);

	memcpy(buf, head, h);
	memset(buf + h, c, len);
	add_bytes(cls, buf, h + len);
	free(buf);
}

static int wanted(const char *cls, char **classes, int nclasses)
{
	int i;

	for (i = 0; i < nclasses; i++)
		if (!strcmp(classes[i], cls))
			return 1;
	return nclasses == 0;
}

/*
 * The integers: what depends on the range is `specific` (the ends and one
 * past them, the spellings that wrap to an end in 32 or 64 bits, the ends
 * in octal and hexadecimal, padded to a page and beyond); the rest are
 * fixed strings.
 */
static void gen_int(long long min, long long max, int pow2, enum iface iface)
{
	long long mid = min + (max - min) / 2, vs[2] = { min, max };
	size_t page = sysconf(_SC_PAGESIZE);
	int i, k;

	specific = 1;
	add("bounds", "%lld", min);
	add("bounds", "%lld", max);
	add("bounds", "%lld", min - 1);
	add("bounds", "%lld", max + 1);
	if (pow2) {
		add("bounds", "%lld", min + 1);
		add("bounds", "%lld", max - 1);
		add("bounds", "%lld", min * 3);
	}
	for (i = 0; i < 2; i++) {
		for (k = -1; k <= 1; k += 2) {
			add_wrapped("overflow", vs[i], 32, k);
			add_wrapped("overflow", vs[i], 64, k);
		}
	}
	add("overflow", "0x%llx", (unsigned long long)min + (1ULL << 32));
	/* The largest value in octal, hexadecimal, and its decimal digits
	 * read as octal. */
	add("base0", "%s0%llo", max < 0 ? "-" : "", (unsigned long long)llabs(max));
	add("base0", "%s0x%llx", max < 0 ? "-" : "", (unsigned long long)llabs(max));
	add("base0", "%s0%lld", max < 0 ? "-" : "", llabs(max));
	/* A module parameter arrives whole: one length past a page is enough.
	 * A file's writes come in pieces of a page (or one byte less). */
	if (iface == PARAM) {
		add_padded("long", max, 2 * page + 1, "\n");
	} else {
		for (i = 0; i < 2; i++) {
			add_padded("long", vs[i], page - 1, "");
			add_padded("long", vs[i], page, "");
			add_padded("long", vs[i], page + 1, "");
			add_padded("long", vs[i], page, "\n");
			add_padded("long", vs[i], 2 * page + 1, "\n");
		}
	}

	specific = 0;
	add("bounds", "%lld", mid);
	if (iface == PARAM)
		add_padded("long", min, page + 1, "");
	for (i = 0; i < 2; i++) {
		long long v = vs[i];
		unsigned long long a = v < 0 ? -v : v;
		const char *s = v < 0 ? "-" : "";

		add("base0", "%s0%llo", s, a);
		add("base0", "%s0x%llx", s, a);
		add("base0", "%s0%lld", s, a);
		add("base0", "+0x%llx", a);
		add("base0", "%s0X%llX", s, a);
		add("base0", "%s0x%llX", s, a);
		add("base0", "%s000x%llx", s, a);
		add("base0", "%s00%lld", s, a);
		add("base0", "+0%llo", a);
		add("base0", "+%lld", a);
	}
	add("overflow", "2147483647");
	add("overflow", "2147483648");
	add("overflow", "4294967295");
	add("overflow", "4294967296");
	add("overflow", "9223372036854775807");
	add("overflow", "9223372036854775808");
	add("overflow", "18446744073709551615");
	add("overflow", "18446744073709551616");
	add("overflow", "340282366920938463463374607431768211457");
	add("overflow", "-2147483648");
	add("overflow", "-2147483649");
	add("overflow", "-4294967295");
	add("overflow", "-9223372036854775808");
	add("overflow", "-9223372036854775809");
	add("overflow", "-18446744073709551615");
	add("overflow", "-18446744073709551616");
	add("overflow", "0x7fffffff");
	add("overflow", "0x80000000");
	add("overflow", "0xffffffff");
	add("overflow", "0x100000000");
	add("overflow", "0x7fffffffffffffff");
	add("overflow", "0x8000000000000000");
	add("overflow", "0xffffffffffffffff");
	add("overflow", "0x10000000000000000");
	add("overflow", "-0x8000000000000000");
	add("overflow", "-0x8000000000000001");
	add("overflow", "01777777777777777777777");
	add("overflow", "02000000000000000000000");
	add("overflow", "1%s", "00000000000000000000000000000000000000000");

	add("base0", "010");
	add("base0", "0x10");
	add("base0", "0X10");
	add("base0", "-010");
	add("base0", "-0x10");
	add("base0", "08");
	add("base0", "09");
	add("base0", "019");
	add("base0", "0x");
	add("base0", "0X");
	add("base0", "0xg");
	add("base0", "0x+1");
	add("base0", "0x-1");
	add("base0", "0xx1");
	add("base0", "0x 1");
	add("base0", "00");
	add("base0", "0x0");
	add("base0", "-0");
	add("base0", "+0");
	add("base0", "0b1");
	add("base0", "0o7");
	add("base0", "1e3");
	add("base0", "1.0");
	add("base0", ".5");
	add("base0", "0x1p3");

	add("space", "%lld\n", min);
	add("space", "%lld", max);
	add("space", " %lld", min);
	add("space", "%lld ", min);
	add("space", "\t%lld", min);
	add("space", "%lld\t", min);
	add("space", "%lld\r", min);
	add("space", "%lld\r\n", min);
	add("space", "%lld\n\n", min);
	add("space", "\n%lld", min);
	add("space", "%lld\v", min);
	add("space", "\f%lld", min);
	add("space", "%lld %lld", min, min);
	add("space", "%lld\n%lld", min, max);
	add("space", "\n");
	add("space", "\n\n");
	add("space", " ");
	add("space", " \n");

	add("sign", "+");
	add("sign", "-");
	add("sign", "--1");
	add("sign", "++1");
	add("sign", "+-1");
	add("sign", "-+1");
	add("sign", "- 1");
	add("sign", "+ 1");
	add("sign", "-%lld", max);
	add("sign", "+%lld", max);
	add("sign", "%lld-", min);

	add("garbage", "abc");
	add("garbage", "1x");
	add("garbage", "x1");
	add("garbage", "1k");
	add("garbage", "4K");
	add("garbage", "1M");
	add("garbage", "0x1g");
	add("garbage", "one");
	add("garbage", "y");
	add("garbage", "Y");
	add("garbage", "yes");
	add("garbage", "n");
	add("garbage", "on");
	add("garbage", "off");
	add("garbage", "true");
	add("garbage", "false");
	add("garbage", "NaN");
	add("garbage", "inf");
	add("garbage", "\xff");
	add("garbage", "\x80\x81");
	add("garbage", "\xef\xbc\x91");	/* a fullwidth 1 */
	add("garbage", "%lld\xc2\xa0", min);	/* a no-break space */
	add("garbage", "%%s%%n%%x");
	add("garbage", "\x1b[31m%lld", min);
	add("garbage", "'%lld'", min);
	add("garbage", "\"%lld\"", min);
	add("garbage", "%lld;%lld", min, max);
	add("garbage", "%lld,%lld", min, max);
	add("garbage", "1_0");
	add("garbage", "$(echo 1)");

	ADD_LIT("nul", "\0");
	{
		char b[64];
		int n = snprintf(b, sizeof(b), "%lld", min);

		memcpy(b + n, "\0", 1);
		add_bytes("nul", b, n + 1);
		memcpy(b + n, "\0junk", 5);
		add_bytes("nul", b, n + 5);
		memcpy(b + n, "\n\0", 2);
		add_bytes("nul", b, n + 2);
		b[0] = 0;
		n = snprintf(b + 1, sizeof(b) - 1, "%lld", min);
		add_bytes("nul", b, n + 1);
	}

	add_run("long", "", '9', page);
	add_run("long", "", '9', page + 1);
	add_run("long", "", '1', 2 * page + 3);
	add_run("long", "", 'a', page + 1);
	add_run("long", "", ' ', page + 1);
	add_run("long", "0x", '0', page);
	add_run("long", "1", ' ', page);
}

static void gen_choice(const struct spec *sp)
{
	size_t page = sysconf(_SC_PAGESIZE);
	char up[64], all[512] = "", spaced[512] = "";
	int i, j;

	/* Every input is spelled from the names. */
	specific = 1;
	for (i = 0; i < sp->nnames; i++) {
		const char *n = sp->names[i];

		add("bounds", "%s", n);
		add("space", "%s\n", n);
		add("space", "%s\n\n", n);
		add("space", " %s", n);
		add("space", "%s ", n);
		add("space", "\t%s", n);
		add("space", "%s\r\n", n);
		add("space", "\n%s", n);
		for (j = 0; n[j] && j < 63; j++)
			up[j] = n[j] >= 'a' && n[j] <= 'z' ? n[j] - 32 : n[j];
		up[j] = 0;
		add("garbage", "%s", up);
		add("garbage", "%c%s", up[0], n + 1);
		add("garbage", "%.*s", (int)strlen(n) - 1, n);
		add("garbage", "%sx", n);
		add("garbage", "x%s", n);
		add("garbage", "[%s]", n);
		add("garbage", "%d", i);
		{
			char b[64];
			int len = snprintf(b, sizeof(b), "%s", n);

			memcpy(b + len, "\0", 1);
			add_bytes("nul", b, len + 1);
			memcpy(b + len, "\0x", 2);
			add_bytes("nul", b, len + 2);
			b[0] = 0;
			len = snprintf(b + 1, sizeof(b) - 1, "%s", n);
			add_bytes("nul", b, len + 1);
		}
		strcat(all, i ? "," : "");
		strcat(all, n);
		strcat(spaced, i ? " " : "");
		strcat(spaced, n);
	}
	add("garbage", "%s", all);
	add("garbage", "%s", spaced);
	add("garbage", "-1");
	add("garbage", "abc");
	add("garbage", "\xff");
	add("space", "\n");
	add("space", " ");
	add_run("long", sp->names[0], ' ', page);
	add_run("long", sp->names[0], '\n', page);
	add_run("long", "", 'a', page + 1);
	add_run("long", "", 'x', 2 * page + 1);
}

/* Badblocks: "+N-N" for every integer input N of the sector range, and the
 * syntax around it. */
static void gen_badblocks(const struct spec *sp, enum iface iface)
{
	int first = ninputs, last, i;

	gen_int(sp->min, sp->max, 0, iface);
	last = ninputs;
	for (i = first; i < last; i++) {
		struct input *in = &inputs[i];
		char *buf = malloc(2 * in->len + 3);

		buf[0] = '+';
		memcpy(buf + 1, in->buf, in->len);
		buf[1 + in->len] = '-';
		memcpy(buf + 2 + in->len, in->buf, in->len);
		specific = in->specific;
		add_bytes(in->cls, buf, 2 * in->len + 2);
		free(buf);
		free(in->buf);
	}
	memmove(inputs + first, inputs + last, (ninputs - last) * sizeof(*inputs));
	ninputs -= last - first;
	specific = 0;
	add("bounds", "-1-1");
	add("bounds", "+2-1");
	add("bounds", "-2-1");
	add("bounds", "+0x10-0x20");
	add("base0", "+010-010");
	add("base0", "+08-08");
	add("sign", "++1-1");
	add("sign", "+1-+1");
	add("sign", "+-1-1");
	add("sign", "+1--1");
	add("sign", "1-1");
	add("sign", "*1-1");
	add("garbage", "+1");
	add("garbage", "+1-");
	add("garbage", "+-");
	add("garbage", "+1-1-1");
	add("garbage", "+1-1,+2-2");
	add("garbage", "+1:2");
	add("space", " +1-1 ");
	add("space", "\t+1-1\n");
	add("space", "+1-1\n\n");
	add("space", "\v+1-1");
	add("space", "+1-1\v");
	add("space", "\f+1-1\r");
	add("space", "+ 1-1");
	add("space", "+1 -1");
	add("space", "+1- 1");
}

/* The inputs of the classes asked for (all if none); only the `specific`
 * ones if "specific" is asked for. */
static void generate(const struct spec *sp, enum iface iface, char **classes, int nclasses)
{
	int i, n = 0, only_specific = 0;

	for (i = 0; i < nclasses; i++) {
		if (!strcmp(classes[i], "specific")) {
			only_specific = 1;
			classes[i--] = classes[--nclasses];
		}
	}
	switch (sp->kind) {
	case INT:
		gen_int(sp->min, sp->max, sp->pow2, iface);
		break;
	case CHOICE:
		gen_choice(sp);
		break;
	case BADBLOCKS:
		gen_badblocks(sp, iface);
		break;
	}
	for (i = 0; i < ninputs; i++) {
		if (wanted(inputs[i].cls, classes, nclasses) &&
		    (inputs[i].specific || !only_specific))
			inputs[n++] = inputs[i];
		else
			free(inputs[i].buf);
	}
	ninputs = n;
}

/* --- Helpers. --- */

static void escape(const char *buf, size_t len, char *out, size_t size)
{
	size_t i, o = 0;

	for (i = 0; i < len && o + 8 < size; i++) {
		unsigned char c = buf[i];

		if (o + 20 >= size || (i >= 24 && len > 32)) {
			o += snprintf(out + o, size - o, "...(%zu bytes)", len);
			break;
		}
		if (c == '\n')
			o += snprintf(out + o, size - o, "\\n");
		else if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = c;
		else
			o += snprintf(out + o, size - o, "\\x%02x", c);
	}
	out[o] = 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The contents of a file, its last newline dropped; NULL if unreadable. */
static char *slurp(const char *path)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap + 1);
	int fd = open(path, O_RDONLY);
	ssize_t r;

	if (fd < 0) {
		free(buf);
		return NULL;
	}
	while ((r = read(fd, buf + n, cap - n)) > 0)
		n += r;
	close(fd);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	if (n && buf[n - 1] == '\n')
		n--;
	buf[n] = 0;
	return buf;
}

/* A read-back of a choice shows every name, the chosen one in brackets. */
static char *chosen(char *shown)
{
	char *open = strchr(shown, '['), *close;

	if (open && (close = strchr(open, ']'))) {
		*close = 0;
		return open + 1;
	}
	return shown;
}

/* write(2) until all is written, as a shell's echo does: 0 or an errno. */
static int write_all(const char *path, const char *buf, size_t len)
{
	int fd = open(path, O_WRONLY), err = 0;
	size_t off = 0;

	if (fd < 0)
		return errno;
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0) {
			err = errno;
			break;
		}
		if (n == 0) {
			err = EIO;
			break;
		}
		off += n;
	}
	if (close(fd) && !err)
		err = errno;
	return err;
}

static int kmsg = -1;

/* Skip what the kernel log holds so far. */
static void kmsg_open(void)
{
	kmsg = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	if (kmsg < 0) {
		perror("hostile-input: /dev/kmsg");
		exit(2);
	}
	lseek(kmsg, 0, SEEK_END);
}

/*
 * The kernel log records since the last call that contain `label`; all
 * go to `first` (the first one's text) and `range_ok` (whether each names
 * the range). -1 if records were lost (overwritten before being read).
 */
static int kmsg_lines(const char *label, const struct spec *sp, char *first, size_t size,
		      int *range_ok)
{
	char rec[8192];
	int n = 0, lost = 0, i;

	*range_ok = 1;
	if (first)
		first[0] = 0;
	for (;;) {
		ssize_t r = read(kmsg, rec, sizeof(rec) - 1);
		char *msg, *end;

		if (r < 0 && errno == EPIPE) {
			lost = 1;
			continue;
		}
		if (r <= 0)
			break;
		rec[r] = 0;
		msg = strchr(rec, ';');
		if (!msg)
			continue;
		msg++;
		end = strchr(msg, '\n');
		if (end)
			*end = 0;
		if (!strstr(msg, label))
			continue;
		n++;
		if (first && !first[0])
			snprintf(first, size, "%s", msg);
		if (sp->kind == CHOICE) {
			for (i = 0; i < sp->nnames; i++)
				if (!strstr(msg, sp->names[i]))
					*range_ok = 0;
		} else if (!strstr(msg, sp->range_text)) {
			*range_ok = 0;
		}
	}
	return lost ? -1 : n;
}

static int tried, wrong, refusals, logged;

static void report(const char *check, const char *what, const struct input *in,
		   const char *fmt, ...)
{
	char esc[128];
	va_list ap;

	escape(in->buf, in->len, esc, sizeof(esc));
	printf("WRONG %s %s [%s] '%s': ", check, what, in->cls, esc);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	wrong++;
}

/*
 * The log checks of one refusal: at most one line naming `label`, naming
 * the range; exactly one for the first refusal of a setting.
 */
static void check_log(const char *what, const char *label, const struct spec *sp,
		      const struct input *in, int must_log)
{
	char line[512];
	int range_ok, n = kmsg_lines(label, sp, line, sizeof(line), &range_ok);

	if (n < 0) {
		report("log", what, in, "kernel log records lost (the log is flooded)");
		return;
	}
	logged += n > 0;
	if (n > 1)
		report("log", what, in, "%d lines naming %s for one refusal", n, label);
	if (n > 0 && !range_ok)
		report("log", what, in, "'%s' does not name the range (%s)", line,
		       sp->kind == CHOICE ? "the names" : sp->range_text);
	if (must_log && n == 0)
		report("log", what, in, "the first refusal logged no line naming %s", label);
}

/* The value `out` shows after the accepted write of `in`. */
static void expected_value(const struct spec *sp, const struct outcome *o, char *out,
			   size_t size)
{
	if (sp->kind == CHOICE)
		snprintf(out, size, "%s", sp->names[o->last.choice]);
	else
		snprintf(out, size, "%lld", o->last.v);
}

/* User nobody must not open `path` for writing. */
static void check_nobody(const char *path, const struct input *in)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int fd;

		if (setgid(NOBODY) || setuid(NOBODY))
			_exit(2);
		fd = open(path, O_WRONLY);
		_exit(fd >= 0 ? 1 : errno == EACCES ? 0 : 3);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
		report("nobody", path, in, "could not run as nobody");
		return;
	}
	if (WEXITSTATUS(status) == 1)
		report("nobody", path, in, "user nobody opened it for writing");
	else if (WEXITSTATUS(status) != 0)
		report("nobody", path, in, "the open as nobody failed, but not with EACCES");
}

static int run_file(const char *path, const char *label, const struct spec *sp)
{
	struct statfs fs;
	struct stat st;
	enum iface iface;
	char *initial, match[256];
	int i, first_refusal = 1;

	if (statfs(path, &fs) || stat(path, &st) || !(initial = slurp(path))) {
		fprintf(stderr, "hostile-input: %s: %s\n", path, strerror(errno));
		return 2;
	}
	/* A sysfs attribute's inode has a page's size, a bin attribute's its own (0). */
	iface = fs.f_type == CONFIGFS_MAGIC ? CONFIGFS : st.st_size ? ATTR : BIN;
	snprintf(match, sizeof(match), "%s:", label);
	kmsg_open();
	for (i = 0; i < ninputs; i++) {
		const struct input *in = &inputs[i];
		struct outcome o;
		char *before, *after, want[64];
		int err, dummy;

		tried++;
		if (!strcmp(in->cls, "nobody")) {
			check_nobody(path, in);
			continue;
		}
		o = simulate(sp, iface, in->buf, in->len);
		before = slurp(path);
		kmsg_lines(match, sp, NULL, 0, &dummy);
		err = write_all(path, in->buf, in->len);
		after = slurp(path);
		if (!before || !after) {
			fprintf(stderr, "hostile-input: %s became unreadable\n", path);
			return 2;
		}
		if (o.ok && err)
			report("verdict", label, in, "refused (%s), expected accepted", strerror(err));
		else if (!o.ok && !err)
			report("verdict", label, in, "accepted, expected refused");
		else if (err && err != EINVAL)
			report("errno", label, in, "refused with %s, not EINVAL", strerror(err));
		if (!o.ok) {
			refusals++;
			check_log(label, match, sp, in, o.logged && first_refusal);
			first_refusal &= !o.logged;
		}
		if (sp->kind == BADBLOCKS) {
			/* Accepted: the table changed ('+', a range not yet bad) and
			 * clearing the range gives the old table back. */
			if (o.changed && o.last.set) {
				char clear[64];

				if (!strcmp(after, before))
					report("value", label, in, "accepted, table unchanged");
				snprintf(clear, sizeof(clear), "-%lld-%lld", o.last.v, o.last.last);
				write_all(path, clear, strlen(clear));
				free(after);
				after = slurp(path);
			}
			if (strcmp(after, before))
				report("value", label, in, "table '%s', expected '%s'", after, before);
		} else if (o.changed) {
			expected_value(sp, &o, want, sizeof(want));
			if (strcmp(sp->kind == CHOICE ? chosen(after) : after, want))
				report("value", label, in, "reads '%s', expected '%s'", after, want);
		} else if (strcmp(after, before)) {
			report("value", label, in, "refused, but changed from '%s' to '%s'", before,
			       after);
		}
		free(before);
		free(after);
		/* Drop what the clean-up or a late line left. */
		kmsg_lines(match, sp, NULL, 0, &dummy);
	}
	if (sp->kind != BADBLOCKS) {
		char *value = sp->kind == CHOICE ? chosen(initial) : initial;

		if (write_all(path, value, strlen(value)))
			printf("WRONG restore %s: the initial '%s' refused\n", label, value);
	}
	free(initial);
	return 0;
}

static int init_module_(const void *image, size_t len, const char *args)
{
	return syscall(SYS_init_module, image, len, args);
}

static int delete_module_(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK);
}

static int run_param(const char *ko, const char *name, const struct spec *sp,
		     const char *base)
{
	char match[128], valpath[256];
	size_t len, cap = 1 << 20;
	char *image = malloc(cap);
	int fd = open(ko, O_RDONLY), i, first_refusal = 1;
	ssize_t r;

	if (fd < 0 || access("/sys/module/rnull", F_OK) == 0) {
		fprintf(stderr, "hostile-input: %s cannot be opened or rnull is loaded\n", ko);
		return 2;
	}
	for (len = 0; (r = read(fd, image + len, cap - len)) > 0;) {
		len += r;
		if (len == cap)
			image = realloc(image, cap *= 2);
	}
	close(fd);
	snprintf(match, sizeof(match), "parameter %s:", name);
	snprintf(valpath, sizeof(valpath), "/sys/module/rnull/parameters/%s", name);
	kmsg_open();
	for (i = 0; i < ninputs; i++) {
		const struct input *in = &inputs[i];
		struct outcome o = simulate(sp, PARAM, in->buf, in->len);
		char *args, want[64];
		int err, dummy;

		/* The kernel's argument parser passes neither a NUL nor a '"'
		 * inside quotes; there is nobody to refuse. */
		if (memchr(in->buf, 0, in->len) || memchr(in->buf, '"', in->len) ||
		    !strcmp(in->cls, "nobody"))
			continue;
		tried++;
		args = malloc(strlen(base) + strlen(name) + in->len + 8);
		sprintf(args, "%s %s=\"%s\"", base, name, in->buf);
		kmsg_lines(match, sp, NULL, 0, &dummy);
		err = init_module_(image, len, args) ? errno : 0;
		free(args);
		if (!err) {
			char *shown = slurp(valpath);

			if (!o.ok) {
				report("verdict", name, in, "loaded, expected refused");
			} else {
				expected_value(sp, &o, want, sizeof(want));
				if (!shown || strcmp(shown, want))
					report("value", name, in, "reads '%s', expected '%s'",
					       shown ? shown : "(none)", want);
			}
			free(shown);
			if (delete_module_("rnull")) {
				fprintf(stderr, "hostile-input: rmmod rnull: %s\n", strerror(errno));
				return 2;
			}
			continue;
		}
		if (o.ok)
			report("verdict", name, in, "load refused (%s), expected loaded",
			       strerror(err));
		else if (err != EINVAL)
			report("errno", name, in, "load refused with %s, not EINVAL", strerror(err));
		if (access("/sys/module/rnull", F_OK) == 0) {
			report("value", name, in, "a refused load left rnull loaded");
			delete_module_("rnull");
		}
		if (!o.ok) {
			refusals++;
			check_log(name, match, sp, in, first_refusal);
			first_refusal = 0;
		}
	}
	free(image);
	return 0;
}

static int run_flood(const char *path, const char *label, int count, const char *input)
{
	struct input in = { "flood", (char *)input, strlen(input), 0 };
	struct spec none = { .kind = INT };
	char match[256];
	double start = now(), secs;
	int i, n, dummy, allowed;

	snprintf(match, sizeof(match), "%s:", label);
	kmsg_open();
	for (i = 0; i < count; i++) {
		int err = write_all(path, input, strlen(input));

		tried++;
		if (err != EINVAL)
			report("verdict", label, &in, "%s, expected EINVAL",
			       err ? strerror(err) : "accepted");
	}
	secs = now() - start;
	n = kmsg_lines(match, &none, NULL, 0, &dummy);
	allowed = BURST * (1 + (int)(secs / INTERVAL_S));
	refusals += count;
	logged += n;
	if (n < 0)
		report("flood", label, &in, "%d refusals in %.1f s overran the kernel log", count,
		       secs);
	else if (n > allowed)
		report("flood", label, &in, "%d refusals in %.1f s logged %d lines naming it, "
		       "more than %d (%d per %.0f s)", count, secs, n, allowed, BURST, INTERVAL_S);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: hostile-input cases SPEC IFACE [CLASS...]\n"
		"       hostile-input file PATH LABEL SPEC [CLASS...]\n"
		"       hostile-input param KO NAME SPEC ARGS [CLASS...]\n"
		"       hostile-input flood PATH LABEL COUNT INPUT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct spec sp;
	int rc = 2, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2)
		usage();
	if (!strcmp(argv[1], "cases") && argc >= 4) {
		static const char *const names[] = { "attr", "bin", "configfs", "param" };
		enum iface iface;

		for (iface = 0; iface < 4 && strcmp(argv[3], names[iface]); iface++)
			;
		if (iface == 4)
			usage();
		parse_spec(argv[2], &sp);
		generate(&sp, iface, argv + 4, argc - 4);
		for (i = 0; i < ninputs; i++) {
			struct outcome o = simulate(&sp, iface, inputs[i].buf, inputs[i].len);
			char esc[128], want[64] = "";

			escape(inputs[i].buf, inputs[i].len, esc, sizeof(esc));
			if (o.changed && sp.kind != BADBLOCKS)
				expected_value(&sp, &o, want, sizeof(want));
			printf("%s\t'%s'\t%s %s\n", inputs[i].cls, esc,
			       o.ok ? "accepted" : "refused", want);
		}
		return 0;
	}
	if (!strcmp(argv[1], "file") && argc >= 5) {
		parse_spec(argv[4], &sp);
		generate(&sp, ATTR, argv + 5, argc - 5);
		add("nobody", "");
		if (!wanted("nobody", argv + 5, argc - 5))
			ninputs--;
		rc = run_file(argv[2], argv[3], &sp);
	} else if (!strcmp(argv[1], "param") && argc >= 6) {
		parse_spec(argv[4], &sp);
		generate(&sp, PARAM, argv + 6, argc - 6);
		rc = run_param(argv[2], argv[3], &sp, argv[5]);
	} else if (!strcmp(argv[1], "flood") && argc == 6) {
		rc = run_flood(argv[2], argv[3], atoi(argv[4]), argv[5]);
	} else {
		usage();
	}
	if (rc)
		return rc;
	printf("SUMMARY inputs=%d wrong=%d refusals=%d logged=%d\n", tried, wrong, refusals,
	       logged);
	return wrong ? 1 : 0;
}
