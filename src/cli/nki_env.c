/* SPDX-License-Identifier: MIT
 * nki_env.c: the NKI shim's place and environment (see nki_env.h). */
#include "common/compat.h"
#include "cli/nki_env.h"
#include "cli/commands.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef NX_PYTHON
#define NX_PYTHON "python3"
#endif

static char *self_path(void)
{
	char buf[4096];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return nx_xstrdup(buf);
}

char *nx_cli_nki_shim_dir(char **self_out)
{
	static const char *const rel[] = { "nki/python", "../share/neuron-explorer/nki/python" };
	char *self = self_path(), *real = NULL;
	const char *slash = self ? strrchr(self, '/') : NULL;
	size_t dl = slash ? (size_t)(slash - self) : 0;

	for (size_t i = 0; self && !real && i < NX_ARRAY_SIZE(rel); i++) {
		char *d = nx_xasprintf("%.*s/%s", (int)dl, self, rel[i]);
		char *init = nx_xasprintf("%s/nx_nki/__init__.py", d);

		if (access(init, R_OK) == 0)
			real = realpath(d, NULL);
		free(init);
		free(d);
	}
	if (self_out)
		*self_out = self;
	else
		free(self);
	return real;
}

int nx_cli_nki_env(const char *cmd)
{
	const char *old = getenv("PYTHONPATH");
	char *self = NULL, *dir = nx_cli_nki_shim_dir(&self), *pp;
	int rc = NX_EXIT_OK;

	if (!dir) {
		nx_cli_error(cmd, "the NKI shim is not installed beside this binary (expected "
			     "nki/python or ../share/neuron-explorer/nki/python next to it)");
		free(self);
		return NX_EXIT_FAIL;
	}
	pp = old && *old ? nx_xasprintf("%s:%s", dir, old) : nx_xstrdup(dir);
	if (setenv("PYTHONPATH", pp, 1) || setenv("NX_NKI_BIN", self, 1)) {
		nx_cli_error(cmd, "cannot set the environment: %s", strerror(errno));
		rc = NX_EXIT_FAIL;
	}
	free(pp);
	free(dir);
	free(self);
	return rc;
}

const char *nx_cli_nki_python(void)
{
	const char *py = getenv("NX_PYTHON");

	return py && *py ? py : NX_PYTHON;
}
