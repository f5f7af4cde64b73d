/*
 * loose.h: loose objects (gitformat-loose): one zlib stream per object
 * at <objdir>/<first 2 hex>/<remaining hex>, holding the header
 * "<type> <decimal size>\0" followed by the content.
 *
 * Reads treat the file as untrusted: the header is bounded and parsed
 * strictly, the content must inflate to exactly the declared size.
 * Writes go to a temporary file in the fan-out directory, are fsynced
 * and renamed into place; an existing object is left alone.
 */
#ifndef GP_LOOSE_H
#define GP_LOOSE_H

#include "object.h"

struct gp_error;

/* "<objdir>/xx/yyyy..." ; caller frees. */
char *loose_path(const char *objdir, const struct object_id *oid);
bool loose_has(const char *objdir, const struct object_id *oid);

/*
 * Read a whole object. *data is malloc'd with a trailing NUL (caller
 * frees). Errors: GP_ENOTFOUND, GP_ECORRUPT (naming the file), GP_EIO,
 * GP_ENOMEM.
 */
int loose_read(const char *objdir, const struct object_id *oid,
	       enum object_type *type, unsigned char **data, size_t *size,
	       struct gp_error *err);
/* Type, size and on-disk size, inflating only the header. */
int loose_read_info(const char *objdir, const struct object_id *oid,
		    enum object_type *type, uint64_t *size, uint64_t *disk_size,
		    struct gp_error *err);
/*
 * Parse a loose object header from the start of an inflated buffer:
 * "<type> <size>\0". Returns the header length including the NUL.
 * Errors: GP_ECORRUPT. Safe on arbitrary bytes.
 */
int loose_parse_header(const unsigned char *buf, size_t len,
		       enum object_type *type, uint64_t *size, size_t *hdr_len,
		       struct gp_error *err);

/*
 * What is wrong with a loose object's header, in the terms git reports
 * it: the object named oid is looked at in objdir only.
 */
enum loose_header_state {
	LOOSE_HEADER_OK,
	LOOSE_HEADER_EMPTY,      /* the file has no bytes */
	LOOSE_HEADER_UNREADABLE, /* the zlib stream does not inflate: message in err */
	LOOSE_HEADER_TOO_LONG,   /* no "\0" in its first 32 bytes */
	LOOSE_HEADER_BAD_TYPE,   /* a type name that is not one of the four */
	LOOSE_HEADER_HUGE,       /* a size that does not fit in 64 bits */
	LOOSE_HEADER_MALFORMED,  /* anything else ("blob x\0"): message in err */
};
/*
 * Inflate only the header of oid's loose file and say what state it is
 * in; GP_ENOTFOUND (or GP_EIO) when there is no file to look at. *type
 * and *size are set for LOOSE_HEADER_OK.
 */
int loose_inspect_header(const char *objdir, const struct object_id *oid,
			 enum loose_header_state *state, enum object_type *type,
			 uint64_t *size, struct gp_error *err);

/* Write an object; *oid receives its name. Errors: GP_EIO. */
int loose_write(const char *objdir, int algo, enum object_type type,
		const void *data, size_t len, struct object_id *oid,
		struct gp_error *err);

/*
 * Call fn for each loose object name in objdir (fan-out directories
 * 00..ff, names of the right length and all hex). Stops and returns
 * fn's value when it is non-zero.
 */
typedef int loose_each_fn(const struct object_id *oid, const char *path,
			  void *data);
int loose_for_each(const char *objdir, int algo, loose_each_fn *fn, void *data);

#endif
