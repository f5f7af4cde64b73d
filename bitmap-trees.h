/*
 * bitmap-trees.h: the bitmap writer's trees (a part of
 * pack-bitmap-write.c; pack-bitmap-write-internal.h): each tree's
 * entries as positions (w->kids), and the objects' name hashes
 * (w->hashes, when the writer keeps them).
 */
#ifndef GP_BITMAP_TREES_H
#define GP_BITMAP_TREES_H

#include "util.h"

struct bitmap_writer;
struct tree_resolver;

/*
 * Resolve every tree of the order, in w->threads threads, along the
 * delta chains between them; the calling thread runs meanwhile(w)
 * first (work that needs no tree), then resolves too. A tree that
 * cannot be resolved is left without kids (it may be unreachable:
 * bitmap_trees_diagnose() says why when a commit needs it). Name
 * hashes are final on return. The kids live in w->arena until
 * bitmap_trees_release(). Errors: GP_ENOMEM, GP_ECORRUPT (a pack entry
 * header), or what meanwhile returned.
 */
int bitmap_trees_resolve(struct bitmap_writer *w, int (*meanwhile)(struct bitmap_writer *));
void bitmap_trees_release(struct bitmap_writer *w);

/* Name hashes gathered elsewhere (stored plus one) back to plain hashes. */
void bitmap_trees_finish_hashes(struct bitmap_writer *w);

/*
 * Why the tree at tree_pos, needed by a commit, has no kids: decode it
 * again alone and return the error that stopped it (into w->err).
 */
int bitmap_trees_diagnose(struct bitmap_writer *w, uint32_t tree_pos);

/*
 * One tree at a time, when a walk needs it (bitmap-reuse.c: trees are
 * not read ahead). The resolver uses w's main-thread reader; its kids
 * stay valid until bitmap_trees_resolver_free(). bitmap_trees_load()
 * errors go into w->err: those of reading the tree, GP_ENOTFOUND (an
 * entry outside the order), GP_ECORRUPT.
 */
struct tree_resolver *bitmap_trees_resolver_new(struct bitmap_writer *w);
int bitmap_trees_load(struct tree_resolver *r, uint32_t tree_pos);
void bitmap_trees_resolver_free(struct tree_resolver *r);

#endif
