/* SPDX-License-Identifier: MIT
 * compat.h: included first by every .c file. Feature macros, the fixed-width and
 * boolean types, and the few attributes the project uses. */
#ifndef NX_COMMON_COMPAT_H
#define NX_COMMON_COMPAT_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>

#define NX_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define NX_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define NX_UNUSED __attribute__((unused))
#define NX_NORETURN __attribute__((noreturn))
#define NX_NONE32 UINT32_MAX
/* A macro's value as a string literal, e.g. a named constant spliced into SQL text. */
#define NX_STRINGIFY(x) NX_STRINGIFY_(x)
#define NX_STRINGIFY_(x) #x

#endif
