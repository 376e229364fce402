/* SPDX-License-Identifier: MIT
 * walk.h: finds the inputs of directory mode in a capture output tree: framework
 * traces (trace.json[.gz], *.trace.json[.gz] including PyTorch's *.pt.trace.json[.gz],
 * neuron_framework_trace_rank_<N>.json[.gz]; JAX files under plugins/profile/ match the
 * same names) and device profiles, an NTFF <hash>_instid_<i>_vnc_<k>.ntff paired with
 * the NEFF of the same hash (neff_<hash>[_vnc_<k>].neff, or graph_<hash>.neff as vLLM
 * copies them), preferring a NEFF in the NTFF's own directory. */
#ifndef NX_TRACE_WALK_H
#define NX_TRACE_WALK_H

#include "common/compat.h"
#include "common/err.h"

struct nx_dev_pair {
	char *neff, *ntff;
	char *name;      /* the NTFF's name without .ntff */
	char *instance;  /* from an enclosing <instance>_pid_<pid> directory, else "" */
	int64_t pid;     /* 0 when unknown */
	int64_t instid, vnc;
};

struct nx_found {
	char **traces;   /* sorted paths */
	char **instances; /* instance_id for each trace */
	size_t ntraces;
	struct nx_dev_pair *pairs;
	size_t npairs;
	char **lone;     /* NTFFs without a NEFF of their hash */
	size_t nlone;
};

/* Walks root (not following symbolic links to directories, skipping hidden entries).
 * A root that is a file is taken as a single trace. Errors: NX_ENOTFOUND for a missing
 * root, NX_EUSAGE for a directory more than 32 levels below it (the walk's depth limit,
 * named) or a root that is neither a directory nor a regular file. */
int nx_trace_walk(const char *root, struct nx_found *f, struct nx_err *err);
void nx_found_release(struct nx_found *f);

/* The names a NEFF beside an NTFF <hash>_instid_<i>_vnc_<k>.ntff may have, for messages
 * (caller frees). */
char *nx_trace_neff_names(const char *ntff);

/* instance_id for a trace path: the <instance> of an enclosing <instance>_pid_<pid>
 * directory, else the file name without its trace suffixes. Newly allocated. */
char *nx_trace_instance_of(const char *path);

#endif
