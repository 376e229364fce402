/* SPDX-License-Identifier: MIT
 * paths.c: data-path confinement checks (see paths.h). */
#include "common/compat.h"
#include "server/paths.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool has_ctl(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

const char *nx__path_check_name(const char *name)
{
	size_t n = strlen(name);

	if (!n)
		return "the profile name is empty";
	if (n > 200)
		return "the profile name is longer than 200 bytes";
	if (has_ctl(name))
		return "the profile name contains control characters";
	if (strchr(name, '/') || strchr(name, '\\'))
		return "the profile name contains a path separator";
	if (name[0] == '.')
		return "profile names cannot start with '.'";
	if (strstr(name, ".tmp"))
		return "names containing '.tmp' belong to profiles still being ingested";
	return NULL;
}

const char *nx__path_check_rel(const char *rel)
{
	const char *seg = rel;

	if (!*rel)
		return "the file path is empty";
	if (rel[0] == '/')
		return "absolute paths are not allowed";
	if (has_ctl(rel) || strchr(rel, '\\'))
		return "the file path contains control characters or backslashes";
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t len = end ? (size_t)(end - seg) : strlen(seg);

		if (len == 0)
			return "the file path contains an empty segment";
		if ((len == 1 && seg[0] == '.') || (len == 2 && seg[0] == '.' && seg[1] == '.'))
			return "'.' and '..' are not allowed in file paths";
		if (!end)
			break;
		seg = end + 1;
	}
	return NULL;
}

char *nx__path_resolve_within(const char *base_real, const char *path)
{
	char *r = realpath(path, NULL);
	size_t bl = strlen(base_real);

	if (!r)
		return NULL;
	if (!strncmp(r, base_real, bl) && (r[bl] == '\0' || r[bl] == '/' ||
					  (bl && base_real[bl - 1] == '/')))
		return r;
	free(r);
	return NULL;
}

bool nx__path_in_progress(const char *entry)
{
	return entry[0] == '.' || strstr(entry, ".tmp") != NULL;
}
