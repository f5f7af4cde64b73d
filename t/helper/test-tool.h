/*
 * test-tool.h: the subcommands of t/helper/test-tool, which lets tests
 * assert internal facts (parsed config, revindex rows, ...). Each
 * subcommand lives in its own t/helper/test-<name>.c.
 */
#ifndef GP_TEST_TOOL_H
#define GP_TEST_TOOL_H

int cmd__bitmap_write(int argc, const char **argv);
int cmd__config(int argc, const char **argv);
int cmd__date(int argc, const char **argv);
int cmd__delta(int argc, const char **argv);
int cmd__ewah(int argc, const char **argv);
int cmd__fsck(int argc, const char **argv);
int cmd__hex(int argc, const char **argv);
int cmd__http(int argc, const char **argv);
int cmd__loose(int argc, const char **argv);
int cmd__refs(int argc, const char **argv);
int cmd__reftable(int argc, const char **argv);
int cmd__sha1(int argc, const char **argv);
int cmd__sha1dc(int argc, const char **argv);
int cmd__shallow_compute(int argc, const char **argv);
int cmd__write_idx(int argc, const char **argv);
int cmd__midx_dump(int argc, const char **argv);
int cmd__object_filter(int argc, const char **argv);
int cmd__oid_array(int argc, const char **argv);
int cmd__pack_mtimes(int argc, const char **argv);
int cmd__pkt_line(int argc, const char **argv);
int cmd__pseudo_merge(int argc, const char **argv);

#endif
