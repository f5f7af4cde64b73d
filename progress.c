/*
 * progress.c: see progress.h. Prints at most every 100 ms (or on each
 * whole percent change), from whichever thread notices.
 */
#include "progress.h"
#include "trace2.h"
#include <pthread.h>
#include <time.h>

struct progress {
	const char *title;
	uint64_t total;
	uint64_t done;          /* updated atomically */
	uint64_t last_ns;
	int last_percent;
	pthread_mutex_t lock;
	/* throughput, when the caller reports bytes (progress_set_bytes()) */
	bool has_bytes;
	uint64_t bytes;         /* updated atomically */
	uint64_t start_ns;
	/* where this meter prints: the starting thread's output (see below) */
	progress_out_fn *out_fn;
	void *out_data;
};

/*
 * The output is the calling thread's, not the process's: a server runs
 * many upload-packs at once, each with its own side-band. A meter takes
 * its thread's output when it starts, so that worker threads updating
 * it (the delta search) print to the same place.
 */
static _Thread_local progress_out_fn *output_fn;
static _Thread_local void *output_data;

static void output_to(progress_out_fn *fn, void *data, const char *buf, size_t len)
{
	if (fn) {
		fn(data, buf, len);
		return;
	}
	fwrite(buf, 1, len, stderr);
	fflush(stderr);
}


static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct progress *progress_start(const char *title, uint64_t total, bool enabled)
{
	struct progress *p;
	if (!enabled)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->title = title;
	p->start_ns = now_ns();
	trace2_region_enter("progress", title);
	p->total = total;
	p->last_percent = -1;
	p->out_fn = output_fn;
	p->out_data = output_data;
	pthread_mutex_init(&p->lock, NULL);
	return p;
}

static void display(struct progress *p, uint64_t done, const char *end)
{
	char rate[80] = "";
	if (p->has_bytes) {
		uint64_t bytes = __atomic_load_n(&p->bytes, __ATOMIC_RELAXED);
		uint64_t ns = now_ns() - p->start_ns;
		char total[32], per_sec[32];
		humanize_size(total, sizeof(total), bytes);
		humanize_size(per_sec, sizeof(per_sec),
			   ns ? (uint64_t)((double)bytes * 1e9 / (double)ns) : 0);
		snprintf(rate, sizeof(rate), ", %s | %s/s", total, per_sec);
	}
	char line[512];
	int n;
	if (p->total) {
		int percent = (int)(done * 100 / p->total);
		n = snprintf(line, sizeof(line), "%s: %3d%% (%" PRIu64 "/%" PRIu64 ")%s%s",
			     p->title, percent, done, p->total, rate, end);
		p->last_percent = percent;
	} else {
		n = snprintf(line, sizeof(line), "%s: %" PRIu64 "%s%s", p->title, done, rate, end);
	}
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	output_to(p->out_fn, p->out_data, line, (size_t)n);
}

void progress_set_output(progress_out_fn *fn, void *data)
{
	output_fn = fn;
	output_data = data;
}

void progress_output(const char *buf, size_t len)
{
	output_to(output_fn, output_data, buf, len);
}

void progress_set_bytes(struct progress *p, uint64_t bytes)
{
	if (!p)
		return;
	p->has_bytes = true;
	__atomic_store_n(&p->bytes, bytes, __ATOMIC_RELAXED);
}

static void maybe_display(struct progress *p, uint64_t done)
{
	uint64_t t;
	int percent = p->total ? (int)(done * 100 / p->total) : -1;
	if (percent == p->last_percent && ((t = now_ns()) - p->last_ns) < 100000000ull)
		return;
	if (pthread_mutex_trylock(&p->lock))
		return;
	p->last_ns = now_ns();
	display(p, done, "\r");
	pthread_mutex_unlock(&p->lock);
}

void progress_update(struct progress *p, uint64_t done)
{
	if (!p)
		return;
	__atomic_store_n(&p->done, done, __ATOMIC_RELAXED);
	maybe_display(p, done);
}

void progress_add(struct progress *p, uint64_t delta)
{
	if (!p)
		return;
	maybe_display(p, __atomic_add_fetch(&p->done, delta, __ATOMIC_RELAXED));
}

void progress_stop(struct progress **pp)
{
	progress_stop_msg(pp, ", done.\n");
}

void progress_stop_msg(struct progress **pp, const char *msg)
{
	struct progress *p = *pp;
	if (!p)
		return;
	display(p, __atomic_load_n(&p->done, __ATOMIC_RELAXED), msg);
	trace2_data_intmax("progress", "total_objects", (int64_t)p->total);
	trace2_region_leave("progress", p->title);
	pthread_mutex_destroy(&p->lock);
	free(p);
	*pp = NULL;
}
