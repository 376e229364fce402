/* SPDX-License-Identifier: MIT
 * fuzz_tmp.h: where a file-based fuzz target writes its inputs. The first call makes a
 * private directory (mkdtemp, under $TMPDIR or /tmp), so no file of anyone else's is
 * overwritten; the directory and the files named in it are removed when the fuzzer
 * exits (libFuzzer ends with exit() after -runs or -max_total_time; a crash keeps
 * them beside libFuzzer's own crash file). */
#ifndef NX_FUZZ_TMP_H
#define NX_FUZZ_TMP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_TMP_FILES 4

static char fuzz_tmp_dir[256];
static char fuzz_tmp_file[FUZZ_TMP_FILES][320];
static int fuzz_tmp_nfiles;

static void fuzz_tmp_cleanup(void)
{
	for (int i = 0; i < fuzz_tmp_nfiles; i++)
		unlink(fuzz_tmp_file[i]);
	rmdir(fuzz_tmp_dir);
}

/* The path of the file `name` in the target's private directory (made at the first
 * call); at most FUZZ_TMP_FILES names. */
static const char *fuzz_tmp_path(const char *name)
{
	if (!fuzz_tmp_dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(fuzz_tmp_dir, sizeof(fuzz_tmp_dir), "%s/nx-fuzz-XXXXXX",
			 t && *t ? t : "/tmp");
		if (!mkdtemp(fuzz_tmp_dir) || atexit(fuzz_tmp_cleanup))
			abort();
	}
	for (int i = 0; i < fuzz_tmp_nfiles; i++)
		if (!strcmp(strrchr(fuzz_tmp_file[i], '/') + 1, name))
			return fuzz_tmp_file[i];
	if (fuzz_tmp_nfiles == FUZZ_TMP_FILES)
		abort();
	snprintf(fuzz_tmp_file[fuzz_tmp_nfiles], sizeof(fuzz_tmp_file[0]), "%s/%s", fuzz_tmp_dir,
		 name);
	return fuzz_tmp_file[fuzz_tmp_nfiles++];
}

#endif
