/* SPDX-License-Identifier: MIT
 * assert.h: NX_ASSERT(cond), a check of an internal invariant: something our own code
 * guarantees, never something an input can break (inputs get a struct nx_err). Builds with
 * NX_ASSERTS defined (Debug, sanitizer, fuzz and coverage builds; CMake option NX_ASSERTS)
 * print "FILE:LINE: FUNCTION: invariant failed: COND" and abort when cond is false; other
 * builds compile the condition out without evaluating it, so it must have no side effects. */
#ifndef NX_COMMON_ASSERT_H
#define NX_COMMON_ASSERT_H

#include "common/compat.h"

#ifdef NX_ASSERTS
#define NX_ASSERT(cond) \
	((cond) ? (void)0 : nx_assert_fail(#cond, __FILE__, __LINE__, __func__))
#else
/* sizeof keeps the condition compiled (names and types checked) but never evaluated */
#define NX_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

/* Reports a failed NX_ASSERT on stderr and aborts: the one place outside src/cli that
 * prints, since a broken invariant leaves nothing sane to return an error through. */
NX_NORETURN void nx_assert_fail(const char *cond, const char *file, int line, const char *func);

#endif
