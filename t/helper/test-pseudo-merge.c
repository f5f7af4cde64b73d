/*
 * test-pseudo-merge.c: test-tool pseudo-merges, what gitpack's reader
 * finds in the pseudo-merge section of the repository's bitmap (git
 * 2.39, which CI has, cannot read one), and the grouping alone.
 *
 *   test-tool pseudo-merges
 *	one line per merge: "at=<offset>, commits=<n>, objects=<n>"
 *   test-tool pseudo-merges commits <n> | objects <n>
 *	the object names of merge n's commits or objects, by bit position
 *   test-tool pseudo-merges plan [<key>=<value>...]
 *	the merges pseudo-merge.h makes of the candidates read from stdin,
 *	one "<date> <bitmapped 0|1>" per line (the item is the line
 *	number), for a group configured by bitmapPseudoMerge.t.<key>
 *	(threshold dates are relative to "now" = 2000000000): one line per
 *	merge, its line numbers in the order given
 */
#include "../../config.h"
#include "../../error.h"
#include "../../odb.h"
#include "../../pack-bitmap.h"
#include "../../pseudo-merge.h"
#include "../../repository.h"
#include "../../strbuf.h"
#include "test-tool.h"

static const char usage_str[] =
	"usage: test-tool pseudo-merges [commits <n> | objects <n> | plan [<key>=<value>...]]\n";

static int plan(int argc, const char **argv)
{
	struct config_set cs = CONFIG_SET_INIT;
	struct pseudo_merge_config cfg = PSEUDO_MERGE_CONFIG_INIT;
	struct pseudo_merge_plan out = PSEUDO_MERGE_PLAN_INIT;
	struct pseudo_merge_candidate *cands = NULL;
	size_t nr = 0, alloc = 0;
	struct gp_error err = GP_ERROR_INIT;
	struct strbuf line = STRBUF_INIT;
	int ret = 0;

	config_set_add(&cs, "bitmappseudomerge.t.pattern", "refs/", CONFIG_SCOPE_COMMAND, &err);
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		char *key;
		if (!eq) {
			fputs(usage_str, stderr);
			return 129;
		}
		key = xstrfmt("bitmappseudomerge.t.%.*s", (int)(eq - argv[i]), argv[i]);
		config_set_add(&cs, key, eq + 1, CONFIG_SCOPE_COMMAND, &err);
		free(key);
	}
	if (pseudo_merge_config_read(&cfg, &cs, 2000000000, &err)) {
		fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
		ret = 128;
		goto out;
	}
	for (size_t i = 0; i < cfg.nr_warnings; i++)
		fprintf(stderr, "warning: %s\n", cfg.warnings[i]);
	while (strbuf_getline(&line, stdin)) {
		long long date;
		int bitmapped;
		if (sscanf(line.buf, "%lld %d", &date, &bitmapped) != 2) {
			fprintf(stderr, "fatal: bad candidate line '%s'\n", line.buf);
			ret = 128;
			goto out;
		}
		ALLOC_GROW(cands, nr + 1, alloc);
		cands[nr].item = (uint32_t)nr + 1;
		cands[nr].tiebreak = (uint32_t)nr;
		cands[nr].date = date;
		cands[nr].bitmapped = bitmapped;
		nr++;
	}
	pseudo_merge_plan_add(&out, &cfg.groups[0], cands, nr);
	for (size_t m = 0; m < out.nr_merges; m++) {
		for (size_t i = m ? out.ends[m - 1] : 0; i < out.ends[m]; i++)
			printf("%s%u", i == (m ? out.ends[m - 1] : 0) ? "" : " ", out.items[i]);
		putchar('\n');
	}
out:
	strbuf_release(&line);
	free(cands);
	pseudo_merge_plan_release(&out);
	pseudo_merge_config_release(&cfg);
	config_set_release(&cs);
	gp_error_clear(&err);
	return ret;
}

static void print_bits(const struct bitmap_order *order, const struct ewah *e)
{
	struct ewah_iter it;
	uint64_t bit_pos;
	char hex[GP_MAX_HEXSZ + 1];
	ewah_iter_init(&it, e);
	while (ewah_iter_next(&it, &bit_pos)) {
		struct object_id oid;
		bitmap_order_oid(order, (uint32_t)bit_pos, &oid);
		printf("%s\n", oid_to_hex_r(hex, &oid));
	}
}

int cmd__pseudo_merge(int argc, const char **argv)
{
	struct gp_error err = GP_ERROR_INIT;
	struct repository *repo = NULL;
	struct bitmap_index *bi = NULL;
	const struct pseudo_merge_section *s;
	struct odb *odb;
	int ret = 0;

	if (argc >= 2 && !strcmp(argv[1], "plan"))
		return plan(argc - 2, argv + 2);
	if (argc != 1 && !(argc == 3 && (!strcmp(argv[1], "commits") ||
					   !strcmp(argv[1], "objects")))) {
		fputs(usage_str, stderr);
		return 129;
	}
	if (repo_discover(&repo, NULL, &err) || repo_odb(repo, &odb, &err) ||
	    bitmap_index_open(&bi, odb, &err))
		goto fail;
	s = bitmap_index_pseudo_merges(bi);
	for (uint32_t i = 0; s && i < s->nr_merges; i++) {
		struct ewah commits, objects;
		if (pseudo_merge_section_merge(s, i, &commits, &objects, &err))
			goto fail;
		if (argc == 1)
			printf("at=%" PRIu64 ", commits=%" PRIu64 ", objects=%" PRIu64 "\n",
			       pseudo_merge_section_offset(s, i), ewah_popcount(&commits),
			       ewah_popcount(&objects));
		else if ((uint32_t)atoi(argv[2]) == i)
			print_bits(bitmap_index_order(bi),
				   !strcmp(argv[1], "commits") ? &commits : &objects);
	}
	goto out;
fail:
	fprintf(stderr, "fatal: %s\n", gp_error_msg(&err));
	ret = 128;
out:
	gp_error_clear(&err);
	bitmap_index_free(bi);
	repo_free(repo);
	return ret;
}
