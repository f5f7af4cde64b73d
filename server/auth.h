/*
 * auth.h: HTTP Basic authentication (RFC 7617) for gitpack serve,
 * against a credentials file of salted password hashes, and the read
 * access a repository's config grants.
 *
 * The credentials file has one "user:hash" a line, as htpasswd writes
 * them with -B (bcrypt), or any hash crypt(3) of libxcrypt knows
 * (yescrypt "$y$", SHA-512 "$6$", bcrypt "$2b$"...); blank lines and
 * lines starting with '#' are skipped. `mkpasswd -m yescrypt` (Debian's
 * whois package) or `openssl passwd -6` make a hash. The file is read
 * again when its mtime or size changes, so users come and go without
 * a restart.
 *
 * Checking a password costs what its hash was made to cost (yescrypt:
 * tens of milliseconds), and Git's client sends the credentials with
 * every request of a fetch: a good answer is remembered for a minute
 * (by a SHA-256 of the header, in a bounded table), so a clone pays
 * once. A failed check is never remembered.
 */
#ifndef GP_SERVER_AUTH_H
#define GP_SERVER_AUTH_H

#include <stdbool.h>
#include <stddef.h>

struct gp_error;
struct serve_auth;

/* The longest user name accepted; a longer one never authenticates. */
#define SERVE_AUTH_USER_MAX 128

/*
 * Read the credentials file. Errors: GP_EIO (it cannot be read),
 * GP_ECORRUPT (a line without "user:hash": file and line number).
 */
int serve_auth_open(struct serve_auth **out, const char *path, struct gp_error *err);
void serve_auth_free(struct serve_auth *auth);

/*
 * Check an Authorization header's value ("Basic <base64 user:pass>").
 * On success the user's name goes to user (SERVE_AUTH_USER_MAX + 1
 * bytes) and true comes back; anything else (another scheme, bad
 * base64, an unknown user, a wrong password) is false. Thread-safe.
 */
bool serve_auth_check(struct serve_auth *auth, const char *authorization, char *user);

#endif
