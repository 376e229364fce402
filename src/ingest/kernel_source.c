/* SPDX-License-Identifier: MIT
 * kernel_source.c: the kernel sources a NEFF carries, stored as the profile's source
 * archive (see kernel_source.h; which archive wins over which: publish.c). */
#include "common/compat.h"
#include "ingest/kernel_source.h"
#include "common/fsutil.h"
#include "common/source_archive.h"
#include "common/xalloc.h"
#include "neff/tar.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int nx_kernel_source_store(const struct nx_neff_source *src, const char *dir,
			   const struct nx_progress *progress, struct nx_err *err)
{
	struct nx_targz *w = NULL;
	char *path, *msg;
	int fd, rc;

	if (src->problem) {
		msg = nx_xasprintf("the profile has no source archive from its NEFF: %s",
				   src->problem);
		struct nx_progress_event ev = { .kind = NX_PROGRESS_WARNING, .message = msg };
		nx_progress_emit(progress, &ev);
		free(msg);
	}
	if (!src->n)
		return 0;
	path = nx_path_join(dir, NX_SOURCE_ARCHIVE);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666)) < 0) {
		rc = nx_errf(err, -errno, "cannot create '%s': %s", path, strerror(errno));
		free(path);
		return rc;
	}
	rc = nx_targz_open_comment(&w, fd, path, NX_SOURCE_FROM_NEFF, err);
	for (size_t i = 0; i < src->n && !rc; i++)
		rc = nx_targz_add_mem(w, src->files[i].name, src->files[i].text, src->files[i].len,
				      err);
	if (rc && w)
		nx_targz_abort(w);
	else if (!rc)
		rc = nx_targz_close(w, NULL, err);
	if (close(fd) != 0 && !rc)
		rc = nx_errf(err, -errno, "cannot write '%s': %s", path, strerror(errno));
	if (rc)
		unlink(path);
	free(path);
	return rc;
}
