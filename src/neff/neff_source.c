/* SPDX-License-Identifier: MIT
 * neff_source.c: the kernel sources a NEFF carries (kernel_source/<name>, see neff.h): the
 * one rule for their names and sizes, their members read and written. */
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

int nx_neff_source_check_all(const struct nx_neff_source *src, struct nx_err *err)
{
	size_t total = 0;
	int rc;

	if (src->n > NX_NEFF_SOURCE_FILES_MAX)
		return nx_errf(err, NX_EUSAGE, "%zu kernel sources; a NEFF carries at most %d",
			       src->n, NX_NEFF_SOURCE_FILES_MAX);
	for (size_t i = 0; i < src->n; i++) {
		const struct nx_neff_source_file *f = &src->files[i];

		if ((rc = nx_neff_source_check(f->name, f->len, err)))
			return rc;
		for (size_t j = 0; j < i; j++)
			if (!strcmp(src->files[j].name, f->name))
				return nx_errf(err, NX_EUSAGE, "two kernel sources are named '%s'",
					       f->name);
		total += f->len;
	}
	if (total > NX_NEFF_SOURCE_MAX)
		return nx_errf(err, NX_EUSAGE, "the kernel sources are %.1f MiB in all; a NEFF "
			       "carries at most " NX_NEFF_SOURCE_MAX_TEXT, (double)total / (1 << 20));
	return 0;
}

void nx_neff_source_add(struct nx_neff_source *src, char *name, uint8_t *text, size_t len)
{
	src->files = nx_xrealloc(src->files, (src->n + 1) * sizeof(*src->files));
	src->files[src->n++] = (struct nx_neff_source_file){ name, text, len };
}

/* The member's name below kernel_source/ (also written "./kernel_source/"), or NULL. */
static const char *source_name(const char *member)
{
	static const size_t dlen = sizeof(NX_NEFF_SOURCE_DIR) - 1;

	if (!strncmp(member, "./", 2))
		member += 2;
	return strncmp(member, NX_NEFF_SOURCE_DIR, dlen) ? NULL : member + dlen;
}

static void release_files(struct nx_neff_source *src)
{
	for (size_t i = 0; i < src->n; i++) {
		free(src->files[i].name);
		free(src->files[i].text);
	}
	free(src->files);
	src->files = NULL;
	src->n = 0;
}

void nx_neff_source_read(const char *file, const struct nx_tar *tar,
			 struct nx_neff_source *src)
{
	struct nx_err err = { 0 };
	size_t count = 0, total = 0;
	uint8_t *text;

	/* first the names and sizes, so that a NEFF of many or large members costs nothing */
	for (size_t i = 0; i < tar->n; i++) {
		const struct nx_tar_entry *e = &tar->ents[i];
		const char *name = source_name(e->name);

		if (!name)
			continue;
		if (nx_neff_source_check(name, e->size, &err)) {
			src->problem = nx_xasprintf("%s: member '%s': %s", file, e->name, err.msg);
			return;
		}
		count++;
		total += e->size;
	}
	if (count > NX_NEFF_SOURCE_FILES_MAX || total > NX_NEFF_SOURCE_MAX) {
		src->problem = nx_xasprintf("%s: %zu kernel sources of %.1f MiB in all; a NEFF "
					    "carries at most %d, of " NX_NEFF_SOURCE_MAX_TEXT,
					    file, count, (double)total / (1 << 20),
					    NX_NEFF_SOURCE_FILES_MAX);
		return;
	}
	for (size_t i = 0; i < tar->n; i++) {
		const struct nx_tar_entry *e = &tar->ents[i];
		const char *name = source_name(e->name);

		if (!name)
			continue;
		text = nx_xmalloc(e->size + 1);
		memcpy(text, e->data, e->size);
		text[e->size] = '\0';
		nx_neff_source_add(src, nx_xstrdup(name), text, e->size);
	}
	if (nx_neff_source_check_all(src, &err)) { /* two of one name */
		src->problem = nx_xasprintf("%s: %s", file, err.msg);
		release_files(src);
	}
}

int nx_neff_source_write(struct nx_strbuf *tar, const struct nx_neff_source *src,
			 struct nx_err *err)
{
	char member[sizeof(NX_NEFF_SOURCE_DIR) + NX_NEFF_SOURCE_NAME_MAX];
	int rc;

	if ((rc = nx_neff_source_check_all(src, err)))
		return rc;
	for (size_t i = 0; i < src->n && !rc; i++) {
		snprintf(member, sizeof(member), NX_NEFF_SOURCE_DIR "%s", src->files[i].name);
		rc = nx_tar_add(tar, member, src->files[i].text, src->files[i].len, err);
	}
	return rc;
}

void nx_neff_source_release(struct nx_neff_source *src)
{
	release_files(src);
	free(src->problem);
	memset(src, 0, sizeof(*src));
}
