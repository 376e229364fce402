/* SPDX-License-Identifier: MIT
 * profile_set.h: the device profiles a published profile stands for, for the exports that
 * print one entry per device profile (summary-json, summary-text):
 *   - a fleet run's index (it holds fleet-members.txt): each member, in the list's order;
 *   - a directory-mode profile (view -d): itself (its first NEFF/NTFF pair), then the
 *     sibling profile <name>-<pair> of each further pair of its DeviceProfileList (or,
 *     when that was not published, the pair's directory devices/<pair>/ inside it);
 *   - a device profile: itself.
 * Each entry is named as the server names that profile (the name of the API URLs). */
#ifndef NX_EXPORT_PROFILE_SET_H
#define NX_EXPORT_PROFILE_SET_H

#include "common/compat.h"
#include "common/err.h"

struct nx_profile_ref {
	char *name; /* profile name (the key of summary-json) */
	char *dir;  /* its directory */
};

struct nx_profile_set {
	struct nx_profile_ref *p;
	size_t n;
	bool fleet; /* the profile is a fleet run's index */
};

/* The profiles published profile `name` in directory `dir` stands for. Entries whose
 * directory is missing are left out (a fleet member not done yet). */
int nx_profile_set_of(const char *dir, const char *name, struct nx_profile_set *s,
		      struct nx_err *err);
void nx_profile_set_release(struct nx_profile_set *s);

#endif
