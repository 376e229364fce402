/* SPDX-License-Identifier: MIT
 * damage.h: a fixed generator of damaged JSON texts for the readers' bad-input tests
 * (the same texts each run). */
#ifndef NX_TEST_DAMAGE_H
#define NX_TEST_DAMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The first seed of a sequence of damaged texts. */
#define NX_TEST_DAMAGE_SEED 0x9e3779b97f4a7c15ull

/* Damages text[0..*len) in place by `edits` edits, each a byte replaced, inserted or
 * removed (JSON's punctuation, digits, letters of its literals, NUL, bytes above
 * ASCII); *len follows. text must hold *len + edits bytes; *seed advances. */
void nx_test_damage(char *text, size_t *len, uint64_t *seed, int edits);

#endif
