/* SPDX-License-Identifier: MIT
 * test_dirs.h: the directories the tests write in. Each is new, made by mkdtemp, so a
 * test never removes what it did not make, and each test program removes all of its own
 * when every test passed (what a failure left stays for a look). */
#ifndef NX_TEST_TEST_DIRS_H
#define NX_TEST_TEST_DIRS_H

#include <stddef.h>

/* A new empty directory <base>/<prefix><tag>-XXXXXX/<tag>, base being $NX_TEST_TMP (made
 * if missing) or /tmp. It is a directory of its own inside a new one, so the siblings a
 * test derives from it ("<dir>.log", "<dir>.ref") are new and removed with it too. NULL
 * after printing why; caller frees. */
char *nx_test_fresh_dir(const char *prefix, const char *tag);
/* Ends a test program: with no failed test, removes every directory nx_test_fresh_dir
 * made; returns failed, for main to return. */
int nx_test_done(int failed);
/* The entries of dir but "." and ".."; (size_t)-1 when it cannot be read. */
size_t nx_test_entries(const char *dir);

#endif
