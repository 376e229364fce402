/* SPDX-License-Identifier: MIT
 * h_fs.c: GET .../profile_name/<name>/fs/<path>: raw download of a file inside a
 * profile directory (source_folder.tar.gz for the UI's source view, or a parquet
 * file). The path is checked lexically (no "..", ".", empty segment, trailing slash;
 * a %00 never gets here: dispatch.c), then resolved and required to stay inside the
 * resolved profile directory, so neither ".." nor a symlink can leave it (and a profile
 * holding a link is not served at all: profile_files.h). */
#include "common/compat.h"
#include "server/http.h"
#include "server/paths.h"
#include "common/fsutil.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *content_type(const char *path)
{
	size_t n = strlen(path);

	if (n > 3 && !strcmp(path + n - 3, ".gz"))
		return "application/gzip";
	if (n > 8 && !strcmp(path + n - 8, ".parquet"))
		return "application/vnd.apache.parquet";
	return "application/octet-stream";
}

enum MHD_Result nx__h_fs(struct nx_req *rq, char **cap)
{
	const char *rel = cap[2], *why = nx__path_check_rel(rel);
	enum MHD_Result ret = MHD_NO;
	struct nx_profile *p;
	char *full, *real = NULL;
	struct stat st;
	int fd = -1;

	/* the router drops one trailing slash from every path; here it would make a file
	 * name a directory */
	if (!why && rq->url[strlen(rq->url) - 1] == '/')
		why = "it ends with '/' (name a file)";
	if (why)
		return nx__reply_error(rq, 400, "bad_path", "invalid file path '%.200s': %s", rel,
				       why);
	p = nx__lookup_profile(rq, cap, false, &ret);
	if (!p)
		return ret;
	full = nx_path_join(p->dir, rel);
	if (access(full, F_OK) == 0) {
		real = nx__path_resolve_within(p->dir, full);
		if (!real) {
			ret = nx__reply_error(rq, 403, "forbidden",
					      "'%.200s' leads outside the profile directory", rel);
			goto out;
		}
	}
	if (real)
		fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ret = nx__reply_error(rq, 404, "not_found",
				      "profile '%s' has no file '%.200s' (the artifacts endpoint "
				      "lists what is there)", p->name, rel);
		goto out;
	}
	const char *base = strrchr(rel, '/');
	ret = nx__reply_fd(rq, fd, (uint64_t)st.st_size, content_type(rel), base ? base + 1 : rel);
	fd = -1; /* owned by the response now */
out:
	if (fd >= 0)
		close(fd);
	free(full);
	free(real);
	nx__reg_put(&rq->s->reg, p);
	return ret;
}
