/*
 * tls.h: TLS for gitpack serve's --https listeners, with OpenSSL: a
 * server context from a certificate chain and key (PEM), and the reads
 * and writes of one connection.
 *
 * A connection's handshake happens inside its first reads, on the
 * non-blocking socket of the connection thread (a read that needs more
 * bytes says EAGAIN, as recv() does); its answers are written by a
 * worker on the socket made blocking, under the socket's send timeout.
 * TLS 1.2 at least, the library's default ciphers, ALPN "http/1.1".
 */
#ifndef GP_SERVER_TLS_H
#define GP_SERVER_TLS_H

#include <stddef.h>
#include <sys/types.h>

struct gp_error;
struct serve_tls;
struct ssl_st;

/*
 * Load the certificate chain and the private key. Errors: GP_EINVAL
 * with OpenSSL's reason and the file named.
 */
int serve_tls_open(struct serve_tls **out, const char *cert_file, const char *key_file,
		   struct gp_error *err);
void serve_tls_free(struct serve_tls *tls);

/* A server-side session on fd (accepted, non-blocking); NULL when out of memory. */
struct ssl_st *serve_tls_session(struct serve_tls *tls, int fd);
/* Read up to len bytes: > 0, 0 at the peer's end, -1 with errno (EAGAIN: call again later). */
ssize_t serve_tls_read(struct ssl_st *ssl, void *buf, size_t len);
/* Bytes already decrypted and waiting in the session (epoll does not see them). */
size_t serve_tls_pending(struct ssl_st *ssl);
/* Write all of buf; 0 or -1 (the connection failed or timed out). */
int serve_tls_write(struct ssl_st *ssl, const void *buf, size_t len);
/* Say goodbye (best effort) and free the session; the caller closes fd. */
void serve_tls_end(struct ssl_st *ssl);

#endif
