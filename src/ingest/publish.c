/* SPDX-License-Identifier: MIT
 * publish.c: atomic publication of a profile directory (or of an output directory).
 * The profile is built in a hidden temporary sibling; publishing swaps it in with one
 * rename (RENAME_EXCHANGE when a previous version exists), so readers see either the
 * old or the new profile, never a mix, and a failed or killed ingest leaves the old one
 * in place. Publications into a data path and `upload` hold the data path's lock while
 * they swap, so the source archive uploaded to the previous version is carried into the
 * new one (in place of the one its NEFF brought) and an upload lands in one version or
 * the other, never in a removed one.
 * Temporaries of ingests that were killed are removed by the next publication, which
 * finds them through the records each one leaves in NX_TMP_RECORDS beside them (so it
 * does not list the profiles: a data path may hold thousands), and by a server when it
 * starts, which lists them all (temporaries without a record included). A hook
 * (nx_publish_hook_run) may add to a profile's temporary directory before it is
 * published. */
#include "common/compat.h"
#include "ingest/ingest.h"
#include "common/fsutil.h"
#include "common/outpath.h"
#include "common/source_archive.h"
#include "common/xalloc.h"
#include "ingest/context.h" /* nx_now_s */

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The one rule for profile names (NX_NAME_RULE): every command checks it before any
 * work, so a name that is accepted is also reachable through the server's URLs (which
 * hide names holding '.tmp', the suffix of profiles still being written). */
int nx_check_display_name(const char *name, struct nx_err *err)
{
	size_t len = name ? strlen(name) : 0;

	if (!len)
		return nx_errf(err, NX_EUSAGE, "the display name is empty; use " NX_NAME_RULE);
	for (const char *p = name; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '-' || ch == '_' || ch == '.')
			continue;
		/* the name is not echoed: it may hold a newline or invalid UTF-8 */
		if (ch > 0x20 && ch < 0x7f)
			return nx_errf(err, NX_EUSAGE, "the display name contains '%c' (character %zu); "
				       "use " NX_NAME_RULE, ch, (size_t)(p - name) + 1);
		return nx_errf(err, NX_EUSAGE, "the display name contains byte 0x%02x (character %zu%s); "
			       "use " NX_NAME_RULE, ch, (size_t)(p - name) + 1,
			       ch == ' ' ? ", a space" : ch == '\t' ? ", a tab" : ch == '\n' ? ", a newline"
			       : ch >= 0x80 ? ", not ASCII" : "");
	}
	if (len > NX_NAME_MAX)
		return nx_errf(err, NX_EUSAGE, "the display name is %zu characters long; use at most %d",
			       len, NX_NAME_MAX);
	if (name[0] == '.')
		return nx_errf(err, NX_EUSAGE, "the display name '%s' starts with '.'; use " NX_NAME_RULE,
			       name);
	if (strstr(name, ".tmp"))
		return nx_errf(err, NX_EUSAGE, "the display name '%s' contains '.tmp', which marks "
			       "profiles still being written; use " NX_NAME_RULE, name);
	return 0;
}

char *nx_profile_dir(const char *data_path, const char *name)
{
	return nx_xasprintf("%s/profiles/global/%s@latest", data_path, name);
}

/* This host's name as it goes into temporary names: [A-Za-z0-9._-] only. */
static void host_tag(char *buf, size_t n)
{
	if (gethostname(buf, n) != 0)
		snprintf(buf, n, "localhost");
	buf[n - 1] = '\0';
	for (char *c = buf; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '-' || *c == '_'))
			*c = '_';
}

char *nx_profile_tmp(const char *data_path, const char *name)
{
	char host[64];

	host_tag(host, sizeof(host));
	return nx_xasprintf("%s/profiles/global/.%s@latest.tmp-%d@%s", data_path, name,
			    (int)getpid(), host);
}

/* Whether a temporary ".<name>@latest.tmp-<pid>[@<host>]..." belongs to a process that
 * has ended: on this host (or without a host: written before hosts were recorded) and
 * its process is gone. Another host's temporaries are never judged. */
static bool tmp_is_stale(const char *entry)
{
	const char *at = strstr(entry, "@latest.tmp-"), *s;
	char host[64];
	char *end;
	long pid;

	if (entry[0] != '.' || !at)
		return false;
	s = at + strlen("@latest.tmp-");
	errno = 0;
	pid = strtol(s, &end, 10);
	if (end == s || errno || pid <= 0 || pid > INT32_MAX)
		return false;
	if (*end == '@') {
		host_tag(host, sizeof(host));
		if (strcmp(end + 1, host))
			return false;
	} else if (*end) {
		return false;
	}
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes parent/entry when it is a temporary of an ended process (tmp_is_stale); 0 when
 * it is gone (or was never there). */
static int remove_if_stale(const char *parent, const char *entry)
{
	struct nx_err ignored = { 0 };
	char *p;
	int rc;

	if (!tmp_is_stale(entry))
		return -EBUSY;
	p = nx_path_join(parent, entry);
	rc = nx_remove_tree(p, &ignored);
	free(p);
	return rc;
}

void nx_remove_stale_tmp_all(const char *data_path)
{
	char *parent = nx_xasprintf("%s/profiles/global", data_path);
	DIR *dp = opendir(parent);
	struct dirent *de;

	while (dp && (de = readdir(dp)))
		remove_if_stale(parent, de->d_name);
	if (dp)
		closedir(dp);
	free(parent);
	nx_remove_stale_tmp(data_path); /* and the records of what went */
}

void nx_remove_stale_tmp(const char *data_path)
{
	char *parent = nx_xasprintf("%s/profiles/global", data_path);
	char *records = nx_path_join(parent, NX_TMP_RECORDS);
	DIR *dp = opendir(records);
	struct dirent *de;

	while (dp && (de = readdir(dp))) {
		/* a record goes with its temporary, or when that is not there */
		if (remove_if_stale(parent, de->d_name))
			continue;
		char *rec = nx_path_join(records, de->d_name);
		unlink(rec);
		free(rec);
	}
	if (dp)
		closedir(dp);
	free(records);
	free(parent);
}

/* records/<base name of tmp> */
static char *tmp_record(const char *data_path, const char *tmp)
{
	const char *base = strrchr(tmp, '/');

	return nx_xasprintf("%s/profiles/global/" NX_TMP_RECORDS "/%s", data_path,
			    base ? base + 1 : tmp);
}

void nx_profile_tmp_record(const char *data_path, const char *tmp)
{
	char *dir = nx_xasprintf("%s/profiles/global/" NX_TMP_RECORDS, data_path);
	char *rec = tmp_record(data_path, tmp);
	int fd;

	if (mkdir(dir, 0777) == 0 || errno == EEXIST) {
		fd = open(rec, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
		if (fd >= 0)
			close(fd);
	}
	free(dir);
	free(rec);
}

void nx_profile_tmp_forget(const char *data_path, const char *tmp)
{
	char *rec = tmp_record(data_path, tmp);
	struct stat st;

	if (lstat(tmp, &st) != 0 && errno == ENOENT)
		unlink(rec);
	free(rec);
}

int nx_profiles_lock(const char *data_path, int *fd, struct nx_err *err)
{
	char *dir = nx_xasprintf("%s/profiles/global", data_path);
	char *path = nx_path_join(dir, ".publish.lock");
	int rc = nx_mkdirs(dir, err);

	*fd = -1;
	if (!rc)
		rc = nx_lock_file(path, true, fd, err);
	free(dir);
	free(path);
	return rc;
}

void nx_profiles_unlock(int fd)
{
	if (fd >= 0)
		close(fd); /* releases the flock */
}

void nx_publish_plan(struct nx_publish_plan *p, const char *data_path, const char *name,
		     const char *output_dir)
{
	memset(p, 0, sizeof(*p));
	p->data_path = data_path ? nx_xstrdup(data_path) : NULL;
	if (output_dir) {
		char *dir = nx_dir_of(output_dir);
		const char *base = strrchr(output_dir, '/');

		p->final = nx_xstrdup(output_dir);
		p->parent = dir;
		p->tmp = nx_xasprintf("%s/.%s.tmp-%d", dir, base ? base + 1 : output_dir,
				      (int)getpid());
	} else {
		p->name = nx_xstrdup(name);
		p->final = nx_profile_dir(data_path, name);
		p->parent = nx_xasprintf("%s/profiles/global", data_path);
		p->tmp = nx_profile_tmp(data_path, name);
	}
}

int nx_publish_prepare(const struct nx_publish_plan *p, struct nx_err *err)
{
	int rc = 0;

	if (!p->name && !p->nested && (rc = nx_out_dir_check(p->final, p->data_path, err)))
		return rc;
	rc = nx_mkdirs(p->parent, err);
	if (!rc && p->name) {
		nx_remove_stale_tmp(p->data_path);
		nx_profile_tmp_record(p->data_path, p->tmp);
	}
	if (!rc)
		rc = nx_remove_tree(p->tmp, err);
	if (!rc)
		rc = nx_mkdirs(p->tmp, err);
	return rc;
}

void nx_publish_plan_release(struct nx_publish_plan *p)
{
	free(p->final);
	free(p->parent);
	free(p->tmp);
	free(p->name);
	free(p->data_path);
	memset(p, 0, sizeof(*p));
}

/* Puts tmp_dir in place of final_dir; the previous version, if any, is swapped to
 * tmp_dir and returned in *old (true) for the caller to remove. */
static int swap_in(const char *tmp_dir, const char *final_dir, bool *old, struct nx_err *err)
{
	*old = false;
	if (rename(tmp_dir, final_dir) == 0)
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY)
		return nx_errf(err, -errno, "cannot publish '%s' as '%s': %s", tmp_dir, final_dir,
			       strerror(errno));
	if (renameat2(AT_FDCWD, tmp_dir, AT_FDCWD, final_dir, RENAME_EXCHANGE) != 0)
		return nx_errf(err, -errno, "cannot replace '%s': %s", final_dir, strerror(errno));
	*old = true;
	return 0;
}

/* Removes the previous version (now at tmp_dir) after a swap; one that cannot be
 * removed is an error, naming where it stays. */
static int remove_old(const char *tmp_dir, const char *final_dir, struct nx_err *err)
{
	struct nx_err e = { 0 };

	if (!nx_remove_tree(tmp_dir, &e))
		return 0;
	return nx_errf(err, e.code, "'%s' is published, but its previous version could not be "
		       "removed and stays in '%s': %s", final_dir, tmp_dir, e.msg);
}

int nx_publish_dir(const char *tmp_dir, const char *final_dir, struct nx_err *err)
{
	bool old;
	int rc = swap_in(tmp_dir, final_dir, &old, err);

	return !rc && old ? remove_old(tmp_dir, final_dir, err) : rc;
}

/* The previous version's source archive, linked (or copied) into the new one, when the
 * user uploaded it: it replaces the one the new version's NEFF brought. One that came
 * from the previous version's NEFF goes with it. */
static int carry_source(const char *tmp_dir, const char *final_dir, struct nx_err *err)
{
	char *from = nx_path_join(final_dir, NX_SOURCE_ARCHIVE);
	char *to = nx_path_join(tmp_dir, NX_SOURCE_ARCHIVE);
	struct stat st;
	int rc = 0;

	if (lstat(from, &st) == 0 && S_ISREG(st.st_mode) && !nx_source_archive_from_neff(from)) {
		if (lstat(to, &st) == 0 && nx_source_archive_from_neff(to))
			unlink(to);
		if (lstat(to, &st) != 0 && link(from, to) != 0)
			rc = nx_copy_file(from, to, err);
	}
	if (rc)
		nx_err_wrap(err, "keeping the source attached to '%s'", final_dir);
	free(from);
	free(to);
	return rc;
}

int nx_publish_profile(const char *data_path, const char *name, const char *tmp_dir,
		       struct nx_err *err)
{
	char *final = nx_profile_dir(data_path, name);
	bool old = false;
	int fd, rc = nx_profiles_lock(data_path, &fd, err);

	if (!rc)
		rc = carry_source(tmp_dir, final, err);
	if (!rc)
		rc = swap_in(tmp_dir, final, &old, err);
	nx_profiles_unlock(fd);
	if (!rc && old)
		rc = remove_old(tmp_dir, final, err);
	free(final);
	return rc;
}

void nx_publish_hook_run(const struct nx_publish_hook *hook, const struct nx_publish_plan *p,
			 void *job, const struct nx_progress *progress)
{
	struct nx_progress_event ev = { .kind = NX_PROGRESS_TABLE, .stage = "publish" };
	struct nx_err err = { 0 };
	double t0 = nx_now_s();
	char *msg;
	int rc;

	if (!hook || !hook->fn || !p->name)
		return;
	if (job)
		rc = hook->finish(job, &ev.rows, &err);
	else
		rc = hook->fn(hook->user, p->tmp, p->name, &ev.rows, &err);
	if (!rc) {
		ev.table = hook->what;
		ev.seconds = nx_now_s() - t0;
		nx_progress_emit(progress, &ev);
		return;
	}
	msg = nx_xasprintf("the profile is published without its %s: %s", hook->what, err.msg);
	ev = (struct nx_progress_event){ .kind = NX_PROGRESS_WARNING, .message = msg };
	nx_progress_emit(progress, &ev);
	free(msg);
}

int nx_publish(const struct nx_publish_plan *p, struct nx_err *err)
{
	int rc;

	if (p->name) {
		rc = nx_publish_profile(p->data_path, p->name, p->tmp, err);
		nx_profile_tmp_forget(p->data_path, p->tmp);
		return rc;
	}
	if (p->nested)
		return nx_publish_dir(p->tmp, p->final, err);
	/* an output directory: checked again (it may have changed while we worked), marked */
	if ((rc = nx_out_dir_check(p->final, p->data_path, err)) ||
	    (rc = nx_out_dir_mark(p->tmp, err)))
		return rc;
	return nx_publish_dir(p->tmp, p->final, err);
}
