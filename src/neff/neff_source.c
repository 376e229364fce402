/* SPDX-License-Identifier: MIT
 * neff_source.c: the kernel source a NEFF carries (kernel_source/<name>, see neff.h): the
 * one rule for its name and size, its member read and written. */
#include "common/compat.h"
#include "neff/neff_source.h"
#include "common/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nx_neff_source_check(const char *name, uint64_t len, struct nx_err *err)
{
	size_t n = strlen(name);

	if (!n || !strcmp(name, ".") || !strcmp(name, ".."))
		return nx_errf(err, NX_EUSAGE, "a kernel source's name must be a file name, not "
			       "'%s'", name);
	if (n > NX_NEFF_SOURCE_NAME_MAX)
		return nx_errf(err, NX_EUSAGE, "the kernel source's name is %zu bytes long; a NEFF "
			       "takes at most %zu", n, (size_t)NX_NEFF_SOURCE_NAME_MAX);
	for (const char *p = name; *p; p++)
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			return nx_errf(err, NX_EUSAGE, "the kernel source's name holds %s (byte "
				       "%zu): a file name without directories is expected",
				       *p == '/' ? "'/'" : "a control character",
				       (size_t)(p - name) + 1);
	if (len > NX_NEFF_SOURCE_MAX)
		return nx_errf(err, NX_EUSAGE, "the kernel source '%s' is %.1f MiB; a NEFF carries "
			       "at most " NX_NEFF_SOURCE_MAX_TEXT, name, (double)len / (1 << 20));
	return 0;
}

/* The member's name below kernel_source/ (also written "./kernel_source/"), or NULL. */
static const char *source_name(const char *member)
{
	static const size_t dlen = sizeof(NX_NEFF_SOURCE_DIR) - 1;

	if (!strncmp(member, "./", 2))
		member += 2;
	return strncmp(member, NX_NEFF_SOURCE_DIR, dlen) ? NULL : member + dlen;
}

void nx_neff_source_read(const char *file, const struct nx_tar *tar,
			 struct nx_neff_source *src)
{
	const struct nx_tar_entry *e = NULL;
	struct nx_err err = { 0 };
	size_t count = 0;

	for (size_t i = 0; i < tar->n; i++)
		if (source_name(tar->ents[i].name) && !count++)
			e = &tar->ents[i];
	if (!e)
		return;
	if (count > 1) {
		src->problem = nx_xasprintf("%s: it holds %zu " NX_NEFF_SOURCE_DIR " members; a "
					    "NEFF carries one kernel source", file, count);
		return;
	}
	if (nx_neff_source_check(source_name(e->name), e->size, &err)) {
		src->problem = nx_xasprintf("%s: member '%s': %s", file, e->name, err.msg);
		return;
	}
	src->name = nx_xstrdup(source_name(e->name));
	src->len = e->size;
	src->text = nx_xmalloc(e->size + 1);
	memcpy(src->text, e->data, e->size);
	src->text[e->size] = '\0';
}

int nx_neff_source_write(struct nx_strbuf *tar, const struct nx_neff_source *src,
			 struct nx_err *err)
{
	char member[sizeof(NX_NEFF_SOURCE_DIR) + NX_NEFF_SOURCE_NAME_MAX];
	int rc;

	if (!src->name)
		return 0;
	if ((rc = nx_neff_source_check(src->name, src->len, err)))
		return rc;
	snprintf(member, sizeof(member), NX_NEFF_SOURCE_DIR "%s", src->name);
	return nx_tar_add(tar, member, src->text, src->len, err);
}

void nx_neff_source_release(struct nx_neff_source *src)
{
	free(src->name);
	free(src->text);
	free(src->problem);
	memset(src, 0, sizeof(*src));
}
