/* SPDX-License-Identifier: MIT
 * invariants.h: checks that must hold on every profile we produce, computed
 * independently of the derive SQL (intervals are merged in C here):
 *   - Summary.dma_active_time equals the union length of all DmaPacket intervals
 *     (within 2 ns, or float32 rounding for long profiles);
 *   - per engine, the ActiveTime durations sum to the Summary *_engine_active_time and
 *     to the union of that engine's Instruction intervals;
 *   - OpcodeSummary instruction counts add up to the Instruction row count.
 * Failures are cmocka assertion failures naming the profile and the quantity. */
#ifndef NX_TEST_INVARIANTS_H
#define NX_TEST_INVARIANTS_H

void nx_check_profile_invariants(const char *profile_dir);

#endif
