/* SPDX-License-Identifier: MIT
 * asserts.h: a comparison assertion that prints both sides on failure, for tests (after
 * cmocka.h). NX_ASSERT_CMP(a, >=, b) compares as long double, which holds every 64-bit
 * integer exactly, so it serves integers and floating-point values alike. assert_ok(call,
 * e): call returns 0, or the test fails with the message of the error it set in *e. */
#ifndef NX_TEST_ASSERTS_H
#define NX_TEST_ASSERTS_H

#define NX_ASSERT_CMP(a, op, b)                                                               \
	do {                                                                                   \
		long double nx_a_ = (long double)(a), nx_b_ = (long double)(b);                \
		if (!(nx_a_ op nx_b_))                                                         \
			fail_msg("%s %s %s: %.21Lg vs %.21Lg", #a, #op, #b, nx_a_, nx_b_);    \
	} while (0)

#define assert_ok(call, e)                                                                     \
	do {                                                                                   \
		if ((call))                                                                    \
			fail_msg("%s: %s", #call, (e)->msg);                                  \
	} while (0)

#endif
