/* SPDX-License-Identifier: MIT
 * outpath.h: the one rule for every path the tool writes an output to (view
 * --output-file, fleet export -o, capture -s, kernel gen/asm -o, kernel gen/asm --listing,
 * which the NKI shim's nki run -n/--listing go through),
 * and the one writer of an output that is a single file: nothing a user owns is replaced
 * or deleted.
 *
 * A directory output is written only where nothing is lost: a path that does not exist
 * yet, an empty directory, or a directory the tool wrote before, which carries the
 * marker file NX_OUT_MARKER. Refused: a symbolic link, a file where a directory goes,
 * the current directory or one of its ancestors, the data path or one of its ancestors,
 * a path inside the data path's profiles, a directory holding files of someone else.
 *
 * A file output (struct nx_out_kind says which kind) may go to:
 *   - a path that does not exist yet (its directory must, unless NX_OUT_MAKE_DIR);
 *   - a regular file of the same kind, which the tool wrote: recognised by its CONTENT,
 *     the first NX_OUT_HEAD bytes (kind->ours), so the rule holds on every file system;
 *   - with NX_OUT_FORCE (`view --force`), any other regular file;
 *   - with NX_OUT_STREAM (the exports): "-", which is stdout, and a FIFO or a character
 *     device (or a symbolic link to one, as /dev/stdout), which are written in place.
 * Refused, even with NX_OUT_FORCE: a symbolic link to anything else (neither it nor its
 * target is replaced), a directory, any other special file. Refusals carry NX_EUSAGE and
 * a message saying why; a missing directory or one that cannot be written is an error
 * with the system's reason (-errno).
 *
 * The writer (nx_out_file_open -> write to fd or fp -> nx_out_file_commit, or
 * nx_out_file_abort) writes a file under a unique temporary sibling (nx_tmp_create, with
 * O_EXCL) and renames it into place once complete, so no reader sees half of it and a
 * failure leaves the path as it was. At the rename the path is checked again: a file
 * that appeared meanwhile is replaced only if the rule allows it. The temporaries of the
 * files being written are known to nx_out_file_remove_temporaries(), which the command
 * line calls when SIGINT, SIGTERM or SIGHUP interrupts the command. */
#ifndef NX_COMMON_OUTPATH_H
#define NX_COMMON_OUTPATH_H

#include "common/compat.h"
#include "common/err.h"

#include <stdio.h>

/* Says whether two output paths name one file: the same file when both exist (links
 * and hard links included), else the same absolute path once the existing part of
 * each is resolved ("./x" and "x"). */
bool nx_out_same_path(const char *a, const char *b);

/* The file that marks a directory as written by neuron-explorer. */
#define NX_OUT_MARKER ".neuron-explorer-output"

/* Checks an output directory against the rule (see above). data_path (the data path of
 * the command, may be NULL) is protected with its ancestors and profiles. */
int nx_out_dir_check(const char *path, const char *data_path, struct nx_err *err);

/* Writes the marker into dir, a directory being built to replace an output path. */
int nx_out_dir_mark(const char *dir, struct nx_err *err);

/* How many first bytes of an existing file a recogniser is given (fewer for a shorter
 * file). */
#define NX_OUT_HEAD 4096

/* Says whether the first n bytes of an existing file are of a kind the tool writes. */
typedef bool (*nx_out_kind_fn)(const uint8_t *head, size_t n);

/* A kind of output file, owned by the module that writes it. */
struct nx_out_kind {
	const char *what;     /* its name in messages, with an article: "an NTFF" */
	nx_out_kind_fn ours;  /* recognises a file of this kind */
};

enum {
	NX_OUT_MAKE_DIR = 1u << 0,    /* create the missing directories of the path */
	NX_OUT_FORCE = 1u << 1,       /* replace a regular file that is not of the kind */
	NX_OUT_CAN_FORCE = 1u << 2,   /* the command offers --force: say so when refusing */
	NX_OUT_STREAM = 1u << 3,      /* "-" is stdout; FIFOs, character devices in place */
};

/* Checks an output file against the rule, before any work. With NX_OUT_MAKE_DIR the
 * missing directories are created (as the Neuron runtime does for its profiles). */
int nx_out_file_check(const char *path, const struct nx_out_kind *kind, unsigned flags,
		      struct nx_err *err);

/* An output file being written. */
struct nx_out_file {
	char *path;  /* as given */
	char *tmp;   /* the temporary sibling; NULL when written in place or to stdout */
	int fd;      /* where to write */
	FILE *fp;    /* the same, as a stream (do not close either) */
	const struct nx_out_kind *kind;
	unsigned flags;
	bool existed; /* the path held a file to replace when it was opened */
};

/* Checks path again and opens the temporary file (or the stream) to write. */
int nx_out_file_open(struct nx_out_file *f, const char *path, const struct nx_out_kind *kind,
		     unsigned flags, struct nx_err *err);

/* Flushes and closes what was written, then puts it in place. On failure nothing of it
 * is left (what went to a stream is gone). *f is released either way. */
int nx_out_file_commit(struct nx_out_file *f, struct nx_err *err);

/* Drops what was written (the temporary file is removed) and releases *f. */
void nx_out_file_abort(struct nx_out_file *f);

/* The temporary file being written, or NULL. */
static inline const char *nx_out_file_tmp(const struct nx_out_file *f)
{
	return f->tmp;
}

/* Writes len bytes as the whole output file path (open, write, commit). */
int nx_out_file_write(const char *path, const struct nx_out_kind *kind, unsigned flags,
		      const void *data, size_t len, struct nx_err *err);

/* Removes the temporary files of every output file this process is writing (for the
 * thread that handles the signals ending the process; the writers are left to die). */
void nx_out_file_remove_temporaries(void);

#endif
