/* SPDX-License-Identifier: MIT
 * listing_parse.c: parsers for the operand syntax of kernel listings: access
 * patterns, semaphore waits and signals, and the two sides of a DMA descriptor
 * (docs/formats/listing.md). Each reports "file:line: problem" through the state. */
#include "common/compat.h"
#include "kernels/listing_int.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nx__asm_fail(struct asm_state *st, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return nx_errf(st->err, NX_EUSAGE, "%s:%d: %s", st->fname, st->line, msg);
}

int nx__asm_u64(struct asm_state *st, const char *s, uint64_t *v, const char *what)
{
	char *end;

	if (!*s || *s == '-')
		return nx__asm_fail(st, "bad %s '%s'", what, s);
	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno || *end)
		return nx__asm_fail(st, "bad %s '%s'", what, s);
	return 0;
}

/* A cursor over one token. */
struct cur {
	const char *p;
	const char *tok;
};

static bool num(struct cur *c, uint64_t *v)
{
	char *end;

	while (*c->p == ' ')
		c->p++;
	if (!isdigit((unsigned char)*c->p))
		return false;
	*v = strtoull(c->p, &end, 0);
	c->p = end;
	while (*c->p == ' ')
		c->p++;
	return true;
}

static bool snum(struct cur *c, int64_t *v)
{
	bool neg = false;
	uint64_t u;

	while (*c->p == ' ')
		c->p++;
	if (*c->p == '-') {
		neg = true;
		c->p++;
	}
	if (!num(c, &u))
		return false;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return true;
}

static bool lit(struct cur *c, char ch)
{
	if (*c->p != ch)
		return false;
	c->p++;
	return true;
}

static size_t ident(struct cur *c, char *buf, size_t len)
{
	size_t n = 0;

	while (isalnum((unsigned char)*c->p) || *c->p == '_' || *c->p == '.') {
		if (n + 1 < len)
			buf[n++] = *c->p;
		c->p++;
	}
	buf[n] = '\0';
	return n;
}

/* "sbuf[p0:p1]" or "psum[p0:p1]", then an optional "+offset". */
static int chip_head(struct asm_state *st, struct cur *c, int *mem, unsigned *p0,
		     unsigned *np, uint64_t *off)
{
	char name[16];
	uint64_t a, b;

	ident(c, name, sizeof(name));
	if (!strcmp(name, "sbuf"))
		*mem = NX_MEM_SBUF;
	else if (!strcmp(name, "psum"))
		*mem = NX_MEM_PSUM;
	else
		return nx__asm_fail(st, "bad operand '%s': memory must be sbuf or psum", c->tok);
	if (!lit(c, '[') || !num(c, &a) || !lit(c, ':') || !num(c, &b) || !lit(c, ']'))
		return nx__asm_fail(st, "bad operand '%s': expected %s[P0:P1]", c->tok, name);
	if (b <= a || b > NX_NUM_PARTITIONS)
		return nx__asm_fail(st, "bad operand '%s': partitions %" PRIu64 ":%" PRIu64
				    " are outside 0:%u", c->tok, a, b, NX_NUM_PARTITIONS);
	*p0 = (unsigned)a;
	*np = (unsigned)(b - a);
	*off = 0;
	if (lit(c, '+') && !num(c, off))
		return nx__asm_fail(st, "bad operand '%s': bad offset", c->tok);
	return 0;
}

static int dtype_of(struct asm_state *st, struct cur *c, int *dt)
{
	char name[32];

	ident(c, name, sizeof(name));
	*dt = nx_dtype_parse(name);
	if (*dt < 0)
		return nx__asm_fail(st, "bad operand '%s': unknown dtype '%s'", c->tok, name);
	return 0;
}

/* "[N0,N1,...]" or "{S0,S1,...}": 1 to NX_AP_DIMS numbers (signed when `sign`). */
static int num_list(struct cur *c, char open, char close, bool sign, int64_t *v, unsigned *n)
{
	*n = 0;
	if (!lit(c, open))
		return -1;
	do {
		uint64_t u;

		if (*n == NX_AP_DIMS)
			return -1;
		if (sign ? !snum(c, &v[*n]) : !num(c, &u))
			return -1;
		if (!sign)
			v[*n] = u > INT64_MAX ? INT64_MAX : (int64_t)u;
		(*n)++;
	} while (lit(c, ','));
	return lit(c, close) ? 0 : -1;
}

int nx__asm_ap(struct asm_state *st, const char *s, struct nx_ap *ap)
{
	struct cur c = { s, s };
	int64_t size[NX_AP_DIMS], step[NX_AP_DIMS];
	uint64_t off, dense = 1;
	unsigned p0, np, nd, ns;
	int mem, dt, rc;

	memset(ap, 0, sizeof(*ap));
	if ((rc = chip_head(st, &c, &mem, &p0, &np, &off)))
		return rc;
	if (!lit(&c, ':'))
		return nx__asm_fail(st, "bad operand '%s': expected ':dtype[size]'", s);
	if ((rc = dtype_of(st, &c, &dt)))
		return rc;
	if (num_list(&c, '[', ']', false, size, &nd))
		return nx__asm_fail(st, "bad operand '%s': expected [size0,...] (1 to %u sizes, "
				    "innermost first)", s, NX_AP_DIMS);
	for (unsigned k = 0; k < nd; k++)
		if (size[k] < 1 || size[k] > UINT32_MAX)
			return nx__asm_fail(st, "bad operand '%s': sizes must be 1..2^32-1", s);
	if (off > UINT32_MAX)
		return nx__asm_fail(st, "bad operand '%s': offset must be below 2^32", s);
	ap->mem = (uint8_t)mem;
	ap->dtype = (uint8_t)dt;
	ap->start_partition = (uint8_t)p0;
	ap->num_partitions = (uint8_t)(np - 1);
	ap->offset = (uint32_t)off;
	/* dense row-major steps by default; a 1-D pattern keeps size[1] = 1, step[1] = size0 */
	ap->size[1] = 1;
	for (unsigned k = 0; k < (nd > 2 ? nd : 2); k++) {
		if (k < nd)
			ap->size[k] = (uint32_t)size[k];
		ap->step[k] = dense > INT32_MAX ? INT32_MAX : (int32_t)dense;
		if (k < nd)
			dense *= (uint64_t)size[k];
	}
	if (nd == 1)
		ap->step[1] = (int32_t)(size[0] > INT32_MAX ? INT32_MAX : size[0]);
	if (*c.p == '{') {
		/* one step per size; a 1-D pattern may also give the old two steps */
		if (num_list(&c, '{', '}', true, step, &ns) || (ns != nd && !(nd == 1 && ns == 2)))
			return nx__asm_fail(st, "bad operand '%s': expected {step0,...} with one "
					    "step per size (%u)", s, nd);
		for (unsigned k = 0; k < ns; k++) {
			if (step[k] < INT32_MIN || step[k] > INT32_MAX)
				return nx__asm_fail(st, "bad operand '%s': step %" PRId64
						    " is out of range", s, step[k]);
			ap->step[k] = (int32_t)step[k];
		}
	}
	if (*c.p)
		return nx__asm_fail(st, "bad operand '%s': unexpected '%s'", s, c.p);
	return 0;
}

static int sem_head(struct asm_state *st, struct cur *c, uint16_t *sem)
{
	uint64_t v;

	if (!lit(c, 'S') || !lit(c, '[') || !num(c, &v) || !lit(c, ']'))
		return nx__asm_fail(st, "bad semaphore '%s': expected S[N]", c->tok);
	if (v >= NX_NUM_SEMAPHORES)
		return nx__asm_fail(st, "bad semaphore '%s': index must be 0..%u", c->tok,
				    NX_NUM_SEMAPHORES - 1);
	*sem = (uint16_t)v;
	return 0;
}

int nx__asm_wait(struct asm_state *st, const char *s, struct nx_inst *in)
{
	struct cur c = { s, s };
	uint64_t v;
	int rc;

	if ((rc = sem_head(st, &c, &in->wait_sem)))
		return rc;
	if (lit(&c, '>') && lit(&c, '='))
		in->wait_cond = NX_WAIT_GE;
	else if (lit(&c, '=') && lit(&c, '='))
		in->wait_cond = NX_WAIT_EQ;
	else
		return nx__asm_fail(st, "bad wait '%s': expected S[N]>=V or S[N]==V", s);
	if (!num(&c, &v) || *c.p || v > UINT32_MAX)
		return nx__asm_fail(st, "bad wait '%s': bad value", s);
	in->wait_value = (uint32_t)v;
	return 0;
}

int nx__asm_sig(struct asm_state *st, const char *s, struct nx_inst *in)
{
	struct cur c = { s, s };
	uint64_t v = 0;
	int rc;

	if ((rc = sem_head(st, &c, &in->sig_sem)))
		return rc;
	if (!strcmp(c.p, "++")) {
		in->sig_op = NX_SEM_INC;
		c.p += 2;
	} else if (!strcmp(c.p, "--")) {
		in->sig_op = NX_SEM_DEC;
		c.p += 2;
	} else if (lit(&c, '+') && lit(&c, '=')) {
		in->sig_op = NX_SEM_ADD;
	} else if (lit(&c, '-') && lit(&c, '=')) {
		in->sig_op = NX_SEM_SUB;
	} else if (lit(&c, '=')) {
		in->sig_op = NX_SEM_SET;
	} else {
		return nx__asm_fail(st, "bad signal '%s': expected S[N]++, --, +=V, -=V or =V", s);
	}
	if (in->sig_op >= NX_SEM_ADD && (!num(&c, &v) || v > UINT32_MAX))
		return nx__asm_fail(st, "bad signal '%s': bad value", s);
	if (*c.p)
		return nx__asm_fail(st, "bad signal '%s': unexpected '%s'", s, c.p);
	in->sig_value = (uint32_t)v;
	return 0;
}

/* One side of a descriptor into d (side 0 = from, 1 = to). *elems and *dt are set by
 * an HBM side or a typed chip side; chip sides fill sizes later (fix_chip). */
struct side {
	bool chip;
	int mem;
	unsigned p0, np;
	uint64_t off;
	int dtype;          /* -1 unless known */
	uint64_t elems;     /* 0 unless known */
	int var;
	unsigned ndim;
	uint64_t sizes[4];
	int64_t steps[4];
};

static int hbm_side(struct asm_state *st, struct cur *c, struct side *sd)
{
	char name[128];
	const struct nx_tensor *t;
	uint64_t stride[8], total = 1, n;
	unsigned d = 0;

	ident(c, name, sizeof(name));
	sd->var = asm_sym_get(&st->tensors, name);
	if (sd->var < 0)
		return nx__asm_fail(st, "descriptor names unknown tensor '%s'", name);
	t = &st->neff->tensors[sd->var];
	stride[t->rank ? t->rank - 1 : 0] = 1;
	for (int k = (int)t->rank - 2; k >= 0; k--)
		stride[k] = stride[k + 1] * t->shape[k + 1];
	sd->dtype = t->dtype;
	sd->off = 0;
	if (!lit(c, '['))
		return nx__asm_fail(st, "bad descriptor side '%s': expected %s[slices]", c->tok, name);
	for (d = 0; d < t->rank; d++) {
		uint64_t a, b, step = 1;

		if (!num(c, &a))
			return nx__asm_fail(st, "bad descriptor side '%s': bad slice %u", c->tok, d);
		b = a + 1;
		if (lit(c, ':') && (!num(c, &b) || (lit(c, ':') && !num(c, &step))))
			return nx__asm_fail(st, "bad descriptor side '%s': bad slice %u", c->tok, d);
		if (b <= a || b > t->shape[d] || !step)
			return nx__asm_fail(st, "descriptor slice %u of '%s' (%" PRIu64 ":%" PRIu64
					    ") is outside 0:%" PRIu64, d, name, a, b, t->shape[d]);
		sd->off += a * stride[d];
		n = (b - a + step - 1) / step;
		total *= n;
		/* a dim of one element only moves the offset: the first dim of more than one
		 * element maps to the partitions, and up to 4 such dims are taken */
		if (n > 1 || (d + 1 == t->rank && !sd->ndim)) {
			if (sd->ndim == 4)
				return nx__asm_fail(st, "descriptor side '%s' slices more than 4 dims of "
						    "'%s'", c->tok, name);
			sd->sizes[sd->ndim] = n;
			sd->steps[sd->ndim] = (int64_t)(stride[d] * step);
			sd->ndim++;
		}
		if (d + 1 < t->rank && !lit(c, ','))
			return nx__asm_fail(st, "descriptor side '%s' needs %u slices", c->tok, t->rank);
	}
	if (!lit(c, ']') || *c->p)
		return nx__asm_fail(st, "bad descriptor side '%s': expected ']' after %u slices",
				    c->tok, t->rank);
	sd->elems = total;
	return 0;
}

static int parse_side(struct asm_state *st, const char *s, struct side *sd)
{
	struct cur c = { s, s };
	int rc;

	memset(sd, 0, sizeof(*sd));
	sd->dtype = -1;
	sd->var = -1;
	if (strncmp(s, "sbuf[", 5) && strncmp(s, "psum[", 5))
		return hbm_side(st, &c, sd);
	sd->chip = true;
	if ((rc = chip_head(st, &c, &sd->mem, &sd->p0, &sd->np, &sd->off)))
		return rc;
	if (lit(&c, ':')) {
		uint64_t n;

		if ((rc = dtype_of(st, &c, &sd->dtype)))
			return rc;
		/* the count may be left out (a cast destination takes its source's) */
		if (*c.p && (!lit(&c, '[') || !num(&c, &n) || !lit(&c, ']') || !n))
			return nx__asm_fail(st, "bad descriptor side '%s': expected :dtype[N] or "
					    ":dtype", s);
		if (c.p[-1] == ']')
			sd->elems = n * sd->np;
	}
	if (*c.p)
		return nx__asm_fail(st, "bad descriptor side '%s': unexpected '%s'", s, c.p);
	return 0;
}

static void store(const struct side *sd, uint64_t elems, int *loc, int *var, uint64_t *off,
		  unsigned *ndim, uint64_t *sizes, int64_t *steps, unsigned *sp)
{
	*var = sd->var;
	*off = sd->off;
	*sp = 0;
	if (!sd->chip) {
		*loc = NX_LOC_HBM;
		*ndim = sd->ndim;
		for (unsigned k = 0; k < sd->ndim; k++) {
			sizes[k] = sd->sizes[k];
			steps[k] = sd->steps[k];
		}
		return;
	}
	*loc = sd->mem == NX_MEM_SBUF ? NX_LOC_SBUF : NX_LOC_PSUM;
	*ndim = 2;
	sizes[0] = sd->np;
	sizes[1] = elems / sd->np;
	steps[0] = 1;
	steps[1] = 1;
	*sp = sd->p0;
}

/* The HBM side's dimension that maps to the on-chip side's partitions: the first, or
 * the last for a DMA transpose. */
static uint64_t part_dim(const struct side *hbm, bool transpose)
{
	return hbm->sizes[transpose ? hbm->ndim - 1 : 0];
}

int nx__asm_desc(struct asm_state *st, const char *src, const char *dst, bool transpose,
		 struct nx_dma_desc *d)
{
	struct side a, b;
	uint64_t elems;
	int dt, to, rc;

	if ((rc = parse_side(st, src, &a)) || (rc = parse_side(st, dst, &b)))
		return rc;
	elems = a.elems ? a.elems : b.elems;
	dt = a.dtype >= 0 ? a.dtype : b.dtype;
	to = b.dtype >= 0 ? b.dtype : dt;
	if (!elems || dt < 0)
		return nx__asm_fail(st, "descriptor between two on-chip sides needs ':dtype[N]' on "
				    "its source");
	if (a.elems && b.elems && a.elems != b.elems)
		return nx__asm_fail(st, "descriptor sides differ in size (%" PRIu64 " vs %" PRIu64
				    " elements)", a.elems, b.elems);
	if ((a.chip && !b.chip && part_dim(&b, transpose) != a.np && a.np != 1) ||
	    (b.chip && !a.chip && part_dim(&a, transpose) != b.np && b.np != 1))
		return nx__asm_fail(st, "the %s HBM dimension (%" PRIu64 ") must match the %u "
				    "partitions", transpose ? "last" : "outer",
				    a.chip ? part_dim(&b, transpose) : part_dim(&a, transpose),
				    a.chip ? a.np : b.np);
	if ((a.chip && elems % a.np) || (b.chip && elems % b.np))
		return nx__asm_fail(st, "%" PRIu64 " elements do not split evenly over the "
				    "partitions", elems);
	if (transpose && (nx_dtype_size(dt) != 2 || to != dt))
		return nx__asm_fail(st, "a DMA transpose moves 2-byte elements without a cast "
				    "(here %s to %s)", nx_dtype_name(dt), nx_dtype_name(to));
	memset(d, 0, sizeof(*d));
	store(&a, elems, &d->from_loc, &d->from_var, &d->from_off, &d->from_ndim, d->from_sizes,
	      d->from_steps, &d->from_start_partition);
	store(&b, elems, &d->to_loc, &d->to_var, &d->to_off, &d->to_ndim, d->to_sizes, d->to_steps,
	      &d->to_start_partition);
	d->dtype = dt;
	d->to_dtype = to;
	d->cast = to != dt;
	d->transpose = transpose;
	d->bytes = elems * nx_dtype_size(dt);
	return 0;
}
