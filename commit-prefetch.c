/*
 * commit-prefetch.c: commits read ahead on another thread
 * (commit-prefetch.h).
 *
 * Every entry of every pack has a state, by pack position. The thread
 * claims an entry (UNTOUCHED -> CLAIMED) before reading it and publishes
 * the parsed commit (-> READY); the walk claims an entry it will read
 * itself (UNTOUCHED -> MINE), so no entry is ever read twice, and waits
 * only for an entry the thread is reading at that moment.
 */
#include "commit-prefetch.h"
#include "error.h"
#include "odb.h"
#include "packfile.h"
#include "trace2.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <unistd.h>

enum { UNTOUCHED, CLAIMED, READY, MINE };

/* Below this many objects in all, the thread costs more than it saves. */
#define PREFETCH_MIN_OBJECTS 20000
/*
 * Git writes a pack's commits first, together: past this many other
 * entries in a row after them, the rest of the pack (trees and blobs,
 * most of its bytes) is not worth paging in for the few commits left.
 */
#define PREFETCH_MAX_GAP 4096

struct prefetch_pack {
	struct packed_git *p;
	_Atomic unsigned char *state;   /* by pack position */
	struct commit_info **parsed;    /* by pack position, when READY */
};

struct commit_prefetch {
	int algo;
	int64_t nr_taken;               /* for trace2: the thread's share */
	struct prefetch_pack *packs;
	size_t nr_packs;
	atomic_bool stop;
	atomic_bool done;               /* the thread has finished its sweep */
	pthread_t thread;
};

static struct prefetch_pack *pack_of(struct commit_prefetch *cp, const struct packed_git *p)
{
	for (size_t i = 0; i < cp->nr_packs; i++)
		if (cp->packs[i].p == p)
			return &cp->packs[i];
	return NULL;
}

/* Read and parse the whole commit at ofs; NULL on any trouble. */
static struct commit_info *read_commit(struct pack_reader *r, struct packed_git *p,
				       uint64_t ofs, int algo)
{
	struct gp_error ignored = GP_ERROR_INIT;
	struct commit_info *ci = NULL;
	enum object_type type;
	unsigned char *data = NULL;
	size_t size;
	if (!pack_read_object(r, p, ofs, &type, &data, &size, &ignored) && type == OBJ_COMMIT) {
		ci = xcalloc(1, sizeof(*ci));
		ci->tree.algo = algo;
		if (commit_parse(data, size, algo, ci, &ignored)) {
			commit_info_release(ci);
			free(ci);
			ci = NULL;
		}
	}
	free(data);
	gp_error_clear(&ignored);
	return ci;
}

static void *prefetch_thread(void *data)
{
	struct commit_prefetch *cp = data;
	struct pack_reader *r = pack_reader_new(0);
	for (size_t i = 0; i < cp->nr_packs; i++) {
		struct prefetch_pack *pp = &cp->packs[i];
		struct packed_git *p = pp->p;
		uint32_t gap = 0;
		bool seen_commit = false;
		for (uint32_t pos = 0; pos < p->nr_objects; pos++) {
			struct gp_error ignored = GP_ERROR_INIT;
			struct pack_entry_header hdr;
			uint64_t ofs = pack_pos_to_offset(p, pos);
			size_t end = p->pack_size - gp_hash_algos[p->algo].rawsz;
			unsigned char expected = UNTOUCHED;
			struct commit_info *ci;
			if (atomic_load_explicit(&cp->stop, memory_order_relaxed))
				goto out;
			/* only the header: nothing is inflated but commits stored whole */
			if (ofs >= end ||
			    pack_parse_entry_header(p->pack_map + ofs, end - (size_t)ofs, ofs,
						    p->algo, &hdr, &ignored)) {
				gp_error_clear(&ignored);
				continue;
			}
			if (hdr.type != OBJ_COMMIT) {
				if (seen_commit && ++gap > PREFETCH_MAX_GAP)
					break;
				continue;
			}
			seen_commit = true;
			gap = 0;
			if (!atomic_compare_exchange_strong(&pp->state[pos], &expected, CLAIMED))
				continue;
			ci = read_commit(r, p, ofs, cp->algo);
			if (!ci) {
				/* the walk reads it and reports the trouble */
				atomic_store_explicit(&pp->state[pos], MINE, memory_order_release);
				continue;
			}
			pp->parsed[pos] = ci;
			atomic_store_explicit(&pp->state[pos], READY, memory_order_release);
		}
	}
out:
	pack_reader_free(r);
	atomic_store(&cp->done, true);
	return NULL;
}

struct commit_prefetch *commit_prefetch_start(struct odb *odb, int algo)
{
	struct commit_prefetch *cp;
	uint64_t nr_objects = 0;
	size_t alloc = 0;
	/*
	 * GP_TEST_COMMIT_PREFETCH=1 (tests): a thread however small the
	 * packs, which reads them all before the walk starts.
	 */
	bool forced = getenv("GP_TEST_COMMIT_PREFETCH") != NULL &&
		      !strcmp(getenv("GP_TEST_COMMIT_PREFETCH"), "1");
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 && !forced)
		return NULL;
	cp = xcalloc(1, sizeof(*cp));
	cp->algo = algo;
	for (size_t i = 0; i < odb_nr_packs(odb); i++) {
		struct gp_error ignored = GP_ERROR_INIT;
		struct packed_git *p = odb_pack(odb, i);
		struct prefetch_pack *pp;
		if (!odb_pack_is_local(odb, i) || !p->nr_objects ||
		    pack_open_pack(p, &ignored) || pack_load_revindex(p, &ignored)) {
			gp_error_clear(&ignored);
			continue;
		}
		ALLOC_GROW(cp->packs, cp->nr_packs + 1, alloc);
		pp = &cp->packs[cp->nr_packs++];
		pp->p = p;
		pp->state = xcalloc(p->nr_objects, sizeof(*pp->state));
		pp->parsed = xcalloc(p->nr_objects, sizeof(*pp->parsed));
		nr_objects += p->nr_objects;
	}
	atomic_init(&cp->stop, false);
	atomic_init(&cp->done, false);
	if ((nr_objects < PREFETCH_MIN_OBJECTS && !forced) ||
	    pthread_create(&cp->thread, NULL, prefetch_thread, cp)) {
		cp->stop = true; /* no thread to join */
		cp->thread = pthread_self();
		commit_prefetch_stop(cp);
		return NULL;
	}
	/* tests: the thread reads everything first, so the walk takes it all */
	while (forced && !atomic_load(&cp->done))
		usleep(1000);
	return cp;
}

bool commit_prefetch_take(struct commit_prefetch *cp, const struct packed_git *p,
			  uint64_t ofs, struct commit_info *ci)
{
	struct prefetch_pack *pp = pack_of(cp, p);
	unsigned char state = UNTOUCHED;
	uint32_t pos;
	if (!pp || !pack_offset_to_pos(p, ofs, &pos))
		return false;
	if (atomic_compare_exchange_strong(&pp->state[pos], &state, MINE))
		return false;
	while (state == CLAIMED) {
		sched_yield();
		state = atomic_load_explicit(&pp->state[pos], memory_order_acquire);
	}
	if (state != READY)
		return false;
	commit_info_release(ci);
	*ci = *pp->parsed[pos];
	cp->nr_taken++;
	free(pp->parsed[pos]);
	pp->parsed[pos] = NULL;
	atomic_store_explicit(&pp->state[pos], MINE, memory_order_relaxed);
	return true;
}

void commit_prefetch_stop(struct commit_prefetch *cp)
{
	if (!cp)
		return;
	if (!pthread_equal(cp->thread, pthread_self())) {
		atomic_store(&cp->stop, true);
		pthread_join(cp->thread, NULL);
		trace2_data_intmax("commit-prefetch", "commits_read_ahead", cp->nr_taken);
	}
	for (size_t i = 0; i < cp->nr_packs; i++) {
		struct prefetch_pack *pp = &cp->packs[i];
		for (uint32_t pos = 0; pos < pp->p->nr_objects; pos++)
			if (pp->parsed[pos]) {
				commit_info_release(pp->parsed[pos]);
				free(pp->parsed[pos]);
			}
		free((void *)pp->state);
		free(pp->parsed);
	}
	free(cp->packs);
	free(cp);
}
