/* SPDX-License-Identifier: MIT
 * nki_env.h: where the NKI shim's Python packages are beside this binary, and the
 * environment a Python program needs to run against them (`nki run`, `inspect`). */
#ifndef NX_CLI_NKI_ENV_H
#define NX_CLI_NKI_ENV_H

#include "common/compat.h"

/* The shim's directory: BIN_DIR/nki/python (build tree) or
 * BIN_DIR/../share/neuron-explorer/nki/python (installed), resolved; NULL when neither
 * exists. *self (may be NULL) receives this binary's path. Both newly allocated. */
char *nx_cli_nki_shim_dir(char **self);

/* Puts the shim first on PYTHONPATH and this binary in NX_NKI_BIN (which the shim runs
 * for asm, capture and view). Prints the problem and returns an exit status. */
int nx_cli_nki_env(const char *cmd);

/* The python3 the shim's own programs run with: $NX_PYTHON, else the one found at build
 * time. */
const char *nx_cli_nki_python(void);

#endif
