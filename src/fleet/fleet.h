/* SPDX-License-Identifier: MIT
 * fleet.h: a whole training run as one unit of work (`neuron-explorer fleet`). A run
 * directory holds, per instance and process, NEFF/NTFF pairs and framework traces (the
 * layout `view -d` reads). The fleet planner turns it into tasks (one per pair, one per
 * trace file), each the existing atomic ingest of that input as its own member profile;
 * the task list, the task -> profile mapping and one status file per task live under
 * <data>/fleet/<run>/. The fleet index (FleetProfile, FleetRank, FleetStraggler, ...)
 * is published as the profile <data>/profiles/global/<run>@latest, which the server
 * serves with union views over its members. See docs/fleet.md. */
#ifndef NX_FLEET_FLEET_H
#define NX_FLEET_FLEET_H

#include "common/compat.h"
#include "common/err.h"
#include "db/table_files.h"

enum nx_fleet_kind { NX_FLEET_DEVICE, NX_FLEET_TRACE };

struct nx_fleet_task {
	enum nx_fleet_kind kind;
	char *profile;  /* member profile name */
	char *instance; /* "" when unknown */
	int64_t pid;    /* -1 when unknown */
	int64_t nc;     /* NeuronCore (vnc_<k>), -1 for traces */
	int64_t model;  /* instid_<i>, -1 for traces */
	int64_t rank;   /* from neuron_framework_trace_rank_<N>, else -1 */
	char *neff;     /* device tasks only, else "" */
	char *input;    /* the NTFF or the trace file (absolute) */
};

struct nx_fleet_plan {
	char *run;
	struct nx_fleet_task *t;
	size_t n;
};

/* Walks run_dir (as `view -d` does) and plans one task per NEFF/NTFF pair and one per
 * framework trace file. Member profile names are <run>-<label>-<id>: the label
 * <instance>_pid_<pid>-<ntff name> for pairs, trace-<instance>[-rank<N>] for traces
 * (other characters than a name's become '_'; cut to fit NX_NAME_MAX), and <id> 8 hex
 * digits of SHA-256 over the input's path relative to run_dir (with the NEFF's) and
 * its size, first and last 64 KiB: the same member in every re-plan, a new one when the
 * file changes. Errors: NX_ENOTFOUND when the tree is missing or holds nothing to
 * ingest. */
int nx_fleet_plan(const char *run_dir, const char *run, struct nx_fleet_plan *p,
		  struct nx_err *err);
void nx_fleet_plan_release(struct nx_fleet_plan *p);
void nx_fleet_task_release(struct nx_fleet_task *t);

/* The longest run name: its members' names (<run>-<label>-<8 digits>) must fit. */
#define NX_FLEET_RUN_MAX 190
/* A run name that can be used on data_path: a valid name of at most NX_FLEET_RUN_MAX
 * characters, and not the name of an ordinary profile there (which the run's index would
 * replace). NX_EUSAGE with the reason otherwise. */
int nx_fleet_check_run(const char *data_path, const char *run, struct nx_err *err);

/* <data>/fleet/<run>, newly allocated. */
char *nx_fleet_dir(const char *data_path, const char *run);

/* Writes <data>/fleet/<run>/manifest.tsv (atomically) and creates status/ and logs/. */
int nx_fleet_manifest_write(const char *data_path, const struct nx_fleet_plan *p,
			    struct nx_err *err);
/* Reads it back; errors name the file and line. Every member name must be a valid name
 * starting with "<run>-" (names go into paths). */
int nx_fleet_manifest_read(const char *data_path, const char *run, struct nx_fleet_plan *p,
			   struct nx_err *err);

struct nx_strbuf;
/* Appends the manifest row of task `number` (no line end). */
void nx_fleet_row(struct nx_strbuf *sb, size_t number, const struct nx_fleet_task *t);
/* Parses one manifest row of run `run` (changed in place) into *t and its task number;
 * errors name path and lineno. The member name is checked as by nx_fleet_manifest_read. */
int nx_fleet_row_parse(const char *run, char *line, const char *path, size_t lineno,
		       size_t *number, struct nx_fleet_task *t, struct nx_err *err);

/* A task list: the manifest rows of the tasks one submission runs, line i for array
 * element (or local task) i, every line padded to the same length so that a task reads
 * its own row with two small reads, whatever the size of the run. Written atomically. */
int nx_fleet_list_write(const char *path, const struct nx_fleet_plan *p, const size_t *idx,
			size_t n, struct nx_err *err);
/* Line k of the task list at path, as a task of run `run` and its number in the manifest
 * the list was made from. Errors name the file and the line. */
int nx_fleet_list_read(const char *path, const char *run, size_t k, struct nx_fleet_task *t,
		       size_t *number, struct nx_err *err);

enum nx_fleet_state { NX_FLEET_PENDING, NX_FLEET_RUNNING, NX_FLEET_DONE, NX_FLEET_FAILED };

struct nx_fleet_status {
	enum nx_fleet_state state;
	char *where;   /* "host pid job": who ran or runs it, "" when pending */
	char *message; /* failure message, "" otherwise */
	double seconds; /* duration of a finished task, else 0 */
	long rss_kb;    /* peak resident memory of a finished task's process, kB */
};

/* The state of a task from its status files: done (and the profile exists), failed
 * (with the message; a task whose process on this host is gone is failed "killed"),
 * running, or pending. */
void nx_fleet_task_status(const char *data_path, const char *run, const struct nx_fleet_task *t,
			  struct nx_fleet_status *st);
void nx_fleet_status_release(struct nx_fleet_status *st);
const char *nx_fleet_state_name(enum nx_fleet_state s);

/* Runs task t (number `number` of the manifest) of run `run` in this process: marks it
 * running, ingests its input into the member profile (atomic publish), marks it done or
 * failed (the message is also in err). */
int nx_fleet_run_task(const char *data_path, const char *run, const struct nx_fleet_task *t,
		      size_t number, struct nx_err *err);

/* Runs tasks idx[0..n) of p as `self fleet run-task --list L --array-index i`
 * subprocesses (L a task list in <fleet dir>/local/, removed at the end), at most jobs at
 * a time, each logging to <fleet dir>/logs/<profile>.log. *failed gets the number that
 * did not succeed. SIGINT, SIGTERM or SIGHUP meanwhile is forwarded to every task
 * process; no more start, all are reaped, and the call fails with -EINTR and the signal
 * in *stopped_by (else 0). */
int nx_fleet_run_local(const char *self, const char *data_path, const struct nx_fleet_plan *p,
		       const size_t *idx, size_t n, unsigned jobs, size_t *failed, int *stopped_by,
		       struct nx_err *err);

struct nx_fleet_slurm {
	const char *partition, *time, *mem; /* NULL: Slurm's defaults */
	unsigned throttle;                  /* %K, 0 = none */
	unsigned array_max;                 /* tasks per array (MaxArraySize), 0 = 1000 */
	const char *const *extra;           /* extra sbatch arguments */
	size_t nextra;
	double threshold;                   /* straggler threshold for the index job */
	bool wait;                          /* sbatch --wait on the index job */
};

/* Submits tasks idx[0..n) of p as one `sbatch --array=0-(n-1)[%K]` job (several when n
 * exceeds array_max), each element reading its row of a task list, and one job
 * depending on them (afterany) that runs `self fleet index`. With
 * n == 0 only the index job is submitted. *array_job (ids joined with ',') and *index_job
 * receive the job ids (caller frees). */
int nx_fleet_submit_slurm(const char *self, const char *data_path,
			  const struct nx_fleet_plan *p, const size_t *idx, size_t n,
			  const struct nx_fleet_slurm *o, char **array_job, char **index_job,
			  struct nx_err *err);

/* Builds the fleet index of the run from the manifest, the status files and the done
 * members' tables (DuckDB SQL), and publishes it atomically as the profile
 * <data>/profiles/global/<run>@latest. threshold is the straggler threshold in percent
 * over the run's median. */
int nx_fleet_index(const char *data_path, const char *run, double threshold,
		   struct nx_err *err);

/* Writes every table of the run's members under out/<Table>/instance=<i>/nc=<k>/ (device
 * tables) or out/<Table>/instance=<i>/ (framework tables) as hive-style partitions with
 * a `profile` column, plus the fleet index tables under out/<Table>/. *tables gets the
 * number of tables written. */
int nx_fleet_export(const char *data_path, const char *run, const char *out, size_t *tables,
		    struct nx_err *err);

/* Appends the text report of a run's published index to out: the run line, the
 * stragglers with what explains them, then device profiles and framework-trace ranks,
 * slowest first (at most top of each; 0 = all), then, when recommend > 0, the
 * `recommend` report (Markdown) of that many slowest device members
 * (nx_fleet_recommend). */
int nx_fleet_report(const char *data_path, const char *run, unsigned top, unsigned recommend,
		    struct nx_strbuf *out, struct nx_err *err);

struct nx_recommend_opts;
/* `recommend` on a run: its n slowest device members (0: all), slowest first, with o
 * (analysis/recommend.h, nx_recommend_members: the run-wide part, then each member's
 * report). The one path of `recommend --display-name RUN` and `fleet report
 * --recommend N`. */
int nx_fleet_recommend(const char *data_path, const char *run, unsigned n,
		       const struct nx_recommend_opts *o, struct nx_strbuf *out,
		       struct nx_err *err);

/* The name of the file in a run's index profile that lists its member profiles, one per
 * line; the server's registry recognises a fleet profile by it. */
#define NX_FLEET_MEMBERS NX_PROFILE_FLEET_MEMBERS

#endif
