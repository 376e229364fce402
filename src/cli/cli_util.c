/* SPDX-License-Identifier: MIT
 * cli_util.c: argument checks shared by the subcommands (see cli_util.h). */
#include "common/compat.h"
#include "cli/cli_util.h"
#include "cli/cli_opts.h"
#include "cli/commands.h"
#include "common/fsutil.h"
#include "common/outpath.h"
#include "common/xalloc.h"
#include "ingest/ingest.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int nx_cli_bad_option(const char *cmd, int c, char *const *argv)
{
	char shortopt[3] = { '-', (char)optopt, '\0' };
	const char *opt = optopt ? shortopt : argv[optind - 1];

	if (c == ':')
		nx_cli_error(cmd, "option '%s' needs a value", opt);
	else
		nx_cli_error(cmd, "unknown option '%s'", opt);
	nx_cli_usage(stderr, "try 'neuron-explorer %s --help'\n", cmd);
	return NX_EXIT_USAGE;
}

int nx_cli_uint(const char *cmd, const char *flag, const char *arg, unsigned long long min,
		unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (arg[0] < '0' || arg[0] > '9')
		goto bad;
	errno = 0;
	v = strtoull(arg, &end, 10);
	if (*end || errno == ERANGE || v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	nx_cli_error(cmd, "%s needs a whole number from %llu to %llu, not '%s'", flag, min, max,
		     arg);
	return -1;
}

int nx_cli_name(const char *cmd, const char *name)
{
	struct nx_err err = { 0 };

	if (!nx_check_display_name(name, &err))
		return 0;
	nx_cli_error(cmd, "%s", err.msg);
	return -1;
}

char *nx_cli_default_name(const char *path)
{
	char *p = nx_xstrdup(path);
	size_t len = strlen(p);
	while (len > 1 && p[len - 1] == '/')
		p[--len] = '\0';
	const char *base = strrchr(p, '/');
	base = base ? base + 1 : p;
	const char *dot = strchr(base, '.');
	char *name = nx_xstrndup(base, dot && dot != base ? (size_t)(dot - base) : strlen(base));
	free(p);
	return name;
}

int nx_cli_data_path(const char *cmd, const char *path)
{
	char *p;
	struct stat st;
	int rc = 0;

	if (!path || !path[0]) {
		nx_cli_error(cmd, "--data-path is empty; give a directory (the default is "
			     NX_CLI_DEFAULT_DATA_PATH ")");
		return -1;
	}
	p = nx_expand_home(path);
	if (stat(p, &st) == 0 && !S_ISDIR(st.st_mode)) {
		nx_cli_error(cmd, "the data path '%s' is not a directory; give the directory that "
			     "holds (or is to hold) the profiles", path);
		rc = -1;
	}
	free(p);
	return rc;
}

/* Guards starting the signal thread (and, held by it for good, ends every other use). */
static pthread_mutex_t tmp_lock = PTHREAD_MUTEX_INITIALIZER;
static bool tmp_thread_started;

/* Removes the temporary tree while the other threads keep running until the process ends:
 * they may create directories again (mkdir -p) at any moment. So: move the tree away and put
 * a plain file in its place (nothing can be created below a file). A mkdir that lands between
 * the two makes the file's creation fail; then that new tree is moved away too, and so on until
 * the file holds the name. Then the moved trees go. The file stays a moment longer, so that a
 * thread that was already on its way to a mkdir -p meets it and takes its error path; then it
 * goes too. A tree that appears again after that (a mkdir -p that started just before the
 * file went) starts a new round. */
static void remove_round(const char *path)
{
	struct nx_err err = { 0 };
	int fd = -1, moved = 0;

	for (int i = 0; i < 64 && fd < 0; i++) {
		char *dying = nx_xasprintf("%s.interrupted.%d", path, i);
		if (rename(path, dying) == 0)
			moved = i + 1;
		free(dying);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	}
	for (int i = 0; i < moved; i++) {
		char *dying = nx_xasprintf("%s.interrupted.%d", path, i);
		nx_remove_tree(dying, &err);
		free(dying);
	}
	if (fd >= 0) {
		struct timespec hold = { 0, 20 * 1000 * 1000 };
		nanosleep(&hold, NULL);
		close(fd);
		unlink(path);
	} else {
		nx_remove_tree(path, &err);
	}
}

static void remove_tmp_while_running(const char *path)
{
	struct stat st;

	for (int round = 0; round < 8; round++) {
		remove_round(path);
		if (lstat(path, &st) != 0)
			return;
	}
}

static void *signal_thread(void *arg)
{
	sigset_t *set = arg;
	int sig = 0;

	if (sigwait(set, &sig))
		return NULL;
	pthread_mutex_lock(&tmp_lock);
	nx_out_file_remove_temporaries();
	nx_temp_dirs_remove(remove_tmp_while_running);
	/* end the process as the signal would have (the lock stays held: nothing else
	 * may touch the directory from now on) */
	signal(sig, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, set, NULL);
	raise(sig);
	_exit(128 + sig);
}

static int start_signal_thread(void)
{
	static sigset_t set;
	pthread_t th;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	/* block them in this thread and in every thread started later (DuckDB's) */
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -1;
	if (pthread_create(&th, NULL, signal_thread, &set)) {
		pthread_sigmask(SIG_UNBLOCK, &set, NULL);
		return -1;
	}
	pthread_detach(th);
	return 0;
}

/* At exit, the lock for good: a signal thread already removing the temporaries (it holds
 * the lock) finishes and ends the process by its signal, instead of an exit that a
 * thread's error (its directory gone under it) reached meanwhile cutting the removal
 * short; a signal that comes later finds the lock taken and leaves the exit alone. */
static void exit_after_signal_thread(void)
{
	pthread_mutex_lock(&tmp_lock);
}

/* Starts the signal thread once; called with tmp_lock held. */
static void signal_thread_once(void)
{
	if (!tmp_thread_started && start_signal_thread() == 0) {
		tmp_thread_started = true;
		atexit(exit_after_signal_thread);
	}
}

void nx_cli_guard_outputs(void)
{
	pthread_mutex_lock(&tmp_lock);
	signal_thread_once();
	pthread_mutex_unlock(&tmp_lock);
}

char *nx_cli_tmp_data_path(const char *cmd, const char *what)
{
	struct nx_err err = { 0 };
	char *path = NULL;

	pthread_mutex_lock(&tmp_lock);
	signal_thread_once();
	/* a reader that stops early (`| head`, `| grep -q`) must not end the command before
	 * it removes its temporary data path: writes to the closed pipe fail instead */
	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_unlock(&tmp_lock);
	/* made and listed in one step: the signal thread removes it with the others */
	if (nx_make_temp_dir(what, &path, &err)) {
		nx_cli_error(cmd, "%s", err.msg);
		return NULL;
	}
	return path;
}

void nx_cli_tmp_release(char *path)
{
	nx_temp_dir_release(path);
}
